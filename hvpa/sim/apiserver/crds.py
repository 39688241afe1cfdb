"""CustomResourceDefinitions: what a CRD object makes the server serve, and its own rules.

Writing a CRD (apiextensions.k8s.io/v1) is how custom resources come to be
served, here as on a real cluster: `kubectl apply -f manifests/crd.yaml`
makes `hvpas` appear in discovery, in the OpenAPI documents and under
`/apis/autoscaling.k8s.io/v1alpha1`. This module turns a CRD into the
ResourceType the registry serves (names, scope, /status and /scale, the
compiled schema, the printer columns), fills in what the server defaults
and what its controllers write to status (accepted names, NamesAccepted and
Established, stored versions), and refuses a CRD the server would refuse
for what a client can get wrong (names, scope, versions, column paths).

What is approximated: only the storage version is served (a CRD with
several served versions needs conversion, which this server does not do);
names that clash with another resource are accepted as they are (the real
server marks the CRD NamesAccepted=False); a schema is compiled as it comes
(the real server first proves it structural).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any, Final

import orjson

from hvpa.sim.apiserver.errors import FieldError
from hvpa.sim.apiserver.resources import PrinterColumn, ResourceType, ScalePaths
from hvpa.sim.apiserver.structural import Schema, compile_schema

__all__ = [
    "CRD_GROUP",
    "crd_status",
    "default_crd",
    "resource_type_of",
    "validate_crd",
]

CRD_GROUP: Final = "apiextensions.k8s.io"
_COLUMN_TYPES: Final = ("integer", "number", "string", "boolean", "date")
_DNS_LABEL_RE: Final = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_KIND_RE: Final = re.compile(r"^[A-Za-z][A-Za-z0-9]*$")
_ALL_VERBS: Final = (
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
)


def default_crd(obj: dict[str, Any]) -> None:
    """What decoding a CRD fills in: listKind, singular, conversion strategy None."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    names = spec.get("names")
    if isinstance(names, dict) and isinstance(names.get("kind"), str):
        names.setdefault("listKind", f"{names['kind']}List")
        if isinstance(names.get("plural"), str):
            names.setdefault("singular", names["kind"].lower())
    spec.setdefault("conversion", {"strategy": "None"})


def validate_crd(obj: Mapping[str, Any]) -> list[FieldError]:
    """The CRD mistakes that matter to a client: names, scope, versions and printer columns."""
    spec = obj.get("spec")
    if not isinstance(spec, Mapping):
        return [FieldError.required("spec")]
    errors: list[FieldError] = []
    group = spec.get("group")
    given_names = spec.get("names")
    names: Mapping[str, Any] = given_names if isinstance(given_names, Mapping) else {}
    plural = names.get("plural")
    if not group:
        errors.append(FieldError.required("spec.group"))
    elif "." not in str(group):
        errors.append(
            FieldError.invalid("spec.group", group, "should be a domain with at least one dot")
        )
    for field in ("plural", "singular", "kind", "listKind"):
        value = names.get(field)
        if not value:
            errors.append(FieldError.required(f"spec.names.{field}"))
        elif field in ("plural", "singular") and not _DNS_LABEL_RE.match(str(value)):
            errors.append(
                FieldError.invalid(
                    f"spec.names.{field}",
                    value,
                    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-'",
                )
            )
        elif field in ("kind", "listKind") and not _KIND_RE.match(str(value)):
            errors.append(
                FieldError.invalid(
                    f"spec.names.{field}",
                    value,
                    "may have mixed case, but should otherwise match: [a-z]([-a-z0-9]*[a-z0-9])?",
                )
            )
    name = (obj.get("metadata") or {}).get("name")
    if plural and group and name != f"{plural}.{group}":
        errors.append(
            FieldError.invalid("metadata.name", name, 'must be spec.names.plural+"."+spec.group')
        )
    scope = spec.get("scope")
    if scope not in ("Namespaced", "Cluster"):
        errors.append(FieldError.not_supported("spec.scope", scope, ["Cluster", "Namespaced"]))
    errors += _validate_versions(spec.get("versions"))
    return errors


def _validate_versions(versions: Any) -> list[FieldError]:
    if not isinstance(versions, list) or not versions:
        return [
            FieldError.invalid(
                "spec.versions", versions, "must have exactly one version marked as storage version"
            )
        ]
    errors: list[FieldError] = []
    storage = [v for v in versions if isinstance(v, Mapping) and v.get("storage")]
    if len(storage) != 1:
        errors.append(
            FieldError.invalid(
                "spec.versions", versions, "must have exactly one version marked as storage version"
            )
        )
    for index, version in enumerate(versions):
        where = f"spec.versions[{index}]"
        if not isinstance(version, Mapping) or not version.get("name"):
            errors.append(FieldError.required(f"{where}.name"))
            continue
        schema = (version.get("schema") or {}).get("openAPIV3Schema")
        if version.get("served") and not isinstance(schema, Mapping):
            errors.append(
                FieldError.required(f"{where}.schema.openAPIV3Schema", "schemas are required")
            )
        for position, column in enumerate(version.get("additionalPrinterColumns") or []):
            errors += _validate_column(column, f"{where}.additionalPrinterColumns[{position}]")
    return errors


