"""Normalizing the metrics' recommendation: stabilization, rate limits, min/max (upstream horizontal.go).

Two paths, as upstream: without `behavior`, `normalize_desired_replicas`
applies the downscale stabilization window and the fixed scale-up limit
max(factor x current, minimum); with `behavior` (defaults filled in for the
parts left out, as the API server's defaulting does),
`normalize_desired_replicas_with_behaviors` applies both stabilization
windows and the Pods/Percent policies over their periods. Function names
are upstream's, with the same strict and non-strict time comparisons, so the
window boundaries fall where upstream's do.

Recommendations and scale events are lists kept in the Hvpa status instead
of the controller's memory. An entry is replaced in place when it is
outdated, exactly as upstream reuses its slots; `prune_*` then drops entries
no window in use can count any more, which changes nothing a later
decision can see but keeps the status small. Windows only ever ask for the
lowest (scale-up) and the highest (scale-down) recommendation in them, and
both end now, so a recommendation with a later one at least as high and a
later one at least as low is never the answer again: those are dropped
too. A steady count keeps one entry where upstream's memory keeps one per
sync of its longest window (120 for a 30-minute scale-down window), each
written and read back with every status.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from hvpa.api.autoscaling import HPAScalingRules
from hvpa.engine.gomath import MAX_INT32, MIN_INT32, int32
from hvpa.engine.history import Recommendation, ScaleEvent
from hvpa.quantity import parse

__all__ = [
    "ScalingPolicy",
    "ScalingRules",
    "calculate_scale_down_limit_with_behaviors",
    "calculate_scale_up_limit",
    "calculate_scale_up_limit_with_scaling_rules",
    "convert_desired_replicas_with_behavior_rate",
    "convert_desired_replicas_with_rules",
    "generate_scale_down_rules",
    "generate_scale_up_rules",
    "get_longest_policy_period",
    "get_replicas_change_per_period",
    "prune_recommendations",
    "prune_scale_events",
    "rule_tolerance",
    "stabilize_recommendation",
    "stabilize_recommendation_with_behaviors",
    "store_scale_event",
]

DESIRED_WITHIN_RANGE: Final = (
    "DesiredWithinRange",
    "the desired count is within the acceptable range",
)
SCALE_UP_LIMIT: Final = (
    "ScaleUpLimit",
    "the desired replica count is increasing faster than the maximum scale rate",
)
SCALE_DOWN_LIMIT: Final = (
    "ScaleDownLimit",
    "the desired replica count is decreasing faster than the maximum scale rate",
)
TOO_MANY_REPLICAS: Final = (
    "TooManyReplicas",
    "the desired replica count is more than the maximum replica count",
)
TOO_FEW_REPLICAS: Final = (
    "TooFewReplicas",
    "the desired replica count is less than the minimum replica count",
)


@dataclass(frozen=True, slots=True)
class ScalingPolicy:
    type: str  # "Pods" | "Percent"
    value: int
    period_seconds: int


@dataclass(frozen=True, slots=True)
class ScalingRules:
    """One direction of `behavior` with every default filled in."""

    stabilization_window_seconds: int
    select_policy: str  # "Max" | "Min" | "Disabled"
    policies: tuple[ScalingPolicy, ...]
    tolerance: float | None = None


_SCALE_UP_DEFAULTS: Final = ScalingRules(
    stabilization_window_seconds=0,
    select_policy="Max",
    policies=(ScalingPolicy("Pods", 4, 15), ScalingPolicy("Percent", 100, 15)),
)
_SCALE_DOWN_POLICIES: Final = (ScalingPolicy("Percent", 100, 15),)


def _policies(rules: HPAScalingRules) -> tuple[ScalingPolicy, ...] | None:
    if rules.policies is None:
        return None
    return tuple(ScalingPolicy(p.type, p.value, p.period_seconds) for p in rules.policies)


def rule_tolerance(rules: HPAScalingRules | None) -> float | None:
    """A direction's `tolerance` (a quantity such as "0.05") as a fraction; None when unset."""
    if rules is None or rules.tolerance is None:
        return None
    return float(parse(rules.tolerance).value)


