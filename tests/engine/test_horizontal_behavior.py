"""Stabilization, scaling policies and scale events, from Kubernetes 1.37.2's horizontal_test.go tables.

Covers normalizeDesiredReplicas (no behavior), stabilizeRecommendationWithBehaviors,
convertDesiredReplicasWithBehaviorRate (TestScalingWithRules, every row),
storeScaleEvent, the scale-up limit of the no-behavior path, and the
defaults GenerateHPAScaleUpRules / GenerateHPAScaleDownRules fill in. The
pytest ids of ported rows are upstream's subtest names; a row or test whose
name is not upstream's is hvpa's own.
"""

from __future__ import annotations

import pytest
from hypothesis import given as hypothesis_given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from hvpa.api.autoscaling import HPAScalingPolicy, HPAScalingRules
from hvpa.engine.conditions import Conditions
from hvpa.engine.explain import Explanation
from hvpa.engine.history import Recommendation, ScaleEvent
from hvpa.engine.horizontal.behavior import (
    ScalingPolicy,
    ScalingRules,
    calculate_scale_down_limit_with_behaviors,
    calculate_scale_up_limit_with_scaling_rules,
    convert_desired_replicas_with_behavior_rate,
    convert_desired_replicas_with_rules,
    generate_scale_down_rules,
    generate_scale_up_rules,
    get_replicas_change_per_period,
    prune_recommendations,
    prune_scale_events,
    stabilize_recommendation,
    stabilize_recommendation_with_behaviors,
    store_scale_event,
)
from hvpa.engine.horizontal.controller import HorizontalRecommendation, record_rescale

NOW = 1_800_000_000.0


def rules(
    pods: int = 0, pods_period: int = 0, percent: int = 0, percent_period: int = 0, window: int = 0
) -> HPAScalingRules:
    """generateScalingRules: a policy per non-zero value, selectPolicy Max."""
    policies = []
    if pods:
        policies.append(HPAScalingPolicy(type="Pods", value=pods, period_seconds=pods_period))
    if percent:
        policies.append(
            HPAScalingPolicy(type="Percent", value=percent, period_seconds=percent_period)
        )
    return HPAScalingRules(
        stabilization_window_seconds=window, select_policy="Max", policies=policies or None
    )


def uniform(changes: list[int], period: int) -> tuple[ScaleEvent, ...]:
    """generateEventsUniformDistribution: events at the middle of equal segments of the period."""
    segment = period / len(changes)
    return tuple(
        ScaleEvent(NOW - int(period - segment * (i + 1) + segment / 2), change)
        for i, change in enumerate(changes)
    )


def recs(*pairs: tuple[int, float]) -> list[Recommendation]:
    """Recommendations given as (replicas, seconds ago)."""
    return [Recommendation(NOW - ago, replicas) for replicas, ago in pairs]


# ---------------------------------------------------------------------------
# TestNormalizeDesiredReplicas (no behavior: the downscale window only)


@pytest.mark.parametrize(
    ("history", "prenormalized", "stabilized", "stored"),
    [
        pytest.param([], 5, 5, [5], id="empty log"),
        pytest.param(recs((4, 120), (5, 60)), 3, 5, [4, 5, 3], id="stabilize"),
        pytest.param(recs((1, 120), (2, 60)), 3, 3, [1, 2, 3], id="no stabilize"),
        pytest.param(
            recs((10, 600), (9, 540)), 3, 3, [10, 3], id="no stabilize - old recommendations"
        ),
        pytest.param(
            recs((10, 600), (4, 60), (5, 120), (9, 540)),
            3,
            5,
            [10, 4, 5, 3],
            id="stabilize - old recommendations",
        ),
        pytest.param(recs((7, 300)), 3, 7, [7, 3], id="exactly at the window edge still counts"),
        pytest.param(recs((7, 301)), 3, 3, [3], id="just past the window edge is outdated"),
    ],
)
def test_stabilize_recommendation(
    history: list[Recommendation], prenormalized: int, stabilized: int, stored: list[int]
) -> None:
    assert stabilize_recommendation(history, prenormalized, NOW, 300) == stabilized
    assert [r.replicas for r in history] == stored
    assert Recommendation(NOW, prenormalized) in history


