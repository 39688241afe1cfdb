"""The gates every strategy's plan passes: update policy, maintenance window, stabilization, MinChange, rollout.

Each gate is checked on its own for every change, so every gate that blocks
a change is reported, not only the first (Gardener reported one reason per
resource, by a fixed priority). The blocked list is the latest decision's:
the caller writes it to `status.lastBlockedScaling` as it is, empty when
nothing was blocked, and never keeps an older one (Gardener kept the previous
list whenever nothing was blocked, so a block that had long cleared stayed
in the status).

A replica move that only brings the count back within [minReplicas,
maxReplicas] passes every gate but another writer's hold, as upstream's HPA
applies it at once.

MinChange's default (no `minChange` written) is Gardener's 200m CPU and
200M memory: the smallest step worth a rolling update. Resized in place a
step restarts nothing, so there `in_place_min_change` makes the default the
VPA updater's: a tenth of the current request (its threshold for a
significant change), for each resource no sized container restarts for.

Stabilization is per axis and direction: `status.history.lastScaleTimes`
keeps one time for each (status.read_scale_times seeds all four from
Gardener's single `status.lastScaling.lastScaleTime` until hvpa keeps its
own); a time missing there means that axis and direction never scaled.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Final

from hvpa.api.maintenance import (
    MaintenanceWindow,
    MaintenanceWindowError,
    parse_maintenance_window,
)
from hvpa.api.spec import HvpaSpec, ScaleType
from hvpa.api.status import HvpaStatus, LastScaleTimes
from hvpa.durations import parse_duration
from hvpa.engine.explain import counted
from hvpa.engine.strategies.plan import (
    MAINTENANCE_WINDOW,
    MIN_CHANGE,
    REASONS,
    ROLLOUT,
    STABILIZATION_WINDOW,
    UPDATE_POLICY,
    Axis,
    Blocked,
    Hold,
    Plan,
    direction_of,
)
from hvpa.engine.vertical import (
    ChangeParams,
    Direction,
    ResourceChange,
    ScaleParams,
    clears_min_change,
)
from hvpa.quantity import format_human_resource

__all__ = [
    "NO_MIN_CHANGE",
    "SCALE_KEYS",
    "GateSettings",
    "Gated",
    "MaintenanceWindow",
    "MaintenanceWindowError",
    "apply_gates",
    "fill_min_change",
    "gate_settings",
    "in_place_min_change",
    "last_scale_times",
    "last_vertical_scaling",
    "parse_maintenance_window",
    "record_scale_times",
    "report",
    "scale_key",
    "scale_times_from_status",
]

MODE_AUTO: Final = "Auto"
MODE_OFF: Final = "Off"
MODE_MAINTENANCE_WINDOW: Final = "MaintenanceWindow"
SCALE_KEYS: Final = ("horizontalUp", "horizontalDown", "verticalUp", "verticalDown")
_SPEC_PATHS: Final = {
    "horizontalUp": "hpa.scaleUp",
    "horizontalDown": "hpa.scaleDown",
    "verticalUp": "vpa.scaleUp",
    "verticalDown": "vpa.scaleDown",
}


def scale_key(axis: Axis, direction: Direction) -> str:
    """The `lastScaleTimes` field (and settings key) of an axis and direction."""
    return f"{axis}{direction.capitalize()}"


@dataclass(frozen=True, slots=True)
class GateSettings:
    """The spec's gate parameters, keyed by SCALE_KEYS.

    `update_modes`: Auto (default), Off or MaintenanceWindow, from
    `hpa/vpa.scaleUp/scaleDown.updatePolicy.updateMode`;
    `stabilization_seconds`: from their `stabilizationDuration` (0 when unset);
    `min_change_up/down`: `vpa.scaleUp/scaleDown.minChange`.
    """

    update_modes: Mapping[str, str] = field(default_factory=dict)
    stabilization_seconds: Mapping[str, float] = field(default_factory=dict)
    maintenance_window: MaintenanceWindow | None = None
    min_change_up: ScaleParams | None = None
    min_change_down: ScaleParams | None = None


def gate_settings(spec: HvpaSpec) -> GateSettings:
    """The gate parameters of a (defaulted, validated) Hvpa spec.

    Raises DurationError or MaintenanceWindowError on values validation
    would have rejected.
    """
    scales: dict[str, ScaleType | None] = {
        "horizontalUp": spec.hpa.scale_up,
        "horizontalDown": spec.hpa.scale_down,
        "verticalUp": spec.vpa.scale_up,
        "verticalDown": spec.vpa.scale_down,
    }
    modes = {
        key: scale.update_policy.update_mode
        for key, scale in scales.items()
        if scale is not None and scale.update_policy is not None and scale.update_policy.update_mode
    }
    windows = {
        key: parse_duration(scale.stabilization_duration)
        for key, scale in scales.items()
        if scale is not None and scale.stabilization_duration is not None
    }
    window = spec.maintenance_time_window
    return GateSettings(
        update_modes=modes,
        stabilization_seconds=windows,
        maintenance_window=parse_maintenance_window(window.begin, window.end) if window else None,
        min_change_up=spec.vpa.scale_up.min_change if spec.vpa.scale_up else None,
        min_change_down=spec.vpa.scale_down.min_change if spec.vpa.scale_down else None,
    )


# The VPA updater resizes a long-lived pod when requests and recommendations differ by more than
# this much (its update priority's significant change, 10%).
IN_PLACE_MIN_CHANGE_PERCENT: Final = 10


@dataclass(frozen=True, slots=True)
class _Change:
    value: str | int | float | None = None
    percentage: int | None = None


@dataclass(frozen=True, slots=True)
class _Scale:
    cpu: ChangeParams | None = None
    memory: ChangeParams | None = None


# A minChange of 0: every step counts (Capacity's, where a count and a size move together).
NO_MIN_CHANGE: Final = _Change(value="0")


def _filled(current: ChangeParams | None, default: ChangeParams | None) -> ChangeParams | None:
    unset = current is None or (current.value is None and current.percentage is None)
    return default if unset and default is not None else current


def fill_min_change(
    params: ScaleParams | None, resources: Sequence[str], default: ChangeParams
) -> ScaleParams:
    """`params` with `default` for each of `resources` it leaves unset, resource by resource
    (a spec that sets memory only still gets the default for CPU)."""
    return _Scale(
        cpu=_filled(params.cpu if params else None, default if "cpu" in resources else None),
        memory=_filled(
            params.memory if params else None, default if "memory" in resources else None
        ),
    )


def in_place_min_change(params: ScaleParams | None, resources: Sequence[str]) -> ScaleParams:
    """`params` with the in-place default for each of `resources` it leaves unset."""
    return fill_min_change(params, resources, _Change(percentage=IN_PLACE_MIN_CHANGE_PERCENT))


def scale_times_from_status(
    status: HvpaStatus | None,
) -> tuple[dict[str, float | None] | None, float | None]:
    """`status.history.lastScaleTimes` by SCALE_KEYS, and Gardener's `lastScaling.lastScaleTime`."""
    if status is None:
        return None, None
    legacy = status.last_scaling.last_scale_time if status.last_scaling else None
    times = status.history.last_scale_times if status.history else None
    by_key = None
    if times is not None:
        moments = (
            times.horizontal_up,
            times.horizontal_down,
            times.vertical_up,
            times.vertical_down,
        )
        by_key = {
            key: moment.timestamp() if moment else None
            for key, moment in zip(SCALE_KEYS, moments, strict=True)
        }
    return by_key, legacy.timestamp() if legacy else None


