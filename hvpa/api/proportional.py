"""`spec.clusterProportional`: cluster-proportional-autoscaler's linear and ladder parameters.

The parameters have exactly the JSON shape of cluster-proportional-autoscaler's
ConfigMap (`data.linear` or `data.ladder`), so a ConfigMap written for it can
be named by `configMapRef` or pasted inline, and they are read the way its
controllers read them (pkg/autoscaler/controller/linearcontroller,
laddercontroller and plugin): Go's encoding/json into its parameter structs,
then its checks, with its error messages. That includes Go's quirks: keys
match field names case-insensitively, unknown keys are ignored, null leaves
a field at zero, an integer field refuses `2.0`, and a ladder step is a
`[2]int`, so `[5]` reads as `[5, 0]` and extra numbers are dropped. The
arithmetic lives in `hvpa.engine.horizontal.proportional`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Final, NoReturn

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

# Go type names as json's UnmarshalTypeError prints them.
_LINEAR: Final = "linearcontroller.linearParams"
_LADDER: Final = "laddercontroller.ladderParams"
_ENTRIES: Final = "laddercontroller.paramEntries"
_ENTRY: Final = "laddercontroller.paramEntry"


def _kind(value: Any) -> str:
    """The `Value` json.UnmarshalTypeError names for a JSON value."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, _Number):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


class _Decoder:
    """Decodes into one struct, remembering the first type error like encoding/json."""

    def __init__(self, struct: str) -> None:
        self.struct = struct
        self.error: str | None = None

    def fail(self, value: str, field_name: str, go_type: str) -> None:
        if self.error is None:
            self.error = (
                f"json: cannot unmarshal {value} into Go struct field "
                f"{self.struct}.{field_name} of type {go_type}"
            )

    def read_float(self, value: Any, name: str, current: float) -> float:
        if value is None:
            return current
        if isinstance(value, _Number):
            number = float(value.text)
            if number in (float("inf"), float("-inf")):
                self.fail(f"number {value.text}", name, "float64")
                return current
            return number
        self.fail(_kind(value), name, "float64")
        return current

    def read_int(self, value: Any, name: str, current: int) -> int:
        if value is None:
            return current
        if isinstance(value, _Number):
            text = value.text
            digits = text[1:] if text[:1] == "-" else text
            if digits.isdigit() and _MIN_INT64 <= int(text) <= _MAX_INT64:
                return int(text)
            self.fail(f"number {text}", name, "int")
            return current
        self.fail(_kind(value), name, "int")
        return current

    def read_bool(self, value: Any, name: str, current: bool) -> bool:
        if value is None:
            return current
        if isinstance(value, bool):
            return value
        self.fail(_kind(value), name, "bool")
        return current

    def entries(self, value: Any, name: str) -> list[tuple[int, int]]:
        """A paramEntries ([][2]int): short steps are zero-filled, long ones cut to two."""
        if value is None:
            return []
        if not isinstance(value, list):
            self.fail(_kind(value), name, _ENTRIES)
            return []
        steps: list[tuple[int, int]] = []
        for item in value:
            pair = [0, 0]
            if isinstance(item, list):
                for index, element in enumerate(item[:2]):
                    pair[index] = self.read_int(element, name, 0)
            elif item is not None:
                self.fail(_kind(item), name, _ENTRY)
            steps.append((pair[0], pair[1]))
        return steps


def _fields(raw: Any, go_type: str, names: tuple[str, ...]) -> list[tuple[str, Any]]:
    """The struct's fields in document order: exact key match first, then case-insensitive."""
    if raw is None:
        return []
    if not isinstance(raw, Mapping):
        raise ProportionalError(
            f"could not parse parameters (json: cannot unmarshal {_kind(raw)} into Go value "
            f"of type {go_type})"
        )
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


def _go_value(value: float) -> str:
    """`%v` of a Go float64: shortest digits, exponent form below 1e-4 and from 1e+06."""
    if value == 0:
        return "0"
    _, digit_tuple, exponent = Decimal(repr(abs(value))).normalize().as_tuple()
    digits = "".join(map(str, digit_tuple))
    point = len(digits) + int(exponent)  # digits before the decimal point
    sign = "-" if value < 0 else ""
    if point - 1 < -4 or point - 1 >= 6:
        body = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{body}e{'-' if point < 1 else '+'}{abs(point - 1):02d}"
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return f"{sign}{digits}{'0' * (point - len(digits))}"
    return f"{sign}{digits[:point]}.{digits[point:]}"


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
    decode = _Decoder("linearParams")
    cores = nodes = 0.0
    minimum = maximum = 0
    single_point = unschedulable = False
    for name, value in _fields(raw, _LINEAR, _LINEAR_FIELDS):
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
        raise ProportionalError(f"could not parse parameters ({decode.error})")
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
        raise ProportionalError(f"invalid negative value for coresPerReplica: {_go_value(cores)}")
    if nodes < 0:
        raise ProportionalError(f"invalid negative value for nodesPerReplica: {_go_value(nodes)}")
    return LinearParams(cores, nodes, minimum, maximum, single_point, unschedulable)


