"""The API client against a scripted aiohttp server: error classes from Status bodies,
which requests are retried (and how long Retry-After makes them wait), 401 credential
refresh, the request counter and latency histogram, patch content types, and kubeconfig
loading."""

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml
from aiohttp import web
from aiohttp.test_utils import TestServer
from prometheus_client import CollectorRegistry

from hvpa.kube import errors
from hvpa.kube.client import KubeClient, PatchType, client_from_kubeconfig
from hvpa.kube.errors import error_from_response
from hvpa.kube.metrics import KubeMetrics
from hvpa.kube.settings import ClientSettings

pytestmark = pytest.mark.looptime


def status_body(code: int, reason: str, message: str = "it failed", **details: Any) -> bytes:
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    if details:
        body["details"] = details
    return orjson.dumps(body)


@pytest.mark.parametrize(
    ("code", "reason", "cls"),
    [
        pytest.param(400, "BadRequest", errors.BadRequest, id="400"),
        pytest.param(401, "Unauthorized", errors.Unauthorized, id="401"),
        pytest.param(403, "Forbidden", errors.Forbidden, id="403"),
        pytest.param(404, "NotFound", errors.NotFound, id="404"),
        pytest.param(409, "Conflict", errors.Conflict, id="409-conflict"),
        pytest.param(409, "AlreadyExists", errors.AlreadyExists, id="409-already-exists"),
        pytest.param(410, "Gone", errors.Gone, id="410-gone"),
        pytest.param(410, "Expired", errors.Expired, id="410-expired"),
        pytest.param(422, "Invalid", errors.Invalid, id="422"),
        pytest.param(429, "TooManyRequests", errors.TooManyRequests, id="429"),
        pytest.param(500, "InternalError", errors.ServerError, id="500"),
        pytest.param(503, "ServiceUnavailable", errors.ServerError, id="503"),
        pytest.param(504, "Timeout", errors.ServerError, id="504"),
        pytest.param(418, "", errors.ApiError, id="other"),
    ],
)
def test_errors_by_meaning(code: int, reason: str, cls: type[errors.ApiError]) -> None:
    error = error_from_response(code, status_body(code, reason, "the message"))
    assert type(error) is cls
    assert (error.code, error.reason, error.message) == (code, reason, "the message")


def test_meaning_families() -> None:
    assert issubclass(errors.AlreadyExists, errors.Conflict)
    assert issubclass(errors.Expired, errors.Gone)
    assert issubclass(errors.ApiError, errors.KubeError)
    assert issubclass(errors.TransportError, errors.KubeError)


@pytest.mark.parametrize(
    ("header", "details", "expected"),
    [
        pytest.param("3", {}, 3.0, id="header"),
        pytest.param(None, {"retryAfterSeconds": 7}, 7.0, id="status-details"),
        pytest.param("2", {"retryAfterSeconds": 7}, 2.0, id="header-wins"),
        pytest.param("soon", {}, None, id="unparseable"),
        pytest.param(None, {}, None, id="none"),
    ],
)
def test_retry_after(header: str | None, details: dict[str, int], expected: float | None) -> None:
    body = status_body(429, "TooManyRequests", **details)
    error = error_from_response(429, body, retry_after_header=header)
    assert error.retry_after == expected


def test_a_body_that_is_no_status_keeps_its_text() -> None:
    error = error_from_response(502, b"<html>bad gateway</html>", method="GET", url="https://x/y")
    assert isinstance(error, errors.ServerError)
    assert error.message == "<html>bad gateway</html>"
    assert str(error) == "502: <html>bad gateway</html> (GET https://x/y)"


# ---------------------------------------------------------------------------
# Against a server

Responder = Callable[[web.Request], web.Response]


class Script:
    """A server that answers each request with the next scripted response."""

    def __init__(self) -> None:
        self.responses: list[web.Response] = []
        self.requests: list[tuple[str, str, dict[str, str], bytes, float]] = []

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.read()
        self.requests.append(
            (
                request.method,
                request.path_qs,
                dict(request.headers),
                body,
                asyncio.get_running_loop().time(),
            )
        )
        return self.responses.pop(0)


def fail(code: int, reason: str, retry_after: str | None = None) -> web.Response:
    headers = {"Retry-After": retry_after} if retry_after else {}
    return web.Response(
        status=code,
        body=status_body(code, reason),
        content_type="application/json",
        headers=headers,
    )


def ok(payload: dict[str, Any] | None = None) -> web.Response:
    return web.Response(
        body=orjson.dumps(payload or {"kind": "Thing"}), content_type="application/json"
    )


class Config:
    """The attributes of a kubernetes_asyncio Configuration the client reads."""

    def __init__(self, host: str, token: str | None = "Bearer first") -> None:
        self.host = host
        self.token = token
        self.username = None
        self.tls_server_name = None

    async def get_api_key_with_prefix(self, identifier: str) -> str | None:
        return self.token


