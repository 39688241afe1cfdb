"""The Capacity strategy through decide: demand from usage, bands, guards, gates, status history.

Each case is a scenario as `hvpa recommend` reads it (capacity_kit builds
them). The CPU target utilization is 50% (demand = usage x 2), memory has
none (usage x 1.15); the flat curve allows 1 CPU and 2G per pod at any count.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from capacity_kit import MB, RISING_CURVE, Workload, capacity_hvpa, shape, time_at
from decide_kit import NOW_SECONDS, at, blocked_of, condition, run

from hvpa.api.base import plain
from hvpa.cli import main

SETTLED = Workload(memory=632_500_000_000)  # 575M x 1.1: memory carries the band's slack
# The flat curve from minReplicas 2, so a resize can keep the count.
FROM_TWO = [
    {"replicas": 2, "cpu": "1", "memory": "2G"},
    {"replicas": 10, "cpu": "1", "memory": "2G"},
]  # 2 x 500m at 250m: demand 1000m and 1150M; pods of 500m and 1150M / 2 x 1.1


@pytest.mark.parametrize(
    ("workload", "hvpa", "options", "expected"),
    [
        pytest.param(
            replace(SETTLED, cpu_usage=400),
            capacity_hvpa(),
            {"vpa_target": {"cpu": "4", "memory": "8G"}},
            # 1600m of demand: 4 x 500m cover it, 5 while a rollout takes one of them down.
            (5, 500, 632),
            id="demand-from-total-usage-not-the-vpa-target-pods-added-first",
        ),
        pytest.param(
            replace(SETTLED, cpu_usage=400),
            capacity_hvpa(),
            {"vpa_conditions": [{"type": "RecommendationProvided", "status": "False"}]},
            (5, 500, 632),
            id="no-vpa-recommendation-needed-with-usage",
        ),
        pytest.param(
            replace(SETTLED, cpu_usage=240),
            capacity_hvpa(FROM_TWO, minimum=2),
            {},
            (2, 500, 632),
            id="a-surplus-within-tolerance-holds",
        ),
        pytest.param(
            # 960m: the curve's count is 1 (1 x 1 CPU covers it), and 2 pods of 500m go back to it.
            replace(SETTLED, cpu_usage=240),
            capacity_hvpa(),
            {},
            (2, 960, 1265),
            id="more-pods-than-the-curves-count-are-not-held-pods-grow-first",
        ),
        pytest.param(
            replace(SETTLED, cpu_usage=260),
            capacity_hvpa(),
            {},
            (2, 500, 632),
            id="a-cpu-shortfall-within-tolerance-holds-as-an-hpa-would",
        ),
        pytest.param(
            replace(SETTLED, cpu_usage=280),
            capacity_hvpa(),
            {},
            (3, 500, 632),
            id="a-cpu-shortfall-past-tolerance-adds-a-pod",
        ),
        pytest.param(
            replace(SETTLED, cpu_usage=1800),
            capacity_hvpa(),
            {},
            (8, 900, 158),
            id="flat-curve-adds-pods-of-at-most-one-cpu",
        ),
        pytest.param(
            replace(SETTLED, cpu_usage=100),
            capacity_hvpa(
                status={
                    "history": {
                        "demands": [{"time": at(100), "cpu": "4", "memory": "1150M"}],
                    }
                }
            ),
            {},
            (8, 500, 632),
            id="the-largest-demand-of-the-down-window-at-todays-pod-size",
        ),
        pytest.param(
            replace(SETTLED, cpu_usage=100),
            capacity_hvpa(
                status={
                    "history": {
                        "demands": [{"time": at(400), "cpu": "4", "memory": "1150M"}],
                    }
                }
            ),
            {},
            (2, 400, 1265),
            id="a-demand-older-than-the-window-is-forgotten-pods-grow-first",
        ),
        pytest.param(
            replace(SETTLED, cpu_usage=900),
            capacity_hvpa(hpa=False),
            {},
            (2, 1000, 632),
            id="horizontal-off-pods-grow-up-to-the-curve-at-the-count",
        ),
        pytest.param(
            replace(SETTLED, cpu_usage=900),
            capacity_hvpa(vpa=False),
            {},
            (8, 500, 632),
            id="vertical-off-the-count-covers-the-demand",
        ),
    ],
)
def test_capacity_decision(
    workload: Workload,
    hvpa: dict[str, Any],
    options: dict[str, Any],
    expected: tuple[int, int, int],
) -> None:
    assert shape(workload.decide(hvpa, **options)) == expected


def test_no_usage_and_no_vpa_target_holds_both_axes() -> None:
    raw = SETTLED.raw(capacity_hvpa(), with_vpa=False)
    raw["podMetrics"] = []
    decision = run(raw)
    assert shape(decision) == (2, 500, 632)
    assert condition(decision, "AbleToScale") == ("False", "NoDemand")
    assert condition(decision, "VerticalScalingActive") == ("False", "NoDemand")


@pytest.mark.parametrize(
    ("metrics", "with_vpa", "expected"),
    [
        pytest.param(True, True, ("True", "DemandMeasured"), id="usage"),
        pytest.param(False, True, ("True", "DemandFromVpaTarget"), id="new-hvpa-vpa-target"),
        pytest.param(False, False, ("False", "NoDemand"), id="nothing-to-measure"),
    ],
)
def test_scaling_active_says_whether_capacity_has_a_demand(
    metrics: bool, with_vpa: bool, expected: tuple[str, str]
) -> None:
    """Not what the HPA metrics say: a new Capacity Hvpa whose pods have no metrics yet
    moves on the VPA target (upstream's calculation would say FailedGetResourceMetric)."""
    raw = SETTLED.raw(capacity_hvpa(), with_vpa=with_vpa)
    if not metrics:
        raw["podMetrics"] = []
    decision = run(raw)
    assert condition(decision, "ScalingActive") == expected


def test_the_scaling_active_condition_does_not_move_with_the_usage() -> None:
    """Usage moves at every reading; a condition carrying it would make every decision a
    status write. The amounts are in the explanation."""
    decisions = [
        run(replace(SETTLED, cpu_usage=usage).raw(capacity_hvpa())) for usage in (400, 410)
    ]
    first, second = (next(c for c in d.conditions if c.type == "ScalingActive") for d in decisions)
    assert (first.status, first.reason, first.message) == (
        second.status,
        second.reason,
        second.message,
    )
    assert any("DemandMeasured" in line and "cpu 1.6" in line for line in decisions[0].explanation)


@pytest.mark.parametrize(
    ("usage", "capped"),
    [
        pytest.param(500, True, id="at-the-limit"),
        pytest.param(480, True, id="within-5-percent-of-it"),
        pytest.param(400, False, id="below-it"),
    ],
)
def test_a_cpu_reading_at_the_limit_is_a_floor(usage: int, capped: bool) -> None:
    """A throttled container's usage is capped by its limit: no pod size is read from it."""
    raw = replace(SETTLED, cpu_usage=usage).raw(capacity_hvpa())
    raw["target"]["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"] = {
        "cpu": "500m"
    }
    decision = run(raw)
    said = any("readings are at the pods' limits" in line for line in decision.explanation)
    assert said is capped


def test_ramp_up_and_down_returns_to_where_it_started() -> None:
    """Path independence: the same load gives the same shape after the windows have passed."""
    hvpa = capacity_hvpa(RISING_CURVE)
    workload = Workload(replicas=1, cpu=1000, cpu_usage=300, memory=2000 * MB)
    loads = [300] * 3 + [600, 1200, 2400, 4000, 6000, 8000, 9000, 6000, 2400, 600] + [300] * 25
    shapes = []
    for load in loads:
        workload = replace(workload, cpu_usage=load // workload.replicas)
        decision = workload.decide(hvpa)
        shapes.append(shape(decision))
        workload = workload.after(decision, 60)
    start, end = shapes[2], shapes[-1]
    assert start[:2] == (1, 600)
    assert end[0] == start[0]
    assert end[1] is not None and abs(end[1] - 600) * 100 <= 10 * 600, "within the tolerance"
    assert max(s[0] for s in shapes) > 1
    assert all(s[1] is not None and s[1] <= s[0] * 1000 for s in shapes), "above the curve"


def test_a_held_replica_count_reads_the_curve_again_at_that_count() -> None:
    hvpa = capacity_hvpa(hpa_scale_up={"updatePolicy": {"updateMode": "Off"}})
    decision = replace(SETTLED, cpu_usage=900).decide(hvpa)
    assert shape(decision) == (2, 1000, 632)
    assert ("horizontal", "up", "UpdatePolicy") in blocked_of(decision)


def test_a_rollout_holds_the_resize_and_the_scale_down() -> None:
    """The pods a rollout replaces serve nothing meanwhile: no resize on top, no fewer pods."""
    decision = replace(SETTLED, cpu_usage=100, memory_usage=100 * MB).decide(
        capacity_hvpa(), rolling=True
    )
    assert shape(decision) == (2, 500, 632)
    assert ("vertical", "down", "Rollout") in blocked_of(decision)
    assert ("horizontal", "down", "Rollout") in blocked_of(decision)


def test_a_rollout_does_not_hold_a_count_above_max_replicas() -> None:
    """Back within minReplicas..maxReplicas at once, as everywhere; only a scale-down inside them waits."""
    curve = [
        {"replicas": 1, "cpu": "1", "memory": "2G"},
        {"replicas": 3, "cpu": "1", "memory": "2G"},
    ]
    decision = replace(SETTLED, replicas=4, cpu_usage=125, memory_usage=287 * MB).decide(
        capacity_hvpa(curve, maximum=3), rolling=True
    )
    assert decision.desired_replicas == 3
    assert ("horizontal", "down", "Rollout") not in blocked_of(decision)


@pytest.mark.parametrize(
    ("workload", "hvpa", "expected", "blocked"),
    [
        pytest.param(
            replace(SETTLED, cpu_usage=150),
            capacity_hvpa(
                FROM_TWO, minimum=2, vpa_scale_down={"minChange": {"cpu": {"value": "300m"}}}
            ),
            (2, 500, 632),
            [("vertical", "down", "MinChange")],
            id="a-resize-alone-needs-min-change",
        ),
        pytest.param(
            replace(SETTLED, cpu_usage=160),
            capacity_hvpa(FROM_TWO, minimum=2),
            (2, 320, 632),
            [],
            id="no-gardener-default-min-change-the-tolerance-decides",
        ),
        pytest.param(
            replace(SETTLED, cpu_usage=160),
            capacity_hvpa(
                FROM_TWO, minimum=2, vpa_scale_down={"minChange": {"memory": {"value": "100M"}}}
            ),
            (2, 320, 632),
            [],
            id="a-min-change-for-memory-only-leaves-cpu-without-gardeners-default",
        ),
        pytest.param(
            replace(SETTLED, cpu=4000, cpu_usage=1200),
            capacity_hvpa(RISING_CURVE, vpa_scale_down={"minChange": {"cpu": {"value": "3"}}}),
            (3, 1600, 422),  # 421.67M written as 403Mi, 422.6 MB
            [],
            id="a-resize-with-a-replica-move-does-not",
        ),
        pytest.param(
            replace(SETTLED, cpu_usage=150, memory_usage=480 * MB),
            capacity_hvpa(
                FROM_TWO,
                minimum=2,
                vpa_scale_down={
                    "minChange": {"cpu": {"value": "100m"}, "memory": {"value": "100M"}}
                },
            ),
            (2, 300, 608),  # 607.2M written as 580Mi, 608.2 MB
            [],
            id="a-resize-that-clears-it-carries-every-resource",
        ),
    ],
)
def test_min_change_applies_only_when_the_count_stays(
    workload: Workload,
    hvpa: dict[str, Any],
    expected: tuple[int, int, int],
    blocked: list[tuple[str, str, str]],
) -> None:
    decision = workload.decide(hvpa)
    assert shape(decision) == expected
    assert blocked_of(decision) == blocked


def test_a_starving_container_resizes_through_the_bands() -> None:
    """Past the hysteresis at once; the pods grow at today's count first, the count follows."""
    raw = SETTLED.raw(capacity_hvpa())
    raw["podMetrics"][0]["containers"][0]["usage"]["cpu"] = "500m"
    raw["podMetrics"][1]["containers"][0]["usage"]["cpu"] = "0"
    decision = run(raw)
    assert shape(decision) == (2, 1000, 1265)
    assert any("starvation" in line for line in decision.explanation)


def test_an_oom_kill_grows_memory_whatever_the_bands() -> None:
    decision = SETTLED.decide(capacity_hvpa(FROM_TWO, minimum=2), oom_killed_at=at(60))
    assert shape(decision) == (2, 500, 759)


def test_usage_and_demands_are_kept_in_the_status_within_their_windows() -> None:
    first = SETTLED.decide(capacity_hvpa())
    later = replace(SETTLED, now=NOW_SECONDS + 400, status=plain(first.status))
    history = plain(later.decide(capacity_hvpa()).status)["history"]
    assert [s["time"] for s in history["usage"]] == [
        time_at(NOW_SECONDS),
        time_at(NOW_SECONDS + 400),
    ]
    assert [s["time"] for s in history["demands"]] == [time_at(NOW_SECONDS + 400)]


def with_sidecar(raw: dict[str, Any], usage: str, target: str) -> dict[str, Any]:
    sidecar = {"name": "log", "image": "log:1", "resources": {"requests": {"cpu": "100m"}}}
    raw["target"]["spec"]["template"]["spec"]["containers"].append(sidecar)
    for pod in raw["pods"]:
        pod["spec"]["containers"].append(sidecar)
    for item in raw["podMetrics"]:
        item["containers"].append({"name": "log", "usage": {"cpu": usage, "memory": "0"}})
    recommendations = raw["vpa"]["status"]["recommendation"]["containerRecommendations"]
    recommendations.append({"containerName": "log", "target": {"cpu": target}})
    return raw


@pytest.mark.parametrize(
    ("policies", "expected"),
    [
        pytest.param(
            [{"containerName": "*", "controlledResources": ["cpu"]}],
            {"app": 525, "log": 175},
            id="a-pod-size-split-by-vpa-target",
        ),
        pytest.param(
            [{"containerName": "log", "mode": "Off"}],
            {"app": 600, "log": 100},
            id="a-container-with-mode-off-is-left-out",
        ),
    ],
)
def test_containers_share_the_pod_size(
    policies: list[dict[str, Any]], expected: dict[str, int]
) -> None:
    small = {"minChange": {"cpu": {"value": "10m"}}}
    hvpa = capacity_hvpa(policies=policies, vpa_scale_up=small, vpa_scale_down=small)
    raw = replace(SETTLED, cpu=1000, cpu_usage=300).raw(
        hvpa, vpa_target={"cpu": "3", "memory": "575M"}
    )
    decision = run(with_sidecar(raw, "50m", "1"))
    assert decision.desired_replicas == 2
    assert {c.name: c.requests.cpu for c in decision.containers} == expected


def test_recommend_text_shows_the_demand_and_the_curve_point(
    capsys: pytest.CaptureFixture[str],
) -> None:
    example = Path(__file__).parents[2] / "examples" / "scenarios" / "capacity-multiplicative.yaml"
    assert main(["recommend", "-f", str(example), "-o", "text"]) == 0
    text = capsys.readouterr().out
    assert "demand: cpu 5, memory 0 beyond the pods' overhead (vpa)" in text
    assert "curve: 2 replicas are too few: cpu: 2 x (2 - 0) < 5" in text
    assert "curve: cpu: 3 replicas, ceiling 3 per pod; per pod 0 + its share of 5 = 1.667" in text


@pytest.mark.parametrize(
    ("condition_change"),
    [
        pytest.param({"status": "False"}, id="not-ready"),
        pytest.param({"lastTransitionTime": at(10)}, id="ready-within-its-metric-window"),
    ],
)
def test_a_pod_that_is_not_serving_takes_no_load(condition_change: dict[str, str]) -> None:
    """Only web-0 serves: its 400m is the load (demand 800m), web-1's reading is left out;
    one pod of 800m would do, and the pods grow first at today's count."""
    raw = replace(SETTLED, cpu_usage=400).raw(capacity_hvpa())
    raw["pods"][1]["status"]["conditions"][0].update(condition_change)
    assert shape(run(raw)) == (2, 800, 632)


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        # In place: the count goes to the curve's 3 (2800m of demand, 1 CPU a pod) and the pods
        # keep 500m and 1000M; the resize waits for the next reading, which holds the whole rise.
        pytest.param("InPlaceOrRollout", (3, 500, 1000), id="in-place-the-count-only"),
        # With rollouts the first reading is read as before, straight to the curve: 2800m / 3 =
        # 934m; memory 1000M x 1.15 (headroom) / 3 x 1.1 (the band's slack) = 422M.
        pytest.param("Rollout", (3, 934, 422), id="rollout-as-before"),
    ],
)
def test_a_cpu_rise_read_first_resizes_no_pod_in_place(
    mode: str, expected: tuple[int, int, int]
) -> None:
    """The total CPU load goes from 500m to 1400m between two readings 15 s apart: a rate
    read over a window that holds the rise's start (demand.rise_begins)."""
    # 1 CPU a pod up to maxReplicas 4: no count of today's 500m pods covers the rise, so the
    # band resizes (with more replicas allowed the order rule adds pods of 500m first).
    hvpa = capacity_hvpa(
        [{"replicas": 1, "cpu": "1", "memory": "2G"}, {"replicas": 4, "cpu": "1", "memory": "2G"}],
        maximum=4,
        status={"history": {"usage": [{"time": at(15), "cpu": "500m", "memory": "1000M"}]}},
    )
    hvpa["spec"]["vpa"]["resizeMode"] = mode
    decision = Workload(cpu=500, memory=1000 * MB, cpu_usage=700).decide(hvpa)
    assert shape(decision) == expected