def _ladder(raw: Any) -> LadderParams:
    decode = _Decoder("ladderParams")
    cores: list[tuple[int, int]] = []
    nodes: list[tuple[int, int]] = []
    unschedulable = False
    for name, value in _fields(raw, _LADDER, _LADDER_FIELDS):
        if name == "coresToReplicas":
            cores = decode.entries(value, name)
        elif name == "nodesToReplicas":
            nodes = decode.entries(value, name)
        else:
            unschedulable = decode.read_bool(value, name, unschedulable)
    if decode.error is not None:
        raise ProportionalError(f"could not parse parameters ({decode.error})")
    for map_name, steps in (("cores_to_replicas_map", cores), ("nodes_to_replicas_map", nodes)):
        for threshold, replicas in steps:
            if threshold < 0 or replicas < 0:
                raise ProportionalError(
                    f"invalid negative values in entry [{threshold} {replicas}] in {map_name}"
                )
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


def _reject_constant(text: str) -> NoReturn:
    raise ValueError(f"invalid character '{text[0]}' looking for beginning of value")


def _innermost(text: str) -> str:
    """The innermost open bracket before the end of `text` ('{', '[' or ''), skipping strings."""
    stack: list[str] = []
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            stack.append(char)
        elif char in "]}" and stack:
            stack.pop()
    return stack[-1] if stack else ""


def _syntax_error(error: json.JSONDecodeError) -> str:
    """Go's wording for the commonest JSON syntax errors."""
    if error.pos >= len(error.doc.rstrip()):
        return "unexpected end of JSON input"
    char = error.doc[error.pos]
    if error.msg == "Extra data":
        return f"invalid character '{char}' after top-level value"
    if error.msg == "Expecting ',' delimiter":
        inside = _innermost(error.doc[: error.pos])
        where = "after array element" if inside == "[" else "after object key:value pair"
        return f"invalid character '{char}' {where}"
    context = {
        "Expecting property name enclosed in double quotes": "looking for beginning of object key string",
        "Expecting ':' delimiter": "after object key",
    }.get(error.msg, "looking for beginning of value")
    return f"invalid character '{char}' {context}"


def _loads(text: str) -> Any:
    try:
        return json.loads(
            text,
            parse_int=_Number,
            parse_float=_Number,
            parse_constant=_reject_constant,
        )
    except json.JSONDecodeError as error:
        raise ProportionalError(f"could not parse parameters ({_syntax_error(error)})") from error
    except ValueError as error:
        raise ProportionalError(f"could not parse parameters ({error})") from error


_MODES: Final[dict[str, Callable[[Any], LinearParams | LadderParams]]] = {
    "linear": _linear,
    "ladder": _ladder,
}


def _go_map(data: Mapping[str, str]) -> str:
    return "map[" + " ".join(f"{key}:{data[key]}" for key in sorted(data)) + "]"


def parse_configmap_data(data: Mapping[str, str]) -> LinearParams | LadderParams:
    """A cluster-proportional-autoscaler ConfigMap's `data`: exactly one key, `linear` or `ladder`."""
    if len(data) != 1:
        raise ProportionalError(
            f"invalid configMap format, expected only one entry, got: {_go_map(data)}"
        )
    ((mode, text),) = data.items()
    reader = _MODES.get(mode)
    if reader is None:
        raise ProportionalError(f"not a supported control mode: {mode}")
    try:
        return reader(_loads(text))
    except ProportionalError as error:
        raise ProportionalError(
            f"Error syncing configMap with controller: error parsing {mode} params: {error}"
        ) from error


def parse_cluster_proportional(raw: Mapping[str, Any]) -> ClusterProportionalSpec:
    """`spec.clusterProportional` as JSON; raise ProportionalError naming the sub-field at fault."""
    modes = [key for key in ("linear", "ladder", "configMapRef") if raw.get(key) is not None]
    if len(modes) != 1:
        raise ProportionalError("exactly one of linear, ladder or configMapRef must be set")
    selector = raw.get("nodeSelector") or {}
    if not isinstance(selector, Mapping) or not all(isinstance(v, str) for v in selector.values()):
        raise ProportionalError("nodeSelector: must be a map of label names to values")
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
        raise ProportionalError(f"{mode}: {error}") from error
    ref = raw["configMapRef"]
    if not isinstance(ref, Mapping) or not ref.get("name"):
        raise ProportionalError("configMapRef.name: required")
    namespace = ref.get("namespace")
    return ClusterProportionalSpec(
        config_map_ref=ConfigMapRef(str(ref["name"]), str(namespace) if namespace else None),
        node_selector=node_selector,
    )