@pytest.fixture
async def script() -> AsyncIterator[tuple[Script, TestServer]]:
    state = Script()
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", state.handle)
    server = TestServer(app)
    await server.start_server()
    try:
        yield state, server
    finally:
        await server.close()


def make_client(
    server: TestServer, metrics: KubeMetrics, config: Config | None = None, **kwargs: Any
) -> KubeClient:
    return KubeClient(
        configuration=config or Config(str(server.make_url("")).rstrip("/")),
        metrics=metrics,
        settings=ClientSettings(max_retries=3),
        **kwargs,
    )


@pytest.mark.parametrize(
    ("method", "first", "retried"),
    [
        pytest.param("GET", fail(500, "InternalError"), True, id="read-500-retried"),
        pytest.param("GET", fail(429, "TooManyRequests"), True, id="read-429-retried"),
        pytest.param("GET", fail(404, "NotFound"), False, id="read-404-raised"),
        pytest.param("POST", fail(500, "InternalError"), False, id="write-500-not-retried"),
        pytest.param("PUT", fail(504, "Timeout"), False, id="write-504-not-retried"),
        pytest.param("POST", fail(429, "TooManyRequests"), True, id="write-429-retried"),
        pytest.param(
            "PUT", fail(503, "ServiceUnavailable", "1"), True, id="write-5xx-retry-after-retried"
        ),
        pytest.param("PUT", fail(409, "Conflict"), False, id="write-409-raised"),
    ],
)
async def test_which_failures_are_retried(
    script: tuple[Script, TestServer],
    metrics: KubeMetrics,
    method: str,
    first: web.Response,
    retried: bool,
) -> None:
    state, server = script
    state.responses = [first, ok()]
    async with make_client(server, metrics) as client:
        if retried:
            assert orjson.loads(await client.request(method, "/api/v1/things", body={})) == {
                "kind": "Thing"
            }
            assert len(state.requests) == 2
        else:
            with pytest.raises(errors.ApiError) as caught:
                await client.request(method, "/api/v1/things", body={})
            assert caught.value.code == first.status
            assert len(state.requests) == 1


@pytest.mark.parametrize("code", [301, 302, 307, 308])
async def test_a_redirect_is_an_error_and_never_followed(
    script: tuple[Script, TestServer], metrics: KubeMetrics, code: int
) -> None:
    """A metrics adapter (or anything behind the aggregator) answering with a redirect to
    a path of its choosing must not make hvpa send its token there (issue 15)."""
    state, server = script
    state.responses = [
        web.Response(status=code, headers={"Location": "/api/v1/secrets"}),
        ok({"kind": "SecretList"}),
    ]
    async with make_client(server, metrics) as client:
        with pytest.raises(errors.ApiError) as caught:
            await client.get("/apis/metrics.k8s.io/v1beta1/namespaces/a/pods")
    assert caught.value.code == code
    assert len(state.requests) == 1, "the redirect's target was never asked"


async def test_retry_after_is_honoured(
    script: tuple[Script, TestServer], metrics: KubeMetrics
) -> None:
    state, server = script
    state.responses = [fail(429, "TooManyRequests", "7"), ok()]
    async with make_client(server, metrics) as client:
        await client.get("/api/v1/things")
    first_at, second_at = state.requests[0][4], state.requests[1][4]
    assert second_at - first_at == pytest.approx(7.0, abs=0.01)


async def test_retries_end_with_the_last_error(
    script: tuple[Script, TestServer], metrics: KubeMetrics
) -> None:
    state, server = script
    state.responses = [fail(500, "InternalError") for _ in range(4)]
    async with make_client(server, metrics) as client:
        with pytest.raises(errors.ServerError):
            await client.get("/api/v1/things")
    assert len(state.requests) == 4, "one try and three retries"


async def test_retry_false_raises_the_first_failure(
    script: tuple[Script, TestServer], metrics: KubeMetrics
) -> None:
    state, server = script
    state.responses = [fail(500, "InternalError"), ok()]
    async with make_client(server, metrics) as client:
        with pytest.raises(errors.ServerError):
            await client.request("GET", "/api/v1/things", retry=False)
    assert len(state.requests) == 1


async def test_unauthorized_refreshes_credentials_once(
    script: tuple[Script, TestServer], metrics: KubeMetrics
) -> None:
    state, server = script
    config = Config(str(server.make_url("")).rstrip("/"))
    refreshes = []

    async def refresh() -> None:
        refreshes.append(1)
        config.token = "Bearer second"

    state.responses = [fail(401, "Unauthorized"), ok(), fail(401, "Unauthorized")]
    async with make_client(server, metrics, config, refresh_credentials=refresh) as client:
        await client.get("/api/v1/things")
        assert [r[2]["Authorization"] for r in state.requests] == [
            "Bearer first",
            "Bearer second",
        ]
        state.responses.append(fail(401, "Unauthorized"))
        with pytest.raises(errors.Unauthorized):
            await client.get("/api/v1/things")
    assert len(refreshes) == 2, "once per request, not in a loop"


