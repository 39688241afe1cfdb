"""Knobs a comparison turns: the settings a strategy's result should not depend on too much.

A strategy that wins only in the simulator it was tuned on has not won, so
`hvpa sim --set KNOB=VALUE` changes one setting of a run and `--sweep
KNOB=V1,V2,...` runs the comparison once per value:

    sync-period        how often the controller decides (its resync; 15s by default)
    vpa-margin         the recommender's safety margin over its percentile, percent (15)
    vpa-half-life      how fast the recommender forgets (a duration; default a 24th of the run)
    hpa-target         the HPA's CPU averageUtilization, percent (the Hvpa's)
    max-replicas       the Hvpa's maxReplicas (like for like: high enough that no
                       strategy is pinned there above its own target)
    tolerance          Capacity's joint tolerance, percent (10)
    resize-tolerance   Capacity's resize band while the demand moves, percent (30)
    headroom           Capacity's headroom over the load of a resource without an HPA
                       target (memory here), percent (25)

The first three are the cluster's and the controller's, the next two the
Hvpa's (every strategy reads them), the last three Capacity's own (other
strategies ignore them). What can go wrong: an unknown knob or a value that
does not parse raises KnobError naming it.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from hvpa.durations import DurationError, parse_duration
from hvpa.sim.runner import RunOptions
from hvpa.sim.scenarios import ScenarioError, validated_hvpa

__all__ = [
    "KNOB_NAMES",
    "KnobError",
    "apply_knobs",
    "describe_settings",
    "parse_setting",
    "parse_sweep",
]


class KnobError(ValueError):
    """A knob that does not exist, or a value it cannot take."""


def _duration(text: str) -> float:
    try:
        seconds = parse_duration(text)
    except DurationError as error:
        raise KnobError(str(error)) from None
    if seconds <= 0:
        raise KnobError(f"{text!r} is not a positive duration")
    return seconds


def _number(text: str, low: float, high: float) -> float:
    try:
        value = float(text.removesuffix("%"))
    except ValueError:
        raise KnobError(f"{text!r} is not a number") from None
    if not low <= value <= high:
        raise KnobError(f"{text!r} is not within {low:g}..{high:g}")
    return value


def _hpa_spec(hvpa: dict[str, Any]) -> dict[str, Any]:
    template: dict[str, Any] = hvpa["spec"].setdefault("hpa", {}).setdefault("template", {})
    spec: dict[str, Any] = template.setdefault("spec", {})
    return spec


def _sync_period(options: RunOptions, text: str) -> RunOptions:
    controller = dataclasses.replace(options.controller, sync_period_seconds=_duration(text))
    return dataclasses.replace(options, controller=controller)


def _vpa_margin(options: RunOptions, text: str) -> RunOptions:
    return dataclasses.replace(options, vpa_margin=_number(text, 0, 1000) / 100)


def _vpa_half_life(options: RunOptions, text: str) -> RunOptions:
    return dataclasses.replace(options, half_life_seconds=_duration(text))


def _with_hvpa(options: RunOptions, change: Callable[[dict[str, Any]], None]) -> RunOptions:
    hvpa = copy.deepcopy(dict(options.scenario.hvpa))
    change(hvpa)
    return dataclasses.replace(options, scenario=dataclasses.replace(options.scenario, hvpa=hvpa))


def _hpa_target(options: RunOptions, text: str) -> RunOptions:
    target = int(_number(text, 1, 100))

    def change(hvpa: dict[str, Any]) -> None:
        metrics = _hpa_spec(hvpa).get("metrics") or []
        found = [
            m
            for m in metrics
            if m.get("type") == "Resource" and (m.get("resource") or {}).get("name") == "cpu"
        ]
        if not found:
            raise KnobError("hpa-target: the Hvpa has no Resource cpu metric to set")
        for metric in found:
            metric["resource"]["target"] = {"type": "Utilization", "averageUtilization": target}

    return _with_hvpa(options, change)


def _max_replicas(options: RunOptions, text: str) -> RunOptions:
    """maxReplicas, and a Capacity curve cut there: a point beyond it moves to it (validation
    refuses a point no count can reach), so a flat tail stays flat."""
    most = int(_number(text, 1, 100_000))

    def change(hvpa: dict[str, Any]) -> None:
        _hpa_spec(hvpa)["maxReplicas"] = most
        for point in (hvpa["spec"].get("capacity") or {}).get("curve") or ():
            point["replicas"] = min(int(point["replicas"]), most)

    return _with_hvpa(options, change)


def _capacity_field(name: str) -> Callable[[RunOptions, str], RunOptions]:
    def knob(options: RunOptions, text: str) -> RunOptions:
        value = _number(text, 0, 1000)

        def change(hvpa: dict[str, Any]) -> None:
            capacity = hvpa["spec"].get("capacity")
            if capacity is not None:
                capacity[name] = int(value) if value == int(value) else value

        return _with_hvpa(options, change)

    return knob


_KNOBS: Final[dict[str, Callable[[RunOptions, str], RunOptions]]] = {
    "sync-period": _sync_period,
    "vpa-margin": _vpa_margin,
    "vpa-half-life": _vpa_half_life,
    "hpa-target": _hpa_target,
    "max-replicas": _max_replicas,
    "tolerance": _capacity_field("tolerance"),
    "resize-tolerance": _capacity_field("resizeTolerance"),
    "headroom": _capacity_field("headroom"),
}
KNOB_NAMES: Final = tuple(_KNOBS)


def _knob(name: str) -> Callable[[RunOptions, str], RunOptions]:
    knob = _KNOBS.get(name)
    if knob is None:
        raise KnobError(f"unknown knob {name!r}: expected one of {', '.join(KNOB_NAMES)}")
    return knob


def parse_setting(text: str) -> tuple[str, str]:
    """`KNOB=VALUE` (one `--set`)."""
    name, sep, value = text.partition("=")
    if not sep or not value.strip():
        raise KnobError(f"{text!r} is not KNOB=VALUE (knobs: {', '.join(KNOB_NAMES)})")
    _knob(name.strip())
    return name.strip(), value.strip()


def parse_sweep(text: str) -> tuple[str, tuple[str, ...]]:
    """`KNOB=V1,V2,...` (the `--sweep`)."""
    name, value = parse_setting(text)
    values = tuple(v.strip() for v in value.split(",") if v.strip())
    return name, values


def apply_knobs(options: RunOptions, settings: Sequence[tuple[str, str]]) -> RunOptions:
    """The run with each knob set, in order (a later setting of the same knob wins).

    The Hvpa is validated again afterwards: a setting that makes it invalid
    (an HPA target on an Hvpa without one, a maxReplicas below minReplicas)
    is an error here, not a run in which nothing scales.
    """
    for name, value in settings:
        knob = _knob(name)
        try:
            options = knob(options, value)
        except KnobError as error:
            raise KnobError(f"{name}={value}: {error}") from None
    if settings:
        try:
            validated_hvpa(options.scenario.hvpa, f"with {describe_settings(dict(settings))}")
        except ScenarioError as error:
            raise KnobError(str(error)) from None
    return options


def describe_settings(settings: Mapping[str, str]) -> str:
    """`hpa-target=50, sync-period=60s` for a table's title."""
    return ", ".join(f"{name}={value}" for name, value in settings.items()) or "defaults"