# ---------------------------------------------------------------------------
# TestNormalizeDesiredReplicasWithBehavior


@pytest.mark.parametrize(
    ("history", "current", "prenormalized", "up_window", "down_window", "stabilized", "stored"),
    [
        pytest.param([], 100, 5, 0, 0, 5, [5], id="empty recommendations for scaling down"),
        pytest.param(
            recs((4, 120), (5, 60)),
            100,
            3,
            0,
            180,
            5,
            [4, 5, 3],
            id="simple scale down stabilization",
        ),
        pytest.param(
            recs((4, 120), (5, 60)), 1, 7, 300, 0, 4, [4, 5, 7], id="simple scale up stabilization"
        ),
        pytest.param(
            recs((1, 120), (2, 60)), 100, 3, 300, 0, 3, [1, 2, 3], id="no scale down stabilization"
        ),
        pytest.param(
            recs((4, 120), (5, 60)), 1, 3, 0, 300, 3, [4, 5, 3], id="no scale up stabilization"
        ),
        pytest.param(
            recs((10, 600), (9, 540)),
            100,
            3,
            0,
            0,
            3,
            [10, 3],
            id="no scale down stabilization, reuse recommendation element",
        ),
        pytest.param(
            recs((10, 600), (9, 540)),
            1,
            100,
            0,
            0,
            100,
            [10, 100],
            id="no scale up stabilization, reuse recommendation element",
        ),
        pytest.param(
            recs((10, 600), (4, 60), (5, 120), (9, 540)),
            100,
            3,
            0,
            180,
            5,
            [10, 4, 5, 3],
            id="scale down stabilization, reuse one of obsolete recommendation element",
        ),
        pytest.param(
            recs((10, 6000), (6, 60), (5, 120), (9, 180)),
            1,
            100,
            300,
            300,
            5,
            [100, 6, 5, 9],
            id="scale up stabilization, reuse one of obsolete recommendation element",
        ),
        pytest.param(
            recs((2, 6000), (3, 180)),
            2,
            1,
            300,
            300,
            2,
            [1, 3],
            id="scale up and down stabilization, do not scale up when prenormalized rec goes down",
        ),
        pytest.param(
            recs((2, 6000), (1, 180)),
            2,
            3,
            300,
            300,
            2,
            [3, 1],
            id="scale up and down stabilization, do not scale down when prenormalized rec goes up",
        ),
        pytest.param(
            recs((9, 180)),
            10,
            3,
            0,
            180,
            3,
            [9, 3],
            id="a recommendation exactly at the window edge no longer counts",
        ),
    ],
)
def test_stabilize_recommendation_with_behaviors(
    history: list[Recommendation],
    current: int,
    prenormalized: int,
    up_window: int,
    down_window: int,
    stabilized: int,
    stored: list[int],
) -> None:
    result, _, _ = stabilize_recommendation_with_behaviors(
        history, current, prenormalized, up_window, down_window, NOW
    )
    assert result == stabilized
    assert [r.replicas for r in history] == stored


@pytest.mark.parametrize(
    ("current", "desired", "reason"),
    [
        pytest.param(3, 5, "ScaleUpStabilized", id="growing"),
        pytest.param(3, 3, "ScaleUpStabilized", id="equal counts as growing"),
        pytest.param(3, 1, "ScaleDownStabilized", id="shrinking"),
    ],
)
def test_stabilization_reason(current: int, desired: int, reason: str) -> None:
    _, got, message = stabilize_recommendation_with_behaviors([], current, desired, 0, 0, NOW)
    assert got == reason
    assert message.startswith("recent recommendations were")


# ---------------------------------------------------------------------------
# TestScalingWithRules: convertDesiredReplicasWithBehaviorRate


