"""pods/resize: the subresource that changes a running pod's CPU and memory, with upstream's rules.

In-place resize (KEP 1287; beta and on by default in Kubernetes 1.33, GA
in 1.35) makes `spec.containers[*].resources` the pod's desired size and
lets only this subresource change it. What a PATCH or PUT of
`pods/{name}/resize` does here, in upstream's order (the pod registry's
resize strategy, then `ValidatePodResize`):

- everything but the containers' `resources` (and those of restartable
  init containers) is dropped from the request: the stored pod's metadata,
  the rest of its spec and its status stay as they are, and containers are
  matched by name;
- the request is refused (422) when: the pod sets pod-level resources; it
  runs Windows; its QoS class would change (`Pod QOS Class may not change as
  a result of resizing`); a container is running but its status reports no
  `resources` (`Pod running on node without support for resize`: a kubelet
  older than the feature); a request or limit is removed; a resource other
  than cpu and memory changes, or a plain init container's resources change;
  a request exceeds its limit; before Kubernetes 1.35, a memory limit is
  lowered or added for a container whose memory `resizePolicy` is not
  `RestartContainer` (1.35 lets the kubelet try it, best effort);
- a `metadata.resourceVersion` in the request is a precondition (409).

Then the kubelet (the simulator's, or a test) reads the new desired size
from the pod and reports what it did in the pod's status: `PodResizePending`
(reason `Deferred` or `Infeasible`), `PodResizeInProgress`, and
`status.containerStatuses[*].resources`. `listeners` are told of every
stored resize, as a kubelet's watch would tell it.

A server older than 1.33 does not serve the subresource (`served` False):
discovery does not list `pods/resize` and a request answers 404.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from hvpa.quantity import parse
from hvpa.sim.apiserver.defaults import pod_qos_class
from hvpa.sim.apiserver.errors import FieldError
from hvpa.sim.apiserver.patching import PatchType
from hvpa.sim.apiserver.registry import Registry
from hvpa.sim.apiserver.storage import Entry
from hvpa.sim.apiserver.validation import validate_container_resources

__all__ = ["SUBRESOURCE", "PodResizes", "resize_served", "validate_resize"]

SUBRESOURCE: Final = "resize"
_RESIZABLE: Final = ("cpu", "memory")
# The first minor versions that serve pods/resize by default, and that let the kubelet try a
# memory limit decrease whatever the container's resizePolicy.
_SERVED_SINCE: Final = (1, 33)
_MEMORY_LIMIT_DECREASE_SINCE: Final = (1, 35)
RESTART_CONTAINER: Final = "RestartContainer"

ResizeListener = Callable[[dict[str, Any]], None]


def _minor(kubernetes_version: str) -> tuple[int, int]:
    major, minor = kubernetes_version.lstrip("v").split(".")[:2]
    return int(major), int("".join(ch for ch in minor if ch.isdigit()) or 0)


def resize_served(kubernetes_version: str) -> bool:
    """Whether a server of this version serves pods/resize (on by default since 1.33)."""
    return _minor(kubernetes_version) >= _SERVED_SINCE


class PodResizes:
    """The pods/resize subresource of one API server."""

    def __init__(self, registry: Registry, *, kubernetes_version: str, served: bool) -> None:
        self._registry = registry
        self.served = served
        self.memory_limit_decrease = _minor(kubernetes_version) >= _MEMORY_LIMIT_DECREASE_SINCE
        self._pods = registry.resource("pods")
        self.listeners: list[ResizeListener] = []

    def resize(
        self,
        namespace: str,
        name: str,
        body: Any,
        patch_type: PatchType | None,
        *,
        dry_run: bool = False,
    ) -> Entry:
        """PATCH (`patch_type`) or PUT (None) of `pods/{name}/resize`; the stored pod."""
        entry = self._registry.write_subresource(
            self._pods,
            namespace,
            name,
            body,
            patch_type,
            prepare=keep_resize_fields,
            check=self.check,
            dry_run=dry_run,
        )
        if not dry_run:
            pod = entry.load()
            for listener in list(self.listeners):
                listener(pod)
        return entry

    def check(self, new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
        return validate_resize(new, old, memory_limit_decrease=self.memory_limit_decrease)


def keep_resize_fields(new: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
    """The stored pod with only the containers' resources (and resize policies) of `new`.

    Containers are matched by name; a request that adds, removes or renames
    containers is passed through as it is, for validation to refuse.
    """
    new_spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
    kept = {**old, "spec": dict(old_spec)}
    for field in ("containers", "initContainers"):
        given, stored = new_spec.get(field) or [], old_spec.get(field) or []
        if [c.get("name") for c in given] != [c.get("name") for c in stored]:
            kept["spec"][field] = given
            continue
        merged = []
        for container, before in zip(given, stored, strict=True):
            if field == "initContainers" and not _restartable(before):
                merged.append(before)
                continue
            updated = {**before, "resources": container.get("resources") or {}}
            if "resizePolicy" in container:
                updated["resizePolicy"] = container["resizePolicy"]
            merged.append(updated)
        kept["spec"][field] = merged
    return kept


def _restartable(container: Mapping[str, Any]) -> bool:
    return container.get("restartPolicy") == "Always"


def validate_resize(
    new: dict[str, Any], old: dict[str, Any], *, memory_limit_decrease: bool
) -> list[FieldError]:
    """ValidatePodResize's rules for `new` (already reduced to its resize fields) against `old`."""
    new_spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
    if _pod_level_resources(new_spec) or _pod_level_resources(old_spec):
        return [FieldError.forbidden("", "pods with pod-level resources cannot be resized")]
    if (old_spec.get("os") or {}).get("name") == "windows":
        return [FieldError.forbidden("", "windows pods cannot be resized")]
    for field in ("containers", "initContainers"):
        given, stored = new_spec.get(field) or [], old_spec.get(field) or []
        if [c.get("name") for c in given] != [c.get("name") for c in stored]:
            return [FieldError.forbidden("spec", "pod updates may not add or remove containers")]
    errors: list[FieldError] = []
    qos = (old.get("status") or {}).get("qosClass") or pod_qos_class(old_spec)
    if pod_qos_class(new_spec) != qos:
        errors.append(
            FieldError.invalid("spec", qos, "Pod QOS Class may not change as a result of resizing")
        )
    if not _node_supports_resize(old):
        errors.append(
            FieldError.forbidden("spec", "Pod running on node without support for resize")
        )
    for field in ("containers", "initContainers"):
        for index, (container, before) in enumerate(
            zip(new_spec.get(field) or [], old_spec.get(field) or [], strict=True)
        ):
            where = f"spec.{field}[{index}].resources"
            if field == "initContainers" and not _restartable(before):
                continue
            errors += validate_container_resources(container.get("resources") or {}, where)
            errors += _container_resize(container, before, where, memory_limit_decrease)
            if _other_than_cpu_and_memory(container, before):
                errors.append(
                    FieldError.forbidden("spec", "only cpu and memory resources are mutable")
                )
    return errors


