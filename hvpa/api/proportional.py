"""`spec.clusterProportional`: cluster-proportional-autoscaler's linear and ladder parameters.

The parameters have exactly the JSON shape of cluster-proportional-autoscaler's
ConfigMap (`data.linear` or `data.ladder`), so a ConfigMap written for it can
be named by `configMapRef` or pasted inline, and they are read the way its
controllers read them (pkg/autoscaler/controller/linearcontroller,
laddercontroller and plugin, v1.10): Go's encoding/json into its parameter
structs, then its checks. That includes Go's quirks: keys match field names
case-insensitively, unknown keys are ignored, null leaves a field at zero,
an integer field refuses `2.0`, and a ladder step is a `[2]int`, so `[5]`
reads as `[5, 0]` and extra numbers are dropped. The arithmetic lives in
`hvpa.engine.horizontal.proportional`.

What CPA refuses is an invalid spec for hvpa (docs/cluster-proportional.md):
a `ProportionalError` names the parameter (`linear.min`,
`ladder.coresToReplicas[2]`) and the rule it breaks, in the same words
whether the parameters are inline or in a ConfigMap, and never repeats a
value: whoever may create an Hvpa need not be allowed to read the ConfigMaps
of its namespace, and a message lands in the Hvpa's status, so it carries
only key names and sizes, never the data.

Both forms are parsed once per distinct content (`parse_cluster_proportional`
and `parse_configmap_data` keep their results keyed by the JSON text and by
the ConfigMap's data), not once per decision.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

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
    """Parameters cluster-proportional-autoscaler would refuse: the parameter at fault and the rule.

    `field` is the parameter's path below `clusterProportional` (`linear.min`),
    or '' for the whole; `problem` says what is wrong without repeating the
    value.
    """

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}" if field else problem)
        self.field = field
        self.problem = problem


@dataclass(frozen=True, slots=True)
class LinearParams:
    cores_per_replica: float = 0.0
    nodes_per_replica: float = 0.0
    min: int = 1
    max: int = 0  # 0: no maximum
    prevent_single_point_failure: bool = False
    include_unschedulable_nodes: bool = False


@dataclass(frozen=True, slots=True)
class LadderParams:
    # (threshold, replicas) steps, sorted by threshold.
    cores_to_replicas: tuple[tuple[int, int], ...] = ()
    nodes_to_replicas: tuple[tuple[int, int], ...] = ()
    include_unschedulable_nodes: bool = False


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


# ---------------------------------------------------------------------------
# Go's encoding/json, for the two parameter structs.


@dataclass(frozen=True, slots=True)
class _Number:
    """A JSON number with its literal text: Go decides int-ness from the text (`2.0` is not an int)."""

    text: str


_MAX_INT64: Final = 2**63 - 1
_MIN_INT64: Final = -(2**63)


def _kind(value: Any) -> str:
    """What a JSON value is, in words (never the value itself)."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, _Number):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


class _Decoder:
    """Decodes into one struct, remembering the first type error like encoding/json."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.error: ProportionalError | None = None

    def fail(self, name: str, problem: str) -> None:
        if self.error is None:
            self.error = ProportionalError(f"{self.mode}.{name}", problem)

    def read_float(self, value: Any, name: str, current: float) -> float:
        if value is None:
            return current
        if isinstance(value, _Number):
            number = float(value.text)
            if number in (float("inf"), float("-inf")):
                self.fail(name, "must be a number within float64")
                return current
            return number
        self.fail(name, f"must be a number, not {_kind(value)}")
        return current

    def read_int(self, value: Any, name: str, current: int) -> int:
        if value is None:
            return current
        if isinstance(value, _Number):
            text = value.text
            digits = text[1:] if text[:1] == "-" else text
            if not digits.isdigit():
                self.fail(name, "must be a whole number")
                return current
            if not _MIN_INT64 <= int(text) <= _MAX_INT64:
                self.fail(name, "must be a whole number within int64")
                return current
            return int(text)
        self.fail(name, f"must be a whole number, not {_kind(value)}")
        return current

    def read_bool(self, value: Any, name: str, current: bool) -> bool:
        if value is None:
            return current
        if isinstance(value, bool):
            return value
        self.fail(name, f"must be true or false, not {_kind(value)}")
        return current

    def entries(self, value: Any, name: str) -> list[tuple[int, int]]:
        """A paramEntries ([][2]int): short steps are zero-filled, long ones cut to two."""
        if value is None:
            return []
        if not isinstance(value, list):
            self.fail(name, f"must be a list of [count, replicas] steps, not {_kind(value)}")
            return []
        steps: list[tuple[int, int]] = []
        for index, item in enumerate(value):
            pair = [0, 0]
            if isinstance(item, list):
                for position, element in enumerate(item[:2]):
                    pair[position] = self.read_int(element, f"{name}[{index}]", 0)
            elif item is not None:
                self.fail(
                    f"{name}[{index}]", f"must be a [count, replicas] step, not {_kind(item)}"
                )
            steps.append((pair[0], pair[1]))
        return steps


def _fields(raw: Any, mode: str, names: tuple[str, ...]) -> list[tuple[str, Any]]:
    """The struct's fields in document order: exact key match first, then case-insensitive."""
    if raw is None:
        return []
    if not isinstance(raw, Mapping):
        raise ProportionalError(mode, f"must be an object, not {_kind(raw)}")
    found: list[tuple[str, Any]] = []
    for key, value in raw.items():
        name = (
            key if key in names else next((n for n in names if n.lower() == str(key).lower()), None)
        )
        if name is not None:
            found.append((name, value))
    return found


