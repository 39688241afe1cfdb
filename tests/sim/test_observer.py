"""The observer's count of pods restarted to change their size (replaced by a rollout, not
removed by a scale-down), and the pod size over time the report's vertical oscillations
read: a move reaches pods by a rollout or by an in-place resize alike."""

from __future__ import annotations

from sim_kit import MIB, Model, model, resize, workload

from hvpa.sim.apiserver.patching import PatchType
from hvpa.sim.load import WorkloadLoad
from hvpa.sim.observer import Observer
from hvpa.sim.report import summarize
from hvpa.sim.traces import Demand, Trace

DEPLOYMENT = ("Deployment", "default", "web")


def observed(m: Model, observer: Observer, seconds: float) -> None:
    end = m.clock.now + seconds
    while m.clock.now < end:
        tick = m.step()
        observer.observe(tick, m.cluster.workloads.spec_of(DEPLOYMENT))


def test_a_rollout_replaces_every_pod_and_a_scale_down_restarts_none() -> None:
    m = model(termination_seconds=30.0)  # a pod terminates over six ticks, counted once
    m.cluster.loads[DEPLOYMENT] = WorkloadLoad(Trace("flat", lambda _: Demand(100.0, 0.0)))
    m.server.objects.create("deployments", workload("Deployment", replicas=3))
    observer = Observer(DEPLOYMENT, "app", tick_seconds=5.0, sample_seconds=60.0)
    observed(m, observer, 60)
    m.server.objects.patch("deployments", "web", {"spec": {"replicas": 2}}, namespace="default")
    observed(m, observer, 60)
    assert observer.totals.replaced_pods == 0
    resize(m, "deployments", "web", cpu="700m")
    observed(m, observer, 300)
    assert observer.totals.replaced_pods == 2


def resize_in_place(m: Model, pod: str, cpu: str) -> None:
    """pods/resize of the pod's CPU request, as a VPA updater (InPlaceOrRecreate) or hvpa's
    in-place modes do; the template is left as it is."""
    m.server.resizes.resize(
        "default",
        pod,
        {"spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": cpu}}}]}},
        PatchType.STRATEGIC,
    )


def vertical_oscillations(m: Model, observer: Observer) -> int:
    summary = summarize(observer, m.cluster.workloads.changes)
    vertical: int = summary["oscillations"]["vertical"]
    return vertical


def test_in_place_resizes_up_and_back_are_a_vertical_oscillation() -> None:
    """Pods resized to 700m, and back to 500m five minutes later, never touch the template:
    the pods' size moved and turned back, which counts as a rollout's would."""
    m = model(kubernetes_version="v1.35.0", nodes=2, resize_seconds=10.0)
    m.cluster.loads[DEPLOYMENT] = WorkloadLoad(Trace("flat", lambda _: Demand(100.0, 0.0)))
    m.server.objects.create("deployments", workload("Deployment", replicas=2))
    observer = Observer(DEPLOYMENT, "app", tick_seconds=5.0, sample_seconds=60.0)
    observed(m, observer, 60)
    for cpu in ("700m", "500m"):
        for pod in m.pods(DEPLOYMENT):
            resize_in_place(m, pod.name, cpu)
        observed(m, observer, 300)
    assert observer.totals.in_place_resizes == 4
    assert m.cluster.workloads.changes == []
    assert vertical_oscillations(m, observer) == 1


def test_a_rollout_up_and_back_is_a_vertical_oscillation() -> None:
    m = model(termination_seconds=5.0)
    m.cluster.loads[DEPLOYMENT] = WorkloadLoad(Trace("flat", lambda _: Demand(100.0, 0.0)))
    m.server.objects.create("deployments", workload("Deployment", replicas=2))
    observer = Observer(DEPLOYMENT, "app", tick_seconds=5.0, sample_seconds=60.0)
    observed(m, observer, 60)
    for cpu in ("700m", "500m"):
        resize(m, "deployments", "web", cpu=cpu)
        observed(m, observer, 300)
    assert vertical_oscillations(m, observer) == 1


def test_in_place_resizes_count_as_pod_size_moves() -> None:
    """Pods resized in place from the template's 500m to 700m are a move up; a third pod,
    created at the template's 500m and then resized to 700m, moves the size down and up
    again: two oscillations in all. (A pod created at the resized size is no move: the
    PodSizes unit tests in test_oscillations.py.)"""
    m = model(kubernetes_version="v1.35.0", nodes=2, resize_seconds=10.0)
    m.cluster.loads[DEPLOYMENT] = WorkloadLoad(Trace("flat", lambda _: Demand(100.0, 0.0)))
    m.server.objects.create("deployments", workload("Deployment", replicas=2))
    observer = Observer(DEPLOYMENT, "app", tick_seconds=5.0, sample_seconds=60.0)
    observed(m, observer, 60)
    for pod in m.pods(DEPLOYMENT):
        resize_in_place(m, pod.name, "700m")
    observed(m, observer, 60)
    assert vertical_oscillations(m, observer) == 0
    # The template still says 500m: the third pod starts there, then is resized.
    m.server.objects.patch("deployments", "web", {"spec": {"replicas": 3}}, namespace="default")
    observed(m, observer, 5)
    third = m.pods(DEPLOYMENT)[-1]
    resize_in_place(m, third.name, "700m")
    observed(m, observer, 60)
    assert [size for _, size in observer.pod_sizes.sizes] == [
        {"cpu": 500, "memory": 256 * MIB},
        {"cpu": 700, "memory": 256 * MIB},
        {"cpu": 500, "memory": 256 * MIB},
        {"cpu": 700, "memory": 256 * MIB},
    ]
    assert vertical_oscillations(m, observer) == 2
