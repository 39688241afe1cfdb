"""The model's kubelet resizing pods in place: admitted when the node has room, Deferred when it
may have room later, Infeasible when it never can, applied after a while, restarting a container
whose resizePolicy says so, lowering a memory limit only below the usage (Kubernetes 1.35)."""

from __future__ import annotations

from typing import Any

import pytest
from sim_kit import GIB, MIB, Model, container, model, workload

from hvpa.records import parse_time
from hvpa.sim.apiserver import Invalid
from hvpa.sim.apiserver.patching import PatchType
from hvpa.sim.load import ContainerLoad, WorkloadLoad
from hvpa.sim.traces import Demand, Trace

DEPLOYMENT = ("Deployment", "default", "web")
# Kubelet messages (pkg/kubelet/allocation: "Node didn't have enough capacity" for a resize above
# the node's allocatable, "enough resource" for one above what is free now).


def started(m: Model, **spec: Any) -> None:
    m.server.objects.create("deployments", workload("Deployment", **spec))
    m.run(30)
    assert all(p.ready for p in m.pods(DEPLOYMENT))


def resize(m: Model, name: str, **resources: dict[str, str]) -> None:
    m.server.resizes.resize(
        "default",
        name,
        {"spec": {"containers": [{"name": "app", "resources": resources}]}},
        PatchType.STRATEGIC,
    )


def conditions(m: Model, name: str) -> dict[str, dict[str, Any]]:
    status = m.server.objects.get("pods", name)["status"]
    return {c["type"]: c for c in status["conditions"]}


def reported(m: Model, name: str) -> dict[str, Any]:
    status = m.server.objects.get("pods", name)["status"]
    app: dict[str, Any] = status["containerStatuses"][0]
    return app


def test_a_resize_that_fits_is_applied_after_a_while_without_a_restart() -> None:
    m = model(kubernetes_version="v1.35.0", nodes=1, resize_seconds=10.0)
    started(m, replicas=1)
    pod = m.pods(DEPLOYMENT)[0]
    resize(m, pod.name, requests={"cpu": "700m"}, limits={"cpu": "1400m"})
    m.step()
    assert "PodResizeInProgress" in conditions(m, pod.name)
    app = reported(m, pod.name)
    assert app["allocatedResources"]["cpu"] == "700m"
    assert app["resources"]["requests"]["cpu"] == "500m"
    m.run(10)
    assert set(conditions(m, pod.name)) == {
        "PodScheduled",
        "Initialized",
        "ContainersReady",
        "Ready",
    }
    app = reported(m, pod.name)
    assert app["resources"]["requests"]["cpu"] == "700m"
    assert app["resources"]["limits"]["cpu"] == "1400m"
    assert app["restartCount"] == 0
    assert pod.ready and m.pods(DEPLOYMENT) == [pod]


def test_a_second_resize_is_in_progress_since_it_began() -> None:
    """The condition went away between the two resizes: the second one's lastTransitionTime
    is its own start, not the first's (else the controller would count one resize in progress
    for as long as the pod kept being resized)."""
    m = model(kubernetes_version="v1.35.0", nodes=1, resize_seconds=10.0)
    started(m, replicas=1)
    pod = m.pods(DEPLOYMENT)[0]
    resize(m, pod.name, requests={"cpu": "700m"}, limits={"cpu": "1400m"})
    m.step()
    first = conditions(m, pod.name)["PodResizeInProgress"]["lastTransitionTime"]
    m.run(60)
    assert "PodResizeInProgress" not in conditions(m, pod.name)
    resize(m, pod.name, requests={"cpu": "600m"}, limits={"cpu": "1200m"})
    m.step()
    second = conditions(m, pod.name)["PodResizeInProgress"]["lastTransitionTime"]
    assert parse_time(second) - parse_time(first) >= 60


def test_more_than_the_node_has_is_infeasible() -> None:
    m = model(kubernetes_version="v1.35.0", nodes=1, node_cpu_millicores=4000)
    started(m, replicas=1)
    pod = m.pods(DEPLOYMENT)[0]
    resize(m, pod.name, requests={"cpu": "5"}, limits={"cpu": "6"})
    m.run(30)
    pending = conditions(m, pod.name)["PodResizePending"]
    assert pending["reason"] == "Infeasible"
    assert pending["message"] == (
        "Node didn't have enough capacity: cpu, requested: 5000, capacity: 4000"
    )
    assert reported(m, pod.name)["resources"]["requests"]["cpu"] == "500m"