@pytest.mark.parametrize(
    (
        "current",
        "desired",
        "minimum",
        "maximum",
        "up",
        "down",
        "up_events",
        "down_events",
        "expected",
        "condition",
    ),
    [
        pytest.param(
            5,
            7,
            3,
            8,
            None,
            None,
            (),
            (),
            7,
            "DesiredWithinRange",
            id="prenormalized desired replicas within range",
        ),
        pytest.param(
            3,
            1,
            2,
            8,
            None,
            None,
            (),
            (),
            2,
            "TooFewReplicas",
            id="prenormalized desired replicas < minReplicas",
        ),
        pytest.param(
            1,
            0,
            0,
            10,
            None,
            None,
            (),
            (),
            0,
            "DesiredWithinRange",
            id="prenormalized desired replicas within range when minReplicas is 0",
        ),
        pytest.param(
            20,
            1000,
            1,
            10,
            None,
            None,
            (),
            (),
            10,
            "TooManyReplicas",
            id="maxReplicas is the limit because maxReplicas < scaleUpLimit",
        ),
        pytest.param(
            100,
            1000,
            100,
            150,
            None,
            None,
            (),
            (),
            150,
            "TooManyReplicas",
            id="desired replica count is more than the maximum replica count",
        ),
        pytest.param(
            3,
            1000,
            1,
            2000,
            rules(0, 0, 1, 60),
            None,
            (),
            (),
            4,
            "ScaleUpLimit",
            id="scaleUpLimit is the limit because scaleUpLimit < maxReplicas with user policies",
        ),
        pytest.param(
            1000,
            3,
            3,
            2000,
            None,
            rules(20, 60),
            (),
            (),
            980,
            "ScaleDownLimit",
            id="hvpa's own: scaleDownLimit > minReplicas with user defined policies",
        ),
        pytest.param(
            10,
            50,
            1,
            1000,
            None,
            None,
            (),
            (),
            20,
            "ScaleUpLimit",
            id="scaleUp with default behavior",
        ),
        pytest.param(
            10,
            500,
            1,
            1000,
            rules(100, 60, 100, 60),
            None,
            (),
            (),
            110,
            "ScaleUpLimit",
            id="scaleUp with pods policy larger than percent policy",
        ),
        pytest.param(
            10,
            500,
            1,
            1000,
            rules(2, 60, 100, 60),
            None,
            (),
            (),
            20,
            "ScaleUpLimit",
            id="scaleUp with percent policy larger than pods policy",
        ),
        pytest.param(
            10,
            50,
            1,
            1000,
            rules(100, 60),
            None,
            (),
            (),
            50,
            "DesiredWithinRange",
            id="scaleUp with spec MaxReplicas limitation with large pod policy",
        ),
        pytest.param(
            10,
            50,
            1,
            1000,
            rules(10000, 60),
            None,
            (),
            (),
            50,
            "DesiredWithinRange",
            id="scaleUp with spec MaxReplicas limitation with large percent policy",
        ),
        pytest.param(
            10,
            50,
            1,
            1000,
            rules(30, 60),
            None,
            (),
            (),
            40,
            "ScaleUpLimit",
            id="scaleUp with pod policy limitation",
        ),
        pytest.param(
            10,
            50,
            1,
            1000,
            rules(0, 0, 200, 60),
            None,
            (),
            (),
            30,
            "ScaleUpLimit",
            id="scaleUp with percent policy limitation",
        ),
        pytest.param(
            100,
            2,
            1,
            1000,
            None,
            rules(20, 60, 1, 60, 300),
            (),
            (),
            80,
            "ScaleDownLimit",
            id="scaleDown with percent policy larger than pod policy",
        ),
        pytest.param(
            100,
            2,
            1,
            1000,
            None,
            rules(2, 60, 1, 60, 300),
            (),
            (),
            98,
            "ScaleDownLimit",
            id="scaleDown with pod policy larger than percent policy",
        ),
        pytest.param(
            10,
            0,
            1,
            1000,
            None,
            rules(100, 60, 0, 0, 300),
            (),
            (),
            1,
            "TooFewReplicas",
            id="scaleDown with spec MinReplicas limitation with large pod policy",
        ),
        pytest.param(
            10,
            2,
            5,
            1000,
            None,
            rules(0, 0, 100, 60, 300),
            (),
            (),
            5,
            "TooFewReplicas",
            id="scaleDown with spec MinReplicas limitation with large percent policy",
        ),
        pytest.param(
            10,
            2,
            1,
            1000,
            None,
            rules(5, 60, 0, 0, 300),
            (),
            (),
            5,
            "ScaleDownLimit",
            id="scaleDown with pod policy limitation",
        ),
        pytest.param(
            10,
            5,
            1,
            1000,
            None,
            rules(0, 0, 50, 60, 300),
            (),
            (),
            5,
            "DesiredWithinRange",
            id="scaleDown with percent policy limitation",
        ),
        pytest.param(
            100,
            500,
            1,
            200,
            rules(300, 60),
            None,
            uniform([1, 5, 9], 120),
            (),
            200,
            "TooManyReplicas",
            id="scaleUp with spec MaxReplicas limitation with large pod policy and events",
        ),
        pytest.param(
            100,
            500,
            1,
            200,
            rules(0, 0, 10000, 60),
            None,
            uniform([1, 5, 9], 120),
            (),
            200,
            "TooManyReplicas",
            id="scaleUp with spec MaxReplicas limitation with large percent policy and events",
        ),
        pytest.param(
            100,
            500,
            1,
            1000,
            rules(5, 120),
            None,
            uniform([1, 5, 9], 120),
            (),
            100,
            "ScaleUpLimit",
            id="scaleUp with currentReplicas limitation with rate.PeriodSeconds with a lot of recent "
            "scale up events",
        ),
        pytest.param(
            100,
            500,
            1,
            1000,
            rules(150, 120),
            None,
            uniform([1, 5, 9], 120),
            (),
            235,
            "ScaleUpLimit",
            id="scaleUp with pod policy and previous scale up events",
        ),
        pytest.param(
            100,
            500,
            1,
            1000,
            rules(0, 0, 200, 120),
            None,
            uniform([1, 5, 9], 120),
            (),
            255,
            "ScaleUpLimit",
            id="scaleUp with percent policy and previous scale up events",
        ),
        pytest.param(
            6,
            24,
            1,
            1000,
            rules(0, 0, 300, 300),
            None,
            uniform([4], 120),
            uniform([2], 120),
            16,
            "ScaleUpLimit",
            id="scaleUp with percent policy and previous scale up and down events",
        ),
        pytest.param(
            10,
            5,
            1,
            1000,
            None,
            None,
            (),
            uniform([1, 5, 9], 120),
            5,
            "DesiredWithinRange",
            id="scaleDown with default policy and previous events",
        ),
        pytest.param(
            100,
            0,
            1,
            1000,
            None,
            rules(115, 120, 0, 0, 300),
            (),
            uniform([1, 5, 9], 120),
            1,
            "TooFewReplicas",
            id="scaleDown with spec MinReplicas=nil limitation with large pod policy and previous events",
        ),
        pytest.param(
            100,
            0,
            5,
            1000,
            None,
            rules(130, 120, 0, 0, 300),
            (),
            uniform([1, 5, 9], 120),
            5,
            "TooFewReplicas",
            id="scaleDown with spec MinReplicas limitation with large pod policy and previous events",
        ),
        pytest.param(
            100,
            2,
            5,
            1000,
            None,
            rules(0, 0, 100, 120, 300),
            (),
            uniform([1, 5, 9], 120),
            5,
            "TooFewReplicas",
            id="scaleDown with spec MinReplicas limitation with large percent policy and previous events",
        ),
        pytest.param(
            100,
            2,
            1,
            1000,
            None,
            rules(5, 120, 0, 0, 300),
            (),
            uniform([1, 5, 9], 120),
            100,
            "ScaleDownLimit",
            id="scaleDown with pod policy limitation and previous events",
        ),
        pytest.param(
            100,
            0,
            1,
            1000,
            None,
            rules(0, 0, 50, 120, 300),
            (),
            uniform([2, 4, 6], 120),
            56,
            "ScaleDownLimit",
            id="scaleDown with percent policy limitation and previous events",
        ),
        pytest.param(
            10,
            1,
            1,
            1000,
            None,
            rules(0, 0, 50, 180, 0),
            uniform([2], 120),
            uniform([4], 120),
            6,
            "ScaleDownLimit",
            id="scaleDown with percent policy and previous scale up and down events",
        ),
        pytest.param(
            100,
            0,
            1,
            1000,
            None,
            rules(0, 0, 10, 120, 300),
            (),
            uniform([10, 10, 10], 120),
            100,
            "ScaleDownLimit",
            id="scaleDown with previous events preventing further scale down",
        ),
        pytest.param(
            10,
            5,
            1,
            1000,
            None,
            rules(0, 0, 1000, 120, 300),
            (),
            uniform([10, 10, 10], 120),
            5,
            "DesiredWithinRange",
            id="scaleDown with with previous events still allowing more scale down",
        ),
        pytest.param(
            100,
            200,
            1,
            1000,
            rules(1000, 60),
            None,
            uniform([8, 12, 9, 11], 120),
            (),
            200,
            "DesiredWithinRange",
            id="check 'outdated' flag for events for one behavior for up",
        ),
        pytest.param(
            100,
            200,
            1,
            1000,
            rules(1000, 120, 100, 60),
            None,
            uniform([8, 12, 9, 11], 120),
            (),
            200,
            "DesiredWithinRange",
            id="check that events were not marked 'outdated' for two different policies in the "
            "behavior for up",
        ),
        pytest.param(
            100,
            200,
            1,
            1000,
            rules(1000, 30, 100, 60),
            None,
            uniform([8, 12, 9, 11], 120),
            (),
            200,
            "DesiredWithinRange",
            id="check that events were marked 'outdated' for two different policies in the "
            "behavior for up",
        ),
        pytest.param(
            100,
            5,
            1,
            1000,
            None,
            rules(1000, 60, 0, 0, 300),
            (),
            uniform([8, 12, 9, 11], 120),
            5,
            "DesiredWithinRange",
            id="check 'outdated' flag for events for one behavior for down",
        ),
        pytest.param(
            100,
            5,
            1,
            1000,
            None,
            rules(1000, 120, 100, 60, 300),
            (),
            uniform([8, 12, 9, 11], 120),
            5,
            "DesiredWithinRange",
            id="check that events were not marked 'outdated' for two different policies in the "
            "behavior for down",
        ),
        pytest.param(
            100,
            5,
            1,
            1000,
            None,
            rules(1000, 30, 100, 60, 300),
            (),
            uniform([8, 12, 9, 11], 120),
            5,
            "DesiredWithinRange",
            id="check that events were marked 'outdated' for two different policies in the "
            "behavior for down",
        ),
    ],
)
def test_scaling_with_rules(
    current: int,
    desired: int,
    minimum: int,
    maximum: int,
    up: HPAScalingRules | None,
    down: HPAScalingRules | None,
    up_events: tuple[ScaleEvent, ...],
    down_events: tuple[ScaleEvent, ...],
    expected: int,
    condition: str,
) -> None:
    replicas, reason, _ = convert_desired_replicas_with_behavior_rate(
        current,
        desired,
        minimum,
        maximum,
        generate_scale_up_rules(up),
        generate_scale_down_rules(down, 300),
        up_events,
        down_events,
        NOW,
    )
    assert (replicas, reason) == (expected, condition)


