"""The VPA updater in `updateMode: InPlaceOrRecreate` in the cluster model: pods resized
through pods/resize instead of evicted, paced by the same budget, and evicted where the
server cannot resize them. The recommendation is written by the test (the model's
recommender never runs), as in test_vpa_updater.py."""

from __future__ import annotations

from sim_kit import Model, container, model, workload
from test_vpa_updater import DEPLOYMENT, NEVER, cpu_requests, recommend, vpa

from hvpa.sim.baselines.vpa_updater import VpaUpdater
from hvpa.sim.recommender import RecommenderSettings

IN_PLACE = "InPlaceOrRecreate"


def cluster_with(mode: str, *, kubernetes_version: str = "v1.33.0") -> tuple[Model, VpaUpdater]:
    m = model(
        kubernetes_version=kubernetes_version,
        recommender=RecommenderSettings(interval_seconds=NEVER),
    )
    m.server.objects.create(
        "deployments", workload("Deployment", replicas=4, containers=[container()])
    )
    m.server.objects.create("verticalpodautoscalers", vpa(mode))
    updater = VpaUpdater(m.server.objects, m.cluster.pods, clock=m.clock, resizes=m.server.resizes)
    m.cluster.pods.mutators.append(updater.admit)
    m.run(30)  # 4 pods at the template's 500m, running
    return m, updater


def heard_resizes(m: Model) -> list[str]:
    """The pods resized through pods/resize from now on, as the API server tells a watcher
    of them (the updater is the only one resizing here)."""
    heard: list[str] = []
    m.server.resizes.listeners.append(lambda pod: heard.append(pod["metadata"]["name"]))
    return heard


def pod_names(m: Model) -> set[str]:
    return {p.name for p in m.pods(DEPLOYMENT) if not p.deleting}


def test_in_place_resizes_half_the_pods_a_pass_and_evicts_none() -> None:
    """4 replicas, eviction tolerance 0.5: a resize started counts as a pod down, so 2 a
    pass, as evictions would be; the same pods then run at the target 2 capped at 800m."""
    m, updater = cluster_with(IN_PLACE)
    asked = heard_resizes(m)
    names = pod_names(m)
    recommend(m, target="2", lower="600m", upper="3")
    updater.run_once()
    assert len(asked) == 2 and updater.evictions == []
    m.run(30)
    assert cpu_requests(m) == [500, 500, 800, 800]
    updater.run_once()
    assert len(asked) == 4
    m.run(30)
    assert cpu_requests(m) == [800] * 4
    assert pod_names(m) == names and updater.evictions == []
    updater.run_once()
    assert len(asked) == 4  # at the target: nothing left to update


def test_without_pods_resize_in_place_falls_back_to_eviction() -> None:
    """A server before Kubernetes 1.33 does not serve pods/resize: the updater evicts."""
    m, updater = cluster_with(IN_PLACE, kubernetes_version="v1.32.0")
    asked = heard_resizes(m)
    recommend(m, target="2", lower="600m", upper="3")
    updater.run_once()
    assert asked == [] and len(updater.evictions) == 2


def test_auto_still_evicts_where_resize_is_served() -> None:
    m, updater = cluster_with("Auto")
    asked = heard_resizes(m)
    recommend(m, target="2", lower="600m", upper="3")
    updater.run_once()
    assert asked == [] and len(updater.evictions) == 2


def test_an_infeasible_resize_falls_back_to_eviction() -> None:
    """A target larger than any node (capped at maxAllowed 300 cores, far above the model's
    nodes): the kubelet marks each resize Infeasible. The first two passes resize two pods
    each (the pods not yet resizing come first: they are no less in need); the third finds
    all four Infeasible and evicts two, the budget's share."""
    m = model(kubernetes_version="v1.33.0", recommender=RecommenderSettings(interval_seconds=NEVER))
    m.server.objects.create(
        "deployments", workload("Deployment", replicas=4, containers=[container()])
    )
    m.server.objects.create("verticalpodautoscalers", vpa(IN_PLACE, max_cpu="300"))
    updater = VpaUpdater(m.server.objects, m.cluster.pods, clock=m.clock, resizes=m.server.resizes)
    m.cluster.pods.mutators.append(updater.admit)
    m.run(30)
    asked = heard_resizes(m)
    recommend(m, target="300", lower="600m", upper="400")
    for _ in range(2):
        updater.run_once()
        m.run(30)
    assert len(asked) == 4 and updater.evictions == []
    reasons = {p.name: p.resize_pending for p in m.pods(DEPLOYMENT)}
    assert {r[0] for r in reasons.values() if r is not None} == {"Infeasible"}
    assert all(r is not None for r in reasons.values())
    updater.run_once()
    assert len(updater.evictions) == 2 and len(asked) == 4