def generate_scale_up_rules(rules: HPAScalingRules | None) -> ScalingRules:
    """GenerateHPAScaleUpRules: 4 pods or 100% per 15 s, whichever is more, no window; set fields win."""
    defaults = _SCALE_UP_DEFAULTS
    if rules is None:
        return defaults
    policies = _policies(rules)
    return ScalingRules(
        stabilization_window_seconds=defaults.stabilization_window_seconds
        if rules.stabilization_window_seconds is None
        else rules.stabilization_window_seconds,
        select_policy=rules.select_policy or defaults.select_policy,
        policies=defaults.policies if policies is None else policies,
        tolerance=rule_tolerance(rules),
    )


def generate_scale_down_rules(
    rules: HPAScalingRules | None, downscale_stabilization_seconds: float
) -> ScalingRules:
    """GenerateHPAScaleDownRules: 100% per 15 s; the window defaults to the controller's setting."""
    window = int(downscale_stabilization_seconds)
    if rules is None:
        return ScalingRules(window, "Max", _SCALE_DOWN_POLICIES)
    policies = _policies(rules)
    return ScalingRules(
        stabilization_window_seconds=window
        if rules.stabilization_window_seconds is None
        else rules.stabilization_window_seconds,
        select_policy=rules.select_policy or "Max",
        policies=_SCALE_DOWN_POLICIES if policies is None else policies,
        tolerance=rule_tolerance(rules),
    )


# ---------------------------------------------------------------------------
# Stabilization


def stabilize_recommendation(
    recommendations: list[Recommendation], prenormalized: int, now: float, window_seconds: float
) -> int:
    """stabilizeRecommendation: the highest recommendation of the window; records this one.

    An entry older than the window (strictly) is outdated: the last such
    entry is replaced by this recommendation, otherwise it is appended.
    """
    highest = prenormalized
    old_index: int | None = None
    cutoff = now - window_seconds
    for index, recommendation in enumerate(recommendations):
        if recommendation.time < cutoff:
            old_index = index
        elif recommendation.replicas > highest:
            highest = recommendation.replicas
    _record(recommendations, old_index, Recommendation(now, prenormalized))
    return highest


def stabilize_recommendation_with_behaviors(
    recommendations: list[Recommendation],
    current_replicas: int,
    desired_replicas: int,
    up_window_seconds: int,
    down_window_seconds: int,
    now: float,
) -> tuple[int, str, str]:
    """stabilizeRecommendationWithBehaviors: keep the count between the lowest recent and highest recent.

    The lowest recommendation of the scale-up window bounds a scale-up, the
    highest of the scale-down window bounds a scale-down; this one is
    recorded raw.
    """
    up_cutoff = now - up_window_seconds
    down_cutoff = now - down_window_seconds
    up_recommendation = desired_replicas
    down_recommendation = desired_replicas
    old_index: int | None = None
    for index, recommendation in enumerate(recommendations):
        if recommendation.time > up_cutoff:
            up_recommendation = min(recommendation.replicas, up_recommendation)
        if recommendation.time > down_cutoff:
            down_recommendation = max(recommendation.replicas, down_recommendation)
        if recommendation.time < up_cutoff and recommendation.time < down_cutoff:
            old_index = index
    stabilized = current_replicas
    if stabilized < up_recommendation:
        stabilized = up_recommendation
    if stabilized > down_recommendation:
        stabilized = down_recommendation
    _record(recommendations, old_index, Recommendation(now, desired_replicas))
    if desired_replicas >= current_replicas:
        return (
            stabilized,
            "ScaleUpStabilized",
            "recent recommendations were lower than current one, applying the lowest recent recommendation",
        )
    return (
        stabilized,
        "ScaleDownStabilized",
        "recent recommendations were higher than current one, applying the highest recent recommendation",
    )


