"""The VPA updater's rules on plain data: capping, priority, the update thresholds, order, pacing.

Cases ported from kubernetes/autoscaler name their upstream file and test:
vertical-pod-autoscaler/pkg/updater/priority/update_priority_calculator_test.go
(the calculator's accept rules and order) and
vertical-pod-autoscaler/pkg/updater/restriction/pods_eviction_restriction_test.go
(the eviction budget). Upstream feeds its calculator a fake priority processor;
here the priority is computed from the same requests and recommendation, and the
test says where the computed diff differs from the fake one. CPU is in millicores,
memory in bytes.
"""

from __future__ import annotations

import pytest

from hvpa.sim.baselines.vpa_updater_rules import (
    ContainerPolicy,
    ContainerRecommendation,
    ContainerResources,
    EvictionBudget,
    PodPriority,
    RateLimiter,
    UpdaterSettings,
    capped_target,
    eviction_budget,
    quick_oom,
    update_order,
    update_priority,
    wants_update,
)

HOUR = 3600.0
GI = 2**30
DEFAULTS = UpdaterSettings()


def cpu_pod(millicores: int) -> list[ContainerResources]:
    return [ContainerResources("container1", {"cpu": millicores})]


# Upstream's VPA in these tests: target 5, lowerBound 1, upperBound 6 (CPU).
IN_RANGE_VPA = {
    "container1": ContainerRecommendation(
        target={"cpu": 5000}, lower_bound={"cpu": 1000}, upper_bound={"cpu": 6000}
    )
}


def accepted(
    requests: list[int],
    *,
    lived_hours: float,
    threshold: float,
    recommendations: dict[str, ContainerRecommendation] = IN_RANGE_VPA,
) -> list[int]:
    """The indexes of the pods the calculator accepts, in update order."""
    settings = UpdaterSettings(update_threshold=threshold)
    candidates = []
    for index, request in enumerate(requests):
        priority = update_priority(cpu_pod(request), recommendations)
        if wants_update(
            priority, started_at=0.0, quick_oom=False, now=lived_hours * HOUR, settings=settings
        ):
            candidates.append((index, priority))
    return update_order(candidates)


def test_long_lived_pods_update_outside_the_range_or_past_the_threshold() -> None:
    """update_priority_calculator_test.go TestUpdateLonglivedPods: 13 h, MinChangePriority 0.5;
    POD1 (4 CPU) is in range with diff 0.2 (|4-5|/4... upstream's fake says 0.25), POD2 (1)
    in range with diff 4, POD3 (8) above the upper bound: POD2 and POD3, POD2 first (it grows)."""
    assert accepted([4000, 1000, 8000], lived_hours=13, threshold=0.5) == [1, 2]


def test_short_lived_pods_update_only_outside_the_range() -> None:
    """update_priority_calculator_test.go TestUpdateShortlivedPods: 11 h: only POD3 (10 CPU,
    above the upper bound 6)."""
    assert accepted([4000, 1000, 10000], lived_hours=11, threshold=0.5) == [2]


def test_no_update_when_the_request_is_the_target() -> None:
    """update_priority_calculator_test.go TestUpdateNotRequired: request 4, target 4, 24 h."""
    recommendation = {"container1": ContainerRecommendation(target={"cpu": 4000})}
    assert accepted([4000], lived_hours=24, threshold=0.1, recommendations=recommendation) == []


def test_order_scale_up_first_then_the_larger_diff() -> None:
    """update_priority_calculator_test.go TestSortPriorityResourcesDecrease: target 5; pods of
    4, 8 and 10 CPU: pod1 grows (first), then pod3 (diff 0.5) before pod2 (diff 0.375;
    upstream's fake 0.25)."""
    recommendation = {"container1": ContainerRecommendation(target={"cpu": 5000})}
    assert accepted(
        [4000, 8000, 10000], lived_hours=24, threshold=0.1, recommendations=recommendation
    ) == [0, 2, 1]


def test_order_by_diff() -> None:
    """update_priority_calculator_test.go TestSortPriority: target 10; pods of 2, 4, 1 and 3
    CPU, all growing: the larger relative diff first (POD3, POD1, POD4, POD2)."""
    recommendation = {"container1": ContainerRecommendation(target={"cpu": 10000})}
    assert accepted(
        [2000, 4000, 1000, 3000], lived_hours=24, threshold=0.1, recommendations=recommendation
    ) == [2, 0, 3, 1]


