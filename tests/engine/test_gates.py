"""The gates: maintenance windows (Gardener's utils tables), update policies, stabilization, MinChange, rollout."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import pytest
from msgspec.structs import replace

from hvpa.api import History, HvpaStatus, apply_defaults, parse_hvpa
from hvpa.engine.gates import (
    SCALE_KEYS,
    GateSettings,
    MaintenanceWindowError,
    apply_gates,
    gate_settings,
    last_scale_times,
    last_vertical_scaling,
    parse_maintenance_window,
    record_scale_times,
    report,
    scale_key,
    scale_times_from_status,
)
from hvpa.engine.status import read_scale_times
from hvpa.engine.strategies.plan import Blocked, Hold, HorizontalInput, Plan
from hvpa.engine.vertical import ResourceChange
from hvpa.quantity import parse_milli

DAY = datetime(2026, 11, 21, tzinfo=UTC).timestamp()


def at(hour: int, minute: int = 0, second: int = 0, fraction: float = 0.0) -> float:
    return DAY + hour * 3600 + minute * 60 + second + fraction


def window(begin_hour: int, end_hour: int) -> str:
    return f"{begin_hour:02d}0000+0000-{end_hour:02d}0000+0000"


@pytest.mark.parametrize(
    ("begin", "end", "moment", "inside"),
    [
        # Gardener's utils/timewindow_test.go "#Contains" table.
        pytest.param(16, 19, at(15, 59, 59, 0.9999), False, id="16-19-before"),
        pytest.param(16, 19, at(19, 1), False, id="16-19-after"),
        pytest.param(16, 19, at(16), True, id="16-19-begin"),
        pytest.param(16, 19, at(19), True, id="16-19-end"),
        pytest.param(16, 19, at(17), True, id="16-19-inside"),
        pytest.param(0, 1, at(23, 59, 59, 0.9999), False, id="0-1-before"),
        pytest.param(0, 1, at(2), False, id="0-1-after"),
        pytest.param(0, 1, at(0), True, id="0-1-begin"),
        pytest.param(0, 1, at(1), True, id="0-1-end"),
        pytest.param(0, 1, at(0, 30), True, id="0-1-inside"),
        pytest.param(23, 1, at(22, 59, 59, 0.9999), False, id="23-1-before"),
        pytest.param(23, 1, at(2), False, id="23-1-after"),
        pytest.param(23, 1, at(23), True, id="23-1-begin"),
        pytest.param(23, 1, at(1), True, id="23-1-end"),
        pytest.param(23, 1, at(0, 59), True, id="23-1-across-midnight"),
        pytest.param(23, 0, at(22, 59, 59, 0.9999), False, id="23-0-before"),
        pytest.param(23, 0, at(1), False, id="23-0-after"),
        pytest.param(23, 0, at(23), True, id="23-0-begin"),
        pytest.param(23, 0, at(0), True, id="23-0-end"),
        pytest.param(23, 0, at(23, 45), True, id="23-0-inside"),
        pytest.param(5, 5, at(5), True, id="same-begin-end-is-one-second"),
        pytest.param(5, 5, at(5, 0, 1), False, id="same-begin-end-not-the-next"),
    ],
)
def test_window_contains(begin: int, end: int, moment: float, inside: bool) -> None:
    parsed = parse_maintenance_window(f"{begin:02d}0000+0000", f"{end:02d}0000+0000")
    assert parsed.contains(moment) is inside


@pytest.mark.parametrize(
    ("begin", "end", "moment", "inside"),
    [
        pytest.param("160554+0200", "170000+0200", at(14, 5, 54), True, id="offset-to-utc"),
        pytest.param("160554+0200", "170000+0200", at(16, 5, 54), False, id="not-local-time"),
        pytest.param("220000-0130", "230000-0130", at(23, 30), True, id="negative-offset"),
        pytest.param("003000+0100", "013000+0100", at(23, 45), True, id="offset-crosses-midnight"),
        pytest.param(
            "003000+0100", "013000+0100", at(0, 45), False, id="offset-crosses-midnight-out"
        ),
    ],
)
def test_window_zones(begin: str, end: str, moment: float, inside: bool) -> None:
    assert parse_maintenance_window(begin, end).contains(moment) is inside


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("foo", id="garbage"),
        pytest.param("2200+0100", id="no-seconds"),
        pytest.param("240000+0000", id="hour-24"),
        pytest.param("226000+0000", id="minute-60"),
        pytest.param("220060+0000", id="second-60"),
        pytest.param("220000+2400", id="zone-24"),
        pytest.param("220000 0100", id="no-sign"),
    ],
)
def test_window_rejects(text: str) -> None:
    with pytest.raises(MaintenanceWindowError):
        parse_maintenance_window(text, "230000+0000")


def change(
    direction: str = "up", step: str = "300m", starving: str = "", container: str = "app"
) -> ResourceChange:
    current = parse_milli("1")
    delta = parse_milli(step) * (1 if direction == "up" else -1)
    target = current + 2 * delta
    return ResourceChange(container, "cpu", current, target, current + delta, delta, 50, starving)


def plan(
    replicas: int = 3, changes: tuple[ResourceChange, ...] = (), blocked: tuple[Blocked, ...] = ()
) -> Plan:
    horizontal = HorizontalInput(current=2, min_replicas=1, max_replicas=5, desired=replicas)
    return Plan("Weighted", horizontal, replicas, changes, blocked)


def reasons(blocked: tuple[Blocked, ...]) -> list[tuple[str, str, str]]:
    return [(b.axis, b.direction, b.reason) for b in blocked]


NOW = at(12)


@pytest.mark.parametrize(
    ("modes", "windowed", "expected"),
    [
        pytest.param({}, None, [], id="auto"),
        pytest.param({"horizontalUp": "Off"}, None, [("horizontal", "up", "UpdatePolicy")], id="horizontal-up-off"),
        pytest.param({"horizontalDown": "Off"}, None, [], id="other-direction-off"),
        pytest.param({"verticalUp": "Off"}, None, [("vertical", "up", "UpdatePolicy")], id="vertical-up-off"),
        pytest.param({"horizontalUp": "MaintenanceWindow"}, window(11, 13), [], id="inside-window"),
        pytest.param({"horizontalUp": "MaintenanceWindow"}, window(13, 14), [("horizontal", "up", "MaintenanceWindow")], id="outside-window"),
        pytest.param({"verticalUp": "MaintenanceWindow"}, window(23, 12), [], id="window-across-midnight"),
        pytest.param({"verticalUp": "MaintenanceWindow"}, None, [("vertical", "up", "MaintenanceWindow")], id="no-window-configured"),
    ],
)  # fmt: skip
def test_update_modes(
    modes: dict[str, str], windowed: str | None, expected: list[tuple[str, str, str]]
) -> None:
    maintenance = parse_maintenance_window(*windowed.split("-")) if windowed else None
    settings = GateSettings(update_modes=modes, maintenance_window=maintenance)
    gated = apply_gates(plan(changes=(change(),)), settings, now=NOW)
    assert reasons(gated.blocked) == expected
    axes = {axis for axis, _, _ in expected}
    assert gated.replicas == (2 if "horizontal" in axes else 3)
    assert len(gated.applied) == (0 if "vertical" in axes else 1)


def all_four(time: float) -> dict[str, float | None]:
    """Gardener's single lastScaleTime, as status.read_scale_times hands it to the gates."""
    return dict.fromkeys(SCALE_KEYS, time)


