"""Metric reads against the in-repo API server's metrics APIs: each query answered as the
HPA controller reads it, and every kind of failure (no adapter metric, a 500 after the
client's retries, a timeout) a MetricReadError with the reason, never an exception."""

from __future__ import annotations

import pytest

from hvpa.controller.metricsapi import MetricsReader, object_metric_path
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
from hvpa.kube.client import KubeClient
from hvpa.labels import LabelSelector
from hvpa.sim.apiserver import ApiServer

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