@pytest.mark.parametrize(
    ("ran_minutes", "resource_diff", "expected"),
    [
        # update_priority_calculator_test.go TestUpdatePodWithQuickOOM: OOMKilled 2 min after
        # starting, 11 h old, in range: updated.
        pytest.param(2, 0.25, True, id="TestUpdatePodWithQuickOOM"),
        # ...TestDontUpdatePodWithQuickOOMNoResourceChange: the resources would not change.
        pytest.param(2, 0.0, False, id="TestDontUpdatePodWithQuickOOMNoResourceChange"),
        # ...TestDontUpdatePodWithOOMAfterLongRun: OOMKilled after 57 min: not quick (diff
        # 0.25 rather than upstream's 0.0, so that only the quick-OOM rule can decide).
        pytest.param(57, 0.25, False, id="TestDontUpdatePodWithOOMAfterLongRun"),
    ],
)
def test_quick_oom(ran_minutes: float, resource_diff: float, expected: bool) -> None:
    now = 11 * HOUR
    finished = now - 3 * 60
    oomed = quick_oom([("OOMKilled", finished - ran_minutes * 60, finished)], DEFAULTS)
    priority = PodPriority(
        outside_recommended_range=False, scale_up=True, resource_diff=resource_diff
    )
    settings = UpdaterSettings(update_threshold=0.5)
    assert (
        wants_update(priority, started_at=0.0, quick_oom=oomed, now=now, settings=settings)
        is expected
    )


def test_a_termination_other_than_an_oomkill_is_no_quick_oom() -> None:
    assert not quick_oom([("Error", 0.0, 60.0)], DEFAULTS)


def test_the_long_lived_rule_is_twelve_hours_and_ten_percent() -> None:
    """The defaults: a pod in range is updated only after 12 h and a diff of at least 0.1."""
    priority = PodPriority(outside_recommended_range=False, scale_up=True, resource_diff=0.1)
    assert not wants_update(
        priority, started_at=0.0, quick_oom=False, now=12 * HOUR - 1, settings=DEFAULTS
    )
    assert wants_update(priority, started_at=0.0, quick_oom=False, now=12 * HOUR, settings=DEFAULTS)
    smaller = PodPriority(outside_recommended_range=False, scale_up=True, resource_diff=0.099)
    assert not wants_update(
        smaller, started_at=0.0, quick_oom=False, now=24 * HOUR, settings=DEFAULTS
    )
    not_started = PodPriority(outside_recommended_range=False, scale_up=True, resource_diff=1.0)
    assert not wants_update(
        not_started, started_at=None, quick_oom=False, now=24 * HOUR, settings=DEFAULTS
    )


