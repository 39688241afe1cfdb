"""The metrics APIs as metrics-server and a custom/external metrics adapter answer them."""

from __future__ import annotations

from apiserver_http import FAKE_NOW, Http
from apiserver_objects import pod

from hvpa.records import format_time
from hvpa.sim.apiserver import ApiServer

PODS_METRICS = "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods"
CUSTOM = "/apis/custom.metrics.k8s.io/v1beta2"
EXTERNAL = "/apis/external.metrics.k8s.io/v1beta1"


def seed_pods(server: ApiServer) -> None:
    server.objects.create("pods", pod("web-1", app="web"))
    server.objects.create("pods", pod("web-2", app="web"))
    server.objects.create("pods", pod("db-1", app="db"))
    for name in ("web-1", "web-2", "db-1", "gone"):
        server.metrics.set_pod_metrics("default", name, {"app": {"cpu": 0.25, "memory": "100Mi"}})


async def test_pod_metrics_carry_pod_labels_and_select_by_them(
    http: Http, server: ApiServer
) -> None:
    seed_pods(server)
    listed = (await http.get(PODS_METRICS, labelSelector="app=web")).body
    assert listed["kind"] == "PodMetricsList"
    assert [m["metadata"]["name"] for m in listed["items"]] == ["web-1", "web-2"]
    item = listed["items"][0]
    assert item["metadata"]["labels"] == {"app": "web"}
    assert item["containers"] == [{"name": "app", "usage": {"cpu": "250m", "memory": "100Mi"}}]
    assert item["timestamp"] == format_time(FAKE_NOW)
    assert item["window"] == "30s"
    one = await http.get(f"{PODS_METRICS}/db-1")
    assert one.body["kind"] == "PodMetrics"
    everywhere = (await http.get("/apis/metrics.k8s.io/v1beta1/pods")).body
    assert len(everywhere["items"]) == 3  # no metrics for a pod that does not exist
    assert (await http.get(f"{PODS_METRICS}/gone")).status == 404
    assert (await http.post(PODS_METRICS, {})).status == 405


async def test_node_metrics(http: Http, server: ApiServer) -> None:
    server.objects.create("nodes", {"metadata": {"name": "n1", "labels": {"zone": "a"}}})
    server.metrics.set_node_metrics("n1", {"cpu": "1500m", "memory": "2Gi"}, window_seconds=15)
    node = (await http.get("/apis/metrics.k8s.io/v1beta1/nodes/n1")).body
    assert node["usage"] == {"cpu": "1500m", "memory": "2Gi"}
    assert node["window"] == "15s"
    none = (await http.get("/apis/metrics.k8s.io/v1beta1/nodes", labelSelector="zone=b")).body
    assert none["items"] == []


async def test_custom_metrics_for_one_object_and_by_selector(http: Http, server: ApiServer) -> None:
    seed_pods(server)
    for name, value in (("web-1", 10), ("web-2", "20"), ("db-1", 5)):
        server.metrics.set_custom_metric("pods", name, "rps", value, namespace="default")
    single = (await http.get(f"{CUSTOM}/namespaces/default/pods/web-1/rps")).body
    assert single["kind"] == "MetricValueList"
    assert single["items"] == [
        {
            "describedObject": {
                "kind": "Pod",
                "namespace": "default",
                "name": "web-1",
                "apiVersion": "/v1",
            },
            "metric": {"name": "rps"},
            "timestamp": format_time(FAKE_NOW),
            "value": "10",
        }
    ]
    selected = (
        await http.get(f"{CUSTOM}/namespaces/default/pods/*/rps", labelSelector="app=web")
    ).body
    assert [(i["describedObject"]["name"], i["value"]) for i in selected["items"]] == [
        ("web-1", "10"),
        ("web-2", "20"),
    ]
    assert (await http.get(f"{CUSTOM}/namespaces/default/pods/*/latency")).status == 404
    discovery = (await http.get(CUSTOM)).body
    assert [r["name"] for r in discovery["resources"]] == ["pods/rps"]


async def test_custom_metrics_for_objects_the_server_does_not_serve(
    http: Http, server: ApiServer
) -> None:
    server.metrics.set_custom_metric(
        "ingresses.networking.k8s.io",
        "front",
        "hits",
        "1k",
        namespace="default",
        metric_labels={"route": "root"},
        object_labels={"app": "web"},
    )
    reply = (
        await http.get(
            f"{CUSTOM}/namespaces/default/ingresses.networking.k8s.io/*/hits",
            labelSelector="app=web",
            metricLabelSelector="route=root",
        )
    ).body
    assert [i["value"] for i in reply["items"]] == ["1k"]
    assert reply["items"][0]["metric"] == {
        "name": "hits",
        "selector": {"matchLabels": {"route": "root"}},
    }
    none = (
        await http.get(
            f"{CUSTOM}/namespaces/default/ingresses.networking.k8s.io/*/hits",
            metricLabelSelector="route=other",
        )
    ).body
    assert none["items"] == []


async def test_external_metrics_select_series_by_labels(http: Http, server: ApiServer) -> None:
    server.metrics.set_external_metric("default", "queue_depth", 30, labels={"queue": "a"})
    server.metrics.set_external_metric("default", "queue_depth", 12, labels={"queue": "b"})
    reply = (
        await http.get(f"{EXTERNAL}/namespaces/default/Queue_Depth", labelSelector="queue=b")
    ).body
    assert reply["kind"] == "ExternalMetricValueList"
    assert reply["items"] == [
        {
            "metricName": "Queue_Depth",
            "metricLabels": {"queue": "b"},
            "timestamp": format_time(FAKE_NOW),
            "value": "12",
        }
    ]
    assert (await http.get(f"{EXTERNAL}/namespaces/other/queue_depth")).status == 404
