"""Validation that answers 422 Invalid where the real server would.

Kept to the rules a controller can trip over: names and labels, workload
selectors (required, matching the template, immutable), container resources
(requests above limits), and the Pod spec's immutability (a pod's resources
cannot be patched in place; the controller must change the pod template).
"""

from __future__ import annotations

import re
from typing import Any, Final

from hvpa.labels import LabelSelector, SelectorError
from hvpa.quantity import parse
from hvpa.sim.apiserver.errors import FieldError
from hvpa.sim.apiserver.resources import ResourceType

__all__ = ["validate", "validate_name"]

_LABEL: Final = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN_RE: Final = re.compile(rf"^{_LABEL}(\.{_LABEL})*$")
_LABEL_RE: Final = re.compile(rf"^{_LABEL}$")
_QUALIFIED_NAME_RE: Final = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_LABEL_VALUE_RE: Final = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_SUBDOMAIN_MESSAGE: Final = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
_LABEL_MESSAGE: Final = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
_POD_UPDATE_MESSAGE: Final = (
    "pod updates may not change fields other than `spec.containers[*].image`,"
    "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` "
    "(only additions to existing tolerations),`spec.terminationGracePeriodSeconds` "
    "(allow it to be set to 1 if it was previously negative)"
)
_WORKLOADS: Final = frozenset({"deployments", "statefulsets", "replicasets"})


def validate_name(rtype: ResourceType, name: str) -> list[FieldError]:
    if rtype.plural == "namespaces" and rtype.group == "":
        if len(name) > 63 or not _LABEL_RE.match(name):
            return [FieldError.invalid("metadata.name", name, _LABEL_MESSAGE)]
        return []
    if len(name) > 253 or not _SUBDOMAIN_RE.match(name):
        return [FieldError.invalid("metadata.name", name, _SUBDOMAIN_MESSAGE)]
    return []


def validate(
    rtype: ResourceType, obj: dict[str, Any], old: dict[str, Any] | None
) -> list[FieldError]:
    """All errors for a create (`old` None) or an update of the main resource."""
    errors = _validate_metadata(obj.get("metadata") or {})
    spec = obj.get("spec")
    if rtype.group == "apps" and rtype.plural in _WORKLOADS:
        errors += _validate_workload(spec if isinstance(spec, dict) else {}, old)
    elif rtype.group == "" and rtype.plural == "pods":
        pod_spec = spec if isinstance(spec, dict) else {}
        errors += _validate_pod_spec(pod_spec, "spec")
        if old is not None:
            errors += _validate_pod_update(pod_spec, old.get("spec") or {})
    elif rtype.group == "autoscaling" and rtype.plural == "horizontalpodautoscalers":
        errors += _validate_hpa(spec if isinstance(spec, dict) else {})
    return errors


def _validate_metadata(metadata: dict[str, Any]) -> list[FieldError]:
    errors: list[FieldError] = []
    labels = metadata.get("labels") or {}
    if not isinstance(labels, dict):
        return [FieldError.invalid("metadata.labels", labels, "must be a map of strings")]
    for key, value in labels.items():
        errors += _label_key_errors("metadata.labels", key)
        if not isinstance(value, str) or len(value) > 63 or not _LABEL_VALUE_RE.match(value):
            errors.append(
                FieldError.invalid(
                    "metadata.labels",
                    value,
                    "a valid label must be an empty string or consist of alphanumeric characters, "
                    "'-', '_' or '.', and must start and end with an alphanumeric character",
                )
            )
    annotations = metadata.get("annotations") or {}
    if not isinstance(annotations, dict) or any(
        not isinstance(v, str) for v in annotations.values()
    ):
        errors.append(FieldError.invalid("metadata.annotations", "", "must be a map of strings"))
    return errors


def _label_key_errors(path: str, key: str) -> list[FieldError]:
    prefix, _, name = key.rpartition("/")
    bad = not name or len(name) > 63 or not _QUALIFIED_NAME_RE.match(name)
    bad = bad or bool(prefix and (len(prefix) > 253 or not _SUBDOMAIN_RE.match(prefix)))
    if bad:
        return [
            FieldError.invalid(
                path,
                key,
                "name part must consist of alphanumeric characters, '-', '_' or '.', and must "
                "start and end with an alphanumeric character",
            )
        ]
    return []