def _validate_column(column: Any, where: str) -> list[FieldError]:
    if not isinstance(column, Mapping):
        return [FieldError.invalid(where, column, "must be an object")]
    errors: list[FieldError] = []
    if not column.get("name"):
        errors.append(FieldError.required(f"{where}.name"))
    if column.get("type") not in _COLUMN_TYPES:
        errors.append(
            FieldError.not_supported(f"{where}.type", column.get("type"), list(_COLUMN_TYPES))
        )
    path = column.get("jsonPath")
    if not path:
        errors.append(FieldError.invalid(f"{where}.jsonPath", path or "", "must not be empty"))
    elif not str(path).startswith("."):
        errors.append(
            FieldError.invalid(
                f"{where}.jsonPath", path, "must be a simple json path starting with ."
            )
        )
    return errors


def crd_status(obj: Mapping[str, Any], now: str) -> dict[str, Any]:
    """The status the CRD controllers write: names accepted, established, the stored version.

    Conditions keep their lastTransitionTime while their status holds."""
    spec = obj.get("spec") or {}
    names = dict(spec.get("names") or {})
    stored = [v["name"] for v in spec.get("versions") or [] if v.get("storage")]
    before = {
        c.get("type"): c
        for c in (obj.get("status") or {}).get("conditions") or []
        if isinstance(c, Mapping)
    }
    conditions = []
    for kind, reason, message in (
        ("NamesAccepted", "NoConflicts", "no conflicts found"),
        ("Established", "InitialNamesAccepted", "the initial names have been accepted"),
    ):
        old = before.get(kind)
        since = old.get("lastTransitionTime") if old and old.get("status") == "True" else now
        conditions.append(
            {
                "type": kind,
                "status": "True",
                "lastTransitionTime": since,
                "reason": reason,
                "message": message,
            }
        )
    previous = list((obj.get("status") or {}).get("storedVersions") or [])
    return {
        "conditions": conditions,
        "acceptedNames": names,
        "storedVersions": previous + [v for v in stored if v not in previous],
    }


def resource_type_of(crd: Mapping[str, Any]) -> ResourceType:
    """The resource a CRD serves: its storage version, with schema, subresources and columns."""
    spec = crd["spec"]
    names = spec["names"]
    version = next(v for v in spec["versions"] if v.get("storage"))
    # A private copy through JSON (the CRD is a stored object's, JSON by construction):
    # copy.deepcopy of the Hvpa CRD's schema was most of serving it, once per server.
    raw_schema = orjson.loads(
        orjson.dumps((version.get("schema") or {}).get("openAPIV3Schema") or {})
    )
    subresources = version.get("subresources") or {}
    scale = subresources.get("scale")
    scale_paths = None
    if isinstance(scale, Mapping):
        scale_paths = ScalePaths(
            spec_replicas=_path(scale.get("specReplicasPath", ".spec.replicas")),
            status_replicas=_path(scale.get("statusReplicasPath", ".status.replicas")),
            selector=_path(scale.get("labelSelectorPath", "")),
            selector_is_string=True,
        )
    columns = tuple(
        PrinterColumn(
            name=str(c["name"]),
            type=str(c["type"]),
            json_path=str(c["jsonPath"]),
            description=str(c.get("description") or ""),
            format=str(c.get("format") or ""),
            priority=int(c.get("priority") or 0),
        )
        for c in version.get("additionalPrinterColumns") or []
    )
    return ResourceType(
        spec["group"],
        version["name"],
        names["plural"],
        names.get("singular") or names["kind"].lower(),
        names["kind"],
        namespaced=spec.get("scope", "Namespaced") == "Namespaced",
        short_names=tuple(names.get("shortNames") or ()),
        categories=tuple(names.get("categories") or ()),
        verbs=_ALL_VERBS,
        status="status" in subresources,
        scale=scale_paths,
        custom=True,
        generation=True,
        unconditional_update=False,
        list_kind_name=names.get("listKind") or f"{names['kind']}List",
        schema=_compiled(orjson.dumps(raw_schema, option=orjson.OPT_SORT_KEYS)),
        raw_schema=raw_schema,
        columns=columns,
        crd_name=str(crd["metadata"]["name"]),
    )


@lru_cache(maxsize=64)
def _compiled(raw_schema: bytes) -> Schema:
    """A schema compiled once per content (compiled schemas are never changed): every server
    of a test run installs the same Hvpa CRD."""
    return compile_schema(orjson.loads(raw_schema))


def _path(text: str) -> tuple[str, ...]:
    return tuple(part for part in str(text).lstrip(".").split(".") if part)
