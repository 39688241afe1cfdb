"""Discovery documents: /api, /apis, /apis/{group}, /apis/{group}/{version}, /version.

kubectl builds its REST mapping from these (resource names, kinds, short
names, which resources are namespaced, the verbs and the subresources such
as deployments/scale), so they must describe exactly what the server serves.
kubectl asks for aggregated discovery first and falls back to these legacy
documents when the answer is a plain APIGroupList, as here.

The custom and external metrics APIs are listed once they serve a metric,
as a cluster lists them once an adapter is installed: an empty group would
make client-go's discovery (kubectl api-resources) fail with "received
empty response".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from hvpa.sim.apiserver.metrics import Metrics
from hvpa.sim.apiserver.resources import ResourceTable, ResourceType

__all__ = ["Discovery"]

CUSTOM_METRICS: Final = ("custom.metrics.k8s.io", "v1beta2")
EXTERNAL_METRICS: Final = ("external.metrics.k8s.io", "v1beta1")
_SUBRESOURCE_VERBS: Final = ["get", "patch", "update"]


class Discovery:
    def __init__(
        self,
        table: ResourceTable,
        metrics: Metrics,
        *,
        kubernetes_version: str,
        pod_resize: Callable[[], bool] = lambda: False,
    ) -> None:
        """`pod_resize()`: the server serves pods/resize now (resizing.py)."""
        self._table = table
        self._metrics = metrics
        self._version = kubernetes_version
        self._pod_resize = pod_resize

    def version(self) -> dict[str, Any]:
        major, minor = self._version.lstrip("v").split(".")[:2]
        return {
            "major": major,
            "minor": minor,
            "gitVersion": self._version,
            "gitCommit": "0000000000000000000000000000000000000000",
            "gitTreeState": "clean",
            "buildDate": "2025-01-01T00:00:00Z",
            "goVersion": "go1.23.4",
            "compiler": "gc",
            "platform": "linux/amd64",
        }

    def api_versions(self, server_address: str) -> dict[str, Any]:
        return {
            "kind": "APIVersions",
            "versions": ["v1"],
            "serverAddressByClientCIDRs": [
                {"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}
            ],
        }

    def _versions(self) -> dict[str, list[str]]:
        groups = {g: v for g, v in self._table.groups().items() if g}
        if self._metrics.custom_resources():
            groups[CUSTOM_METRICS[0]] = [CUSTOM_METRICS[1]]
        if self._metrics.external_names():
            groups[EXTERNAL_METRICS[0]] = [EXTERNAL_METRICS[1]]
        return groups

    def group_list(self) -> dict[str, Any]:
        return {
            "kind": "APIGroupList",
            "apiVersion": "v1",
            "groups": [self._group(name, versions) for name, versions in self._versions().items()],
        }

    def group(self, name: str) -> dict[str, Any] | None:
        versions = self._versions().get(name)
        if versions is None:
            return None
        return {"kind": "APIGroup", "apiVersion": "v1", **self._group(name, versions)}

    @staticmethod
    def _group(name: str, versions: list[str]) -> dict[str, Any]:
        entries = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
        return {"name": name, "versions": entries, "preferredVersion": entries[0]}

    def resource_list(self, group: str, version: str) -> dict[str, Any] | None:
        if (group, version) == CUSTOM_METRICS:
            resources = [
                _metric_resource(name, "MetricValueList", namespaced=True)
                for name in self._metrics.custom_resources()
            ]
        elif (group, version) == EXTERNAL_METRICS:
            resources = [
                _metric_resource(name, "ExternalMetricValueList", namespaced=True)
                for name in self._metrics.external_names()
            ]
        else:
            served = self._table.in_version(group, version)
            if not served:
                return None
            resources = []
            for rtype in served:
                resources.append(_resource(rtype))
                resources.extend(_subresources(rtype))
                if self._pod_resize() and (rtype.group, rtype.plural) == ("", "pods"):
                    resources.append(
                        {
                            "name": "pods/resize",
                            "singularName": "",
                            "namespaced": True,
                            "kind": "Pod",
                            "verbs": _SUBRESOURCE_VERBS,
                        }
                    )
        if not resources:
            return None
        return {
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": f"{group}/{version}" if group else version,
            "resources": resources,
        }


def _resource(rtype: ResourceType) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": rtype.plural,
        "singularName": rtype.singular,
        "namespaced": rtype.namespaced,
        "kind": rtype.kind,
        "verbs": sorted(rtype.verbs),
    }
    if rtype.short_names:
        entry["shortNames"] = list(rtype.short_names)
    if rtype.categories:
        entry["categories"] = list(rtype.categories)
    return entry


def _subresources(rtype: ResourceType) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for name in rtype.subresources:
        entry: dict[str, Any] = {
            "name": f"{rtype.plural}/{name}",
            "singularName": "",
            "namespaced": rtype.namespaced,
        }
        if name == "scale":
            entry.update(group="autoscaling", version="v1", kind="Scale", verbs=_SUBRESOURCE_VERBS)
        elif name == "binding":
            entry.update(kind="Binding", verbs=["create"])
        else:
            entry.update(kind=rtype.kind, verbs=_SUBRESOURCE_VERBS)
        out.append(entry)
    return out


def _metric_resource(name: str, kind: str, *, namespaced: bool) -> dict[str, Any]:
    return {
        "name": name,
        "singularName": "",
        "namespaced": namespaced,
        "kind": kind,
        "verbs": ["get"],
    }