@pytest.mark.parametrize(
    ("scale_times", "blocked"),
    [
        pytest.param(None, False, id="never-scaled"),
        pytest.param(all_four(NOW - 60), True, id="gardeners-time-for-all-four"),
        pytest.param({"horizontalDown": NOW - 10}, False, id="other-direction-irrelevant"),
        pytest.param({"horizontalUp": NOW - 299}, True, id="inside-window"),
        pytest.param({"horizontalUp": NOW - 300}, False, id="window-just-over"),
        pytest.param({"horizontalUp": None}, False, id="unset-key-never-scaled"),
    ],
)
def test_stabilization_per_axis_and_direction(
    scale_times: dict[str, float | None] | None, blocked: bool
) -> None:
    settings = GateSettings(stabilization_seconds={"horizontalUp": 300})
    gated = apply_gates(plan(), settings, now=NOW, scale_times=scale_times)
    assert reasons(gated.blocked) == (
        [("horizontal", "up", "StabilizationWindow")] if blocked else []
    )
    assert gated.replicas == (2 if blocked else 3)


@pytest.mark.parametrize(
    ("current", "replicas", "holds", "expected", "blocked"),
    [
        pytest.param(0, 1, (), 1, [], id="up-to-min-replicas-past-policy-and-window"),
        pytest.param(8, 5, (), 5, [], id="down-to-max-replicas-past-policy-and-window"),
        pytest.param(
            0, 1, (Hold("horizontal", "ConflictingAutoscaler", "an HPA"),), 0,
            [("horizontal", "up", "ConflictingAutoscaler")], id="another-writer-still-holds",
        ),
        pytest.param(
            2, 3, (), 2,
            [("horizontal", "up", "UpdatePolicy"), ("horizontal", "up", "StabilizationWindow")],
            id="within-bounds-the-gates-apply",
        ),
    ],
)  # fmt: skip
def test_a_move_back_within_min_and_max_passes_the_gates(
    current: int,
    replicas: int,
    holds: tuple[Hold, ...],
    expected: int,
    blocked: list[tuple[str, str, str]],
) -> None:
    modes = dict.fromkeys(("horizontalUp", "horizontalDown"), "Off")
    windows = dict.fromkeys(("horizontalUp", "horizontalDown"), 300.0)
    settings = GateSettings(update_modes=modes, stabilization_seconds=windows)
    horizontal = HorizontalInput(current, 1, 5, desired=replicas)
    gated = apply_gates(
        Plan("Weighted", horizontal, replicas, ()),
        settings,
        now=NOW,
        scale_times=all_four(NOW - 10),
        holds=holds,
    )
    assert (gated.replicas, reasons(gated.blocked)) == (expected, blocked)


