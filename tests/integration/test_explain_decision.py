"""`hvpa explain`'s engine room against the in-repo API server: the decision the controller
would make now, from plain GETs and LISTs, with nothing written; the same decision the
running controller then makes; a missing or invalid Hvpa is an ExplainError; a cluster
without the VPA CRD is explained as the controller sees it (no VPA)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from integration_cluster import Load, MiniCluster
from integration_helpers import VIRTUAL_TIME, eventually, hvpa_manifest
from prometheus_client import CollectorRegistry

from hvpa.controller.explain import ExplainError, explain
from hvpa.engine.decision import decision_to_dict
from hvpa.engine.settings import Settings as EngineSettings
from hvpa.kube.client import client_from_kubeconfig
from hvpa.kube.metrics import KubeMetrics
from hvpa.sim.apiserver import ApiServer

pytestmark = VIRTUAL_TIME


async def explained(apiserver: ApiServer, clock: Callable[[], float], name: str = "web") -> Any:
    client = await client_from_kubeconfig(
        metrics=KubeMetrics(CollectorRegistry()), path=str(apiserver.kubeconfig_path)
    )
    async with client:
        return await explain(
            client=client,
            namespace="default",
            name=name,
            engine=EngineSettings(),
            clock=clock,
            metrics_timeout_seconds=5,
        )


async def test_explain_decides_and_writes_nothing(
    apiserver: ApiServer, cluster: MiniCluster, clock: Callable[[], float], start_controller: Any
) -> None:
    cluster.deployment(
        "web", replicas=2, requests={"cpu": "100m", "memory": "64Mi"}, load=Load(cpu_millicores=200)
    )
    apiserver.objects.create("hvpas", hvpa_manifest())
    apiserver.clear_requests()
    decision = await explained(apiserver, clock)
    assert {r.method for r in apiserver.requests} == {"GET"}
    # Object lists come in pages, as the informers list them (each page's read bounded).
    lists = [r for r in apiserver.requests if r.verb == "list" and "metrics" not in r.api_group]
    assert lists and all(r.query.get("limit") == "500" for r in lists)
    assert cluster.replicas("web") == 2
    shown = decision_to_dict(decision)
    assert shown["replicas"] == {"current": 2, "desired": 4}
    assert shown["horizontal"]["metrics"][0]["currentUtilization"] == 100
    assert any(line.startswith("decision: 2 -> 4 replicas") for line in shown["explanation"])
    assert set(shown) >= {
        "replicas",
        "containers",
        "horizontal",
        "vertical",
        "blocked",
        "conditions",
        "status",
    }

    # The controller then does what explain said.
    await start_controller()
    await eventually(lambda: cluster.replicas("web") == 4, within=60)


@pytest.mark.parametrize(
    ("manifest", "message"),
    [
        pytest.param(None, "not found", id="missing"),
        pytest.param(hvpa_manifest(min_replicas=5, max_replicas=3), "is invalid", id="invalid"),
    ],
)
async def test_explain_refuses(
    apiserver: ApiServer, clock: Callable[[], float], manifest: dict[str, Any] | None, message: str
) -> None:
    if manifest is not None:
        # The CRD's rules refuse the invalid one too: stored as if written before them.
        apiserver.objects.create("hvpas", manifest, validate=False)
    with pytest.raises(ExplainError, match=message):
        await explained(apiserver, clock)


async def test_explain_without_the_vpa_crd(
    apiserver: ApiServer, cluster: MiniCluster, clock: Callable[[], float]
) -> None:
    """Every request to the VPA API answers 404, as for a CRD that is not installed."""
    apiserver.faults.fail(status=404, times=10_000, path=r"/verticalpodautoscalers")
    cluster.deployment(
        "web", replicas=2, requests={"cpu": "100m", "memory": "64Mi"}, load=Load(cpu_millicores=200)
    )
    apiserver.objects.create("hvpas", hvpa_manifest(vpa=True))
    decision = await explained(apiserver, clock)
    assert (decision.current_replicas, decision.desired_replicas) == (2, 4)
    assert any("NoVerticalPodAutoscaler" in line for line in decision.explanation), (
        decision.explanation
    )