def last_scale_times(scale_times: Mapping[str, float]) -> LastScaleTimes:
    """record_scale_times' result in the status's shape."""

    def moment(key: str) -> datetime | None:
        value = scale_times.get(key)
        return datetime.fromtimestamp(int(value), UTC) if value is not None else None

    return LastScaleTimes(
        horizontal_up=moment("horizontalUp"),
        horizontal_down=moment("horizontalDown"),
        vertical_up=moment("verticalUp"),
        vertical_down=moment("verticalDown"),
    )


def last_vertical_scaling(scale_times: Mapping[str, float | None] | None) -> float | None:
    """When the pods were last resized, either way; None when they never were."""
    times = scale_times or {}
    known = [t for key in ("verticalUp", "verticalDown") if (t := times.get(key)) is not None]
    return max(known, default=None)


@dataclass(frozen=True, slots=True)
class Gated:
    """The plan after the gates: what is applied, what is blocked and why."""

    replicas: int
    applied: tuple[ResourceChange, ...]
    blocked: tuple[Blocked, ...]
    explanation: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Context:
    settings: GateSettings
    now: float
    scale_times: Mapping[str, float | None] | None
    rollout: str | None
    holds: tuple[Hold, ...]


def _mode_blocks(key: str, context: _Context) -> list[tuple[str, str]]:
    mode = context.settings.update_modes.get(key) or MODE_AUTO
    path = _SPEC_PATHS[key]
    if mode == MODE_OFF:
        return [(UPDATE_POLICY, f"{path}.updatePolicy.updateMode is Off")]
    if mode == MODE_MAINTENANCE_WINDOW:
        window = context.settings.maintenance_window
        if window is None:
            why = f"{path}.updatePolicy.updateMode is MaintenanceWindow but no maintenanceTimeWindow is set"
            return [(MAINTENANCE_WINDOW, why)]
        if not window.contains(context.now):
            why = f"{path}.updatePolicy.updateMode is MaintenanceWindow and now is outside {window.text}"
            return [(MAINTENANCE_WINDOW, why)]
    return []