@dataclass(frozen=True)
class Change:
    value: str | None = None
    percentage: int | None = None


@dataclass(frozen=True)
class Thresholds:
    cpu: Change | None = None
    memory: Change | None = None


@pytest.mark.parametrize(
    ("step", "threshold", "blocked"),
    [
        pytest.param("199m", None, True, id="below-default-200m"),
        pytest.param("200m", None, False, id="equal-default-passes"),
        pytest.param("100m", Change("100m"), False, id="equal-value-passes"),
        pytest.param("99m", Change("100m"), True, id="below-value"),
        pytest.param("50m", Change(percentage=5), False, id="percentage-of-request"),
        pytest.param("49m", Change(percentage=5), True, id="below-percentage"),
    ],
)
def test_min_change(step: str, threshold: Change | None, blocked: bool) -> None:
    settings = GateSettings(min_change_up=Thresholds(cpu=threshold))
    gated = apply_gates(plan(replicas=2, changes=(change(step=step),)), settings, now=NOW)
    assert reasons(gated.blocked) == ([("vertical", "up", "MinChange")] if blocked else [])


def test_min_change_uses_the_direction_of_the_change() -> None:
    settings = GateSettings(
        min_change_up=Thresholds(cpu=Change("1")), min_change_down=Thresholds(cpu=Change("10m"))
    )
    gated = apply_gates(
        plan(replicas=2, changes=(change("up", "300m"), change("down", "300m", container="b"))),
        settings,
        now=NOW,
    )
    assert reasons(gated.blocked) == [("vertical", "up", "MinChange")]
    assert [c.container for c in gated.applied] == ["b"]