def test_priority_sums_relative_diffs_over_resources() -> None:
    """CPU 1 -> 2 (diff 1.0, grows) and memory 4Gi -> 3Gi (diff 0.25): 1.25; memory below the
    lower bound 3.5Gi puts the pod outside the range."""
    containers = [ContainerResources("app", {"cpu": 1000, "memory": 4 * GI})]
    recommendation = {
        "app": ContainerRecommendation(
            target={"cpu": 2000, "memory": 3 * GI},
            lower_bound={"cpu": 500, "memory": 3 * GI},
            upper_bound={"cpu": 3000, "memory": 3 * GI + GI // 2},
        )
    }
    assert update_priority(containers, recommendation) == PodPriority(True, True, 1.25)


def test_a_missing_request_is_outside_the_range_and_grows() -> None:
    """No request at all counts as a total of 1 (upstream's max(total, 1)): |1 - 100| / 1."""
    containers = [ContainerResources("app", {})]
    recommendation = {"app": ContainerRecommendation(target={"cpu": 100})}
    assert update_priority(containers, recommendation) == PodPriority(True, True, 99.0)


def test_containers_without_a_recommendation_do_not_count() -> None:
    containers = [
        ContainerResources("app", {"cpu": 100}),
        ContainerResources("sidecar", {"cpu": 9}),
    ]
    recommendation = {"app": ContainerRecommendation(target={"cpu": 100})}
    assert update_priority(containers, recommendation) == PodPriority(False, False, 0.0)


# ---------------------------------------------------------------- capping


@pytest.mark.parametrize(
    ("target", "policy", "limits", "expected"),
    [
        pytest.param(
            {"cpu": 9000, "memory": 30 * 10**9},
            ContainerPolicy(max_allowed={"cpu": 7000, "memory": 28 * 10**9}),
            {},
            {"cpu": 7000, "memory": 28 * 10**9},
            id="maxAllowed",
        ),
        pytest.param(
            {"cpu": 10, "memory": 10**8},
            ContainerPolicy(min_allowed={"cpu": 20, "memory": 2 * 10**8}),
            {},
            {"cpu": 20, "memory": 2 * 10**8},
            id="minAllowed",
        ),
        pytest.param(
            {"cpu": 500},
            ContainerPolicy(min_allowed={"cpu": 800}, max_allowed={"cpu": 600}),
            {},
            {"cpu": 600},
            id="maxAllowed wins where they cross",
        ),
        pytest.param(
            {"cpu": 900, "memory": GI},
            ContainerPolicy(controlled_values="RequestsOnly"),
            {"cpu": 500},
            {"cpu": 500, "memory": GI},
            id="RequestsOnly stays under the limit",
        ),
        pytest.param(
            {"cpu": 900},
            ContainerPolicy(),
            {"cpu": 500},
            {"cpu": 900},
            id="RequestsAndLimits moves the limit instead",
        ),
        pytest.param(
            {"cpu": 900, "memory": GI},
            ContainerPolicy(controlled_resources=("memory",)),
            {},
            {"memory": GI},
            id="only controlled resources",
        ),
    ],
)
def test_capped_target(
    target: dict[str, int],
    policy: ContainerPolicy,
    limits: dict[str, int],
    expected: dict[str, int],
) -> None:
    assert capped_target(target, policy, limits) == expected


# ---------------------------------------------------------------- pacing


def evictable(budget: EvictionBudget | None, pods: int) -> int:
    """How many of `pods` running pods one pass may evict, one after the other."""
    count = 0
    for _ in range(pods):
        if budget is None or not budget.can_evict(pending=False):
            continue
        budget.record(pending=False)
        count += 1
    return count


@pytest.mark.parametrize(
    ("replicas", "min_replicas", "tolerance", "expected"),
    [
        # pods_eviction_restriction_test.go TestEvictTooFewReplicas: 5 live, min-replicas 10.
        pytest.param(5, 10, 0.5, 0, id="TestEvictTooFewReplicas"),
        # ...TestEvictionTolerance: 5 replicas, tolerance 0.8: 4 (floor(5 x 0.8)).
        pytest.param(5, 2, 0.8, 4, id="TestEvictionTolerance"),
        # ...TestEvictAtLeastOne: 5 replicas, tolerance 0.1 (floor: 0): still one.
        pytest.param(5, 2, 0.1, 1, id="TestEvictAtLeastOne"),
        # ...TestEvictReplicatedByReplicaSet: 3 replicas, tolerance 0.5: 1.
        pytest.param(3, 2, 0.5, 1, id="TestEvictReplicatedByReplicaSet"),
        # Gardener's kube-apiserver at its minimum: 2 replicas, the defaults: one at a time.
        pytest.param(2, 2, 0.5, 1, id="two replicas"),
        pytest.param(1, 2, 0.5, 0, id="one replica: min-replicas 2"),
    ],
)
def test_eviction_budget(replicas: int, min_replicas: int, tolerance: float, expected: int) -> None:
    settings = UpdaterSettings(min_replicas=min_replicas, eviction_tolerance=tolerance)
    budget = eviction_budget(configured=replicas, live=replicas, pending=0, settings=settings)
    assert evictable(budget, replicas) == expected


def test_while_a_replacement_is_missing_nothing_more_is_evicted() -> None:
    """3 replicas, 2 running (one evicted last pass, its replacement not there yet): the
    tolerance (1) is spent: 2 alive is not more than the 2 that should be."""
    budget = eviction_budget(configured=3, live=2, pending=0, settings=DEFAULTS)
    assert budget is not None and not budget.can_evict(pending=False)


def test_pending_pods_can_always_be_evicted() -> None:
    budget = eviction_budget(configured=3, live=3, pending=2, settings=DEFAULTS)
    assert budget is not None
    assert not budget.can_evict(pending=False)
    assert budget.can_evict(pending=True)


def test_the_rate_limit_spaces_evictions() -> None:
    """--eviction-rate-limit 1/60 with burst 1: one now, none 30 s later, one after 60 s."""
    limiter = RateLimiter(rate=1 / 60, burst=1)
    assert limiter.allow(0.0)
    assert not limiter.allow(30.0)
    assert limiter.allow(60.0)
    assert RateLimiter(rate=None, burst=1).allow(0.0)