MIN_CHANGE = ScalingRules(
    300, "Min", (ScalingPolicy("Pods", 2, 60), ScalingPolicy("Percent", 50, 60))
)


def test_scale_up_limit_with_min_policy() -> None:
    """TestCalculateScaleUpLimitWithScalingRules: Min picks the least growth."""
    assert calculate_scale_up_limit_with_scaling_rules(1, (), (), MIN_CHANGE, NOW) == 2


def test_scale_down_limit_with_min_policy() -> None:
    """TestCalculateScaleDownLimitWithBehaviors: Min picks the least shrinkage."""
    assert calculate_scale_down_limit_with_behaviors(5, (), (), MIN_CHANGE, NOW) == 3


@pytest.mark.parametrize(
    ("direction", "expected"),
    [
        pytest.param("up", 10, id="scale-up disabled"),
        pytest.param("down", 10, id="scale-down disabled"),
    ],
)
def test_disabled_select_policy_holds(direction: str, expected: int) -> None:
    disabled = ScalingRules(0, "Disabled", (ScalingPolicy("Pods", 4, 15),))
    if direction == "up":
        assert calculate_scale_up_limit_with_scaling_rules(10, (), (), disabled, NOW) == expected
    else:
        assert calculate_scale_down_limit_with_behaviors(10, (), (), disabled, NOW) == expected