def _from_python(value: Any) -> Any:
    """An already-parsed value (YAML, JSON) in the decoder's terms: numbers keep their spelling."""
    if isinstance(value, bool) or value is None or isinstance(value, str | _Number):
        return value
    if isinstance(value, int):
        return _Number(str(value))
    if isinstance(value, float):
        return _Number(repr(value))
    if isinstance(value, Mapping):
        return {str(k): _from_python(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_from_python(v) for v in value]
    return str(value)


_LINEAR_FIELDS: Final = (
    "coresPerReplica",
    "nodesPerReplica",
    "min",
    "max",
    "preventSinglePointFailure",
    "includeUnschedulableNodes",
)
_LADDER_FIELDS: Final = ("coresToReplicas", "nodesToReplicas", "includeUnschedulableNodes")


def _linear(raw: Any) -> LinearParams:
    """linearcontroller.parseParams: decode, then its checks in its order."""
    decode = _Decoder("linear")
    cores = nodes = 0.0
    minimum = maximum = 0
    single_point = unschedulable = False
    for name, value in _fields(raw, "linear", _LINEAR_FIELDS):
        if name == "coresPerReplica":
            cores = decode.read_float(value, name, cores)
        elif name == "nodesPerReplica":
            nodes = decode.read_float(value, name, nodes)
        elif name == "min":
            minimum = decode.read_int(value, name, minimum)
        elif name == "max":
            maximum = decode.read_int(value, name, maximum)
        elif name == "preventSinglePointFailure":
            single_point = decode.read_bool(value, name, single_point)
        else:
            unschedulable = decode.read_bool(value, name, unschedulable)
    if decode.error is not None:
        raise decode.error
    if minimum < 0:
        raise ProportionalError("linear.min", "must not be negative")
    if minimum == 0:
        minimum = 1
    if maximum != 0 and maximum < minimum:
        raise ProportionalError("linear.max", "must be 0 (no maximum) or at least min")
    if cores == 0 and nodes == 0:
        raise ProportionalError(
            "linear", "set coresPerReplica or nodesPerReplica (greater than 0), or both"
        )
    if cores < 0:
        raise ProportionalError("linear.coresPerReplica", "must not be negative")
    if nodes < 0:
        raise ProportionalError("linear.nodesPerReplica", "must not be negative")
    return LinearParams(cores, nodes, minimum, maximum, single_point, unschedulable)


def _ladder(raw: Any) -> LadderParams:
    """laddercontroller.parseParams: decode, refuse negative steps, sort by threshold."""
    decode = _Decoder("ladder")
    cores: list[tuple[int, int]] = []
    nodes: list[tuple[int, int]] = []
    unschedulable = False
    for name, value in _fields(raw, "ladder", _LADDER_FIELDS):
        if name == "coresToReplicas":
            cores = decode.entries(value, name)
        elif name == "nodesToReplicas":
            nodes = decode.entries(value, name)
        else:
            unschedulable = decode.read_bool(value, name, unschedulable)
    if decode.error is not None:
        raise decode.error
    for name, steps in (("coresToReplicas", cores), ("nodesToReplicas", nodes)):
        for index, (threshold, replicas) in enumerate(steps):
            if threshold < 0 or replicas < 0:
                raise ProportionalError(f"ladder.{name}[{index}]", "must not be negative")
    return LadderParams(
        tuple(sorted(cores, key=lambda step: step[0])),
        tuple(sorted(nodes, key=lambda step: step[0])),
        unschedulable,
    )


def parse_linear(raw: Any) -> LinearParams:
    """Linear parameters from parsed JSON or YAML, checked as cluster-proportional-autoscaler checks them."""
    return _linear(_from_python(raw))


def parse_ladder(raw: Any) -> LadderParams:
    """Ladder parameters from parsed JSON or YAML, checked as cluster-proportional-autoscaler checks them."""
    return _ladder(_from_python(raw))


# ---------------------------------------------------------------------------
# The ConfigMap (plugin.EnsureController and the controllers' SyncConfig)


class _Constant(ValueError):
    """NaN or Infinity, which Python's json reads and Go's refuses."""


def _reject_constant(text: str) -> Any:
    raise _Constant(text)


def _loads(mode: str, text: str) -> Any:
    """The parameters' JSON; a syntax error says where (a byte offset), not what is there."""
    try:
        return json.loads(
            text, parse_int=_Number, parse_float=_Number, parse_constant=_reject_constant
        )
    except json.JSONDecodeError as error:
        raise ProportionalError(
            mode, f"not valid JSON: {error.msg} at byte {error.pos} of {len(text)}"
        ) from error
    except _Constant as error:
        raise ProportionalError(mode, "not valid JSON: NaN and Infinity are not numbers") from error


_MODES: Final[dict[str, Callable[[Any], LinearParams | LadderParams]]] = {
    "linear": _linear,
    "ladder": _ladder,
}


def _entries(data: Mapping[str, str], sizes: Mapping[str, int]) -> str:
    """The ConfigMap's keys and the size of each value, never the values."""
    return (
        ", ".join(
            f"{key} ({sizes.get(key, len(data[key].encode()))} bytes)" for key in sorted(data)
        )
        or "none"
    )


def parse_configmap_data(
    data: Mapping[str, str], sizes: Mapping[str, int] | None = None
) -> LinearParams | LadderParams:
    """A cluster-proportional-autoscaler ConfigMap's `data`: exactly one key, `linear` or `ladder`.

    `sizes`: each value's size in bytes where `data` no longer holds the value itself
    (the controller keeps only a one-key CPA ConfigMap's parameters); messages name
    keys and sizes only.
    """
    parsed = _configmap_data(tuple(sorted(data.items())), tuple(sorted((sizes or {}).items())))
    if isinstance(parsed, ProportionalError):
        # A fresh error each time: raising the cached one would grow its traceback.
        raise ProportionalError(parsed.field, parsed.problem)
    return parsed


@functools.lru_cache(maxsize=256)
def _configmap_data(
    items: tuple[tuple[str, str], ...], size_items: tuple[tuple[str, int], ...]
) -> LinearParams | LadderParams | ProportionalError:
    """plugin.EnsureController and SyncConfig, once per distinct content."""
    data, sizes = dict(items), dict(size_items)
    if len(data) != 1:
        return ProportionalError(
            "",
            "a ConfigMap must hold exactly one key, linear or ladder; "
            f"it has {_entries(data, sizes)}",
        )
    ((mode, text),) = data.items()
    reader = _MODES.get(mode)
    if reader is None:
        return ProportionalError(
            "", f"{_entries(data, sizes)}: not a supported mode (linear or ladder)"
        )
    try:
        return reader(_loads(mode, text))
    except ProportionalError as error:
        return error


def parse_cluster_proportional(raw: Mapping[str, Any]) -> ClusterProportionalSpec:
    """`spec.clusterProportional` as JSON; raise ProportionalError naming the sub-field at fault."""
    parsed = _cluster_proportional(json.dumps(raw, sort_keys=True))
    if isinstance(parsed, ProportionalError):
        raise ProportionalError(parsed.field, parsed.problem)
    return parsed


@functools.lru_cache(maxsize=256)
def _cluster_proportional(text: str) -> ClusterProportionalSpec | ProportionalError:
    """The inline form, once per distinct JSON text (so once per generation of an Hvpa)."""
    raw = json.loads(text)
    modes = [key for key in ("linear", "ladder", "configMapRef") if raw.get(key) is not None]
    if len(modes) != 1:
        return ProportionalError("", "exactly one of linear, ladder or configMapRef must be set")
    selector = raw.get("nodeSelector") or {}
    if not isinstance(selector, Mapping) or not all(isinstance(v, str) for v in selector.values()):
        return ProportionalError("nodeSelector", "must be a map of label names to values")
    node_selector = {str(k): v for k, v in selector.items()}
    mode = modes[0]
    try:
        if mode == "linear":
            return ClusterProportionalSpec(
                linear=parse_linear(raw["linear"]), node_selector=node_selector
            )
        if mode == "ladder":
            return ClusterProportionalSpec(
                ladder=parse_ladder(raw["ladder"]), node_selector=node_selector
            )
    except ProportionalError as error:
        return error
    ref = raw["configMapRef"]
    if not isinstance(ref, Mapping) or not ref.get("name"):
        return ProportionalError("configMapRef.name", "required")
    namespace = ref.get("namespace")
    return ClusterProportionalSpec(
        config_map_ref=ConfigMapRef(str(ref["name"]), str(namespace) if namespace else None),
        node_selector=node_selector,
    )