def _pod_level_resources(spec: Mapping[str, Any]) -> bool:
    resources = spec.get("resources") or {}
    return bool(resources.get("requests") or resources.get("limits"))


def _node_supports_resize(pod: Mapping[str, Any]) -> bool:
    """A running container whose status reports no resources: its kubelet cannot resize."""
    for status in (pod.get("status") or {}).get("containerStatuses") or []:
        if (status.get("state") or {}).get("running") is not None:
            return status.get("resources") is not None
    return True


def _container_resize(
    container: Mapping[str, Any],
    before: Mapping[str, Any],
    where: str,
    memory_limit_decrease: bool,
) -> list[FieldError]:
    new, old = container.get("resources") or {}, before.get("resources") or {}
    errors = []
    for part in ("requests", "limits"):
        if set(old.get(part) or {}) - set(new.get(part) or {}):
            errors.append(
                FieldError.forbidden(f"{where}.{part}", f"resource {part} cannot be removed")
            )
    if memory_limit_decrease or _memory_policy(container) == RESTART_CONTAINER:
        return errors
    new_limit = (new.get("limits") or {}).get("memory")
    old_limit = (old.get("limits") or {}).get("memory")
    if new_limit is not None and old_limit is not None:
        if parse(new_limit).value < parse(old_limit).value:
            errors.append(
                FieldError.forbidden(
                    f"{where}.limits[memory]",
                    f"memory limits cannot be decreased unless resizePolicy is {RESTART_CONTAINER}",
                )
            )
    elif new_limit is not None:
        errors.append(
            FieldError.forbidden(
                f"{where}.limits[memory]",
                f"memory limits cannot be added unless resizePolicy is {RESTART_CONTAINER}",
            )
        )
    return errors


def _memory_policy(container: Mapping[str, Any]) -> str:
    for policy in container.get("resizePolicy") or []:
        if policy.get("resourceName") == "memory":
            return str(policy.get("restartPolicy") or "")
    return ""


def _other_than_cpu_and_memory(container: Mapping[str, Any], before: Mapping[str, Any]) -> bool:
    """Whether anything but cpu and memory differs between the two containers' resources
    (another resource's amount, claims), or anything outside them (a resize policy)."""
    new, old = container.get("resources") or {}, before.get("resources") or {}
    for part in ("requests", "limits"):
        if _without_resizable(new.get(part)) != _without_resizable(old.get(part)):
            return True
    if (new.get("claims") or None) != (old.get("claims") or None):
        return True
    others = {k: v for k, v in container.items() if k != "resources"}
    return others != {k: v for k, v in before.items() if k != "resources"}


def _without_resizable(amounts: Any) -> dict[str, Any]:
    if not isinstance(amounts, dict):
        return {}
    return {name: value for name, value in amounts.items() if name not in _RESIZABLE}
