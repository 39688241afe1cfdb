"""The controller's listeners against a running controller, in virtual time: /metrics in
the Prometheus text format (checked by `promtool check metrics`) with controller-runtime's
names and the hvpa_* series, /debug/state as bounded JSON with the informers, queue,
leader and last decisions, /healthz and /readyz, and --debug-state=false.

Secure serving (the default of `hvpa run`): HTTPS, a bearer token the API server accepts
(TokenReview) for a user allowed the path (SubjectAccessReview), each answer kept as long
as controller-runtime keeps it; the in-repo API server answers the reviews from the
tables a test sets. Both listeners: a half-sent request is dropped after the header
timeout, a body is refused, connections past the limit are closed, and no answer names
the server software."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any, Final

import aiohttp
import orjson
import pytest
from integration_cluster import Load, MiniCluster
from integration_helpers import VIRTUAL_TIME, eventually, hvpa_manifest

from hvpa.kube.settings import LeaderElectionSettings
from hvpa.server import Server, parse_address
from hvpa.settings import DEFAULT_CONCURRENCY, ControllerSettings, ServerSettings
from hvpa.sim.apiserver import ApiServer

pytestmark = VIRTUAL_TIME

LOCAL = ServerSettings(
    metrics_bind_address="127.0.0.1:0",
    health_probe_bind_address="127.0.0.1:0",
    metrics_secure=False,
)
SECURE = replace(LOCAL, metrics_secure=True)


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
    workers = f"{float(DEFAULT_CONCURRENCY)}"
    assert f'controller_runtime_max_concurrent_reconciles{{controller="hvpa"}} {workers}' in text
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
    settings = replace(LOCAL, debug_state=False)
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


# -- secure serving ----------------------------------------------------------------------

PROMETHEUS: Final = "system:serviceaccount:monitoring:prometheus-k8s"
PROMETHEUS_TOKEN: Final = "prometheus-token"


async def get_secure(
    session: aiohttp.ClientSession, port: int | None, path: str, token: str | None
) -> tuple[int, str]:
    """A GET over HTTPS; the certificate is self-signed, so it is not verified here."""
    assert port is not None
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    url = f"https://127.0.0.1:{port}{path}"
    async with session.get(url, headers=headers, ssl=False) as response:
        return response.status, await response.text()


def reviews_made(apiserver: ApiServer, resource: str) -> int:
    return sum(1 for r in apiserver.requests if r.resource == resource and r.verb == "create")


async def test_secure_metrics_serve_only_allowed_users(
    apiserver: ApiServer, cluster: MiniCluster, start_controller: Any, http: aiohttp.ClientSession
) -> None:
    running = await scaled_once(apiserver, cluster, start_controller)
    apiserver.reviews.add_token(PROMETHEUS_TOKEN, PROMETHEUS, groups=["system:serviceaccounts"])
    apiserver.reviews.add_token("viewer-token", "jane", groups=["oncall"])
    apiserver.reviews.allow(PROMETHEUS, "get", "/metrics")
    apiserver.reviews.allow("oncall", "get", "/debug/state")
    async with Server(manager=running.manager, settings=SECURE, client=running.client) as server:
        port = server.metrics_port
        assert (await get_secure(http, port, "/metrics", None))[0] == 401
        assert (await get_secure(http, port, "/metrics", "bogus"))[0] == 401
        status, text = await get_secure(http, port, "/metrics", PROMETHEUS_TOKEN)
        assert status == 200 and "hvpa_desired_replicas" in text
        # /debug/state is its own non-resource URL: Prometheus may not read it ...
        status, text = await get_secure(http, port, "/debug/state", PROMETHEUS_TOKEN)
        assert (status, text) == (403, f"Authorization denied for user {PROMETHEUS}")
        # ... a member of a group allowed it may, and not /metrics.
        assert (await get_secure(http, port, "/debug/state", "viewer-token"))[0] == 200
        assert (await get_secure(http, port, "/metrics", "viewer-token"))[0] == 403
        # Plain HTTP to the TLS port gets nothing served.
        with pytest.raises(aiohttp.ClientError):
            await get(http, port, "/metrics")
        # The probes stay plain HTTP, unauthenticated (the kubelet has no token).
        assert (await get(http, server.probe_port, "/healthz"))[0] == 200


async def test_reviews_are_kept_as_controller_runtime_keeps_them(
    apiserver: ApiServer, start_controller: Any, http: aiohttp.ClientSession
) -> None:
    """TokenReviews 60 s, allowed SubjectAccessReviews 300 s, denied ones 30 s
    (controller-runtime pkg/metrics/filters: CacheTTL, AllowCacheTTL, DenyCacheTTL)."""
    running = await start_controller()
    apiserver.reviews.add_token(PROMETHEUS_TOKEN, PROMETHEUS)
    apiserver.reviews.allow(PROMETHEUS, "get", "/metrics")
    async with Server(manager=running.manager, settings=SECURE, client=running.client) as server:
        port = server.metrics_port
        for _ in range(3):
            assert (await get_secure(http, port, "/metrics", PROMETHEUS_TOKEN))[0] == 200
        assert reviews_made(apiserver, "tokenreviews") == 1
        assert reviews_made(apiserver, "subjectaccessreviews") == 1
        await asyncio.sleep(61)  # past the token TTL, within the allow TTL
        assert (await get_secure(http, port, "/metrics", PROMETHEUS_TOKEN))[0] == 200
        assert reviews_made(apiserver, "tokenreviews") == 2
        assert reviews_made(apiserver, "subjectaccessreviews") == 1
        # A denial is kept 30 s: allowed meanwhile, it takes effect only after.
        assert (await get_secure(http, port, "/debug/state", PROMETHEUS_TOKEN))[0] == 403
        apiserver.reviews.allow(PROMETHEUS, "get", "/debug/state")
        assert (await get_secure(http, port, "/debug/state", PROMETHEUS_TOKEN))[0] == 403
        await asyncio.sleep(31)
        assert (await get_secure(http, port, "/debug/state", PROMETHEUS_TOKEN))[0] == 200


async def test_an_api_server_that_cannot_review_opens_nothing(
    apiserver: ApiServer, start_controller: Any, http: aiohttp.ClientSession
) -> None:
    running = await start_controller()
    apiserver.reviews.add_token(PROMETHEUS_TOKEN, PROMETHEUS)
    apiserver.reviews.allow(PROMETHEUS, "get", "/metrics")
    async with Server(manager=running.manager, settings=SECURE, client=running.client) as server:
        port = server.metrics_port
        apiserver.faults.fail(status=404, times=1, method="POST", path="tokenreviews")
        assert await get_secure(http, port, "/metrics", PROMETHEUS_TOKEN) == (
            500,
            "Authentication failed",
        )
        apiserver.faults.fail(status=404, times=1, method="POST", path="subjectaccessreviews")
        assert await get_secure(http, port, "/metrics", PROMETHEUS_TOKEN) == (
            500,
            f"Authorization for user {PROMETHEUS} failed",
        )
        # A failed review is not kept: the next request is reviewed, and served.
        assert (await get_secure(http, port, "/metrics", PROMETHEUS_TOKEN))[0] == 200


# -- both listeners protect themselves --------------------------------------------------------


async def test_a_half_sent_request_is_dropped_after_the_header_timeout(
    apiserver: ApiServer, start_controller: Any
) -> None:
    running = await start_controller()
    async with Server(manager=running.manager, settings=LOCAL) as server:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.probe_port)
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: hvpa\r\nX-Slow: ")
        await writer.drain()
        loop = asyncio.get_running_loop()
        started = loop.time()
        assert await asyncio.wait_for(reader.read(), timeout=300) == b""  # closed, unanswered
        # ServerSettings.header_timeout_seconds (32 s), give or take aiohttp's timer rounding.
        assert 31 <= loop.time() - started <= 40
        writer.close()


async def test_connections_past_the_limit_are_closed(
    apiserver: ApiServer, start_controller: Any, http: aiohttp.ClientSession
) -> None:
    running = await start_controller()
    settings = replace(LOCAL, max_connections=2)
    async with Server(manager=running.manager, settings=settings) as server:
        port = server.probe_port
        held = [await asyncio.open_connection("127.0.0.1", port) for _ in range(2)]
        await asyncio.sleep(0.1)
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: hvpa\r\n\r\n")
        assert await asyncio.wait_for(reader.read(), timeout=5) == b""
        writer.close()
        for _, held_writer in held:
            held_writer.close()
        await asyncio.sleep(0.1)
        assert (await get(http, port, "/healthz"))[0] == 200


async def test_a_body_is_refused_and_no_answer_names_the_server(
    apiserver: ApiServer, start_controller: Any, http: aiohttp.ClientSession
) -> None:
    running = await start_controller()
    async with Server(manager=running.manager, settings=LOCAL) as server:
        url = f"http://127.0.0.1:{server.probe_port}"
        async with http.get(f"{url}/healthz", data=b"x" * 100) as response:
            assert response.status == 413
            assert response.headers["Server"] == "hvpa"
        for path in ("/healthz", "/nowhere"):
            async with http.get(url + path) as response:
                assert response.status in (200, 404)
                assert response.headers["Server"] == "hvpa"
        # A request aiohttp cannot parse is answered before any application code runs.
        reader, writer = await asyncio.open_connection("127.0.0.1", server.probe_port)
        writer.write(b"GARBAGE \x01 HTTP/1.1\r\n\r\n")
        answer = await asyncio.wait_for(reader.read(), timeout=5)
        writer.close()
        assert answer.startswith(b"HTTP/1.0 400 ")
        assert b"\r\nServer: hvpa\r\n" in answer and b"aiohttp" not in answer
