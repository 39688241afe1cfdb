"""The scheduler, the kubelet and the load model: placement, readiness, throttling, OOMKills."""

from __future__ import annotations

from sim_kit import GIB, MIB, container, model, resize, workload

from hvpa.sim.load import ContainerLoad, WorkloadLoad, spread
from hvpa.sim.pods import BACKOFF_INITIAL_SECONDS
from hvpa.sim.traces import Demand, Trace

DEPLOYMENT = ("Deployment", "default", "web")


def steady(cpu_millicores: float, memory_bytes: float) -> Trace:
    return Trace("test", lambda t: Demand(cpu_millicores, memory_bytes))


# ---------------------------------------------------------------- scheduler


def test_pods_spread_over_nodes_and_wait_unschedulable_when_full() -> None:
    m = model(nodes=2, node_cpu_millicores=1000, node_memory_bytes=4 * GIB)
    m.server.objects.create("deployments", workload("Deployment", replicas=5))
    m.run(30)
    pods = m.pods(DEPLOYMENT)
    bound = [p for p in pods if p.node]
    assert sorted(p.node for p in bound) == ["sim-node-0", "sim-node-0", "sim-node-1", "sim-node-1"]
    pending = [p for p in pods if p.node is None]
    assert len(pending) == 1
    obj = m.server.objects.get("pods", pending[0].name)
    assert obj["status"]["phase"] == "Pending"
    scheduled = {c["type"]: c for c in obj["status"]["conditions"]}["PodScheduled"]
    assert scheduled["status"] == "False" and scheduled["reason"] == "Unschedulable"
    assert scheduled["message"] == "0/2 nodes are available: 2 Insufficient cpu."
    assert m.status("deployments", "web")["unavailableReplicas"] == 1

    m.server.objects.patch("deployments", "web", {"spec": {"replicas": 4}})
    m.run(10)
    assert all(p.node for p in m.pods(DEPLOYMENT))


def test_terminating_pods_hold_their_room_until_they_are_gone() -> None:
    m = model(nodes=1, node_cpu_millicores=1000, termination_seconds=30.0)
    m.server.objects.create(
        "deployments",
        workload(
            "Deployment",
            replicas=2,
            strategy={
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1},
            },
        ),
    )
    m.run(30)
    resize(m, "deployments", "web", cpu="400m")
    m.run(15)
    pods = m.pods(DEPLOYMENT)
    terminating = [p for p in pods if p.deleting]
    new = [p for p in pods if p.containers[0].size.request_cpu == 400]
    assert len(terminating) == 1 and terminating[0].node == "sim-node-0"
    assert len(new) == 1 and new[0].node is None
    m.run(30)
    assert new[0].node == "sim-node-0"


# ---------------------------------------------------------------- kubelet


def test_pods_turn_ready_after_the_readiness_delay_and_go_after_termination() -> None:
    m = model(readiness_delay_seconds=20.0, termination_seconds=10.0)
    m.server.objects.create("deployments", workload("Deployment", replicas=1))
    m.step()
    (pod,) = m.pods(DEPLOYMENT)
    assert pod.phase == "Running" and not pod.ready
    m.run(15)
    assert not pod.ready
    m.run(10)
    assert pod.ready
    obj = m.server.objects.get("pods", pod.name)
    ready = {c["type"]: c for c in obj["status"]["conditions"]}["Ready"]
    assert ready["status"] == "True"
    assert obj["status"]["containerStatuses"][0]["state"]["running"]

    m.server.objects.patch("deployments", "web", {"spec": {"replicas": 0}})
    m.step()
    assert pod.deleting and not pod.ready
    assert m.server.objects.get("pods", pod.name)["metadata"]["deletionTimestamp"]
    m.run(10)
    assert m.pods(DEPLOYMENT) == []
    assert m.server.objects.list("pods") == []


