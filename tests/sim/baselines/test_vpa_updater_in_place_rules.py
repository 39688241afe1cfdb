"""InPlaceOrRecreate's rules on plain data: resize in place, wait, or fall back to eviction.

Cases ported from kubernetes/autoscaler name their upstream file and test:
vertical-pod-autoscaler/pkg/updater/restriction/pods_inplace_restriction_test.go,
TestCanInPlaceUpdate (its case names as ids), and the fallbacks of
pods_inplace_restriction.go's CanEvictInPlacingPod (5 minutes Deferred, an hour in
progress, Infeasible and Error at once). Upstream's tests default to min-replicas 2.
"""

from __future__ import annotations

from typing import Any

import pytest

from hvpa.sim.baselines.vpa_updater_rules import (
    APPROVED,
    DEFERRED,
    DEFERRED_RESIZE_TIMEOUT_SECONDS,
    EVICT,
    IN_PROGRESS_RESIZE_TIMEOUT_SECONDS,
    ResizeConditions,
    UpdaterSettings,
    eviction_budget,
    in_place_decision,
)

IN_PLACE = "InPlaceOrRecreate"
NOT_RESIZING = ResizeConditions()


def decide(
    *,
    replicas: int = 3,
    live: int = 3,
    tolerance: float = 0.5,
    resize: ResizeConditions = NOT_RESIZING,
    waited: float = 0.0,
    mode: str = IN_PLACE,
    phase_pending: bool = False,
) -> str:
    settings = UpdaterSettings(eviction_tolerance=tolerance)
    budget = eviction_budget(configured=replicas, live=live, pending=0, settings=settings)
    return in_place_decision(
        mode, phase_pending=phase_pending, resize=resize, waited_seconds=waited, budget=budget
    )


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        pytest.param({}, APPROVED, id="CanInPlaceUpdate=InPlaceApproved - (half of 3)"),
        pytest.param(
            {"replicas": 1, "live": 1},
            DEFERRED,
            id="CanInPlaceUpdate=InPlaceDeferred(InPlaceOrRecreate) - without "
            "inPlaceSkipDisruptionBudget flag",
        ),
        pytest.param(
            {"live": 2},
            DEFERRED,
            id="CanInPlaceUpdate=InPlaceDeferred - no pods can be in-placed, one missing",
        ),
        pytest.param(
            {"tolerance": 0.1},
            APPROVED,
            id="CanInPlaceUpdate=InPlaceApproved - small tolerance, all running",
        ),
        pytest.param(
            {"resize": ResizeConditions(pending="Deferred")},
            DEFERRED,
            id="CanInPlaceUpdate=InPlaceDeferred - resize Deferred, conditions not met to fallback",
        ),
        pytest.param(
            {"resize": ResizeConditions(in_progress=""), "waited": 2 * 3600.0},
            EVICT,
            id="CanInPlaceUpdate=InPlaceEvict - resize inProgress for more too long",
        ),
        pytest.param(
            {"resize": ResizeConditions(in_progress="")},
            DEFERRED,
            id="CanInPlaceUpdate=InPlaceDeferred - resize InProgress, conditions not met to "
            "fallback",
        ),
        pytest.param(
            {"resize": ResizeConditions(pending="Infeasible")},
            EVICT,
            id="CanInPlaceUpdate=InPlaceEvict - infeasible",
        ),
        pytest.param(
            {"resize": ResizeConditions(in_progress=""), "mode": "Auto"},
            EVICT,
            id="InPlace - CanInPlaceUpdate=InPlaceDeferred - no update policy for vpa",
        ),
    ],
)
def test_can_in_place_update(options: dict[str, Any], expected: str) -> None:
    assert decide(**options) == expected


@pytest.mark.parametrize(
    ("resize", "waited", "expected"),
    [
        # Deferred: given up only past 5 minutes (strictly).
        (ResizeConditions(pending="Deferred"), DEFERRED_RESIZE_TIMEOUT_SECONDS, DEFERRED),
        (ResizeConditions(pending="Deferred"), DEFERRED_RESIZE_TIMEOUT_SECONDS + 1, EVICT),
        # In progress: only past an hour; an Error at once.
        (ResizeConditions(in_progress=""), IN_PROGRESS_RESIZE_TIMEOUT_SECONDS, DEFERRED),
        (ResizeConditions(in_progress=""), IN_PROGRESS_RESIZE_TIMEOUT_SECONDS + 1, EVICT),
        (ResizeConditions(in_progress="Error"), 0.0, EVICT),
        # A pending reason the updater does not know: evicted at once.
        (ResizeConditions(pending="Unknown"), 0.0, EVICT),
    ],
    ids=[
        "deferred-5-minutes",
        "deferred-past-5-minutes",
        "in-progress-an-hour",
        "in-progress-past-an-hour",
        "in-progress-error",
        "pending-unknown-reason",
    ],
)
def test_can_evict_in_placing_pod(resize: ResizeConditions, waited: float, expected: str) -> None:
    assert decide(resize=resize, waited=waited) == expected


def test_a_failed_resize_is_not_evicted_when_the_group_may_not_lose_a_pod() -> None:
    """CanEvictInPlacingPod: 'Would be able to evict, but already resizing' (one pod missing)."""
    assert decide(live=2, resize=ResizeConditions(pending="Infeasible")) == DEFERRED


def test_a_pending_pod_waits() -> None:
    assert decide(phase_pending=True) == DEFERRED


def test_a_resize_started_in_the_pass_counts_as_a_pod_down() -> None:
    """3 replicas, tolerance 1: after one resize the second pod of the pass waits, as it
    would after one eviction (isPodDisruptable counts inPlaceUpdateInitiated)."""
    settings = UpdaterSettings()
    budget = eviction_budget(configured=3, live=3, pending=0, settings=settings)
    assert budget is not None
    decisions = []
    for _ in range(2):
        decision = in_place_decision(
            IN_PLACE, phase_pending=False, resize=NOT_RESIZING, waited_seconds=0.0, budget=budget
        )
        decisions.append(decision)
        if decision == APPROVED:
            budget.record_resize()
    assert decisions == [APPROVED, DEFERRED]
    assert not budget.can_evict(pending=False)
