"""An Hvpa manifest's metadata, checked as the API server checks an object's on create.

The controller reads objects the API server has already accepted, so this is
for manifests (`hvpa validate`): a name the server would refuse, or a
misspelt metadata field that `kubectl apply` would refuse with its strict
field validation, is reported before anything is applied.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from hvpa.api.problems import Problem, show

__all__ = ["OBJECT_META_FIELDS", "metadata_problems"]

# metav1.ObjectMeta's JSON fields.
OBJECT_META_FIELDS: Final = (
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
)
_DNS_LABEL: Final = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS_SUBDOMAIN: Final = re.compile(rf"{_DNS_LABEL}(\.{_DNS_LABEL})*")
_NAME_MESSAGE: Final = (
    "must be a lowercase RFC 1123 subdomain: lower case alphanumeric characters, '-' or '.', "
    "starting and ending with an alphanumeric character, at most 253 characters"
)


def metadata_problems(metadata: Any) -> list[Problem]:
    """What the API server would refuse in `metadata` (a custom resource's name is a DNS subdomain)."""
    if metadata is None:
        return [Problem("metadata.name", "required")]
    if not isinstance(metadata, Mapping):
        return [Problem("metadata", f"must be an object (got {show(metadata)})")]
    problems = [
        Problem(f"metadata.{key}", "unknown field")
        for key in metadata
        if key not in OBJECT_META_FIELDS
    ]
    name, generate_name = metadata.get("name"), metadata.get("generateName")
    if not name and not generate_name:
        problems.append(Problem("metadata.name", "required"))
    elif name is not None and not _is_subdomain(name):
        problems.append(Problem("metadata.name", f"{_NAME_MESSAGE} (got {show(name)})"))
    for key in ("namespace",):
        value = metadata.get(key)
        if value is not None and not _is_label(value):
            problems.append(
                Problem(
                    f"metadata.{key}", f"must be a lowercase RFC 1123 label (got {show(value)})"
                )
            )
    for key in ("labels", "annotations"):
        value = metadata.get(key)
        if value is not None and not (
            isinstance(value, Mapping)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())
        ):
            problems.append(Problem(f"metadata.{key}", "must be a map of strings to strings"))
    return problems


def _is_subdomain(value: Any) -> bool:
    return (
        isinstance(value, str) and len(value) <= 253 and _DNS_SUBDOMAIN.fullmatch(value) is not None
    )


def _is_label(value: Any) -> bool:
    return (
        isinstance(value, str) and len(value) <= 63 and re.fullmatch(_DNS_LABEL, value) is not None
    )
