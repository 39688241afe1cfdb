"""The client against the in-repo API server, through the kubeconfig it writes: the
real server's error responses arrive as the right classes, and writes round-trip."""

from collections.abc import Callable
from typing import Any

import aiohttp
import msgspec
import orjson
import pytest
from prometheus_client import CollectorRegistry

from hvpa.kube import errors
from hvpa.kube.client import KubeClient, PatchType, client_from_kubeconfig
from hvpa.kube.metrics import KubeMetrics
from hvpa.kube.resources import CONFIGMAPS, PODS
from hvpa.kube.settings import ClientSettings
from hvpa.kube.wire import ObjectList
from hvpa.records import ConfigMapWire, configmap_from_wire
from hvpa.sim.apiserver import ApiServer

pytestmark = pytest.mark.looptime

CM = CONFIGMAPS.path(namespace="default")


def configmap(name: str, **data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


async def test_kubeconfig_from_the_api_server_works(
    kube: KubeClient, apiserver: ApiServer, registry: CollectorRegistry
) -> None:
    body = await kube.get("/api/v1/namespaces")
    names = {item["metadata"]["name"] for item in orjson.loads(body)["items"]}
    assert {"default", "kube-system"} <= names
    host = kube.host.removeprefix("http://")
    assert (
        registry.get_sample_value(
            "rest_client_requests_total", {"code": "200", "method": "GET", "host": host}
        )
        == 1
    )


async def test_writes_round_trip(kube: KubeClient) -> None:
    created = orjson.loads(await kube.create(CM, configmap("cfg", a="1")))
    path = CONFIGMAPS.path(namespace="default", name="cfg")
    patched = await kube.patch(path, {"data": {"b": "2"}}, patch_type=PatchType.MERGE)
    record = configmap_from_wire(msgspec.json.decode(patched, type=ConfigMapWire))
    assert dict(record.data) == {"a": "1", "b": "2"}
    assert record.resource_version != created["metadata"]["resourceVersion"]
    listed = msgspec.json.decode(await kube.get(CM), type=ObjectList[ConfigMapWire])
    assert [item.metadata.name for item in listed.items or []] == ["cfg"]
    await kube.delete(path)
    with pytest.raises(errors.NotFound):
        await kube.get(path)


Setup = Callable[[ApiServer], None]


def nothing(server: ApiServer) -> None:
    return None


def existing(server: ApiServer) -> None:
    server.objects.create("configmaps", configmap("cfg"))


@pytest.mark.parametrize(
    ("setup", "method", "path", "body", "cls"),
    [
        pytest.param(
            nothing,
            "GET",
            CONFIGMAPS.path(namespace="default", name="x"),
            None,
            errors.NotFound,
            id="404",
        ),
        pytest.param(existing, "POST", CM, configmap("cfg"), errors.AlreadyExists, id="409-exists"),
        pytest.param(
            existing,
            "PUT",
            CONFIGMAPS.path(namespace="default", name="cfg"),
            {**configmap("cfg"), "metadata": {"name": "cfg", "resourceVersion": "1"}},
            errors.Conflict,
            id="409-stale",
        ),
        pytest.param(
            nothing,
            "POST",
            PODS.path(namespace="default"),
            {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {}},
            errors.Invalid,
            id="422",
        ),
        pytest.param(
            nothing,
            "GET",
            CM,
            None,
            errors.Expired,
            id="410-continue",
        ),
    ],
)
async def test_server_errors_arrive_by_meaning(
    kube: KubeClient,
    apiserver: ApiServer,
    setup: Setup,
    method: str,
    path: str,
    body: Any,
    cls: type[errors.ApiError],
) -> None:
    setup(apiserver)
    params = None
    if cls is errors.Expired:  # a continue token from before a compaction
        for index in range(3):
            apiserver.objects.create("configmaps", configmap(f"c{index}"))
        first = orjson.loads(await kube.get(CM, params={"limit": 1}))
        apiserver.objects.create("configmaps", configmap("later"))
        apiserver.faults.compact()
        params = {"limit": 1, "continue": first["metadata"]["continue"]}
    with pytest.raises(errors.ApiError) as caught:
        await kube.request(method, path, params=params, body=body, retry=False)
    assert type(caught.value) is cls
    assert caught.value.message


@pytest.mark.parametrize(
    ("status", "cls"),
    [
        pytest.param(429, errors.TooManyRequests, id="429"),
        pytest.param(500, errors.ServerError, id="500"),
        pytest.param(503, errors.ServerError, id="503"),
    ],
)
async def test_injected_faults_arrive_by_meaning(
    kube: KubeClient, apiserver: ApiServer, status: int, cls: type[errors.ApiError]
) -> None:
    apiserver.faults.fail(status=status, times=1, path="/configmaps$", retry_after_seconds=4)
    with pytest.raises(cls) as caught:
        await kube.request("GET", CM, retry=False)
    assert caught.value.code == status
    if status == 429:
        assert caught.value.retry_after == 4
    apiserver.faults.fail(status=status, times=1, path="/configmaps$")
    assert orjson.loads(await kube.get(CM))["kind"] == "ConfigMapList", "retried"


async def test_every_write_names_the_field_manager(
    apiserver: ApiServer, metrics: KubeMetrics
) -> None:
    """POST, PUT and PATCH carry ?fieldManager= (the setting's name, `hvpa` by default), so
    managedFields say hvpa, not whatever the User-Agent says; a caller's own name wins."""
    path = CONFIGMAPS.path(namespace="default", name="cfg")
    async with await client_from_kubeconfig(
        metrics=metrics,
        path=str(apiserver.kubeconfig_path),
        settings=ClientSettings(user_agent="not-the-manager/1.0", field_manager="hvpa-test"),
    ) as kube:
        await kube.create(CM, configmap("cfg", a="1"))
        await kube.patch(path, {"data": {"b": "2"}}, patch_type=PatchType.MERGE)
        current = orjson.loads(await kube.get(path))
        await kube.update(path, {**current, "data": {"c": "3"}})
        await kube.patch(path, {"data": {"d": "4"}}, params={"fieldManager": "someone-else"})
        managed = orjson.loads(await kube.get(path))["metadata"]["managedFields"]
    assert sorted(entry["manager"] for entry in managed) == ["hvpa-test", "someone-else"]


async def test_the_settings_trace_configs_see_each_request(
    apiserver: ApiServer, metrics: KubeMetrics
) -> None:
    """aiohttp's request tracing reaches the session (the benchmarks time a request's send
    with it)."""
    sent: list[tuple[str, str]] = []

    async def headers_sent(_: Any, __: Any, params: aiohttp.TraceRequestHeadersSentParams) -> None:
        sent.append((params.method, params.url.path))

    trace = aiohttp.TraceConfig()
    trace.on_request_headers_sent.append(headers_sent)
    path = CONFIGMAPS.path(namespace="default", name="cfg")
    async with await client_from_kubeconfig(
        metrics=metrics,
        path=str(apiserver.kubeconfig_path),
        settings=ClientSettings(trace_configs=(trace,)),
    ) as kube:
        await kube.create(CM, configmap("cfg", a="1"))
        await kube.patch(path, {"data": {"b": "2"}}, patch_type=PatchType.MERGE)
    assert sent == [("POST", CM), ("PATCH", path)]


def test_a_field_manager_the_api_server_would_refuse_is_refused_early() -> None:
    with pytest.raises(ValueError, match="at most 128"):
        ClientSettings(field_manager="x" * 129)
    with pytest.raises(ValueError, match="printable"):
        ClientSettings(field_manager="tab\there")
