"""Validation that answers 422 Invalid where the real server would.

Built-in kinds keep to the rules a controller can trip over: names and
labels, workload selectors (required, matching the template, immutable),
container resources (requests above limits), and the Pod spec's
immutability (a pod's resources cannot be patched in place; the controller
must change the pod template). A custom resource is validated as the
apiextensions server validates it: against its CRD's schema
(structural.py), its /scale paths, then its CEL rules (celvalidation.py)
unless an error already makes them moot; a CRD by crds.py's rules.
"""

from __future__ import annotations

import re
from typing import Any, Final

from hvpa.labels import LabelSelector, SelectorError
from hvpa.quantity import parse
from hvpa.sim.apiserver.celvalidation import cel_errors
from hvpa.sim.apiserver.crds import CRD_GROUP, validate_crd
from hvpa.sim.apiserver.errors import FieldError
from hvpa.sim.apiserver.gotext import go_v
from hvpa.sim.apiserver.resources import ResourceType
from hvpa.sim.apiserver.structural import MISSING

__all__ = ["validate", "validate_container_resources", "validate_name", "validate_status"]

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
# Errors after which the apiextensions server does not evaluate CEL rules (hasBlockingErr).
_BLOCKING: Final = frozenset(
    {
        "FieldValueNotSupported",
        "FieldValueRequired",
        "FieldValueTooLong",
        "FieldValueTooMany",
        "FieldValueTypeInvalid",
    }
)
_RULES_NOT_CHECKED: Final = (
    "some validation rules were not checked because the object was invalid; "
    "correct the existing errors to complete validation"
)
_MAX_INT32: Final = 2**31 - 1


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
    if rtype.schema is not None:
        return _validate_custom(rtype, obj, old) + errors
    if rtype.group == CRD_GROUP and rtype.plural == "customresourcedefinitions":
        return errors + validate_crd(obj)
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


def validate_status(
    rtype: ResourceType, obj: dict[str, Any], old: dict[str, Any]
) -> list[FieldError]:
    """A /status write of a custom resource: the status against the schema's status part
    (messages name fields from there: `replicas in body ...`), and the /scale status paths."""
    schema = rtype.schema
    if schema is None:
        return []
    errors: list[FieldError] = []
    status_schema = schema.properties.get("status")
    if status_schema is not None and "status" in obj:
        errors += status_schema.validate(
            obj["status"], old.get("status", MISSING), field_prefix="status"
        )
    errors += _scale_status_errors(rtype, obj)
    return errors + _rule_errors(rtype, obj, old, errors)


def _validate_custom(
    rtype: ResourceType, obj: dict[str, Any], old: dict[str, Any] | None
) -> list[FieldError]:
    """Schema, /scale paths, then the CEL rules; updates ratchet (unchanged parts pass)."""
    assert rtype.schema is not None
    errors = rtype.schema.validate(obj, MISSING if old is None else old)
    errors += _scale_spec_errors(rtype, obj) + _scale_status_errors(rtype, obj)
    return errors + _rule_errors(rtype, obj, old, errors)


def _rule_errors(
    rtype: ResourceType, obj: dict[str, Any], old: dict[str, Any] | None, errors: list[FieldError]
) -> list[FieldError]:
    """The CEL step: skipped, with a note saying so, once an error makes the object unfit."""
    assert rtype.schema is not None
    if not rtype.schema.has_rules:
        return []
    if any(error.type in _BLOCKING for error in errors):
        return [FieldError.invalid("<nil>", None, _RULES_NOT_CHECKED)]
    return cel_errors(rtype.schema, obj, MISSING if old is None else old)


def _scale_spec_errors(rtype: ResourceType, obj: dict[str, Any]) -> list[FieldError]:
    if rtype.scale is None or not rtype.custom:
        return []
    return _replicas_errors(obj, rtype.scale.spec_replicas)


def _scale_status_errors(rtype: ResourceType, obj: dict[str, Any]) -> list[FieldError]:
    """The status replicas must read as an integer and the selector as a string."""
    if rtype.scale is None or not rtype.custom:
        return []
    errors = _replicas_errors(obj, rtype.scale.status_replicas)
    if rtype.scale.selector:
        _, problem = _nested(obj, rtype.scale.selector, str, "string")
        if problem:
            errors.append(FieldError.invalid(_json_path(rtype.scale.selector), "", problem))
    return errors


def _replicas_errors(obj: dict[str, Any], path: tuple[str, ...]) -> list[FieldError]:
    """unstructured.NestedInt64 at a /scale path, then the bounds a Scale can carry."""
    where = _json_path(path)
    value, problem = _nested(obj, path, int, "int64")
    if problem:
        return [FieldError.invalid(where, 0, problem)]
    if value is None:
        return []
    if value < 0:
        return [FieldError.invalid(where, value, "should be a non-negative integer")]
    if value > _MAX_INT32:
        return [FieldError.invalid(where, value, f"should be less than or equal to {_MAX_INT32}")]
    return []


def _nested(
    obj: dict[str, Any], path: tuple[str, ...], kind: type, kind_name: str
) -> tuple[Any, str]:
    """The value at `path` (None if absent), or the accessor error unstructured reports."""
    node: Any = obj
    for part in path:
        if not isinstance(node, dict):
            return None, _accessor_error(path, node, "map[string]interface{}")
        if part not in node:
            return None, ""
        node = node[part]
    if node is None:
        return None, ""
    if not isinstance(node, kind) or isinstance(node, bool):
        return None, _accessor_error(path, node, kind_name)
    return node, ""


def _accessor_error(path: tuple[str, ...], value: Any, expected: str) -> str:
    return (
        f"{_json_path(path)} accessor error: {go_v(value)} is of the type "
        f"{_go_type(value)}, expected {expected}"
    )


def _json_path(path: tuple[str, ...]) -> str:
    return "." + ".".join(path)


def _go_type(value: Any) -> str:
    """%T of a value decoded into unstructured content."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "[]interface {}"
    return "map[string]interface {}"


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
        if selector is None:
            # Upstream turns a missing selector into one that matches nothing, so the
            # template's labels fail to match it as well: two causes, as kube-apiserver says.
            errors.append(
                FieldError.invalid(
                    "spec.template.metadata.labels",
                    _labels_text(template_labels),
                    "`selector` does not match template `labels`",
                )
            )
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
            errors += validate_container_resources(
                container.get("resources") or {}, f"{where}.resources"
            )
    return errors


def validate_container_resources(resources: dict[str, Any], path: str) -> list[FieldError]:
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
