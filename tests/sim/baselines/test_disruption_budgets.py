"""PodDisruptionBudgets as the Eviction API honours them (the VPA baseline's evictions).

The eviction cases are ported from kubernetes/kubernetes
pkg/registry/core/pod/storage/eviction_test.go, TestEvictionIgnorePDB (each
named by its upstream case): upstream gives each budget a status; here the
status is computed from the pods, as the disruption controller would write
it, so each case builds the pods that give upstream's status and says which.
The status cases are ported from pkg/controller/disruption/disruption_test.go
(each test names its upstream function).
"""

from __future__ import annotations

from typing import Any

import pytest

from hvpa.sim.baselines.disruption_budgets import (
    TWO_BUDGETS,
    VIOLATES,
    BudgetPod,
    BudgetStatus,
    budget_status,
    disruptions_allowed,
    eviction_refusal,
    parse_budget,
)

LABELS = {"a": "true"}


def budget(
    policy: str | None = None, *, name: str = "foo", selector: Any = None, **spec: Any
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "selector": {"matchLabels": LABELS} if selector is None else selector,
        **spec,
    }
    if policy is not None:
        body["unhealthyPodEvictionPolicy"] = policy
    return {"metadata": {"name": name, "namespace": "default"}, "spec": body}


def pod(
    *,
    ready: bool = True,
    phase: str = "Running",
    deleting: bool = False,
    scale: int | None = 3,
    labels: dict[str, str] = LABELS,
) -> BudgetPod:
    return BudgetPod(
        namespace="default",
        labels=labels,
        phase=phase,
        ready=ready,
        deleting=deleting,
        owner_scale=None if scale is None else ("Deployment/web", scale),
    )


def refusal(target: BudgetPod, others: list[BudgetPod], *budgets: dict[str, Any]) -> str | None:
    return eviction_refusal(target, [parse_budget(b) for b in budgets], [target, *others])


POLICIES = [None, "IfHealthyBudget", "AlwaysAllow"]


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize(
    "target",
    [
        pytest.param(pod(phase="Pending", ready=False), id="pod pending"),
        pytest.param(pod(deleting=True, ready=False), id="pod terminating"),
        pytest.param(pod(phase="Succeeded", ready=False), id="pod succeeded"),
    ],
)
def test_no_disruptions_allowed_a_pod_not_running_is_evicted(
    policy: str | None, target: BudgetPod
) -> None:
    """'pdbs No disruptions allowed, pod pending, ...' and 'matching pdbs with no disruptions
    allowed, pod terminating': such a pod goes without the budget. No other pod is ready, so
    the budget (3 expected, 1 unavailable: 2 healthy desired) allows nothing."""
    assert refusal(target, [pod(ready=False)] * 2, budget(policy, maxUnavailable=1)) is None


@pytest.mark.parametrize("policy", POLICIES)
def test_no_disruptions_allowed_a_healthy_pod_is_refused(policy: str | None) -> None:
    """'matching pdbs with no disruptions allowed, pod running, pod healthy, unhealthy pod not
    ours': 3 expected, ours and one more ready, one not: 2 healthy of 2 desired."""
    found = refusal(pod(), [pod(), pod(ready=False)], budget(policy, maxUnavailable=1))
    assert found == (
        f"{VIOLATES} The disruption budget foo needs 2 healthy pods and has 2 currently"
    )


@pytest.mark.parametrize("policy", POLICIES)
def test_disruptions_allowed_a_healthy_pod_is_evicted(policy: str | None) -> None:
    """'matching pdbs with disruptions allowed, pod running, pod healthy, healthy pod ours,
    deletes pod by honoring the PDB': 3 expected, 3 ready: one disruption allowed."""
    assert refusal(pod(), [pod(), pod()], budget(policy, maxUnavailable=1)) is None


@pytest.mark.parametrize("policy", POLICIES)
def test_an_unhealthy_pod_goes_while_the_application_is_healthy(policy: str | None) -> None:
    """'matching pdbs with no disruptions allowed, pod running, pod unhealthy, unhealthy pod
    ours': ours not ready, the two others ready: 2 healthy of 2 desired, nothing allowed,
    but the application is not disrupted, so ours goes under every policy."""
    assert refusal(pod(ready=False), [pod(), pod()], budget(policy, maxUnavailable=1)) is None


@pytest.mark.parametrize(("policy", "evicted"), [(None, False), ("AlwaysAllow", True)])
def test_an_unhealthy_pod_of_a_disrupted_application_goes_only_with_always_allow(
    policy: str | None, evicted: bool
) -> None:
    """'... pod unhealthy, unhealthy pod ours, skips the PDB check and deletes' (AlwaysAllow):
    ours and one more not ready, 1 healthy of 2 desired. With IfHealthyBudget (the default)
    the budget decides, and it allows nothing."""
    found = refusal(pod(ready=False), [pod(), pod(ready=False)], budget(policy, maxUnavailable=1))
    assert (found is None) == evicted