async def test_requests_are_counted_by_code_method_and_host(
    script: tuple[Script, TestServer], metrics: KubeMetrics, registry: CollectorRegistry
) -> None:
    state, server = script
    state.responses = [ok(), fail(404, "NotFound"), ok()]
    async with make_client(server, metrics) as client:
        await client.get("/api/v1/things")
        with pytest.raises(errors.NotFound):
            await client.get("/api/v1/things/x")
        await client.patch("/api/v1/things/x", {"a": 1}, patch_type=PatchType.STRATEGIC)
    host = f"{server.host}:{server.port}"

    def count(code: str, method: str) -> float | None:
        return registry.get_sample_value(
            "rest_client_requests_total", {"code": code, "method": method, "host": host}
        )

    assert (count("200", "GET"), count("404", "GET"), count("200", "PATCH")) == (1, 1, 1)
    assert state.requests[2][2]["Content-Type"] == PatchType.STRATEGIC.value
    assert orjson.loads(state.requests[2][3]) == {"a": 1}


async def test_request_latency_by_verb_includes_retries_and_skips_watches(
    script: tuple[Script, TestServer], metrics: KubeMetrics, registry: CollectorRegistry
) -> None:
    state, server = script
    state.responses = [fail(429, "TooManyRequests", "7"), ok(), ok(), ok()]
    async with make_client(server, metrics) as client:
        await client.get("/api/v1/things")
        await client.update("/api/v1/things/x", {"a": 1})
        async with client.stream("/api/v1/things", params={"watch": 1}, timeout_seconds=60) as s:
            await s.read_chunk()
    host = f"{server.host}:{server.port}"

    def observed(verb: str, what: str) -> float | None:
        return registry.get_sample_value(
            f"rest_client_request_duration_seconds_{what}", {"verb": verb, "host": host}
        )

    # The GET waited 7 s of virtual time for its Retry-After; the server answers at once.
    assert observed("GET", "count") == 1, "one request, its retry included; the watch untimed"
    assert observed("GET", "sum") == pytest.approx(7.0, abs=0.01)
    assert (observed("PUT", "count"), observed("PUT", "sum")) == (1, pytest.approx(0, abs=0.01))
    assert len(state.requests) == 4


async def test_connection_refused_is_a_transport_error(
    metrics: KubeMetrics, registry: CollectorRegistry, unused_tcp_port: int
) -> None:
    config = Config(f"http://127.0.0.1:{unused_tcp_port}")
    client = KubeClient(
        configuration=config, metrics=metrics, settings=ClientSettings(max_retries=2)
    )
    async with client:
        with pytest.raises(errors.TransportError):
            await client.get("/api/v1/things")
        with pytest.raises(errors.TransportError):
            await client.create("/api/v1/things", {})
    sample = registry.get_sample_value(
        "rest_client_requests_total",
        {"code": "<error>", "method": "GET", "host": f"127.0.0.1:{unused_tcp_port}"},
    )
    assert sample == 3, "a read is retried, then the error is raised"


async def test_client_from_a_kubeconfig_file(
    script: tuple[Script, TestServer], metrics: KubeMetrics, tmp_path: Path
) -> None:
    state, server = script
    kubeconfig = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": str(server.make_url("")).rstrip("/")}}],
        "users": [{"name": "u", "user": {"token": "s3cret"}}],
        "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "ctx",
    }
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(kubeconfig))
    state.responses = [ok()]
    async with await client_from_kubeconfig(metrics=metrics, path=str(path)) as client:
        await client.get("/api/v1/namespaces")
    assert state.requests[0][2]["Authorization"] == "Bearer s3cret"
    assert state.requests[0][1] == "/api/v1/namespaces"


# ---------------------------------------------------------------------------
# Bounded reads and the per-attempt guard


