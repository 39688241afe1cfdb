"""`spec.clusterProportional`: cluster-proportional-autoscaler's linear and ladder parameters.

The parameters have exactly the JSON shape of cluster-proportional-autoscaler's
ConfigMap (`data.linear` or `data.ladder`), so a ConfigMap written for it can
be named by `configMapRef` or pasted inline, and they are checked with its
rules and messages. The arithmetic lives in `hvpa.engine.horizontal.proportional`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

__all__ = [
    "ClusterProportionalSpec",
    "ConfigMapRef",
    "LadderParams",
    "LinearParams",
    "ProportionalError",
    "parse_cluster_proportional",
    "parse_configmap_data",
    "parse_ladder",
    "parse_linear",
]


class ProportionalError(ValueError):
    """Parameters that cluster-proportional-autoscaler would refuse; the message is its own."""


@dataclass(frozen=True, slots=True)
class LinearParams:
    cores_per_replica: float = 0.0
    nodes_per_replica: float = 0.0
    min: int = 1
    max: int = 0  # 0: no maximum
    prevent_single_point_failure: bool = False
    include_unschedulable_nodes: bool = False

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.cores_per_replica:
            out["coresPerReplica"] = self.cores_per_replica
        if self.nodes_per_replica:
            out["nodesPerReplica"] = self.nodes_per_replica
        out["min"] = self.min
        if self.max:
            out["max"] = self.max
        if self.prevent_single_point_failure:
            out["preventSinglePointFailure"] = True
        if self.include_unschedulable_nodes:
            out["includeUnschedulableNodes"] = True
        return out


@dataclass(frozen=True, slots=True)
class LadderParams:
    # (threshold, replicas) steps, sorted by threshold.
    cores_to_replicas: tuple[tuple[int, int], ...] = ()
    nodes_to_replicas: tuple[tuple[int, int], ...] = ()
    include_unschedulable_nodes: bool = False

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.cores_to_replicas:
            out["coresToReplicas"] = [list(step) for step in self.cores_to_replicas]
        if self.nodes_to_replicas:
            out["nodesToReplicas"] = [list(step) for step in self.nodes_to_replicas]
        if self.include_unschedulable_nodes:
            out["includeUnschedulableNodes"] = True
        return out


@dataclass(frozen=True, slots=True)
class ConfigMapRef:
    name: str
    namespace: str | None = None  # defaults to the Hvpa's namespace


@dataclass(frozen=True, slots=True)
class ClusterProportionalSpec:
    """Exactly one of `linear`, `ladder` or `config_map_ref` is set."""

    linear: LinearParams | None = None
    ladder: LadderParams | None = None
    config_map_ref: ConfigMapRef | None = None
    node_selector: Mapping[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.linear is not None:
            out["linear"] = self.linear.to_dict()
        if self.ladder is not None:
            out["ladder"] = self.ladder.to_dict()
        if self.config_map_ref is not None:
            ref: dict[str, Any] = {"name": self.config_map_ref.name}
            if self.config_map_ref.namespace:
                ref["namespace"] = self.config_map_ref.namespace
            out["configMapRef"] = ref
        if self.node_selector:
            out["nodeSelector"] = dict(self.node_selector)
        return out


def _number(raw: Mapping[str, Any], key: str, kind: type) -> Any:
    value = raw.get(key, 0)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ProportionalError(
            f"could not parse parameters ({key}: expected a number, got {value!r})"
        )
    if kind is int and value != int(value):
        raise ProportionalError(
            f"could not parse parameters ({key}: expected an integer, got {value!r})"
        )
    return kind(value)


def _flag(raw: Mapping[str, Any], key: str) -> bool:
    value = raw.get(key, False)
    if not isinstance(value, bool):
        raise ProportionalError(
            f"could not parse parameters ({key}: expected true or false, got {value!r})"
        )
    return value


def parse_linear(raw: Mapping[str, Any]) -> LinearParams:
    """Linear parameters, checked as cluster-proportional-autoscaler checks them."""
    if not isinstance(raw, Mapping):
        raise ProportionalError("could not parse parameters (expected a JSON object)")
    cores = _number(raw, "coresPerReplica", float)
    nodes = _number(raw, "nodesPerReplica", float)
    minimum = _number(raw, "min", int)
    maximum = _number(raw, "max", int)
    if minimum < 0:
        raise ProportionalError(f"invalid negative value for min: {minimum}")
    if minimum == 0:
        minimum = 1
    if maximum != 0 and maximum < minimum:
        raise ProportionalError(
            f"max replicas count {maximum} should be greater than / equal to min replicas count {minimum}"
        )
    if cores == 0 and nodes == 0:
        raise ProportionalError(
            "should at least provide either CoresPerReplica or NodesPerReplica (Greater than 0)"
        )
    if cores < 0:
        raise ProportionalError(f"invalid negative value for coresPerReplica: {_go_float(cores)}")
    if nodes < 0:
        raise ProportionalError(f"invalid negative value for nodesPerReplica: {_go_float(nodes)}")
    return LinearParams(
        cores_per_replica=cores,
        nodes_per_replica=nodes,
        min=minimum,
        max=maximum,
        prevent_single_point_failure=_flag(raw, "preventSinglePointFailure"),
        include_unschedulable_nodes=_flag(raw, "includeUnschedulableNodes"),
    )


def _go_float(value: float) -> str:
    return str(int(value)) if value == int(value) else repr(value)


def _steps(raw: Mapping[str, Any], key: str) -> tuple[tuple[int, int], ...]:
    entries = raw.get(key) or []
    if not isinstance(entries, list):
        raise ProportionalError(
            f"could not parse parameters ({key}: expected a list of [count, replicas] pairs)"
        )
    steps: list[tuple[int, int]] = []
    for entry in entries:
        if (
            not isinstance(entry, list)
            or len(entry) != 2
            or any(isinstance(v, bool) or not isinstance(v, int) for v in entry)
        ):
            raise ProportionalError(
                f"could not parse parameters ({key}: {entry!r} is not a pair of integers)"
            )
        steps.append((entry[0], entry[1]))
    return tuple(sorted(steps))


def parse_ladder(raw: Mapping[str, Any]) -> LadderParams:
    """Ladder parameters, checked as cluster-proportional-autoscaler checks them."""
    if not isinstance(raw, Mapping):
        raise ProportionalError("could not parse parameters (expected a JSON object)")
    cores = _steps(raw, "coresToReplicas")
    nodes = _steps(raw, "nodesToReplicas")
    for name, steps in (("coresToReplicas", cores), ("nodesToReplicas", nodes)):
        for threshold, replicas in steps:
            if threshold < 0 or replicas < 0:
                raise ProportionalError(
                    f"invalid negative value in {name}: [{threshold}, {replicas}]"
                )
    return LadderParams(cores, nodes, _flag(raw, "includeUnschedulableNodes"))


def parse_configmap_data(data: Mapping[str, str]) -> LinearParams | LadderParams:
    """A cluster-proportional-autoscaler ConfigMap's `data`: exactly one key, `linear` or `ladder`."""
    if len(data) != 1:
        raise ProportionalError(
            f"invalid configMap format, expected only one entry, got: {dict(data)}"
        )
    ((mode, text),) = data.items()
    if mode not in ("linear", "ladder"):
        raise ProportionalError(f"not a supported control mode: {mode}")
    try:
        raw = orjson.loads(text)
    except orjson.JSONDecodeError as error:
        raise ProportionalError(
            f"error parsing {mode} params: could not parse parameters ({error})"
        ) from error
    try:
        return parse_linear(raw) if mode == "linear" else parse_ladder(raw)
    except ProportionalError as error:
        raise ProportionalError(f"error parsing {mode} params: {error}") from error


