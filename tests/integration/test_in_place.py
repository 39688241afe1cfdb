"""Vertical scaling in place, the whole controller against the API server and the model's kubelet.

- a resize reaches the pods without replacing one (the template keeps its size);
- a resize the node cannot take now is Deferred, and InPlaceOrRollout rolls
  it out once it has been Deferred past its bound;
- an Infeasible resize under InPlace is held, with a condition and an Event;
- a resize that restarts a container (resizePolicy RestartContainer) is paced
  by maxUnavailable;
- on a server without pods/resize the in-place modes roll out, and say so;
- a leader change while resizes are in flight finishes them, each pod once.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from in_place_kit import (
    ModelCluster,
    condition,
    in_place_hvpa,
    model_cluster,
    pod_resources,
    workload,
)
from integration_helpers import VIRTUAL_TIME, events, eventually, recommend, writes

from hvpa.aio import Tasks
from hvpa.engine.inplace import InPlaceBounds
from hvpa.engine.settings import Settings as EngineSettings
from hvpa.kube.settings import LeaderElectionSettings
from hvpa.sim.apiserver import ApiServer

pytestmark = VIRTUAL_TIME

# 512Mi as the engine writes it: exactly 512Mi (memory is written in whole MiB; Gardener's
# rounding up to whole thousands of bytes would make it 536871000, docs/gardener-compatibility.md
# point 20).
MEMORY_512MI = 512 * 2**20


@pytest.fixture
async def apiserver(clock: Callable[[], float]) -> AsyncIterator[ApiServer]:
    """A 1.35 server: pods/resize served, memory limits may be lowered in place."""
    async with ApiServer(
        seed=1, clock=clock, bookmark_interval_seconds=30.0, kubernetes_version="v1.35.0"
    ) as server:
        yield server


@pytest.fixture
async def tasks() -> AsyncIterator[Tasks]:
    async with Tasks(name="model") as running:
        yield running


async def started(
    apiserver: ApiServer,
    clock: Callable[[], float],
    tasks: Tasks,
    spec: dict[str, Any],
    **settings: Any,
) -> ModelCluster:
    model = model_cluster(apiserver, clock, tasks, **settings)
    apiserver.objects.create("deployments", spec)
    tasks.start(model.run(), name="model-cluster")
    replicas = spec["spec"]["replicas"]
    await eventually(
        lambda: len(model.pods()) == replicas and all(p.ready for p in model.pods()), within=60
    )
    return model


async def vpa_created(apiserver: ApiServer) -> None:
    await eventually(
        lambda: bool(apiserver.objects.list("verticalpodautoscalers", namespace="default")),
        within=60,
    )


def identities(model: ModelCluster) -> set[str]:
    return {p.uid for p in model.pods()}


def actual_cpu(model: ModelCluster) -> list[int | None]:
    return sorted(p.containers[0].size.request_cpu for p in model.pods())


async def test_a_resize_reaches_the_pods_without_replacing_one(
    apiserver: ApiServer, clock: Callable[[], float], tasks: Tasks, start_controller: Any
) -> None:
    model = await started(apiserver, clock, tasks, workload(replicas=3))
    before = identities(model)
    apiserver.objects.create("hvpas", in_place_hvpa())
    await start_controller()
    await vpa_created(apiserver)
    recommend(apiserver, cpu="800m", memory="256Mi")
    await eventually(lambda: actual_cpu(model) == [800, 800, 800], within=60)
    assert identities(model) == before
    assert all(p.containers[0].restart_count == 0 for p in model.pods())
    assert model.template_requests() == {"cpu": "500m", "memory": "256Mi"}
    await eventually(lambda: (pod_resources(apiserver) or {}).get("atSize") == 3, within=60)
    sized = pod_resources(apiserver)
    assert sized is not None
    assert sized["containers"] == [
        {
            "name": "app",
            "requests": {"cpu": "800m", "memory": "256Mi"},
            "limits": {"cpu": "1.6", "memory": "512Mi"},
        }
    ]
    status = condition(apiserver, "ResizingInPlace")
    assert status == ("True", "AtSize", "3 of 3 pods at the decided size")
    assert writes(apiserver, resource="deployments") == []
    resizes = writes(apiserver, resource="pods", subresource="resize")
    assert len(resizes) == 3
    assert [e["message"] for e in events(apiserver, "SuccessfulResize")] == [
        "container app: requests cpu 800m, memory 256Mi, limits cpu 1.6, memory 512Mi "
        "(in place, 3 pods)"
    ]


async def test_deferred_past_its_bound_rolls_out_in_place_or_rollout(
    apiserver: ApiServer, clock: Callable[[], float], tasks: Tasks, start_controller: Any
) -> None:
    # One 4-core node holds the pod (1 core) and a filler (2.5 cores): 1.5 cores more do not
    # fit now; the second node, empty, takes the rolled-out pod.
    model = await started(
        apiserver, clock, tasks, workload(replicas=1, cpu="1", limit_cpu="1"), nodes=1
    )
    filler = workload(replicas=1, cpu="2500m", limit_cpu="2500m")
    filler["metadata"]["name"] = "filler"
    filler["spec"]["selector"]["matchLabels"] = {"app": "filler"}
    filler["spec"]["template"]["metadata"]["labels"] = {"app": "filler"}
    apiserver.objects.create("deployments", filler)
    await asyncio.sleep(10)
    model.cluster.nodes.resize(2)
    before = identities(model)
    apiserver.objects.create("hvpas", in_place_hvpa("InPlaceOrRollout"))
    deferred = 120.0
    await start_controller(engine=EngineSettings(in_place=_bounds(deferred=deferred)))
    await vpa_created(apiserver)
    recommend(apiserver, cpu="2500m", memory="256Mi")
    await eventually(lambda: (pod_resources(apiserver) or {}).get("deferred") == 1, within=60)
    assert condition(apiserver, "ResizingInPlace")[:2] == ("True", "Resizing")  # type: ignore[index]
    assert model.template_requests()["cpu"] == "1"
    await eventually(lambda: model.template_requests()["cpu"] == "2500m", within=deferred + 60)
    status = condition(apiserver, "ResizingInPlace")
    assert status is not None and status[:2] == ("False", "FellBackToRollout")
    assert "resize Deferred for" in status[2]
    await eventually(
        lambda: identities(model).isdisjoint(before) and len(model.pods()) == 1, within=120
    )
    assert actual_cpu(model) == [2500]
    warnings = events(apiserver, "FellBackToRollout")
    assert len(warnings) == 1 and warnings[0]["type"] == "Warning"


async def test_infeasible_in_place_is_held_with_a_condition_and_an_event(
    apiserver: ApiServer, clock: Callable[[], float], tasks: Tasks, start_controller: Any
) -> None:
    model = await started(apiserver, clock, tasks, workload(replicas=2))
    before = identities(model)
    apiserver.objects.create("hvpas", in_place_hvpa("InPlace"))
    await start_controller(engine=EngineSettings(in_place=_bounds(infeasible=30.0)))
    await vpa_created(apiserver)
    # More than a 4-core node has: Infeasible on every node.
    recommend(apiserver, cpu="5", memory="256Mi")
    await eventually(
        lambda: (condition(apiserver, "ResizingInPlace") or ("",))[0] == "False", within=120
    )
    status = condition(apiserver, "ResizingInPlace")
    assert status is not None and status[1] == "ResizeInfeasible"
    assert "held (spec.vpa.resizeMode is InPlace)" in status[2]
    assert "Node didn't have enough capacity: cpu, requested: 5000, capacity: 4000" in status[2]
    warnings = events(apiserver, "ResizeInfeasible")
    assert len(warnings) == 1 and warnings[0]["type"] == "Warning"
    await asyncio.sleep(120)
    assert identities(model) == before
    assert model.template_requests()["cpu"] == "500m"
    assert writes(apiserver, resource="deployments") == []
    assert (pod_resources(apiserver) or {}).get("infeasible") == 2


async def test_restarting_resizes_are_paced_by_max_unavailable(
    apiserver: ApiServer, clock: Callable[[], float], tasks: Tasks, start_controller: Any
) -> None:
    model = await started(
        apiserver,
        clock,
        tasks,
        workload(replicas=4, memory_policy="RestartContainer", max_unavailable=1),
    )
    before = identities(model)
    apiserver.objects.create("hvpas", in_place_hvpa())
    await start_controller()
    await vpa_created(apiserver)
    most_down = 0

    def memory_done() -> bool:
        nonlocal most_down
        most_down = max(most_down, sum(1 for p in model.pods() if not p.ready))
        return all(
            p.containers[0].size.request_memory == MEMORY_512MI for p in model.pods()
        ) and all(p.ready for p in model.pods())

    recommend(apiserver, cpu="500m", memory="512Mi")
    await eventually(memory_done, within=180, step=0.25)
    assert most_down == 1
    assert identities(model) == before
    assert sorted(p.containers[0].restart_count for p in model.pods()) == [1, 1, 1, 1]


async def test_without_pods_resize_the_in_place_modes_roll_out(
    clock: Callable[[], float], tasks: Tasks, start_controller: Any, apiserver: ApiServer
) -> None:
    # The module's server is 1.35; pods/resize switched off plays an older one.
    apiserver.resizes.served = False
    model = await started(apiserver, clock, tasks, workload(replicas=2))
    apiserver.objects.create("hvpas", in_place_hvpa("InPlace"))
    await start_controller()
    await vpa_created(apiserver)
    recommend(apiserver, cpu="800m", memory="256Mi")
    await eventually(lambda: model.template_requests()["cpu"] == "800m", within=60)
    status = condition(apiserver, "ResizingInPlace")
    assert status is not None and status[:2] == ("False", "ResizeNotServed")
    assert pod_resources(apiserver) is None
    assert writes(apiserver, resource="pods", subresource="resize", succeeded=False) == []
    assert len(events(apiserver, "ResizeNotServed")) == 1


async def test_a_leader_change_while_resizes_are_in_flight_finishes_them_once(
    apiserver: ApiServer, clock: Callable[[], float], tasks: Tasks, start_controller: Any
) -> None:
    model = await started(
        apiserver,
        clock,
        tasks,
        workload(replicas=4, memory_policy="RestartContainer", max_unavailable=1),
    )
    before = identities(model)
    apiserver.objects.create("hvpas", in_place_hvpa())
    lease = LeaderElectionSettings(lease_name="hvpa", lease_namespace="kube-system")
    a = await start_controller(
        identity="a", leader_election=LeaderElectionSettings(release_on_cancel=False)
    )
    await eventually(lambda: a.manager.leading(), within=10)
    b = await start_controller(identity="b", leader_election=lease)
    await vpa_created(apiserver)
    recommend(apiserver, cpu="500m", memory="512Mi")
    # The first restarting resize is under way: the leader dies.
    await eventually(
        lambda: any(p.containers[0].restart_count for p in model.pods()), within=60, step=0.25
    )
    a.task.cancel()
    await eventually(lambda: b.manager.leading(), within=60)
    await eventually(
        lambda: all(p.containers[0].size.request_memory == MEMORY_512MI for p in model.pods()),
        within=240,
    )
    assert identities(model) == before
    assert sorted(p.containers[0].restart_count for p in model.pods()) == [1, 1, 1, 1]
    # Each pod asked once by one leader or the other: a pod the old leader resized is at its
    # size in the new leader's cache, and a repeat would restart nothing anyway.
    asked = [r.name for r in writes(apiserver, resource="pods", subresource="resize")]
    assert sorted(set(asked)) == sorted(p.name for p in model.pods())


def _bounds(**seconds: float) -> InPlaceBounds:
    return InPlaceBounds(**{f"{name}_seconds": value for name, value in seconds.items()})
