"""In-process object access for the simulator and tests: the registry, on dicts.

Every call goes through the same registry as an HTTP request (defaults,
validation, preconditions, resourceVersion, history, watch events), so what
the simulator writes is what the controller sees through its watches. Calls
are synchronous and must run on the server's event loop thread. Errors are
the same ApiError classes an HTTP client would see as Status bodies.

Resources are named as kubectl names them: `pods`, `po`, `deployments.apps`,
`events.events.k8s.io`, `hvpas`. Namespaced calls default to `default`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from hvpa.sim.apiserver.patching import PatchType
from hvpa.sim.apiserver.registry import Registry
from hvpa.sim.apiserver.resources import ResourceType
from hvpa.sim.apiserver.storage import Entry

__all__ = ["Objects"]

Resource = str | ResourceType
# Names of their own: the class below has a method called `list`.
_Decoded = list[dict[str, Any]]
_Entries = list[Entry]
PatchKind = Literal["merge", "json", "strategic"]
_PATCH_TYPES = {"merge": PatchType.MERGE, "json": PatchType.JSON, "strategic": PatchType.STRATEGIC}


class Objects:
    def __init__(self, registry: Registry) -> None:
        self._registry = registry

    def resource(self, resource: Resource) -> ResourceType:
        return self._registry.resource(resource)

    def create(
        self,
        resource: Resource,
        obj: Mapping[str, Any],
        *,
        namespace: str | None = None,
        keep_status: bool = False,
        validate: bool = True,
        uid: str | None = None,
    ) -> dict[str, Any]:
        """Create `obj`. `keep_status` keeps the status given (the server would reset it):
        the simulator plays controllers that write status right after creating.
        `validate=False` stores what its CRD's schema and rules would refuse (pruned and
        defaulted all the same), as an object written before they were tightened would
        be: how a test puts an invalid Hvpa in front of the controller. `uid` is the
        object's uid instead of the next seeded one: the simulator's controllers name the
        uids of what they add (ReplicaSets), so that the uids and generated names every
        other object gets for a seed stay as they were."""
        rtype = self.resource(resource)
        body = dict(obj)
        entry = self._registry.create(
            rtype,
            self._namespace(rtype, namespace, body),
            body,
            keep_status=keep_status,
            validate=validate,
            uid=uid,
        )
        return entry.load()

    def get(
        self,
        resource: Resource,
        name: str,
        *,
        namespace: str | None = None,
        subresource: Literal["scale"] | None = None,
    ) -> dict[str, Any]:
        rtype = self.resource(resource)
        ns = self._namespace(rtype, namespace, None)
        if subresource == "scale":
            return self._registry.get_scale(rtype, ns, name)
        return self._registry.get(rtype, ns, name).load()

    def resource_version(
        self, resource: Resource, name: str, *, namespace: str | None = None
    ) -> int:
        """The stored object's resourceVersion, without copying the object: a reader that
        keeps what it derived from an object asks this to know whether to read it again."""
        rtype = self.resource(resource)
        return self._registry.get(rtype, self._namespace(rtype, namespace, None), name).rv

    def list(
        self,
        resource: Resource,
        *,
        namespace: str | None = None,
        label_selector: str = "",
        field_selector: str = "",
    ) -> list[dict[str, Any]]:
        """Objects in `namespace`, or in all namespaces when it is None."""
        return [
            entry.load()
            for entry in self._entries(resource, namespace, label_selector, field_selector)
        ]

    def list_shared(
        self,
        resource: Resource,
        *,
        namespace: str | None = None,
        label_selector: str = "",
        field_selector: str = "",
    ) -> _Decoded:
        """As `list`, but each object is its stored version's one decoded copy, which every
        caller of this method shares: read it, never change it (a caller that changes what
        it reads takes `list`). An object not written since the last call is the same dict,
        not decoded again; a write stores a new version, so a changed object is a new dict."""
        return [
            entry.shared()
            for entry in self._entries(resource, namespace, label_selector, field_selector)
        ]

    def _entries(
        self, resource: Resource, namespace: str | None, label_selector: str, field_selector: str
    ) -> _Entries:
        rtype = self.resource(resource)
        page = self._registry.list(
            rtype,
            namespace=namespace if rtype.namespaced else None,
            label_selector=label_selector,
            field_selector=field_selector,
        )
        return page.entries

    def update(
        self,
        resource: Resource,
        obj: Mapping[str, Any],
        *,
        subresource: Literal["status", "scale"] | None = None,
    ) -> dict[str, Any]:
        """PUT semantics: a metadata.resourceVersion in `obj` is a precondition."""
        rtype = self.resource(resource)
        body = dict(obj)
        ns = self._namespace(rtype, None, body)
        name = str((body.get("metadata") or {}).get("name", ""))
        if subresource == "scale":
            return self._registry.update_scale(rtype, ns, name, body)
        entry, _ = self._registry.update(rtype, ns, name, body, subresource=subresource)
        return entry.load()

    def patch(
        self,
        resource: Resource,
        name: str,
        patch: Any,
        *,
        namespace: str | None = None,
        patch_type: PatchKind = "merge",
        subresource: Literal["status", "scale"] | None = None,
    ) -> dict[str, Any]:
        rtype = self.resource(resource)
        ns = self._namespace(rtype, namespace, None)
        kind = _PATCH_TYPES[patch_type]
        if subresource == "scale":
            return self._registry.patch_scale(rtype, ns, name, patch, kind)
        return self._registry.patch(rtype, ns, name, patch, kind, subresource=subresource).load()

    def delete(
        self,
        resource: Resource,
        name: str,
        *,
        namespace: str | None = None,
        grace_period_seconds: int | None = None,
    ) -> dict[str, Any]:
        """Delete; returns the object. A scheduled pod is only marked (deletionTimestamp)
        until deleted again with `grace_period_seconds=0`, as the kubelet does."""
        rtype = self.resource(resource)
        entry, _ = self._registry.delete(
            rtype,
            self._namespace(rtype, namespace, None),
            name,
            grace_period_seconds=grace_period_seconds,
        )
        return entry.load()

    def bind_pod(
        self, name: str, node_name: str, *, namespace: str | None = None
    ) -> dict[str, Any]:
        """Schedule a pod (pods/binding): the only way to set spec.nodeName after creation."""
        pods = self.resource("pods")
        ns = self._namespace(pods, namespace, None)
        assert ns is not None
        self._registry.bind(ns, name, {"target": {"kind": "Node", "name": node_name}})
        return self._registry.get(pods, ns, name).load()

    @staticmethod
    def _namespace(
        rtype: ResourceType, namespace: str | None, body: dict[str, Any] | None
    ) -> str | None:
        if not rtype.namespaced:
            return None
        if namespace is not None:
            return namespace
        if body is not None:
            given = (body.get("metadata") or {}).get("namespace")
            if given:
                return str(given)
        return "default"