def test_memory_over_the_limit_is_an_oomkill_and_the_container_restarts_after_backoff() -> None:
    m = model(readiness_delay_seconds=10.0)
    m.server.objects.create(
        "deployments",
        workload("Deployment", replicas=1, containers=[container(limit_memory="512Mi")]),
    )
    m.cluster.loads[DEPLOYMENT] = WorkloadLoad(
        steady(100.0, 600 * MIB), {"app": ContainerLoad(1.0, 0.0, 0.0)}
    )
    kills = []
    for _ in range(10):
        kills.extend(m.step().workloads[DEPLOYMENT].oom_kills)
        if kills:
            break
    (pod,) = m.pods(DEPLOYMENT)
    assert [(k.pod, k.container, k.limit_bytes) for k in kills] == [(pod.name, "app", 512 * MIB)]
    status = m.server.objects.get("pods", pod.name)["status"]
    (container_status,) = status["containerStatuses"]
    assert container_status["lastState"]["terminated"]["reason"] == "OOMKilled"
    assert container_status["lastState"]["terminated"]["exitCode"] == 137
    assert container_status["restartCount"] == 1
    assert container_status["state"] == {"waiting": {"reason": "CrashLoopBackOff"}}
    assert {c["type"]: c["status"] for c in status["conditions"]}["Ready"] == "False"
    killed_at = kills[0].time
    # Back after the back-off, unready for the readiness delay, and killed again once it serves.
    while m.clock.now <= killed_at + BACKOFF_INITIAL_SECONDS:
        kills.extend(m.step().workloads[DEPLOYMENT].oom_kills)
    assert pod.containers[0].running and not pod.ready
    m.run(40)
    assert pod.containers[0].restart_count >= 2


# ---------------------------------------------------------------- load


def test_load_spreads_over_ready_pods_with_a_base_and_throttles_at_the_limit() -> None:
    m = model()
    m.server.objects.create(
        "deployments",
        workload(
            "Deployment",
            replicas=3,
            containers=[
                container(cpu="300m", limit_cpu="400m"),
                container("sidecar", cpu="10m", limit_cpu=None),
            ],
        ),
    )
    m.run(30)
    m.server.objects.patch("deployments", "web", {"spec": {"replicas": 4}})
    m.step()
    pods = m.pods(DEPLOYMENT)
    load = WorkloadLoad(
        steady(900.0, 300 * MIB),
        {"app": ContainerLoad(1.0, 50.0, 10 * MIB), "sidecar": ContainerLoad(0.0, 5.0, MIB)},
    )
    usage = spread(Demand(900.0, 300 * MIB), pods, load)
    ready = [p for p in pods if p.ready]
    starting = [p for p in pods if not p.ready]
    assert len(ready) == 3 and len(starting) == 1
    for pod in ready:
        app, sidecar = usage[pod.name]
        assert app.cpu_need == 350.0 and app.cpu == 350.0 and not app.throttled
        assert app.memory == 110 * MIB
        assert (sidecar.cpu, sidecar.memory) == (5.0, MIB)
    app, _ = usage[starting[0].name]
    assert (app.cpu, app.memory) == (50.0, 10 * MIB)

    heavy = spread(Demand(1500.0, 300 * MIB), pods, load)
    app, sidecar = heavy[ready[0].name]
    assert app.cpu_need == 550.0 and app.cpu == 400.0 and app.throttled
    assert not sidecar.throttled


def test_cpu_past_the_limit_throttles_every_pod_and_kills_none() -> None:
    m = model()
    m.server.objects.create(
        "deployments",
        workload("Deployment", replicas=2, containers=[container(cpu="200m", limit_cpu="300m")]),
    )
    m.cluster.loads[DEPLOYMENT] = WorkloadLoad(
        steady(1000.0, 0.0), {"app": ContainerLoad(1.0, 0.0, 0.0)}
    )
    ticks = m.run(60)
    last = ticks[-1].workloads[DEPLOYMENT]
    assert sorted(last.usage) == sorted(p.name for p in m.pods(DEPLOYMENT))
    assert all(u.throttled and u.cpu == 300.0 for usages in last.usage.values() for u in usages)
    assert last.oom_kills == ()