def _stabilization_block(key: str, context: _Context) -> list[tuple[str, str]]:
    window = context.settings.stabilization_seconds.get(key) or 0
    last = (context.scale_times or {}).get(key)
    if last is None or not window or context.now - last >= window:
        return []
    elapsed = context.now - last
    why = (
        f"last {key} scaling {elapsed:g}s ago, within {_SPEC_PATHS[key]}.stabilizationDuration "
        f"{window:g}s"
    )
    return [(STABILIZATION_WINDOW, why)]


def _hold_blocks(axis: Axis, context: _Context) -> list[tuple[str, str]]:
    return [(hold.reason, hold.message) for hold in context.holds if hold.axis == axis]


def _vertical_blocks(change: ResourceChange, context: _Context) -> list[tuple[str, str]]:
    key = scale_key("vertical", change.direction)
    blocks = _hold_blocks("vertical", context) + _mode_blocks(key, context)
    starving_up = bool(change.starving) and change.direction == "up"
    if not starving_up:
        blocks += _stabilization_block(key, context)
        settings = context.settings
        clears, threshold = clears_min_change(
            change, settings.min_change_up, settings.min_change_down
        )
        if not clears:
            why = (
                f"step {format_human_resource(change.resource, abs(change.step))} below "
                f"{_SPEC_PATHS[key]}.minChange {format_human_resource(change.resource, threshold)}"
            )
            blocks.append((MIN_CHANGE, why))
    if context.rollout and not (change.failing_rollout and change.direction == "up"):
        blocks.append((ROLLOUT, f"a rollout of the target is in progress: {context.rollout}"))
    return blocks


def _bounds_correction(plan: Plan) -> str:
    """Why the replica move only brings the count back within [minReplicas, maxReplicas], or ''.

    Upstream's HPA applies that move at once, outside any stabilization, and
    the bounds are the spec's own: no update policy, maintenance window or
    window holds the count outside them. Another writer still does.
    """
    horizontal = plan.horizontal
    low, high = horizontal.min_replicas, horizontal.max_replicas
    if not horizontal.enabled or low <= plan.current_replicas <= high:
        return ""
    if not low <= plan.replicas <= high:
        return ""
    return (
        f" (brings the count within minReplicas {low} and maxReplicas {high}: "
        "no update policy or window holds it outside them)"
    )