def test_starving_passes_min_change_and_scale_up_window_only() -> None:
    settings = GateSettings(
        update_modes={"verticalUp": "Off"},
        stabilization_seconds={"verticalUp": 600},
        min_change_up=Thresholds(cpu=Change("1")),
    )
    starving = change(step="1m", starving="CPU usage at its request")
    gated = apply_gates(
        plan(replicas=2, changes=(starving,)),
        settings,
        now=NOW,
        scale_times=all_four(NOW - 1),
        rollout="1 of 2 replicas updated",
    )
    assert reasons(gated.blocked) == [
        ("vertical", "up", "UpdatePolicy"),
        ("vertical", "up", "Rollout"),
    ]
    passing = apply_gates(
        plan(replicas=2, changes=(starving,)),
        GateSettings(
            stabilization_seconds={"verticalUp": 600}, min_change_up=settings.min_change_up
        ),
        now=NOW,
        scale_times=all_four(NOW - 1),
    )
    assert passing.applied == (starving,)
    assert "starvation" in passing.explanation[0]


def test_every_blocking_gate_is_reported() -> None:
    settings = GateSettings(
        update_modes={"horizontalUp": "Off", "verticalUp": "MaintenanceWindow"},
        stabilization_seconds={"horizontalUp": 600, "verticalUp": 600},
        min_change_up=Thresholds(cpu=Change("1")),
    )
    gated = apply_gates(
        plan(changes=(change(),)),
        settings,
        now=NOW,
        scale_times=all_four(NOW - 1),
        rollout="generation 3 not yet observed (observed 2)",
        holds=(Hold("horizontal", "ConflictingAutoscaler", "HorizontalPodAutoscaler shop/web"),),
    )
    assert reasons(gated.blocked) == [
        ("horizontal", "up", "ConflictingAutoscaler"),
        ("horizontal", "up", "UpdatePolicy"),
        ("horizontal", "up", "StabilizationWindow"),
        ("vertical", "up", "MaintenanceWindow"),
        ("vertical", "up", "StabilizationWindow"),
        ("vertical", "up", "MinChange"),
        ("vertical", "up", "Rollout"),
    ]
    assert (gated.replicas, gated.applied) == (2, ())
    assert len(gated.explanation) == 7


def test_rollout_blocks_only_the_vertical_axis() -> None:
    gated = apply_gates(plan(changes=(change(),)), GateSettings(), now=NOW, rollout="rolling")
    assert reasons(gated.blocked) == [("vertical", "up", "Rollout")]
    assert gated.replicas == 3


def test_strategy_blocks_pass_through_and_report_merges() -> None:
    weight = Blocked("vertical", "up", "Weight", "vpaWeight 0: b cpu", "b", "cpu")
    gated = apply_gates(
        plan(changes=(change(step="1m"), change(step="2m", container="c")), blocked=(weight,)),
        GateSettings(),
        now=NOW,
    )
    merged = report(gated.blocked)
    assert reasons(merged) == [("vertical", "up", "MinChange"), ("vertical", "up", "Weight")]
    assert "app cpu" in merged[0].message
    assert "c cpu" in merged[0].message


def test_report_orders_horizontal_first_and_up_before_down() -> None:
    entries = (
        Blocked("vertical", "down", "MinChange", "a"),
        Blocked("vertical", "up", "Rollout", "b"),
        Blocked("vertical", "up", "UpdatePolicy", "c"),
        Blocked("horizontal", "down", "Weight", "d"),
    )
    assert [b.message for b in report(entries)] == ["d", "c", "b", "a"]
    assert report(()) == ()