def test_percent_policy_rounds_up_in_float64() -> None:
    """100 x (1 + 14/100) is 114.00000000000001 in float64: the limit is 115, as upstream computes it."""
    rules_up = ScalingRules(0, "Max", (ScalingPolicy("Percent", 14, 60),))
    assert calculate_scale_up_limit_with_scaling_rules(100, (), (), rules_up, NOW) == 115


def test_empty_policy_list_allows_no_change() -> None:
    """`policies: []` (not absent) leaves no policy: the limit is the current count."""
    no_policies = generate_scale_up_rules(HPAScalingRules(policies=[]))
    replicas, reason, _ = convert_desired_replicas_with_behavior_rate(
        5, 9, 1, 10, no_policies, generate_scale_down_rules(None, 300), (), (), NOW
    )
    assert (replicas, reason) == (5, "ScaleUpLimit")


# ---------------------------------------------------------------------------
# The no-behavior path: convertDesiredReplicasWithRules (TestConvertDesiredReplicasWithRules)


@pytest.mark.parametrize(
    ("current", "desired", "minimum", "maximum", "expected", "condition"),
    [
        pytest.param(
            5, 7, 3, 8, 7, "DesiredWithinRange", id="prenormalized desired replicas within range"
        ),
        pytest.param(
            3, 1, 2, 8, 2, "TooFewReplicas", id="prenormalized desired replicas < minReplicas"
        ),
        pytest.param(
            1,
            0,
            0,
            10,
            0,
            "DesiredWithinRange",
            id="prenormalized desired zeroed replicas within range",
        ),
        pytest.param(
            20,
            1000,
            1,
            10,
            10,
            "TooManyReplicas",
            id="maxReplicas is the limit because maxReplicas < scaleUpLimit",
        ),
        pytest.param(
            3,
            1000,
            1,
            2000,
            6,
            "ScaleUpLimit",
            id="scaleUpLimit is the limit because scaleUpLimit < maxReplicas",
        ),
        pytest.param(1, 1000, 1, 2000, 4, "ScaleUpLimit", id="the scale-up limit is at least 4"),
    ],
)
def test_convert_desired_replicas_with_rules(
    current: int, desired: int, minimum: int, maximum: int, expected: int, condition: str
) -> None:
    replicas, reason, _ = convert_desired_replicas_with_rules(
        current, desired, minimum, maximum, 2.0, 4
    )
    assert (replicas, reason) == (expected, condition)