def apply_gates(
    plan: Plan,
    settings: GateSettings,
    *,
    now: float,
    scale_times: Mapping[str, float | None] | None = None,
    rollout: str | None = None,
    holds: Sequence[Hold] = (),
) -> Gated:
    """Let each change of the plan through, or block it with every reason that applies.

    `scale_times` is what status.read_scale_times reads (POSIX seconds by
    SCALE_KEYS), `rollout` what `TargetRecord.rollout_in_progress()` says, `holds` the
    axes another writer claims (guards.find_conflicts). A change the
    starvation guard marked goes past MinChange and, upwards, past the
    stabilization window; never past an update policy, a maintenance window
    or another writer, and past a rollout only when that rollout is itself
    failing from the OOMKill the change answers (`failing_rollout`).
    """
    context = _Context(settings, now, scale_times, rollout, tuple(holds))
    blocked = list(plan.blocked)
    lines: list[str] = []
    replicas = plan.replicas
    if replicas != plan.current_replicas:
        direction = direction_of(plan.current_replicas, replicas)
        key = scale_key("horizontal", direction)
        correction = _bounds_correction(plan)
        reasons = _hold_blocks("horizontal", context)
        if not correction:
            reasons += _mode_blocks(key, context) + _stabilization_block(key, context)
        moved = f"{plan.current_replicas} -> {counted(replicas, 'replica')}"
        for reason, why in reasons:
            blocked.append(Blocked("horizontal", direction, reason, f"{moved}: {why}", why=why))
            lines.append(f"gate: horizontal {direction} {moved} blocked by {reason}: {why}")
        if reasons:
            replicas = plan.current_replicas
        else:
            lines.append(f"gate: horizontal {direction} {moved} passes{correction}")
    applied: list[ResourceChange] = []
    for change in plan.changes:
        reasons = _vertical_blocks(change, context)
        what = change.describe()
        for reason, why in reasons:
            blocked.append(
                Blocked(
                    "vertical",
                    change.direction,
                    reason,
                    f"{what}: {why}",
                    change.container,
                    change.resource,
                    why,
                )
            )
            lines.append(f"gate: vertical {change.direction} {what} blocked by {reason}: {why}")
        if not reasons:
            applied.append(change)
            if change.starving:
                passes = f"starvation: {change.starving}"
                if context.rollout and change.failing_rollout:
                    passes += (
                        f"; past the Rollout gate ({context.rollout}): {change.failing_rollout}"
                    )
            else:
                threshold = clears_min_change(
                    change, settings.min_change_up, settings.min_change_down
                )[1]
                passes = (
                    f"step {format_human_resource(change.resource, abs(change.step))} >= "
                    f"minChange {format_human_resource(change.resource, threshold)}"
                )
            lines.append(f"gate: vertical {change.direction} {what} passes ({passes})")
    return Gated(replicas, tuple(applied), tuple(blocked), tuple(lines))


def report(blocked: Sequence[Blocked]) -> tuple[Blocked, ...]:
    """One entry per axis, direction and reason, horizontal first, reasons in REASONS' order."""
    merged: dict[tuple[Axis, Direction, str], list[str]] = {}
    for entry in blocked:
        merged.setdefault((entry.axis, entry.direction, entry.reason), []).append(entry.message)
    order = {reason: index for index, reason in enumerate(REASONS)}

    def rank(key: tuple[Axis, Direction, str]) -> tuple[bool, bool, int]:
        axis, direction, reason = key
        return axis != "horizontal", direction != "up", order.get(reason, len(REASONS))

    return tuple(
        Blocked(axis, direction, reason, "; ".join(merged[(axis, direction, reason)]))
        for axis, direction, reason in sorted(merged, key=rank)
    )


def record_scale_times(
    scale_times: Mapping[str, float | None] | None,
    *,
    now: float,
    current_replicas: int,
    replicas: int,
    applied: Sequence[ResourceChange],
) -> dict[str, float]:
    """`status.history.lastScaleTimes` after this decision: `now` for each axis and direction that moved."""
    times = {key: value for key, value in (scale_times or {}).items() if value is not None}
    if replicas != current_replicas:
        times[scale_key("horizontal", direction_of(current_replicas, replicas))] = now
    for change in applied:
        times[scale_key("vertical", change.direction)] = now
    return times