def test_more_than_is_free_is_deferred_until_room_is_made() -> None:
    m = model(kubernetes_version="v1.35.0", nodes=1, node_cpu_millicores=2000)
    started(m, replicas=2)
    first, second = m.pods(DEPLOYMENT)
    resize(m, first.name, requests={"cpu": "1600m"}, limits={"cpu": "1600m"})
    m.run(10)
    pending = conditions(m, first.name)["PodResizePending"]
    assert pending["reason"] == "Deferred"
    assert pending["message"] == (
        "Node didn't have enough resource: cpu, requested: 1600, used: 500, capacity: 2000"
    )
    m.server.objects.patch("deployments", "web", {"spec": {"replicas": 1}})
    m.cluster.pods.delete(second)
    m.run(30)
    assert [p.name for p in m.pods(DEPLOYMENT)] == [first.name]
    assert "PodResizePending" not in conditions(m, first.name)
    assert reported(m, first.name)["resources"]["requests"]["cpu"] == "1600m"


def test_a_resize_holds_the_larger_size_on_the_node_for_the_scheduler() -> None:
    m = model(kubernetes_version="v1.35.0", nodes=1, node_cpu_millicores=2000)
    started(m, replicas=1)
    pod = m.pods(DEPLOYMENT)[0]
    resize(m, pod.name, requests={"cpu": "1600m"}, limits={"cpu": "1600m"})
    m.server.objects.patch("deployments", "web", {"spec": {"replicas": 2}})
    m.run(30)
    pending = [p for p in m.pods(DEPLOYMENT) if p.node is None]
    assert len(pending) == 1  # 1600m held by the resized pod leaves no room for another 500m


def test_restart_container_policy_restarts_only_for_its_resource() -> None:
    app = container()
    app["resizePolicy"] = [
        {"resourceName": "cpu", "restartPolicy": "NotRequired"},
        {"resourceName": "memory", "restartPolicy": "RestartContainer"},
    ]
    m = model(kubernetes_version="v1.35.0", nodes=1)
    started(m, replicas=1, containers=[app])
    pod = m.pods(DEPLOYMENT)[0]
    resize(m, pod.name, requests={"cpu": "600m"})
    m.run(20)
    assert reported(m, pod.name)["restartCount"] == 0
    resize(m, pod.name, requests={"memory": "300Mi"}, limits={"memory": "600Mi"})
    m.step()
    assert reported(m, pod.name)["restartCount"] == 1
    assert reported(m, pod.name)["lastState"]["terminated"]["reason"] == "Completed"
    assert not pod.ready
    assert pod.containers[0].size.limit_memory == 600 * MIB
    m.run(20)
    assert pod.ready
    assert [(w, name, c) for _, w, name, c in m.cluster.kubelet.resize_restarts] == [
        (DEPLOYMENT, pod.name, "app")
    ]


def test_a_memory_limit_is_lowered_only_below_the_usage() -> None:
    m = model(kubernetes_version="v1.35.0", nodes=1, resize_seconds=5.0)
    load = WorkloadLoad(
        Trace("steady", lambda t: Demand(100.0, 400 * MIB)),
        {"app": ContainerLoad(share=1.0, base_memory_bytes=16 * MIB)},
    )
    m.cluster.loads[DEPLOYMENT] = load
    started(m, replicas=1, containers=[container(memory="256Mi", limit_memory="1Gi")])
    pod = m.pods(DEPLOYMENT)[0]
    resize(m, pod.name, requests={"memory": "256Mi"}, limits={"memory": "300Mi"})
    m.run(20)
    progress = conditions(m, pod.name)["PodResizeInProgress"]
    assert progress["reason"] == "Error"
    assert progress["message"] == "attempting to set pod memory limit below current usage"
    assert pod.containers[0].size.limit_memory == GIB
    assert not m.cluster.kubelet.resize_restarts
    m.cluster.loads[DEPLOYMENT] = WorkloadLoad(
        Trace("quiet", lambda t: Demand(100.0, 100 * MIB)), load.containers
    )
    m.run(20)
    assert pod.containers[0].size.limit_memory == 300 * MIB
    assert "PodResizeInProgress" not in conditions(m, pod.name)


def test_a_pod_resized_before_it_starts_starts_at_the_new_size() -> None:
    m = model(kubernetes_version="v1.35.0", nodes=1, node_cpu_millicores=500)
    m.server.objects.create("deployments", workload("Deployment", replicas=2))
    m.run(10)
    waiting = next(p for p in m.pods(DEPLOYMENT) if p.node is None)
    resize(m, waiting.name, requests={"cpu": "0"}, limits={"cpu": "1"})
    m.run(30)
    assert waiting.node is not None and waiting.ready
    assert waiting.containers[0].size.request_cpu == 0


def test_kubelets_without_resize_report_no_resources_and_are_refused() -> None:
    m = model(kubernetes_version="v1.35.0", nodes=1, kubelet_resize=False)
    started(m, replicas=1)
    pod = m.pods(DEPLOYMENT)[0]
    assert "resources" not in reported(m, pod.name)
    with pytest.raises(Invalid, match="Pod running on node without support for resize"):
        resize(m, pod.name, requests={"cpu": "600m"})