def test_an_empty_selector_selects_every_pod_of_the_namespace() -> None:
    """'matching pdbs with no disruptions allowed, pod running, pod healthy, empty selector,
    pod not deleted by honoring the PDB' (policy/v1: `{}` selects all, no selector none)."""
    found = refusal(pod(), [pod(), pod(ready=False)], budget(selector={}, maxUnavailable=1))
    assert found is not None
    no_selector = budget(maxUnavailable=1)
    del no_selector["spec"]["selector"]
    assert refusal(pod(), [pod(), pod(ready=False)], no_selector) is None


def test_a_budget_of_other_pods_or_none_lets_the_eviction_through() -> None:
    other = budget(selector={"matchLabels": {"a": "false"}}, maxUnavailable=0)
    assert refusal(pod(), [pod(), pod()], other) is None
    assert refusal(pod(), [pod(), pod()]) is None


def test_a_pod_two_budgets_select_is_refused() -> None:
    both = [budget(name="one", maxUnavailable=1), budget(name="two", maxUnavailable=1)]
    assert refusal(pod(), [pod(), pod()], *both) == TWO_BUDGETS


def status(spec: dict[str, Any], pods: list[BudgetPod], **fields: Any) -> BudgetStatus | None:
    return budget_status(parse_budget(budget(**fields, **spec)), pods)


def test_no_selector() -> None:
    """disruption_test.go TestNoSelector: an empty selector matches every pod; minAvailable 3
    over one ready pod (a number: the pods themselves are expected)."""
    assert status({"minAvailable": 3}, [pod(labels={})], selector={}) == BudgetStatus(1, 3, 1, 0)


def test_unavailable() -> None:
    """disruption_test.go TestUnavailable: minAvailable 3 over four ready pods allows one
    disruption; with one of them not ready, none."""
    four = [pod() for _ in range(4)]
    assert status({"minAvailable": 3}, four) == BudgetStatus(4, 3, 4, 1)
    assert status({"minAvailable": 3}, [pod(ready=False), *four[1:]]) == BudgetStatus(4, 3, 3, 0)


def test_integer_max_unavailable() -> None:
    """disruption_test.go TestIntegerMaxUnavailable: a pod with no controller expects nothing,
    so nothing may be disrupted."""
    assert status({"maxUnavailable": 1}, []) == BudgetStatus(0, 0, 0, 0)
    assert status({"maxUnavailable": 1}, [pod(scale=None)]) == BudgetStatus(0, 0, 1, 0)


@pytest.mark.parametrize(
    ("max_unavailable", "scale", "desired"),
    [
        pytest.param(2, 7, 5, id="TestIntegerMaxUnavailableWithScaling at 7"),
        pytest.param(2, 5, 3, id="TestIntegerMaxUnavailableWithScaling at 5"),
        pytest.param("30%", 7, 4, id="TestPercentageMaxUnavailableWithScaling at 7"),
        pytest.param("30%", 3, 2, id="TestPercentageMaxUnavailableWithScaling at 3"),
    ],
)
def test_max_unavailable_with_scaling(max_unavailable: int | str, scale: int, desired: int) -> None:
    """disruption_test.go, the two tests named: one ready pod of a ReplicaSet scaled to 7,
    then rescaled; a percentage of the scale rounds up (30% of 7 is 3, of 3 is 1)."""
    found = status({"maxUnavailable": max_unavailable}, [pod(scale=scale)])
    assert found == BudgetStatus(scale, desired, 1, 0)


def test_replication_controller() -> None:
    """disruption_test.go TestReplicationController: minAvailable 34% of a scale-3 controller
    rounds up to 2; its 3 ready pods allow one disruption, and a ready pod no controller owns
    (expected nothing, healthy all the same) a second."""
    three = [pod(scale=3) for _ in range(3)]
    assert status({"minAvailable": "34%"}, three) == BudgetStatus(3, 2, 3, 1)
    assert status({"minAvailable": "34%"}, [*three, pod(scale=None)]) == BudgetStatus(3, 2, 4, 2)


@pytest.mark.parametrize(
    ("expected", "desired", "healthy", "allowed"),
    [(3, 2, 3, 1), (3, 2, 2, 0), (3, 2, 1, 0), (0, 0, 1, 0), (5, 0, 5, 5)],
)
def test_disruptions_allowed(expected: int, desired: int, healthy: int, allowed: int) -> None:
    assert disruptions_allowed(expected, desired, healthy) == allowed


@pytest.mark.parametrize(
    "spec",
    [
        pytest.param({"maxUnavailable": "a lot"}, id="not a percentage"),
        pytest.param({"maxUnavailable": True}, id="a boolean"),
        pytest.param({"minAvailable": [1]}, id="a list"),
    ],
)
def test_a_budget_the_disruption_controller_cannot_read_refuses(spec: dict[str, Any]) -> None:
    """Tenant input: a budget whose values make no sense gets no status upstream, and an
    eviction it guards is refused as still being processed; nothing raises."""
    found = refusal(pod(), [pod(), pod()], budget(**spec))
    assert found is not None and "still being processed" in found


def test_a_budget_with_neither_field_expects_nothing_and_allows_nothing() -> None:
    found = refusal(pod(), [pod(), pod()], budget())
    assert found == (
        f"{VIOLATES} The disruption budget foo needs 0 healthy pods and has 3 currently"
    )
