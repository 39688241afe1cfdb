"""The controller's listeners against a running controller, in virtual time: /metrics in
the Prometheus text format (checked by `promtool check metrics`) with controller-runtime's
names and the hvpa_* series, /debug/state as bounded JSON with the informers, queue,
leader and last decisions, /healthz and /readyz, and --debug-state=false."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import orjson
import pytest
from integration_cluster import Load, MiniCluster
from integration_helpers import VIRTUAL_TIME, eventually, hvpa_manifest

from hvpa.kube.settings import LeaderElectionSettings
from hvpa.server import Server, parse_address
from hvpa.settings import ControllerSettings, ServerSettings
from hvpa.sim.apiserver import ApiServer

pytestmark = VIRTUAL_TIME

LOCAL = ServerSettings(metrics_bind_address="127.0.0.1:0", health_probe_bind_address="127.0.0.1:0")


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


async def get(session: aiohttp.ClientSession, port: int | None, path: str) -> tuple[int, bytes]:
    assert port is not None
    async with session.get(f"http://127.0.0.1:{port}{path}") as response:
        return response.status, await response.read()


def promtool_check(promtool: str, exposition: bytes) -> tuple[int, str]:
    """`promtool check metrics` on an exposition: its exit code and what it said."""
    checked = subprocess.run(
        [promtool, "check", "metrics"],
        input=exposition,
        capture_output=True,
        timeout=30,
        check=False,
    )
    return checked.returncode, checked.stdout.decode() + checked.stderr.decode()


async def scaled_once(
    apiserver: ApiServer, cluster: MiniCluster, start_controller: Any, **kw: Any
) -> Any:
    cluster.deployment(
        "web",
        replicas=2,
        requests={"cpu": "100m", "memory": "64Mi"},
        limits={"cpu": "200m"},
        load=Load(cpu_millicores=200),
    )
    apiserver.objects.create("hvpas", hvpa_manifest())
    running = await start_controller(**kw)
    await eventually(lambda: cluster.replicas("web") == 4, within=60)
    await asyncio.sleep(20)
    return running


async def test_metrics_pass_promtool_and_name_what_they_should(
    apiserver: ApiServer,
    cluster: MiniCluster,
    start_controller: Any,
    http: aiohttp.ClientSession,
    request: pytest.FixtureRequest,
) -> None:
    running = await scaled_once(apiserver, cluster, start_controller)
    async with Server(manager=running.manager, settings=LOCAL) as server:
        status, body = await get(http, server.metrics_port, "/metrics")
    assert status == 200
    text = body.decode()
    for name in (
        "workqueue_depth",
        "workqueue_adds_total",
        "workqueue_retries_total",
        "controller_runtime_reconcile_total",
        "controller_runtime_reconcile_errors_total",
        "controller_runtime_reconcile_time_seconds_bucket",
        "controller_runtime_active_workers",
        "controller_runtime_max_concurrent_reconciles",
        "rest_client_requests_total",
        "hvpa_current_replicas",
        "hvpa_desired_replicas",
        "hvpa_container_resource_requests",
        "hvpa_container_resource_limits",
        "hvpa_scalings_total",
        "hvpa_last_decision_timestamp_seconds",
    ):
        assert f"\n{name}" in text, name
    assert (
        'hvpa_scalings_total{axis="horizontal",direction="up",name="web",namespace="default"} 1.0'
        in text
    )
    assert (
        'hvpa_container_resource_requests{container="app",name="web",namespace="default",'
        'resource="cpu",unit="core"} 0.1' in text
    )
    assert 'controller_runtime_max_concurrent_reconciles{controller="hvpa"} 5.0' in text
    assert "pod=" not in text and "web-" not in text  # no per-pod labels

    # Asked for last: without promtool (outside CI) the checks above still ran.
    promtool: str = request.getfixturevalue("promtool")
    code, output = promtool_check(promtool, body)
    assert code == 0, output


async def test_debug_state_is_bounded_json(
    apiserver: ApiServer, cluster: MiniCluster, start_controller: Any, http: aiohttp.ClientSession
) -> None:
    settings = ControllerSettings(debug_max_hvpas=1, debug_max_explanation_lines=3)
    running = await scaled_once(
        apiserver,
        cluster,
        start_controller,
        settings=settings,
        leader_election=LeaderElectionSettings(),
    )
    apiserver.objects.create("hvpas", hvpa_manifest("zz-other", target="missing"))
    await asyncio.sleep(5)
    async with Server(manager=running.manager, settings=LOCAL) as server:
        status, body = await get(http, server.metrics_port, "/debug/state")
    assert status == 200
    state = orjson.loads(body)
    informers = {i["resource"]: i for i in state["informers"]}
    assert set(informers) >= {
        "hvpas.autoscaling.k8s.io",
        "pods",
        "nodes",
        "deployments.apps",
        "statefulsets.apps",
        "replicasets.apps",
        "verticalpodautoscalers.autoscaling.k8s.io",
        "horizontalpodautoscalers.autoscaling",
    }
    for informer in informers.values():
        assert informer["synced"] is True
        assert informer["resourceVersion"]
        assert isinstance(informer["size"], int)
    assert informers["pods"]["size"] == 4
    queue = state["queue"]
    assert {"depth", "keys", "keysTruncated", "retries", "processing", "waiting"} <= set(queue)
    leader = state["leader"]
    assert leader["enabled"] is True
    assert leader["identity"] == leader["leader"] == "controller-a"
    assert leader["isLeader"] is True
    assert leader["renewTime"]
    hvpas = state["hvpas"]
    assert (hvpas["count"], hvpas["shown"], hvpas["truncated"]) == (2, 1, True)
    (entry,) = hvpas["items"].values()
    assert entry["result"] == "success"
    decision = entry["decision"]
    assert len(decision["explanation"]) == 3
    assert decision["explanationTruncated"].endswith("more lines not shown")
    assert "status" not in decision  # the history is on the Hvpa, not repeated here
    assert entry["inputs"]["pods"] == 4
    assert entry["inputs"]["metrics"][0]["items"] == 4


async def test_probes_and_debug_state_switch(
    apiserver: ApiServer, cluster: MiniCluster, start_controller: Any, http: aiohttp.ClientSession
) -> None:
    running = await scaled_once(apiserver, cluster, start_controller)
    settings = ServerSettings(
        metrics_bind_address="127.0.0.1:0",
        health_probe_bind_address="127.0.0.1:0",
        debug_state=False,
    )
    async with Server(manager=running.manager, settings=settings) as server:
        assert server.metrics_port != server.probe_port
        assert (await get(http, server.probe_port, "/healthz"))[0] == 200
        assert (await get(http, server.probe_port, "/readyz"))[0] == 200
        assert (await get(http, server.metrics_port, "/debug/state"))[0] == 404
        assert (await get(http, server.metrics_port, "/healthz"))[0] == 404
        assert (await get(http, server.probe_port, "/metrics"))[0] == 404


async def test_not_ready_before_the_caches_sync(
    apiserver: ApiServer, start_controller: Any, http: aiohttp.ClientSession
) -> None:
    apiserver.faults.fail(status=500, times=1000, method="GET", path="/pods$")
    running = await start_controller(wait=False)
    async with Server(manager=running.manager, settings=LOCAL) as server:
        await asyncio.sleep(5)
        assert (await get(http, server.probe_port, "/readyz"))[0] == 503
        assert (await get(http, server.probe_port, "/healthz"))[0] == 200
        apiserver.faults.clear()
        await eventually(lambda: running.manager.ready(), within=120)
        assert (await get(http, server.probe_port, "/readyz"))[0] == 200


@pytest.mark.parametrize(
    ("address", "parsed"),
    [
        pytest.param(":8080", ("0.0.0.0", 8080), id="every-interface"),
        pytest.param("127.0.0.1:0", ("127.0.0.1", 0), id="loopback-any-port"),
        pytest.param("[::1]:9090", ("::1", 9090), id="ipv6"),
        pytest.param("0", None, id="off"),
    ],
)
def test_parse_address(address: str, parsed: tuple[str, int] | None) -> None:
    assert parse_address(address) == parsed


@pytest.mark.parametrize("address", ["8080", "localhost", "host:port"])
def test_parse_address_refuses(address: str) -> None:
    with pytest.raises(ValueError, match="host:port"):
        parse_address(address)