def _record(
    recommendations: list[Recommendation], old_index: int | None, new: Recommendation
) -> None:
    if old_index is not None:
        recommendations[old_index] = new
    else:
        recommendations.append(new)


def prune_recommendations(
    recommendations: Sequence[Recommendation], now: float, window_seconds: float
) -> tuple[Recommendation, ...]:
    """Drop recommendations no window can answer with: older than the longest window in use,
    or neither above every later one nor below every later one. The rest keep their slots."""
    cutoff = now - window_seconds
    in_window = [r for r in recommendations if not r.time < cutoff]
    needed: set[int] = set()
    highest_later: int | None = None
    lowest_later: int | None = None
    for index in sorted(range(len(in_window)), key=lambda i: in_window[i].time, reverse=True):
        replicas = in_window[index].replicas
        if highest_later is None or lowest_later is None:
            highest_later = lowest_later = replicas
        elif highest_later < replicas or replicas < lowest_later:
            highest_later = max(highest_later, replicas)
            lowest_later = min(lowest_later, replicas)
        else:
            continue
        needed.add(index)
    return tuple(r for index, r in enumerate(in_window) if index in needed)


# ---------------------------------------------------------------------------
# Rate limits


def get_replicas_change_per_period(
    period_seconds: int, scale_events: Sequence[ScaleEvent], now: float
) -> int:
    """getReplicasChangePerPeriod: the replicas changed by events strictly inside the period."""
    cutoff = now - period_seconds
    return sum(event.replica_change for event in scale_events if event.time > cutoff)


def calculate_scale_up_limit_with_scaling_rules(
    current_replicas: int,
    scale_up_events: Sequence[ScaleEvent],
    scale_down_events: Sequence[ScaleEvent],
    rules: ScalingRules,
    now: float,
) -> int:
    """calculateScaleUpLimitWithScalingRules: the most replicas the policies allow now.

    Each policy counts from the replica count at the start of its period
    (current - added + deleted in the period); Max takes the most permissive
    policy, Min the least, Disabled allows no growth.
    """
    if rules.select_policy == "Disabled":
        return current_replicas
    minimum = rules.select_policy == "Min"
    result = MAX_INT32 if minimum else MIN_INT32
    for policy in rules.policies:
        added = get_replicas_change_per_period(policy.period_seconds, scale_up_events, now)
        deleted = get_replicas_change_per_period(policy.period_seconds, scale_down_events, now)
        period_start = current_replicas - added + deleted
        if policy.type == "Pods":
            proposed = period_start + policy.value
        elif policy.type == "Percent":
            # Rounded up, or a small percentage of a small count would never grow it.
            proposed = int32(math.ceil(float(period_start) * (1 + float(policy.value) / 100)))
        else:
            continue
        result = min(result, proposed) if minimum else max(result, proposed)
    return result


def calculate_scale_down_limit_with_behaviors(
    current_replicas: int,
    scale_up_events: Sequence[ScaleEvent],
    scale_down_events: Sequence[ScaleEvent],
    rules: ScalingRules,
    now: float,
) -> int:
    """calculateScaleDownLimitWithBehaviors: the fewest replicas the policies allow now."""
    if rules.select_policy == "Disabled":
        return current_replicas
    minimum = rules.select_policy == "Min"
    result = MIN_INT32 if minimum else MAX_INT32
    for policy in rules.policies:
        added = get_replicas_change_per_period(policy.period_seconds, scale_up_events, now)
        deleted = get_replicas_change_per_period(policy.period_seconds, scale_down_events, now)
        period_start = current_replicas - added + deleted
        if policy.type == "Pods":
            proposed = period_start - policy.value
        elif policy.type == "Percent":
            proposed = int32(float(period_start) * (1 - float(policy.value) / 100))
        else:
            continue
        result = max(result, proposed) if minimum else min(result, proposed)
    return result