def test_last_vertical_scaling() -> None:
    assert last_vertical_scaling({"verticalUp": 5.0, "verticalDown": 7.0}) == 7.0
    assert last_vertical_scaling({"verticalUp": 5.0, "horizontalUp": 9.0}) == 5.0
    assert last_vertical_scaling({"verticalUp": None, "verticalDown": 0.0}) == 0.0
    assert last_vertical_scaling(None) is None


def test_record_scale_times() -> None:
    times = record_scale_times(
        {"horizontalDown": 10.0, "verticalUp": None},
        now=NOW,
        current_replicas=2,
        replicas=3,
        applied=(change("down"),),
    )
    assert times == {"horizontalDown": 10.0, "horizontalUp": NOW, "verticalDown": NOW}
    assert record_scale_times(None, now=NOW, current_replicas=2, replicas=2, applied=()) == {}


def test_scale_key() -> None:
    assert [scale_key("horizontal", "up"), scale_key("vertical", "down")] == [
        "horizontalUp",
        "verticalDown",
    ]


MANIFEST = {
    "apiVersion": "autoscaling.k8s.io/v1alpha1",
    "kind": "Hvpa",
    "metadata": {"name": "etcd", "namespace": "shoot--dev"},
    "spec": {
        "targetRef": {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "etcd"},
        "maintenanceTimeWindow": {"begin": "220000+0100", "end": "230000+0100"},
        "hpa": {
            "deploy": True,
            "selector": {"matchLabels": {"role": "hpa"}},
            "template": {
                "metadata": {"labels": {"role": "hpa"}},
                "spec": {"minReplicas": 1, "maxReplicas": 3},
            },
            "scaleUp": {"updatePolicy": {"updateMode": "Off"}, "stabilizationDuration": "2m"},
        },
        "vpa": {
            "deploy": True,
            "selector": {"matchLabels": {"role": "vpa"}},
            "template": {"metadata": {"labels": {"role": "vpa"}}},
            "scaleDown": {
                "updatePolicy": {"updateMode": "MaintenanceWindow"},
                "stabilizationDuration": "1h",
                "minChange": {"memory": {"value": "300M", "percentage": 50}},
            },
        },
    },
    "status": {
        "lastScaling": {"lastScaleTime": "2026-11-21T10:00:00Z"},
        "history": {"lastScaleTimes": {"verticalUp": "2026-11-21T11:00:00Z"}},
    },
}


def test_gate_settings_and_scale_times_from_an_hvpa() -> None:
    hvpa = apply_defaults(parse_hvpa(MANIFEST))
    settings = gate_settings(hvpa.spec)
    assert settings.update_modes == {
        "horizontalUp": "Off",
        "horizontalDown": "Auto",
        "verticalUp": "Auto",
        "verticalDown": "MaintenanceWindow",
    }
    assert settings.stabilization_seconds == {"horizontalUp": 120.0, "verticalDown": 3600.0}
    assert settings.maintenance_window is not None
    assert settings.maintenance_window.contains(at(21, 30))
    assert settings.min_change_down is not None and settings.min_change_up is None
    times, legacy = scale_times_from_status(hvpa.status)
    assert legacy == at(10)
    assert times == {
        "horizontalUp": None,
        "horizontalDown": None,
        "verticalUp": at(11),
        "verticalDown": None,
    }
    # Once hvpa keeps its own times, Gardener's single one stands in for none of them.
    assert read_scale_times(hvpa.status) == times
    assert hvpa.status is not None
    assert read_scale_times(replace(hvpa.status, history=None)) == all_four(at(10))
    written = last_scale_times({"verticalUp": at(11), "horizontalDown": at(9)})
    assert scale_times_from_status(HvpaStatus(history=History(last_scale_times=written)))[0] == {
        "horizontalUp": None,
        "horizontalDown": at(9),
        "verticalUp": at(11),
        "verticalDown": None,
    }
    assert scale_times_from_status(None) == (None, None)
