"""Metric reads against the in-repo API server's metrics APIs: each query answered as the
HPA controller reads it, and every kind of failure (no adapter metric, a 500 after the
client's retries, a timeout) a MetricReadError with the reason, never an exception.
Hostile names (metric names, described objects) stay inside their path segment, as the
request log shows, or are refused with no request made; an answer that is not the list
asked for, or an item without a value, is no reading."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Final

import orjson
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from prometheus_client import CollectorRegistry

from hvpa.controller.metricsapi import (
    CUSTOM_METRICS,
    MetricsReader,
    RefusedQuery,
    _api_path,
    object_metric_path,
    path_segment,
    pods_metric_path,
)
from hvpa.engine.metrics import (
    ExternalMetricQuery,
    ExternalMetricValueList,
    MetricReadError,
    MetricValueList,
    ObjectMetricQuery,
    PodMetricsList,
    PodsMetricQuery,
    ResourceMetricsQuery,
)
from hvpa.kube.client import KubeClient, client_from_kubeconfig
from hvpa.kube.metrics import KubeMetrics
from hvpa.labels import LabelSelector
from hvpa.sim.apiserver import ApiServer
from hvpa.sim.apiserver.kubeconfig import write_kubeconfig

WEB = LabelSelector.from_dict({"matchLabels": {"app": "web"}})


@pytest.mark.parametrize(
    ("kind", "api_version", "name", "path"),
    [
        pytest.param(
            "Namespace", None, "default", "/namespaces/default/metrics/rps", id="namespace"
        ),
        pytest.param("Service", "v1", "front", "/namespaces/default/services/front/rps", id="core"),
        pytest.param(
            "Deployment",
            "apps/v1",
            "web",
            "/namespaces/default/deployments.apps/web/rps",
            id="apps",
        ),
        pytest.param(
            "Deployment",
            None,
            "web",
            "/namespaces/default/deployments.apps/web/rps",
            id="known-kind",
        ),
        pytest.param(
            "Ingress",
            None,
            "in",
            "/namespaces/default/ingresses.networking.k8s.io/in/rps",
            id="ingress",
        ),
        pytest.param(
            "Queue",
            "mq.example/v1",
            "q",
            "/namespaces/default/queues.mq.example/q/rps",
            id="custom",
        ),
        pytest.param(
            "Policy", "x.io/v1", "p", "/namespaces/default/policies.x.io/p/rps", id="y-plural"
        ),
    ],
)
def test_object_metric_path(kind: str, api_version: str | None, name: str, path: str) -> None:
    query = ObjectMetricQuery("default", api_version, kind, name, "rps", None)
    assert object_metric_path(query) == "/apis/custom.metrics.k8s.io/v1beta2" + path


def pods(server: ApiServer) -> None:
    for name, app in (("web-1", "web"), ("web-2", "web"), ("api-1", "api")):
        server.objects.create(
            "pods",
            {
                "metadata": {"name": name, "labels": {"app": app}},
                "spec": {"containers": [{"name": "app", "image": "a"}]},
            },
        )
        server.metrics.set_pod_metrics("default", name, {"app": {"cpu": "250m", "memory": "64Mi"}})


async def test_each_api_answers(apiserver: ApiServer, kube: KubeClient) -> None:
    pods(apiserver)
    apiserver.metrics.set_custom_metric("pods", "web-1", "rps", "10", namespace="default")
    apiserver.metrics.set_custom_metric("pods", "web-2", "rps", "30", namespace="default")
    apiserver.metrics.set_custom_metric("services", "front", "rps", "2k", namespace="default")
    apiserver.metrics.set_external_metric("default", "queue_length", "42", labels={"queue": "a"})
    apiserver.metrics.set_external_metric("default", "queue_length", "7", labels={"queue": "b"})
    resource = ResourceMetricsQuery("default", WEB)
    per_pod = PodsMetricQuery("default", WEB, "rps", None)
    obj = ObjectMetricQuery("default", "v1", "Service", "front", "rps", None)
    external = ExternalMetricQuery(
        "default", "queue_length", LabelSelector.from_dict({"matchLabels": {"queue": "a"}})
    )
    readings = await MetricsReader(client=kube, timeout_seconds=5).read(
        [resource, per_pod, obj, external, resource]
    )
    assert list(readings) == [resource, per_pod, obj, external]
    metrics = readings[resource]
    assert isinstance(metrics, PodMetricsList)
    assert sorted(p.name for p in metrics.items) == ["web-1", "web-2"]
    assert metrics.items[0].containers[0].usage.cpu == 250
    values = readings[per_pod]
    assert isinstance(values, MetricValueList)
    assert sorted((v.described_name, v.value_milli) for v in values.items) == [
        ("web-1", 10_000),
        ("web-2", 30_000),
    ]
    single = readings[obj]
    assert isinstance(single, MetricValueList)
    assert [v.value_milli for v in single.items] == [2_000_000]
    series = readings[external]
    assert isinstance(series, ExternalMetricValueList)
    assert [v.value_milli for v in series.items] == [42_000]


async def test_an_unknown_metric_is_a_read_error(apiserver: ApiServer, kube: KubeClient) -> None:
    query = ExternalMetricQuery("default", "nothing", None)
    (reading,) = (await MetricsReader(client=kube, timeout_seconds=5).read([query])).values()
    assert isinstance(reading, MetricReadError)
    assert "could not find" in reading.message


@pytest.mark.looptime
async def test_a_failing_server_is_a_read_error(apiserver: ApiServer, kube: KubeClient) -> None:
    apiserver.faults.fail(status=500, times=100, method="GET", path="metrics.k8s.io")
    (reading,) = (
        await MetricsReader(client=kube, timeout_seconds=60).read(
            [ResourceMetricsQuery("default", WEB)]
        )
    ).values()
    assert isinstance(reading, MetricReadError)
    assert "500" in reading.message or "Internal" in reading.message


@pytest.mark.looptime
async def test_a_slow_server_is_a_read_error(apiserver: ApiServer, kube: KubeClient) -> None:
    apiserver.faults.delay(30, method="GET", path="metrics.k8s.io")
    (reading,) = (
        await MetricsReader(client=kube, timeout_seconds=5).read(
            [ResourceMetricsQuery("default", WEB)]
        )
    ).values()
    assert reading == MetricReadError("no answer within 5s")


# -- hostile names: nothing leaves its path segment ----------------------------------------

CUSTOM = "/apis/custom.metrics.k8s.io/v1beta2/namespaces/default"
EXTERNAL = "/apis/external.metrics.k8s.io/v1beta1/namespaces/default"


def _pods(metric: str) -> PodsMetricQuery:
    return PodsMetricQuery("default", WEB, metric, None)


def _object(kind: str, name: str, metric: str = "rps", api_version: str | None = None) -> Any:
    return ObjectMetricQuery("default", api_version, kind, name, metric, None)


# (query, what the request log shows as sent, or None when nothing may be sent). The names
# are the (a Pods metric that climbed to /api/v1/pods, one that opened a watch)
# and the other ways out of a segment: a fragment, a slash or a percent in any field, dot
# segments spelt plainly.
HOSTILE: Final = [
    pytest.param(_pods("../../../../../../../api/v1/pods"), None, id="climb-to-pods"),
    pytest.param(_pods(".."), None, id="dot-dot"),
    pytest.param(_pods("."), None, id="dot"),
    pytest.param(_pods("%2e%2e"), None, id="encoded-dots"),
    # `=` and `&` need no encoding in a path (the client's URL library sends them plain);
    # the `?` that would start a query is what must stay encoded.
    pytest.param(
        _pods("x?watch=true&timeoutSeconds=300&"),
        f"{CUSTOM}/pods/*/x%3Fwatch=true&timeoutSeconds=300&",
        id="query-stays-in-the-name",
    ),
    pytest.param(_pods("rps#frag"), f"{CUSTOM}/pods/*/rps%23frag", id="fragment"),
    pytest.param(_object("Pod/../../../../api/v1", "x"), None, id="kind-with-slash"),
    pytest.param(_object("Service", ".."), None, id="described-name-dot-dot"),
    pytest.param(_object("Service", "a%2Fb"), None, id="described-name-percent"),
    pytest.param(_object("Service", "front", ".."), None, id="object-metric-dot-dot"),
    pytest.param(
        _object("Queue", "q", api_version="evil/../v1"),
        f"{CUSTOM}/queues.evil/q/rps",
        id="api-version-group-only",
    ),
    pytest.param(
        _object("Queue", "q", api_version="a?b/v1"),
        f"{CUSTOM}/queues.a%3Fb/q/rps",
        id="api-version-query",
    ),
    pytest.param(
        ExternalMetricQuery("default", "Queue Length", None),
        f"{EXTERNAL}/queue%20length",
        id="external-space",
    ),
    pytest.param(ExternalMetricQuery("default", "..", None), None, id="external-dot-dot"),
    pytest.param(ExternalMetricQuery("default", "a/b", None), None, id="external-slash"),
]


@pytest.mark.parametrize(("query", "sent"), HOSTILE)
async def test_a_hostile_name_never_leaves_its_segment(
    apiserver: ApiServer, kube: KubeClient, query: Any, sent: str | None
) -> None:
    apiserver.clear_requests()
    (reading,) = (await MetricsReader(client=kube, timeout_seconds=5).read([query])).values()
    paths = [r.raw_path for r in apiserver.requests]
    if sent is None:
        assert paths == []  # nothing was sent
        assert isinstance(reading, MetricReadError)
        assert reading.message.startswith("not requested: ")
        assert "cannot be a path segment" in reading.message
    else:
        assert paths == [sent]
        assert isinstance(reading, MetricReadError)  # the stand-in serves no such metric
        assert "not requested" not in reading.message


def test_the_final_path_is_checked_whatever_built_it() -> None:
    """The whole-path check holds even if a segment slipped through unencoded."""
    with pytest.raises(RefusedQuery, match="not a plain path"):
        _api_path(CUSTOM_METRICS, "default", "pods", "..", ("rps", "metric name"))
    with pytest.raises(RefusedQuery, match="not a plain path"):
        _api_path(CUSTOM_METRICS, "default", "pods?watch=true", ("rps", "metric name"))


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        pytest.param("rps", "rps", id="plain"),
        pytest.param("a b", "a%20b", id="space"),
        pytest.param("q?x=1", "q%3Fx%3D1", id="query"),
        pytest.param("f#g", "f%23g", id="fragment"),
        pytest.param("é", "%C3%A9", id="non-ascii"),
        pytest.param("...", "...", id="three-dots-are-a-name"),
    ],
)
def test_path_segment_encodes(value: str, encoded: str) -> None:
    assert path_segment(value, "metric name") == encoded


@pytest.mark.parametrize(
    ("value", "message"),
    [
        pytest.param("", "may not be ''", id="empty"),
        pytest.param(".", "may not be '.'", id="dot"),
        pytest.param("..", "may not be '..'", id="dot-dot"),
        pytest.param("a/b", "may not contain '/'", id="slash"),
        pytest.param("a%2Fb", "may not contain '%'", id="percent"),
    ],
)
def test_path_segment_refuses(value: str, message: str) -> None:
    """client-go's IsValidPathSegmentName (apimachinery/pkg/api/validation/path) refuses
    the same names: NameMayNotBe and NameMayNotContain."""
    with pytest.raises(RefusedQuery, match=re.escape(message)):
        path_segment(value, "metric name")


# -- answers that are not the list asked for --------------------------------------------------


@pytest.fixture
async def stand_in(tmp_path: Path) -> AsyncIterator[tuple[dict[str, bytes], KubeClient]]:
    """A server that answers each path with a body the test sets (404 for the rest)."""
    bodies: dict[str, bytes] = {}

    async def answer(request: web.Request) -> web.Response:
        body = bodies.get(request.path)
        if body is None:
            return web.Response(status=404, text="no such path")
        return web.Response(body=body, content_type="application/json")

    app = web.Application()
    app.router.add_get("/{tail:.*}", answer)
    server = TestServer(app)
    await server.start_server()
    kubeconfig = write_kubeconfig(
        tmp_path / "kubeconfig", server=str(server.make_url("")).rstrip("/"), token="t"
    )
    client = await client_from_kubeconfig(
        metrics=KubeMetrics(CollectorRegistry()), path=str(kubeconfig)
    )
    try:
        async with client:
            yield bodies, client
    finally:
        await server.close()


def _list(kind: str, api_version: str, items: list[dict[str, Any]]) -> bytes:
    return orjson.dumps({"kind": kind, "apiVersion": api_version, "metadata": {}, "items": items})


VALUE_LIST: Final = ("MetricValueList", "custom.metrics.k8s.io/v1beta2")
POD_OBJECT: Final = {"metadata": {"name": "web-1", "namespace": "default"}, "spec": {}}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        pytest.param(
            _list(*VALUE_LIST, [{"describedObject": {"name": "web-1"}, "metricName": "rps"}]),
            "missing required field `value`",
            id="item-without-value",
        ),
        pytest.param(
            _list("PodList", "v1", [POD_OBJECT]),
            "answered with v1 PodList, not custom.metrics.k8s.io/v1beta2 MetricValueList",
            id="a-pod-list",
        ),
        pytest.param(
            orjson.dumps({"items": [{"value": "1"}]}),
            "answered with (no apiVersion) (no kind)",
            id="no-kind",
        ),
    ],
)
async def test_an_answer_that_is_not_a_metric_is_no_reading(
    stand_in: tuple[dict[str, bytes], KubeClient], body: bytes, message: str
) -> None:
    """Upstream's custom metrics client decodes by kind (`didn't return MetricValueList`);
    a value decoded as 0 from nothing would have made the metric count as valid."""
    bodies, client = stand_in
    query = _pods("rps")
    bodies[pods_metric_path(query)] = body
    (reading,) = (await MetricsReader(client=client, timeout_seconds=5).read([query])).values()
    assert isinstance(reading, MetricReadError)
    assert message in reading.message


async def test_an_object_metric_is_one_value(
    stand_in: tuple[dict[str, bytes], KubeClient],
) -> None:
    """versioned_client.go GetForObject: more than one item for one object is an error."""
    bodies, client = stand_in
    query = _object("Service", "front")
    item = {"describedObject": {"name": "front"}, "value": "1"}
    bodies[object_metric_path(query)] = _list(*VALUE_LIST, [item, item])
    (reading,) = (await MetricsReader(client=client, timeout_seconds=5).read([query])).values()
    assert reading == MetricReadError(
        "cannot read the answer: the custom metrics API server returned 2 results when we "
        "asked for exactly one"
    )


async def test_an_answer_past_its_bound_is_a_failed_reading(
    apiserver: ApiServer, kube: KubeClient
) -> None:
    """The client stops reading at the bound (ResponseTooLarge); the reading says so."""
    pods(apiserver)
    reader = MetricsReader(client=kube, timeout_seconds=5, max_response_bytes=200)
    (reading,) = (await reader.read([ResourceMetricsQuery("default", WEB)])).values()
    assert isinstance(reading, MetricReadError)
    assert "larger than 200 bytes" in reading.message
    # The same answer within the default bound is read.
    (whole,) = (
        await MetricsReader(client=kube, timeout_seconds=5).read(
            [ResourceMetricsQuery("default", WEB)]
        )
    ).values()
    assert isinstance(whole, PodMetricsList) and len(whole.items) == 2