def parse_cluster_proportional(raw: Mapping[str, Any]) -> ClusterProportionalSpec:
    """`spec.clusterProportional` as JSON; raise ProportionalError naming the sub-field at fault."""
    modes = [key for key in ("linear", "ladder", "configMapRef") if raw.get(key) is not None]
    if len(modes) != 1:
        raise ProportionalError("exactly one of linear, ladder or configMapRef must be set")
    selector = raw.get("nodeSelector") or {}
    if not isinstance(selector, Mapping) or not all(isinstance(v, str) for v in selector.values()):
        raise ProportionalError("nodeSelector: must be a map of label names to values")
    mode = modes[0]
    try:
        if mode == "linear":
            return ClusterProportionalSpec(
                linear=parse_linear(raw["linear"]), node_selector=dict(selector)
            )
        if mode == "ladder":
            return ClusterProportionalSpec(
                ladder=parse_ladder(raw["ladder"]), node_selector=dict(selector)
            )
    except ProportionalError as error:
        raise ProportionalError(f"{mode}: {error}") from error
    ref = raw["configMapRef"]
    if not isinstance(ref, Mapping) or not ref.get("name"):
        raise ProportionalError("configMapRef.name: required")
    return ClusterProportionalSpec(
        config_map_ref=ConfigMapRef(str(ref["name"]), ref.get("namespace")),
        node_selector=dict(selector),
    )
