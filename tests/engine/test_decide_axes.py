"""`decide` on both axes: the strategies, holds and their conditions, gates, guards and the status.

The arithmetic of each strategy, gate and guard has its own module's tests;
this one covers what decide adds by wiring them: which inputs reach them
(spec, VPA, pods and their metrics, other writers, status history), the
conditions saying what holds an axis, and the status written back
(lastBlockedScaling of this decision only, lastScaling of what was applied,
lastScaleTimes per axis and direction, weights, the OOM mark).
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from decide_kit import (
    NAMESPACE,
    at,
    blocked_of,
    condition,
    hvpa_object,
    limits_of,
    requests_of,
    resources,
    run,
    scenario,
    written,
)

from hvpa.api.base import plain
from hvpa.engine.decide import decide
from hvpa.engine.decision import Decision, Snapshot, format_amount, format_written
from hvpa.engine.metrics import ResourceMetricsQuery, metric_queries
from hvpa.labels import LabelSelector
from hvpa.scenario import parse_scenario

GIB = 1024**3
MIXED = {"replicaThreshold": 1, "cpuThreshold": "100m", "memoryThreshold": "100M"}
UP = ("horizontal", "up", "Weight")
VERTICAL_UP_WEIGHT = ("vertical", "up", "Weight")


# ---------------------------------------------------------------------------
# Strategies: usage 400m of 500m at a 50% target makes the HPA want 4; the VPA wants 1 CPU, 2G.


@pytest.mark.parametrize(
    ("strategy", "mixed", "replicas", "cpu", "memory", "blocked"),
    [
        pytest.param("Weighted", None, 3, 750, written(1_500_000_000), [], id="weighted-half-each"),
        pytest.param(
            "HpaPreferred", None, 4, 500, 1_000_000_000, [VERTICAL_UP_WEIGHT], id="hpa-preferred"
        ),
        pytest.param("HpaBiased", None, 4, 500, 1_000_000_000, [VERTICAL_UP_WEIGHT], id="hpa-biased"),
        pytest.param("VpaBiased", None, 2, 1000, written(2_000_000_000), [UP], id="vpa-biased"),
        pytest.param(
            "Mixed", {**MIXED, "prefer": "Hpa"}, 4, 500, 1_000_000_000, [VERTICAL_UP_WEIGHT], id="mixed-hpa"
        ),
        pytest.param("Mixed", {**MIXED, "prefer": "Vpa"}, 2, 1000, written(2_000_000_000), [UP], id="mixed-vpa"),
    ],
)  # fmt: skip
def test_each_strategy_through_decide(
    strategy: str,
    mixed: dict[str, Any] | None,
    replicas: int,
    cpu: int,
    memory: int,
    blocked: list[tuple[str, str, str]],
) -> None:
    decision = run(scenario(hvpa_object(strategy=strategy, mixed=mixed), usage="400m"))
    assert decision.horizontal.desired_replicas == 4
    assert (decision.desired_replicas, *requests_of(decision)) == (replicas, cpu, memory)
    assert blocked_of(decision) == blocked
    assert any(line.strip().startswith(f"strategy {strategy}:") for line in decision.explanation)


def test_weighted_writes_gardeners_status_fields() -> None:
    decision = run(scenario(usage="400m"))
    status = plain(decision.status)
    assert (status["hpaWeight"], status["vpaWeight"]) == (50, 50)
    assert status["lastScaling"]["hpaStatus"] == {"currentReplicas": 2, "desiredReplicas": 3}
    recommendation = status["lastScaling"]["vpaStatus"]["recommendation"]
    # Gardener's 1500M as written: rounded up to a whole MiB (1,500,512,256 bytes)
    assert recommendation["containerRecommendations"] == [
        {"containerName": "app", "target": {"cpu": "750m", "memory": "1431Mi"}}
    ]
    times = status["history"]["lastScaleTimes"]
    assert times == {"horizontalUp": at(0), "verticalUp": at(0)}
    assert status["lastBlockedScaling"] == []
    assert decision.vertical.enabled
    assert [(c.name, c.applied) for c in decision.vertical.containers] == [("app", True)]


def test_limits_follow_the_requests() -> None:
    decision = run(scenario(usage="400m"))
    assert limits_of(decision) == (1500, written(3_000_000_000))


def test_limits_requests_gap_scale_params() -> None:
    gap = {"cpu": {"value": "1", "percentage": 80}, "memory": {"value": "1G", "percentage": 80}}
    decision = run(scenario(hvpa_object(limits_gap=gap), usage="400m"))
    assert limits_of(decision) == (1750, written(2_700_000_000))


def test_policy_bounds_cap_the_target() -> None:
    policies = [{"containerName": "app", "maxAllowed": {"cpu": "800m", "memory": "1200M"}}]
    decision = run(scenario(hvpa_object(policies=policies, intervals=[{"vpaWeight": 100}])))
    assert requests_of(decision) == (800, 1_200_000_000)
    assert decision.vertical.containers[0].target.cpu == 800


def test_nothing_changes_when_both_recommendations_agree() -> None:
    decision = run(scenario(vpa_target={"cpu": "500m", "memory": "1G"}))
    status = plain(decision.status)
    assert (decision.desired_replicas, *requests_of(decision)) == (2, 500, 1_000_000_000)
    assert "lastScaling" not in status and "hpaWeight" not in status
    assert decision.explanation[-1] == "decision: keep 2 replicas"


def strategy_line(decision: Decision) -> str:
    return next(line.strip() for line in decision.explanation if "strategy " in line)


@pytest.mark.parametrize(
    ("replicas", "usage", "maximum", "recent", "moved"),
    [
        # 5 pods at 200m of 500m against 50%: ceil(0.8 x 5) = 4; a recommendation of 5 a
        # minute ago keeps 5 through the 300 s downscale window
        pytest.param(5, "200m", 10, 5, "downscale stabilization window (300 s): 4 -> 5", id="window"),
        # 5 pods at 500m: ceil(2 x 5) = 10, within the scale-up limit max(2 x 5, 4), above max 6
        pytest.param(5, "500m", 6, None, "maxReplicas: 10 -> 6", id="max-replicas"),
        # 1 pod at 1 core: ceil(4 x 1) = 4, the scale-up limit max(2 x 1, 4) = 4 lets it pass;
        # 1 pod at 2 cores: ceil(8 x 1) = 8 is cut to 4
        pytest.param(1, "2", 10, None, "scale-up limit: 8 -> 4", id="scale-up-limit"),
    ],
)  # fmt: skip
def test_the_strategy_line_names_the_rule_that_moved_the_count(
    replicas: int, usage: str, maximum: int, recent: int | None, moved: str
) -> None:
    """Not `(4 before min/max)` when the downscale window, not min/max, kept 5."""
    status = {"history": {"recommendations": []}}
    if recent is not None:
        status["history"]["recommendations"] = [{"time": at(60), "replicas": recent}]
    h = hvpa_object(maximum=maximum, status=status)
    line = strategy_line(run(scenario(h, replicas=replicas, usage=usage)))
    assert line.endswith(f"({moved})"), line
    assert "before min/max" not in line


def test_one_replica_is_one_replica() -> None:
    decision = run(scenario(replicas=1, vpa_target={"cpu": "500m", "memory": "1G"}))
    assert decision.explanation[-1] == "decision: keep 1 replica"
    assert all("1 replicas" not in line and "1 pods" not in line for line in decision.explanation)


# ---------------------------------------------------------------------------
# Holds: another writer, missing data


def hpa_on_web() -> dict[str, Any]:
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web-hpa"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}},
    }


def vpa_on_web(mode: str | None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
    }
    if mode is not None:
        spec["updatePolicy"] = {"updateMode": mode}
    return {"kind": "VerticalPodAutoscaler", "metadata": {"name": "other-vpa"}, "spec": spec}


@pytest.mark.parametrize(
    ("autoscalers", "others", "replicas", "cpu", "able", "vertical"),
    [
        pytest.param([hpa_on_web()], [], 2, 750, ("False", "ConflictingAutoscaler"), ("True", "ValidRecommendation"), id="an-hpa-holds-the-count"),
        pytest.param([vpa_on_web(None)], [], 3, 500, ("True", "SucceededRescale"), ("False", "ConflictingAutoscaler"), id="a-vpa-in-auto-holds-the-pods"),
        pytest.param([vpa_on_web("Off")], [], 3, 750, ("True", "SucceededRescale"), ("True", "ValidRecommendation"), id="a-vpa-in-off-mode-is-no-writer"),
        pytest.param([], [hvpa_object(name="elder", created=at(3600))], 2, 500, ("False", "ConflictingAutoscaler"), ("False", "ConflictingAutoscaler"), id="an-older-hvpa-acts-this-one-waits"),
    ],
)  # fmt: skip
def test_another_writer_holds_the_axis_it_would_fight_over(
    autoscalers: list[dict[str, Any]],
    others: list[dict[str, Any]],
    replicas: int,
    cpu: int,
    able: tuple[str, str],
    vertical: tuple[str, str],
) -> None:
    mine = hvpa_object(created=at(60))
    decision = run(scenario(mine, usage="400m", autoscalers=autoscalers, other_hvpas=others))
    assert (decision.desired_replicas, requests_of(decision)[0]) == (replicas, cpu)
    assert condition(decision, "AbleToScale") == able
    assert condition(decision, "VerticalScalingActive") == vertical
    conflict = "ConflictingAutoscaler" in (able[1], vertical[1])
    held = [b for b in decision.blocked if b.reason == "ConflictingAutoscaler"]
    assert bool(held) == conflict
    assert all("also" in b.message for b in held)
    reasons = {entry["reason"] for entry in plain(decision.status)["lastBlockedScaling"]}
    assert ("ConflictingAutoscaler" in reasons) == conflict


@pytest.mark.parametrize(
    ("with_vpa", "conditions", "reason"),
    [
        pytest.param(False, None, "NoVerticalPodAutoscaler", id="no-vpa"),
        pytest.param(True, [{"type": "LowConfidence", "status": "True"}], "LowConfidence", id="low-confidence"),
        pytest.param(True, [{"type": "RecommendationProvided", "status": "False"}], "RecommendationNotProvided", id="not-provided"),
        pytest.param(True, [{"type": "RecommendationProvided", "status": "True"}, {"type": "ConfigUnsupported", "status": "True"}], "ConfigUnsupported", id="unsupported-listed-after-provided"),
    ],
)  # fmt: skip
def test_missing_vertical_data_holds_only_the_vertical_axis(
    with_vpa: bool, conditions: list[dict[str, str]] | None, reason: str
) -> None:
    decision = run(scenario(usage="400m", with_vpa=with_vpa, vpa_conditions=conditions))
    assert decision.desired_replicas == 3
    assert requests_of(decision) == (500, 1_000_000_000)
    assert condition(decision, "VerticalScalingActive") == ("False", reason)
    assert decision.vertical.containers == ()


@pytest.mark.parametrize(
    ("intervals", "replicas", "weight_line"),
    [
        pytest.param(
            [
                {"vpaWeight": 100, "startReplicaCount": 2, "lastReplicaCount": 3},
                {"vpaWeight": 0, "startReplicaCount": 4, "lastReplicaCount": 4},
            ],
            4,
            "next weight below 100 is 0 (interval 2)",
            id="kube-apiserver-intervals-the-next-interval-moves-the-count",
        ),
        pytest.param(
            [{"vpaWeight": 100, "startReplicaCount": 2, "lastReplicaCount": 4}],
            2,
            "no later interval has a weight below 100",
            id="weight-100-to-the-end-holds-the-count",
        ),
    ],
)
def test_weight_100_without_a_vpa_recommendation(
    intervals: list[dict[str, int]], replicas: int, weight_line: str
) -> None:
    """The kube-apiserver Hvpa goes 2 -> 4 replicas in its first minute, before its VPA
    recommends anything, although vpaWeight is 100 at 2-3 replicas. That is Gardener's
    lookup (getVpaWeightFromIntervals): at a weight of 100, a horizontal recommendation
    for more replicas takes the next interval's weight below 100, so the count may move;
    and docs/engine.md: missing data holds only the axis that lacks it. Only when no later
    interval lets the count move does weight 100 hold it."""
    h = hvpa_object(intervals=intervals, minimum=2, maximum=4)
    not_provided = [{"type": "RecommendationProvided", "status": "False"}]
    decision = run(scenario(h, usage="1", vpa_conditions=not_provided))
    assert decision.desired_replicas == replicas
    assert requests_of(decision) == (500, 1_000_000_000)
    assert condition(decision, "VerticalScalingActive") == ("False", "RecommendationNotProvided")
    assert any(weight_line in line for line in decision.explanation)


def test_unreadable_metrics_hold_the_count_not_the_pods() -> None:
    raw = scenario()
    raw["podMetrics"] = []
    decision = run(raw)
    assert decision.desired_replicas == 2
    assert requests_of(decision) == (750, written(1_500_000_000))
    assert condition(decision, "ScalingActive") == ("False", "FailedGetResourceMetric")


def test_a_missing_target_holds_both_axes() -> None:
    loaded = parse_scenario(scenario())
    decision = decide(loaded.hvpa, Snapshot(target=None), loaded.now)
    assert condition(decision, "VerticalScalingActive") == ("False", "TargetNotFound")
    assert condition(decision, "AbleToScale") == ("False", "FailedGetScale")
    assert decision.containers == ()


# ---------------------------------------------------------------------------
# Gates, through decide


def test_update_policy_off_blocks_only_its_axis_and_direction() -> None:
    h = hvpa_object(vpa_scale_up={"updatePolicy": {"updateMode": "Off"}})
    decision = run(scenario(h, usage="400m"))
    assert (decision.desired_replicas, requests_of(decision)[0]) == (3, 500)
    assert blocked_of(decision) == [("vertical", "up", "UpdatePolicy")]


def test_maintenance_window_blocks_outside_and_applies_inside() -> None:
    mode = {"updatePolicy": {"updateMode": "MaintenanceWindow"}}
    outside = run(scenario(hvpa_object(vpa_scale_up=mode, window=("220000+0000", "230000+0000"))))
    inside = run(scenario(hvpa_object(vpa_scale_up=mode, window=("113000+0000", "123000+0000"))))
    assert blocked_of(outside) == [("vertical", "up", "MaintenanceWindow")]
    assert requests_of(outside)[0] == 500
    assert (blocked_of(inside), requests_of(inside)[0]) == ([], 750)


def test_stabilization_is_per_axis_and_direction() -> None:
    """A vertical scale-up a minute ago holds the next one; the replica count still moves."""
    status = {
        "history": {"recommendations": [], "lastScaleTimes": {"verticalUp": at(60)}},
        "lastScaling": {"lastScaleTime": at(60)},
    }
    window = {"stabilizationDuration": "3m"}
    h = hvpa_object(status=status, vpa_scale_up=window, hpa_scale_up=window)
    decision = run(scenario(h, usage="400m"))
    assert (decision.desired_replicas, requests_of(decision)[0]) == (3, 500)
    assert blocked_of(decision) == [("vertical", "up", "StabilizationWindow")]
    times = plain(decision.status)["history"]["lastScaleTimes"]
    assert times == {"horizontalUp": at(0), "verticalUp": at(60)}


def test_gardeners_single_scale_time_stands_for_all_four_until_hvpa_keeps_its_own() -> None:
    status = {"history": {"recommendations": []}, "lastScaling": {"lastScaleTime": at(60)}}
    window = {"stabilizationDuration": "3m"}
    h = hvpa_object(status=status, vpa_scale_down=window, hpa_scale_up=window)
    first = run(scenario(h, usage="400m"))
    assert blocked_of(first) == [("horizontal", "up", "StabilizationWindow")]
    assert requests_of(first)[0] == 750
    times = plain(first.status)["history"]["lastScaleTimes"]
    assert times == {
        "horizontalUp": at(60),
        "horizontalDown": at(60),
        "verticalUp": at(0),
        "verticalDown": at(60),
    }


def test_rollout_blocks_vertical_changes_only() -> None:
    decision = run(scenario(usage="400m", rolling=True))
    assert (decision.desired_replicas, requests_of(decision)[0]) == (3, 500)
    assert blocked_of(decision) == [("vertical", "up", "Rollout")]
    assert any(
        "blocked by Rollout: a rollout of the target is in progress" in line
        for line in decision.explanation
    )


def test_a_target_without_status_is_not_rolling_out() -> None:
    raw = scenario()
    del raw["target"]["status"]
    decision = run(raw)
    assert requests_of(decision)[0] == 750
    assert any("reports no status" in line for line in decision.explanation)


def test_every_blocking_gate_is_reported_and_explained() -> None:
    h = hvpa_object(
        vpa_scale_up={
            "updatePolicy": {"updateMode": "Off"},
            "minChange": {"cpu": {"value": "2"}, "memory": {"value": "5G"}},
        }
    )
    decision = run(scenario(h, rolling=True))
    assert blocked_of(decision) == [
        ("vertical", "up", "UpdatePolicy"),
        ("vertical", "up", "MinChange"),
        ("vertical", "up", "Rollout"),
    ]
    gates = [line.strip() for line in decision.explanation if line.strip().startswith("gate:")]
    assert len(gates) == 6
    assert "step 250m below vpa.scaleUp.minChange 2" in gates[1]


# ---------------------------------------------------------------------------
# Guards


def test_cpu_starvation_passes_min_change() -> None:
    h = hvpa_object(vpa_scale_up={"minChange": {"cpu": {"value": "2"}, "memory": {"value": "5G"}}})
    decision = run(scenario(h, usage="500m"))
    assert requests_of(decision) == (750, 1_000_000_000)
    assert blocked_of(decision) == [("vertical", "up", "MinChange")]
    assert any("guard: starvation: app cpu" in line for line in decision.explanation)


@pytest.mark.parametrize(
    ("oom_killed_at", "override", "memory"),
    [
        pytest.param(at(60), False, written(1_400_000_000), id="oomkilled-since-the-last-scaling"),
        pytest.param(None, True, written(1_400_000_000), id="gardeners-override-mark"),
        pytest.param(None, False, 1_000_000_000, id="neither"),
    ],
)
def test_an_oomkill_grows_memory_whatever_the_weight(
    oom_killed_at: str | None, override: bool, memory: int
) -> None:
    status = {"history": {"recommendations": []}, "overrideScaleUpStabilization": override}
    h = hvpa_object(intervals=[{"vpaWeight": 0}], status=status)
    decision = run(scenario(h, oom_killed_at=oom_killed_at))
    assert requests_of(decision) == (500, memory)
    assert decision.status.override_scale_up_stabilization is False


@pytest.mark.parametrize(
    ("oomed_pod_memory", "memory", "blocked"),
    [
        pytest.param(
            None, written(1_400_000_000), [], id="current-template-oom-passes-the-rollout"
        ),
        pytest.param("800M", 1_000_000_000, ["Rollout"], id="old-template-oom-waits"),
    ],
)
def test_an_oom_that_fails_the_rollout_in_progress_passes_the_rollout_gate(
    oomed_pod_memory: str | None, memory: int, blocked: list[str]
) -> None:
    """A workload that OOM-loops from its first pod never finishes its rollout (its new
    pods die too), so a Rollout gate that waited for it would hold the cure for ever.
    An OOMKill in a pod of an older template is left to the rollout, which replaces it."""
    h = hvpa_object(intervals=[{"vpaWeight": 0}])
    raw = scenario(h, oom_killed_at=at(60), rolling=True)
    if oomed_pod_memory is not None:
        containers = raw["pods"][0]["spec"]["containers"]
        containers[0] = {**containers[0], "resources": resources(memory=oomed_pod_memory)}
    decision = run(raw)
    assert requests_of(decision) == (500, memory)
    assert [reason for _, _, reason in blocked_of(decision) if reason != "Weight"] == blocked
    passed = [line for line in decision.explanation if "past the Rollout gate" in line]
    assert bool(passed) == (not blocked)
    assert all("runs the current template and was OOMKilled" in line for line in passed)


# ---------------------------------------------------------------------------
# Status


def test_last_blocked_scaling_is_this_decisions_only() -> None:
    stale = {"reason": "MinChange", "scalingStatus": {"hpaStatus": {"desiredReplicas": 9}}}
    status = {"history": {"recommendations": []}, "lastBlockedScaling": [stale]}
    decision = run(scenario(hvpa_object(status=status)))
    assert plain(decision.status)["lastBlockedScaling"] == []


def test_last_blocked_scaling_has_gardeners_shape() -> None:
    h = hvpa_object(
        vpa_scale_up={"updatePolicy": {"updateMode": "Off"}}, intervals=[{"vpaWeight": 100}]
    )
    decision = run(scenario(h, usage="400m"))
    assert plain(decision.status)["lastBlockedScaling"] == [
        {
            "reason": "Weight",
            "scalingStatus": {"hpaStatus": {"currentReplicas": 2, "desiredReplicas": 4}},
        },
        {
            "reason": "UpdatePolicy",
            "scalingStatus": {
                "vpaStatus": {
                    "recommendation": {
                        "containerRecommendations": [
                            {"containerName": "app", "target": {"cpu": "1", "memory": "2G"}}
                        ]
                    }
                }
            },
        },
    ]


def test_capacity_without_its_spec_scales_nothing() -> None:
    """A Capacity Hvpa that skipped validation (no spec.capacity) is held, not guessed at."""
    raw = scenario(usage="400m")
    raw["hvpa"]["spec"]["strategy"] = "Capacity"
    raw["hvpa"]["spec"]["capacity"] = {"curve": [{"replicas": 1, "cpu": "1"}]}
    parsed = parse_scenario(raw)
    spec = msgspec.structs.replace(parsed.hvpa.spec, capacity=None)
    hvpa = msgspec.structs.replace(parsed.hvpa, spec=spec)
    decision = decide(hvpa, parsed.snapshot, parsed.now, parsed.settings)
    assert (decision.desired_replicas, requests_of(decision)[0]) == (2, 500)
    assert condition(decision, "ScalingActive") == ("False", "InvalidSpec")


def test_vertical_condition_turns_false_when_vertical_scaling_is_switched_off() -> None:
    first = run(scenario())
    later = hvpa_object(vpa=False, status=plain(first.status))
    decision = run(scenario(later))
    assert condition(decision, "VerticalScalingActive") == ("False", "VerticalScalingOff")


# ---------------------------------------------------------------------------
# Inputs and output forms


def test_pod_metrics_are_read_for_the_vertical_axis() -> None:
    selector = LabelSelector.from_dict({"matchLabels": {"app": "web"}})
    query = ResourceMetricsQuery(NAMESPACE, selector)
    assert metric_queries((), NAMESPACE, selector) == ()
    assert metric_queries((), NAMESPACE, selector, pod_usage=True) == (query,)


def test_starvation_reads_pod_metrics_without_hpa_metrics() -> None:
    h = hvpa_object(hpa=False, vpa_scale_up={"minChange": {"cpu": {"value": "2"}}})
    decision = run(scenario(h, usage="500m"))
    assert requests_of(decision)[0] == 750


@pytest.mark.parametrize(
    ("resource", "milli", "text"),
    [
        pytest.param("memory", 1_600_000_000_000, "1.6G", id="gardener-rounding-in-decimal"),
        pytest.param("memory", 672_138_000_000, "672.138M", id="never-672138k"),
        pytest.param("memory", 2 * GIB * 1000, "2Gi", id="binary-when-exact"),
        pytest.param("memory", 1_024_000_000, "1000Ki", id="kibibytes-below-a-mebibyte"),
        pytest.param("memory", 1500, "1.5", id="fractional-bytes"),
        pytest.param("cpu", 1500, "1.5", id="cpu-cores-with-a-fraction"),
        pytest.param("cpu", 250, "250m", id="cpu-millicores"),
        pytest.param("cpu", 2000, "2", id="cpu-cores"),
    ],
)
def test_format_amount_is_for_a_reader(resource: str, milli: int, text: str) -> None:
    assert format_amount(resource, milli) == text


@pytest.mark.parametrize(
    ("resource", "milli", "text"),
    [
        pytest.param("memory", 1_600_000_000_000, "1600M", id="decimal-when-shorter"),
        pytest.param("memory", 2 * GIB * 1000, "2Gi", id="binary-when-shorter"),
        pytest.param("memory", 1_024_000_000, "1024k", id="decimal-on-a-tie"),
        pytest.param("memory", 1500, "1500m", id="fractional-bytes"),
        pytest.param("cpu", 1500, "1500m", id="cpu-millicores"),
        pytest.param("cpu", 2000, "2", id="cpu-cores"),
    ],
)
def test_format_written_is_the_canonical_spelling(resource: str, milli: int, text: str) -> None:
    """What the workload is patched with is what the API server stores (its canonical
    spelling), so hvpa's write and a later read of the object agree."""
    assert format_written(resource, milli) == text


def test_resources_without_limits_get_none() -> None:
    container = resources(cpu_limit=None, memory_limit=None)
    decision = run(scenario(container=container, usage="400m"))
    assert limits_of(decision) == (None, None)
    assert requests_of(decision) == (750, written(1_500_000_000))