# ---------------------------------------------------------------------------
# TestStoreScaleEvents and getReplicasChangePerPeriod


def events(*pairs: tuple[int, float]) -> tuple[ScaleEvent, ...]:
    return tuple(ScaleEvent(NOW - ago, change) for change, ago in pairs)


@pytest.mark.parametrize(
    ("previous", "scaling", "changed_in_period", "stored"),
    [
        pytest.param(
            (), rules(10, 60, 100, 60), 0, [5], id="empty entries with two-policy-behavior"
        ),
        pytest.param(
            events((7, 61)),
            rules(10, 60, 100, 60),
            0,
            [5],
            id="one outdated entry to be replaced with behavior",
        ),
        pytest.param(
            events((7, 58)),
            rules(10, 60, 100, 60),
            7,
            [7, 5],
            id="one actual entry to be not touched with behavior",
        ),
        pytest.param(
            events((7, 61), (6, 59)),
            rules(10, 60),
            6,
            [5, 6],
            id="two entries, one of them to be replaced",
        ),
        pytest.param(
            events((8, 29), (6, 59), (7, 61), (9, 61)),
            rules(10, 60, 100, 30),
            14,
            [8, 6, 7, 5],
            id="replace one entry, use policies with different periods",
        ),
        pytest.param(
            events((7, 58), (6, 59)),
            rules(10, 120, 100, 30),
            13,
            [7, 6, 5],
            id="two entries, both actual",
        ),
    ],
)
def test_store_scale_events(
    previous: tuple[ScaleEvent, ...],
    scaling: HPAScalingRules,
    changed_in_period: int,
    stored: list[int],
) -> None:
    assert get_replicas_change_per_period(60, previous, NOW) == changed_in_period
    for resolved in (generate_scale_up_rules(scaling), generate_scale_down_rules(scaling, 300)):
        assert [e.replica_change for e in store_scale_event(previous, resolved, 5, NOW)] == stored


