"""What the controller reports when it does not (or cannot) scale, in virtual time:
`--dry-run` writes nothing to targets or VPAs but says what it would do in the Hvpa
status, an Event and /debug/state; an invalid Hvpa gets ScalingActive=False,
reason=InvalidSpec naming the field, a Warning Event and no scaling, and the
controller carries on with the others; a missing target holds with a condition until
it appears; Events for a steady state are not repeated; a history-only status change
is written once per flush interval, and a failed flush loses none of it."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

from integration_cluster import Load, MiniCluster
from integration_helpers import (
    FLAT_CAPACITY_CURVE,
    VIRTUAL_TIME,
    events,
    eventually,
    hvpa_manifest,
    recommend,
    writes,
)

from hvpa.records import parse_time
from hvpa.settings import ControllerSettings
from hvpa.sim.apiserver import ApiServer

pytestmark = VIRTUAL_TIME


def conditions(server: ApiServer, name: str) -> dict[str, dict[str, Any]]:
    status = server.objects.get("hvpas", name).get("status") or {}
    return {c["type"]: c for c in status.get("conditions") or ()}


async def test_a_dry_run_counts_the_resize_it_reports(
    apiserver: ApiServer, cluster: MiniCluster, start_controller: Any
) -> None:
    """hvpa_scalings_total counts what a dry run reports, the vertical axis included."""
    cluster.deployment(
        "web", replicas=2, requests={"cpu": "100m", "memory": "64Mi"}, load=Load(cpu_millicores=100)
    )
    hvpa = apiserver.objects.create("hvpas", hvpa_manifest(vpa=True, vpa_weight=100, hpa=False))
    # A dry run creates no VPA: this one stands in for the child it would own.
    apiserver.objects.create(
        "verticalpodautoscalers",
        {
            "apiVersion": "autoscaling.k8s.io/v1",
            "kind": "VerticalPodAutoscaler",
            "metadata": {
                "name": "web-vpa",
                "namespace": "default",
                "labels": {"role": "web-vpa"},
                "ownerReferences": [
                    {
                        "apiVersion": hvpa["apiVersion"],
                        "kind": "Hvpa",
                        "name": "web",
                        "uid": hvpa["metadata"]["uid"],
                        "controller": True,
                    }
                ],
            },
            "spec": {
                "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "updatePolicy": {"updateMode": "Off"},
            },
        },
    )
    running = await start_controller(settings=ControllerSettings(dry_run=True))
    recommend(apiserver, cpu="300m", memory="256Mi")
    await eventually(
        lambda: "would" in conditions(apiserver, "web").get("DryRun", {}).get("message", ""),
        within=60,
    )
    assert cluster.requests("web")["cpu"] == "100m"
    labels = {"namespace": "default", "name": "web", "axis": "vertical", "direction": "up"}
    assert running.sample("hvpa_scalings_total", labels) == 1


async def test_dry_run_writes_nothing_to_targets(
    apiserver: ApiServer, cluster: MiniCluster, start_controller: Any
) -> None:
    cluster.deployment(
        "web", replicas=2, requests={"cpu": "100m", "memory": "64Mi"}, load=Load(cpu_millicores=100)
    )
    apiserver.objects.create("hvpas", hvpa_manifest(vpa=True))
    running = await start_controller(settings=ControllerSettings(dry_run=True))
    await eventually(lambda: "DryRun" in conditions(apiserver, "web"), within=30)
    cluster.loads["web"].cpu_millicores = 400
    await eventually(
        lambda: "would" in conditions(apiserver, "web")["DryRun"]["message"], within=60
    )
    await asyncio.sleep(120)

    assert cluster.replicas("web") == 2
    assert writes(apiserver, resource="deployments", subresource="scale", succeeded=False) == []
    assert writes(apiserver, resource="deployments", succeeded=False) == []
    assert writes(apiserver, resource="verticalpodautoscalers", succeeded=False) == []
    dry_run = conditions(apiserver, "web")["DryRun"]
    assert dry_run["status"] == "True"
    assert dry_run["message"].startswith("dry run, not applied: would")
    assert "2 -> 4 replicas" in dry_run["message"]
    status = apiserver.objects.get("hvpas", "web")["status"]
    assert "lastScaling" not in status  # nothing was applied
    assert status["replicas"] == 2
    assert not status.get("history", {}).get("scaleUpEvents")
    # One Event for the plan, not one per reconcile.
    (plan,) = [e for e in events(apiserver, "DryRun") if "would" in e["message"]]
    assert plan["count"] == 1
    state = running.manager.state()["hvpas"]["items"]["default/web"]
    assert state["dryRun"] is True
    assert state["decision"]["replicas"] == {"current": 2, "desired": 4}


async def test_invalid_hvpa_gets_a_condition_not_a_crash(
    apiserver: ApiServer, cluster: MiniCluster, start_controller: Any
) -> None:
    cluster.deployment(
        "web", replicas=2, requests={"cpu": "100m", "memory": "64Mi"}, load=Load(cpu_millicores=400)
    )
    cluster.deployment(
        "api", replicas=2, requests={"cpu": "100m", "memory": "64Mi"}, load=Load(cpu_millicores=400)
    )
    # The CRD's rules refuse it too: stored as an Hvpa written before them would be.
    apiserver.objects.create("hvpas", hvpa_manifest(min_replicas=5, max_replicas=3), validate=False)
    apiserver.objects.create("hvpas", hvpa_manifest("api", target="api"))
    running = await start_controller()
    await eventually(lambda: "ScalingActive" in conditions(apiserver, "web"), within=30)
    scaling_active = conditions(apiserver, "web")["ScalingActive"]
    assert (scaling_active["status"], scaling_active["reason"]) == ("False", "InvalidSpec")
    assert "spec.hpa.template.spec" in scaling_active["message"]
    # The other Hvpa scales as usual.
    await eventually(lambda: cluster.replicas("api") == 8, within=60)
    await asyncio.sleep(60)
    assert cluster.replicas("web") == 2
    (warning,) = events(apiserver, "InvalidSpec")
    assert warning["type"] == "Warning"
    assert warning["involvedObject"]["name"] == "web"
    assert warning["count"] == 1
    assert running.manager.healthy()
    assert running.sample("hvpa_invalid_spec", {"namespace": "default", "name": "web"}) == 1
    assert running.sample("hvpa_invalid_spec", {"namespace": "default", "name": "api"}) == 0

    # Fixed: the condition goes, and it scales.
    apiserver.objects.patch(
        "hvpas",
        "web",
        {"spec": {"hpa": {"template": {"spec": {"minReplicas": 1, "maxReplicas": 10}}}}},
    )
    await eventually(lambda: cluster.replicas("web") == 4, within=60)
    assert conditions(apiserver, "web")["ScalingActive"]["reason"] != "InvalidSpec"


async def test_missing_target_holds_until_it_appears(
    apiserver: ApiServer, cluster: MiniCluster, start_controller: Any
) -> None:
    apiserver.objects.create("hvpas", hvpa_manifest())
    await start_controller()
    await eventually(lambda: "AbleToScale" in conditions(apiserver, "web"), within=30)
    able = conditions(apiserver, "web")["AbleToScale"]
    assert (able["status"], able["reason"]) == ("False", "FailedGetScale")
    await asyncio.sleep(60)
    (warning,) = events(apiserver, "FailedGetScale")
    assert warning["count"] == 1
    cluster.deployment(
        "web", replicas=2, requests={"cpu": "100m", "memory": "64Mi"}, load=Load(cpu_millicores=400)
    )
    await eventually(lambda: cluster.replicas("web") == 4, within=30)
    assert conditions(apiserver, "web")["AbleToScale"]["status"] == "True"


async def test_deleted_hvpa_takes_its_series_along(
    apiserver: ApiServer, cluster: MiniCluster, start_controller: Any
) -> None:
    cluster.deployment(
        "web", replicas=2, requests={"cpu": "100m", "memory": "64Mi"}, load=Load(cpu_millicores=100)
    )
    apiserver.objects.create("hvpas", hvpa_manifest())
    running = await start_controller()
    labels = {"namespace": "default", "name": "web"}
    await eventually(lambda: running.sample("hvpa_desired_replicas", labels) == 2, within=30)
    apiserver.objects.delete("hvpas", "web")
    await eventually(lambda: running.sample("hvpa_desired_replicas", labels) is None, within=30)
    assert "default/web" not in running.manager.state()["hvpas"]["items"]


async def test_a_quiet_hvpa_writes_its_history_once_per_flush_interval(
    apiserver: ApiServer, cluster: MiniCluster, start_controller: Any
) -> None:
    """Each resync records a recommendation; only the history changes, so it is
    written every `history_flush_seconds`, not every sync period, and the unwritten
    part still counts for the next decision."""
    cluster.deployment(
        "web", replicas=2, requests={"cpu": "100m", "memory": "64Mi"}, load=Load(cpu_millicores=100)
    )
    apiserver.objects.create("hvpas", hvpa_manifest())
    settings = ControllerSettings(sync_period_seconds=15, history_flush_seconds=60)
    running = await start_controller(settings=settings)
    await eventually(lambda: "ScalingActive" in conditions(apiserver, "web"), within=30)
    settled = len(writes(apiserver, resource="hvpas", subresource="status"))

    await asyncio.sleep(600)  # 40 resyncs

    status_writes = len(writes(apiserver, resource="hvpas", subresource="status")) - settled
    # A flush lands at the first resync at least 60 s after the oldest unwritten change:
    # every 60 to 75 s, against 40 writes (one per resync) without it.
    assert 600 / (60 + 15) - 1 <= status_writes <= 600 / 60 + 1
    recommendations = apiserver.objects.get("hvpas", "web")["status"]["history"]["recommendations"]
    assert recommendations  # flushed, not only kept in memory
    state = running.manager.state()["hvpas"]["items"]["default/web"]
    assert state["decision"]["replicas"] == {"current": 2, "desired": 2}


async def test_a_history_flush_interval_of_zero_writes_every_change(
    apiserver: ApiServer, cluster: MiniCluster, start_controller: Any
) -> None:
    cluster.deployment(
        "web", replicas=2, requests={"cpu": "100m", "memory": "64Mi"}, load=Load(cpu_millicores=100)
    )
    apiserver.objects.create("hvpas", hvpa_manifest())
    settings = ControllerSettings(sync_period_seconds=15, history_flush_seconds=0)
    await start_controller(settings=settings)
    await eventually(lambda: "ScalingActive" in conditions(apiserver, "web"), within=30)
    settled = len(writes(apiserver, resource="hvpas", subresource="status"))

    await asyncio.sleep(150)  # 10 resyncs, each recording a recommendation

    assert len(writes(apiserver, resource="hvpas", subresource="status")) - settled >= 9


async def test_a_failed_history_flush_keeps_the_unwritten_history(
    apiserver: ApiServer, cluster: MiniCluster, start_controller: Any
) -> None:
    """A flush that fails (409 here, the Hvpa unchanged) is retried with every sample kept
    in memory since the last write, not only the newest one. Read from a Capacity Hvpa's
    usage samples, one per decision within the demand window (the HPA's recommendations
    keep only those a window can still answer with: one, for a steady count)."""
    cluster.deployment(
        "web", replicas=2, requests={"cpu": "1", "memory": "1Gi"}, load=Load(cpu_millicores=800)
    )
    apiserver.objects.create(
        "hvpas", hvpa_manifest(strategy="Capacity", capacity={"curve": FLAT_CAPACITY_CURVE})
    )
    # The injected 409 leaves the Hvpa unchanged, so no newer version ever reaches the
    # cache; the reconciler, which waits for one after a 409, trusts its cache again after
    # this timeout (5 s, well inside a sync period, so no resync is missed).
    settings = ControllerSettings(
        sync_period_seconds=15, history_flush_seconds=60, expectation_timeout_seconds=5
    )
    await start_controller(settings=settings)
    await eventually(lambda: "ScalingActive" in conditions(apiserver, "web"), within=30)
    apiserver.faults.conflict("hvpas", "web")  # the next status write, the first flush

    await asyncio.sleep(200)

    samples = apiserver.objects.get("hvpas", "web")["status"]["history"]["usage"]
    times = [parse_time(r["time"]) or 0.0 for r in samples]
    gaps = [later - earlier for earlier, later in itertools.pairwise(times)]
    # One per resync (the first comes one period plus this key's phase after the start);
    # a lost flush would leave a gap of a whole flush interval.
    assert len(times) >= 10 and max(gaps) < 2 * 15, samples


async def test_a_chosen_off_axis_raises_no_warning(
    apiserver: ApiServer, cluster: MiniCluster, start_controller: Any
) -> None:
    """A target scaled to zero (ScalingDisabled) and spec.vpa.deploy turned false
    (VerticalScalingOff) are choices, not problems: their conditions, no Warning Event."""
    cluster.deployment("web", replicas=0, requests={"cpu": "100m", "memory": "64Mi"})
    apiserver.objects.create("hvpas", hvpa_manifest(vpa=True))
    await start_controller()
    await eventually(
        lambda: (
            conditions(apiserver, "web").get("ScalingActive", {}).get("reason") == "ScalingDisabled"
        ),
        within=30,
    )
    await eventually(lambda: "VerticalScalingActive" in conditions(apiserver, "web"), within=30)
    apiserver.objects.patch(
        "hvpas", "web", {"spec": {"vpa": {"deploy": False}}}, namespace="default"
    )
    await eventually(
        lambda: (
            conditions(apiserver, "web")["VerticalScalingActive"]["reason"] == "VerticalScalingOff"
        ),
        within=30,
    )
    await asyncio.sleep(60)
    assert events(apiserver, "ScalingDisabled") == []
    assert events(apiserver, "VerticalScalingOff") == []