def _validate_workload(spec: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
    errors: list[FieldError] = []
    replicas = spec.get("replicas")
    if isinstance(replicas, int) and replicas < 0:
        errors.append(
            FieldError.invalid("spec.replicas", replicas, "must be greater than or equal to 0")
        )
    selector = spec.get("selector")
    template_value = spec.get("template")
    template: dict[str, Any] = template_value if isinstance(template_value, dict) else {}
    template_labels = (template.get("metadata") or {}).get("labels") or {}
    if not selector:
        errors.append(FieldError.required("spec.selector"))
    else:
        try:
            parsed = LabelSelector.from_dict(selector)
        except SelectorError as error:
            errors.append(FieldError.invalid("spec.selector", "", str(error)))
        else:
            if parsed.empty:
                errors.append(
                    FieldError.invalid(
                        "spec.selector", "", "empty selector is invalid for deployment"
                    )
                )
            elif not parsed.matches(template_labels):
                errors.append(
                    FieldError.invalid(
                        "spec.template.metadata.labels",
                        _labels_text(template_labels),
                        "`selector` does not match template `labels`",
                    )
                )
    if old is not None and selector != (old.get("spec") or {}).get("selector"):
        errors.append(FieldError.invalid("spec.selector", "", "field is immutable"))
    errors += _validate_pod_spec(template.get("spec") or {}, "spec.template.spec")
    return errors


def _labels_text(labels: dict[str, Any]) -> str:
    return "map[" + " ".join(f"{k}:{v}" for k, v in sorted(labels.items())) + "]"


def _validate_pod_spec(spec: dict[str, Any], path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    containers = spec.get("containers")
    if not containers:
        errors.append(FieldError.required(f"{path}.containers"))
    for field in ("initContainers", "containers"):
        seen: set[str] = set()
        for index, container in enumerate(spec.get(field) or []):
            where = f"{path}.{field}[{index}]"
            if not isinstance(container, dict):
                errors.append(FieldError.invalid(where, "", "must be an object"))
                continue
            name = container.get("name")
            if not name:
                errors.append(FieldError.required(f"{where}.name"))
            elif name in seen:
                errors.append(FieldError(f"{where}.name", "FieldValueDuplicate", "", name))
            else:
                seen.add(str(name))
            if not container.get("image"):
                errors.append(FieldError.required(f"{where}.image"))
            errors += _validate_resources(container.get("resources") or {}, f"{where}.resources")
    return errors


def _validate_resources(resources: dict[str, Any], path: str) -> list[FieldError]:
    """Quantities are canonical by now (defaults.py); compare them exactly."""
    errors: list[FieldError] = []
    requests = resources.get("requests") or {}
    limits = resources.get("limits") or {}
    for part, values in (("requests", requests), ("limits", limits)):
        for name, value in values.items():
            if parse(value).value < 0:
                errors.append(
                    FieldError.invalid(
                        f"{path}.{part}[{name}]", value, "must be greater than or equal to 0"
                    )
                )
    for name, request in requests.items():
        if name in limits and parse(request).value > parse(limits[name]).value:
            errors.append(
                FieldError.invalid(
                    f"{path}.requests",
                    request,
                    f"must be less than or equal to {name} limit of {limits[name]}",
                )
            )
    return errors


def _validate_pod_update(spec: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
    """Only images, activeDeadlineSeconds, tolerations, terminationGracePeriodSeconds and
    the removal of scheduling gates may change in a pod's spec."""
    munged = dict(spec)
    for field in ("activeDeadlineSeconds", "tolerations", "terminationGracePeriodSeconds"):
        if field in old:
            munged[field] = old[field]
        else:
            munged.pop(field, None)
    if not spec.get("schedulingGates"):
        munged.pop("schedulingGates", None)
        if "schedulingGates" in old:
            munged["schedulingGates"] = old["schedulingGates"]
    for field in ("containers", "initContainers"):
        new_list, old_list = spec.get(field) or [], old.get(field) or []
        if new_list and len(new_list) == len(old_list):
            munged[field] = [
                {**n, "image": o.get("image")} if isinstance(n, dict) and isinstance(o, dict) else n
                for n, o in zip(new_list, old_list, strict=True)
            ]
    if munged != old:
        return [FieldError.forbidden("spec", _POD_UPDATE_MESSAGE)]
    return []


def _validate_hpa(spec: dict[str, Any]) -> list[FieldError]:
    errors: list[FieldError] = []
    target = spec.get("scaleTargetRef") or {}
    for field in ("kind", "name"):
        if not target.get(field):
            errors.append(FieldError.required(f"spec.scaleTargetRef.{field}"))
    max_replicas = spec.get("maxReplicas")
    min_replicas = spec.get("minReplicas", 1)
    if not isinstance(max_replicas, int) or max_replicas < 1:
        errors.append(
            FieldError.invalid(
                "spec.maxReplicas", max_replicas, "must be greater than or equal to 1"
            )
        )
    elif isinstance(min_replicas, int) and max_replicas < min_replicas:
        errors.append(
            FieldError.invalid(
                "spec.maxReplicas", max_replicas, "must be greater than or equal to `minReplicas`"
            )
        )
    return errors
