"""The observer's count of pods restarted to change their size: replaced by a rollout, not
removed by a scale-down."""

from __future__ import annotations

from sim_kit import Model, model, resize, workload

from hvpa.sim.load import WorkloadLoad
from hvpa.sim.observer import Observer
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