class Endless:
    """A server whose answer never ends: 64 KiB chunks of one JSON string, forever."""

    def __init__(self, status: int = 200) -> None:
        self.sent = 0
        self.status = status

    async def handle(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(
            status=self.status, headers={"Content-Type": "application/json"}
        )
        await response.prepare(request)
        await response.write(b'{"kind": "')
        chunk = b"x" * 65536
        while True:
            await response.write(chunk)
            self.sent += len(chunk)
            await asyncio.sleep(0.001)


async def test_a_response_past_the_bound_is_refused(
    script: tuple[Script, TestServer], metrics: KubeMetrics
) -> None:
    state, server = script
    payload = {"kind": "Thing", "data": "x" * 1000}
    size = len(orjson.dumps(payload))
    state.responses = [ok(payload), ok(payload), ok(payload)]
    async with make_client(server, metrics) as client:
        assert len(await client.get("/api/v1/things", max_response_bytes=size)) == size
        with pytest.raises(errors.ResponseTooLarge) as caught:
            await client.get("/api/v1/things", max_response_bytes=size - 1)
        assert caught.value.limit_bytes == size - 1
        assert str(caught.value).startswith("GET /api/v1/things: the response is larger than")
        assert str(size - 1) in str(caught.value)
    async with KubeClient(
        configuration=Config(str(server.make_url("")).rstrip("/")),
        metrics=metrics,
        settings=ClientSettings(max_response_bytes=size - 1),
    ) as client:
        with pytest.raises(errors.ResponseTooLarge):
            await client.get("/api/v1/things")
    assert len(state.requests) == 3, "a response too large is not retried"


async def test_an_endless_response_is_read_only_up_to_the_bound(metrics: KubeMetrics) -> None:
    # Read whole, this answer would never end: the request would hang until its timeout
    # and hold everything sent until then.
    endless = Endless()
    app = web.Application()
    app.router.add_route("GET", "/{tail:.*}", endless.handle)
    server = TestServer(app)
    await server.start_server()
    try:
        async with make_client(server, metrics) as client:
            started = asyncio.get_running_loop().time()
            with pytest.raises(errors.ResponseTooLarge):
                await client.get("/apis/metrics.k8s.io/v1beta1/pods", max_response_bytes=1 << 20)
            assert asyncio.get_running_loop().time() - started < 1.0
    finally:
        await server.close()
    # The server wrote into socket buffers ahead of the reader; it stopped soon after.
    assert endless.sent < 16 << 20


async def test_a_declared_length_past_the_bound_is_refused_unread(
    script: tuple[Script, TestServer], metrics: KubeMetrics
) -> None:
    state, server = script
    state.responses = [ok({"kind": "Thing", "data": "x" * 5000})]
    async with make_client(server, metrics) as client:
        with pytest.raises(errors.ResponseTooLarge) as caught:
            await client.get("/api/v1/things", max_response_bytes=100)
    assert caught.value.declared_bytes is not None and caught.value.declared_bytes > 5000


async def test_an_error_body_is_read_only_in_part(metrics: KubeMetrics) -> None:
    # An endless 404: read whole, the request would end only at its timeout, as a
    # TransportError instead of the NotFound the status says.
    endless = Endless(status=404)
    app = web.Application()
    app.router.add_route("GET", "/{tail:.*}", endless.handle)
    server = TestServer(app)
    await server.start_server()
    try:
        async with make_client(server, metrics) as client:
            with pytest.raises(errors.NotFound) as caught:
                await client.get("/api/v1/things")
    finally:
        await server.close()
    assert caught.value.message.startswith('{"kind": "xxx'), "the text of a body that is no Status"


class Refused(Exception):
    pass


async def test_the_guard_runs_before_every_attempt(
    script: tuple[Script, TestServer], metrics: KubeMetrics
) -> None:
    """A write waiting in Retry-After is not resent when the guard refuses after the wait."""
    state, server = script
    state.responses = [fail(429, "TooManyRequests", "20"), ok(), ok()]
    allowed = [True]
    checks: list[float] = []
    loop = asyncio.get_running_loop()

    def guard() -> None:
        checks.append(loop.time())
        if not allowed[0]:
            raise Refused

    async with make_client(server, metrics) as client:
        write = asyncio.create_task(client.update("/api/v1/things/x", {}, guard=guard))
        await asyncio.sleep(10)  # inside the 20 s Retry-After
        allowed[0] = False
        with pytest.raises(Refused):
            await write
        assert len(state.requests) == 1, "the retry was never sent"
        assert checks[1] - checks[0] == pytest.approx(20.0, abs=0.01), "checked after the wait"
        allowed[0] = True
        await client.update("/api/v1/things/x", {}, guard=guard)
    assert len(state.requests) == 2


async def test_the_guard_runs_before_the_resend_after_a_401(
    script: tuple[Script, TestServer], metrics: KubeMetrics
) -> None:
    state, server = script
    state.responses = [fail(401, "Unauthorized"), ok()]
    calls: list[int] = []

    def guard() -> None:
        calls.append(1)
        if len(calls) > 1:
            raise Refused

    async def refresh() -> None:
        pass

    async with make_client(server, metrics, refresh_credentials=refresh) as client:
        with pytest.raises(Refused):
            await client.patch("/api/v1/things/x", {}, guard=guard)
    assert len(state.requests) == 1
