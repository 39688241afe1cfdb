"""The VPA updater and admission controller in the cluster model: new pods sized by the
recommendation, evictions paced by the eviction tolerance, the modes that evict and those
that do not. The recommendation is written by the test (the model's recommender is slowed
down to never run), so each case states the numbers it expects."""

from __future__ import annotations

from typing import Any

import pytest
from sim_kit import Model, container, model, workload

from hvpa.quantity import parse_cpu_millis
from hvpa.sim.baselines.vpa_updater import VpaUpdater
from hvpa.sim.recommender import RecommenderSettings

DEPLOYMENT = ("Deployment", "default", "web")
NEVER = 10**9


def vpa(mode: str, *, target_cpu: str = "2", max_cpu: str = "800m") -> dict[str, Any]:
    return {
        "apiVersion": "autoscaling.k8s.io/v1",
        "kind": "VerticalPodAutoscaler",
        "metadata": {"name": "web-vpa", "namespace": "default"},
        "spec": {
            "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "updatePolicy": {"updateMode": mode},
            "resourcePolicy": {
                "containerPolicies": [{"containerName": "app", "maxAllowed": {"cpu": max_cpu}}]
            },
        },
    }


def recommend(m: Model, *, target: str, lower: str, upper: str) -> None:
    m.server.objects.patch(
        "verticalpodautoscalers",
        "web-vpa",
        {
            "status": {
                "recommendation": {
                    "containerRecommendations": [
                        {
                            "containerName": "app",
                            "target": {"cpu": target},
                            "lowerBound": {"cpu": lower},
                            "upperBound": {"cpu": upper},
                        }
                    ]
                }
            }
        },
        namespace="default",
        subresource="status",
    )


def cluster_with(mode: str, replicas: int = 4) -> tuple[Model, VpaUpdater]:
    m = model(recommender=RecommenderSettings(interval_seconds=NEVER))
    m.server.objects.create(
        "deployments", workload("Deployment", replicas=replicas, containers=[container()])
    )
    m.server.objects.create("verticalpodautoscalers", vpa(mode))
    updater = VpaUpdater(m.server.objects, m.cluster.pods, clock=m.clock)
    m.cluster.pods.mutators.append(updater.admit)
    m.run(30)  # pods created at the template's 500m (no recommendation yet), running, ready
    return m, updater


def cpu_requests(m: Model) -> list[int]:
    return sorted(
        p.containers[0].size.request_cpu or 0 for p in m.pods(DEPLOYMENT) if not p.deleting
    )


def test_pods_without_a_recommendation_keep_the_template() -> None:
    m, updater = cluster_with("Auto")
    updater.run_once()
    assert cpu_requests(m) == [500] * 4
    assert updater.evictions == []


def test_auto_evicts_half_the_pods_and_the_replacements_get_the_capped_target() -> None:
    """4 replicas, eviction tolerance 0.5: 2 evicted in the first pass (500m is below the
    lowerBound 600m); their replacements get the target 2 capped at maxAllowed 800m, with the
    limit at the template's ratio (1 / 500m = 2: 1600m). The next pass takes the other two."""
    m, updater = cluster_with("Auto")
    recommend(m, target="2", lower="600m", upper="3")
    updater.run_once()
    assert len(updater.evictions) == 2
    m.run(30)
    assert cpu_requests(m) == [500, 500, 800, 800]
    resized = [p for p in m.pods(DEPLOYMENT) if p.containers[0].size.request_cpu == 800]
    assert {p.containers[0].size.limit_cpu for p in resized} == {1600}
    stored = m.server.objects.get("pods", resized[0].name, namespace="default")
    assert parse_cpu_millis(stored["spec"]["containers"][0]["resources"]["requests"]["cpu"]) == 800
    updater.run_once()
    assert len(updater.evictions) == 4
    m.run(30)
    assert cpu_requests(m) == [800] * 4
    updater.run_once()
    assert len(updater.evictions) == 4  # at the target: nothing left to update


def test_no_second_eviction_while_replacements_are_missing() -> None:
    """Right after a pass the evicted pods are terminating and their replacements not yet
    bound: the budget (4 - floor(4 x 0.5) = 2 must stay alive) allows no more."""
    m, updater = cluster_with("Auto")
    recommend(m, target="2", lower="600m", upper="3")
    updater.run_once()
    updater.run_once()
    assert len(updater.evictions) == 2


def test_pods_within_the_bounds_are_left_until_they_are_twelve_hours_old() -> None:
    m, updater = cluster_with("Auto")
    recommend(m, target="600m", lower="400m", upper="900m")
    updater.run_once()
    assert updater.evictions == []
    m.clock.now += 12 * 3600
    updater.run_once()
    assert len(updater.evictions) == 2  # |500 - 600| / 500 = 20% >= 10%


@pytest.mark.parametrize("mode", ["Initial", "Off"])
def test_initial_and_off_never_evict(mode: str) -> None:
    m, updater = cluster_with(mode)
    recommend(m, target="2", lower="600m", upper="3")
    updater.run_once()
    assert updater.evictions == []
    m.server.objects.patch("deployments", "web", {"spec": {"replicas": 5}}, namespace="default")
    m.run(10)
    assert cpu_requests(m) == [500] * 4 + ([800] if mode == "Initial" else [500])


def test_step_runs_a_pass_a_minute() -> None:
    m, updater = cluster_with("Auto")
    recommend(m, target="2", lower="600m", upper="3")
    updater.step()  # 30 s after the updater started: not due
    assert updater.evictions == []
    m.clock.now += 30
    updater.step()
    assert len(updater.evictions) == 2


def test_a_disruption_budget_holds_evictions_to_what_it_allows() -> None:
    """The same 4 pods as above, guarded by a PodDisruptionBudget of maxUnavailable 1
    (Gardener's for its kube-apiserver): the updater's own budget would take 2 down, the
    Eviction API refuses the next (3 healthy of 3 desired) and the updater goes on. Once
    the replacement is ready, the next pass evicts one more."""
    m, updater = cluster_with("Auto")
    m.server.objects.create(
        "poddisruptionbudgets",
        {
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "web"}}},
        },
    )
    recommend(m, target="2", lower="600m", upper="3")
    updater.run_once()
    assert len(updater.evictions) == 1
    # The other three are tried in turn, as upstream's loop does, and each is refused.
    assert len(updater.refusals) == 3
    assert all(
        r.reason.endswith("needs 3 healthy pods and has 3 currently") for r in updater.refusals
    )
    m.run(30)
    updater.run_once()
    assert len(updater.evictions) == 2