def convert_desired_replicas_with_behavior_rate(
    current_replicas: int,
    desired_replicas: int,
    min_replicas: int,
    max_replicas: int,
    up_rules: ScalingRules,
    down_rules: ScalingRules,
    scale_up_events: Sequence[ScaleEvent],
    scale_down_events: Sequence[ScaleEvent],
    now: float,
) -> tuple[int, str, str]:
    """convertDesiredReplicasWithBehaviorRate: clamp to the policies' limit and to min/max."""
    if desired_replicas > current_replicas:
        limit = calculate_scale_up_limit_with_scaling_rules(
            current_replicas, scale_up_events, scale_down_events, up_rules, now
        )
        # Recent scale-ups may put the limit below the current count: hold, never shrink.
        limit = max(limit, current_replicas)
        if max_replicas > limit:
            allowed, (reason, message) = limit, SCALE_UP_LIMIT
        else:
            allowed, (reason, message) = max_replicas, TOO_MANY_REPLICAS
        if desired_replicas > allowed:
            return allowed, reason, message
    elif desired_replicas < current_replicas:
        limit = calculate_scale_down_limit_with_behaviors(
            current_replicas, scale_up_events, scale_down_events, down_rules, now
        )
        limit = min(limit, current_replicas)
        if min_replicas < limit:
            allowed, (reason, message) = limit, SCALE_DOWN_LIMIT
        else:
            allowed, (reason, message) = min_replicas, TOO_FEW_REPLICAS
        if desired_replicas < allowed:
            return allowed, reason, message
    return desired_replicas, *DESIRED_WITHIN_RANGE


def calculate_scale_up_limit(current_replicas: int, factor: float, minimum: int) -> int:
    """calculateScaleUpLimit: max(factor x current, minimum), truncated."""
    return int32(max(factor * float(current_replicas), float(minimum)))


def convert_desired_replicas_with_rules(
    current_replicas: int,
    desired_replicas: int,
    min_replicas: int,
    max_replicas: int,
    scale_up_limit_factor: float,
    scale_up_limit_minimum: int,
) -> tuple[int, str, str]:
    """convertDesiredReplicasWithRules: min/max and the fixed scale-up limit (no behavior)."""
    scale_up_limit = calculate_scale_up_limit(
        current_replicas, scale_up_limit_factor, scale_up_limit_minimum
    )
    if max_replicas > scale_up_limit:
        maximum, (reason, message) = scale_up_limit, SCALE_UP_LIMIT
    else:
        maximum, (reason, message) = max_replicas, TOO_MANY_REPLICAS
    if desired_replicas < min_replicas:
        return (min_replicas, *TOO_FEW_REPLICAS)
    if desired_replicas > maximum:
        return maximum, reason, message
    return desired_replicas, *DESIRED_WITHIN_RANGE


# ---------------------------------------------------------------------------
# Scale events


def get_longest_policy_period(rules: ScalingRules) -> int:
    return max((policy.period_seconds for policy in rules.policies), default=0)


def store_scale_event(
    events: Sequence[ScaleEvent],
    rules: ScalingRules,
    replica_change: int,
    now: float,
) -> tuple[ScaleEvent, ...]:
    """storeScaleEvent for one direction: replace the last outdated event, or append.

    An event is outdated when it is older (strictly) than the direction's
    longest policy period.
    """
    cutoff = now - get_longest_policy_period(rules)
    stored = list(events)
    old_index: int | None = None
    for index, event in enumerate(stored):
        if event.time < cutoff:
            old_index = index
    new = ScaleEvent(now, replica_change)
    if old_index is not None:
        stored[old_index] = new
    else:
        stored.append(new)
    return tuple(stored)


def prune_scale_events(
    events: Sequence[ScaleEvent], now: float, period_seconds: int
) -> tuple[ScaleEvent, ...]:
    """Drop events older than every policy period of both directions: no limit can count them."""
    cutoff = now - period_seconds
    return tuple(e for e in events if not e.time < cutoff)