@pytest.mark.parametrize(
    "previous",
    [
        pytest.param((), id="empty entries with default behavior"),
        pytest.param(
            events((7, 61)), id="one outdated entry to be kept untouched without behavior"
        ),
    ],
)
def test_store_scale_events_without_behavior(previous: tuple[ScaleEvent, ...]) -> None:
    """TestStoreScaleEvents's rows without behavior: no event is stored, the stored ones stay.

    Upstream's storeScaleEvent returns at once without behavior; in hvpa the
    rescale is recorded by record_rescale, which keeps events only for an Hvpa
    with behavior. Both directions, as upstream checks both.
    """
    assert get_replicas_change_per_period(60, previous, NOW) == 0
    recommendation = HorizontalRecommendation(
        current_replicas=10,
        min_replicas=1,
        max_replicas=100,
        desired_replicas=None,
        unclamped=None,
        metrics=(),
        cluster_proportional=None,
        rescale_reason=None,
        recommendations=None,
        scale_up_rules=None,
        scale_down_rules=None,
    )
    for replicas in (15, 5):
        kept = record_rescale(
            recommendation, replicas, previous, previous, Conditions((), NOW), NOW, Explanation()
        )
        assert kept == (previous, previous)


def test_pruning_keeps_what_a_window_can_count() -> None:
    kept = prune_recommendations(recs((1, 301), (2, 300), (3, 10)), NOW, 300)
    assert [r.replicas for r in kept] == [2, 3]
    assert [e.replica_change for e in prune_scale_events(events((1, 61), (2, 60)), NOW, 60)] == [2]


@pytest.mark.parametrize(
    ("kept", "expected"),
    [
        pytest.param(recs((4, 45), (4, 30), (4, 15), (4, 0)), [4], id="a-steady-count-keeps-one"),
        pytest.param(recs((5, 30), (3, 15), (4, 0)), [5, 3, 4], id="highest-and-lowest-kept"),
        pytest.param(recs((4, 30), (5, 15), (3, 0)), [5, 3], id="between-later-ones-dropped"),
        pytest.param(recs((3, 0), (6, 20), (5, 10)), [3, 6, 5], id="slots-keep-their-order"),
    ],
)
def test_pruning_drops_what_later_recommendations_answer_for(
    kept: list[Recommendation], expected: list[int]
) -> None:
    """A recommendation with a later one at least as high and a later one at least as low is
    never a window's highest or lowest again (every window ends now)."""
    assert [r.replicas for r in prune_recommendations(kept, NOW, 300)] == expected


@hypothesis_settings(max_examples=80, deadline=None)
@hypothesis_given(
    st.lists(st.integers(1, 8), max_size=40),
    st.sampled_from([0, 15, 60, 300]),
    st.sampled_from([0, 60, 300]),
)
def test_pruned_recommendations_stabilize_as_all_of_them_would(
    desired: list[int], up_window: int, down_window: int
) -> None:
    """Decisions 15 s apart: the stabilized count from the pruned list is the one from every
    recommendation kept (upstream's memory), for both windows."""
    pruned: list[Recommendation] = []
    every: list[Recommendation] = []
    current = 4
    for step, wish in enumerate(desired):
        now = NOW + 15 * step
        from_pruned = stabilize_recommendation_with_behaviors(
            pruned, current, wish, up_window, down_window, now
        )
        from_every = stabilize_recommendation_with_behaviors(
            every, current, wish, up_window, down_window, now
        )
        assert from_pruned == from_every
        pruned = list(prune_recommendations(pruned, now, max(up_window, down_window)))
        current = from_pruned[0]


# ---------------------------------------------------------------------------
# Defaults filled in when behavior is given but partial


def test_scale_up_defaults() -> None:
    assert generate_scale_up_rules(None) == ScalingRules(
        0, "Max", (ScalingPolicy("Pods", 4, 15), ScalingPolicy("Percent", 100, 15))
    )


def test_scale_down_defaults_take_the_controller_window() -> None:
    assert generate_scale_down_rules(None, 120) == ScalingRules(
        120, "Max", (ScalingPolicy("Percent", 100, 15),)
    )


def test_set_fields_win_over_defaults() -> None:
    given = HPAScalingRules(stabilization_window_seconds=60, select_policy="Min", tolerance="0.05")
    resolved = generate_scale_down_rules(given, 300)
    assert resolved == ScalingRules(60, "Min", (ScalingPolicy("Percent", 100, 15),), 0.05)
