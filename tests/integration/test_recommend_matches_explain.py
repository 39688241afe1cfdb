"""One input path: `hvpa recommend` on the cluster's objects decides what `hvpa explain` decides.

A cluster in the in-repo API server with everything a decision reads: a
Deployment and its pods, PodMetrics, a Pods metric, an Object metric, two
External series (one selected), nodes (one NotReady, one cordoned) and
cluster-proportional parameters in a ConfigMap, the VPA the Hvpa owns with a
recommendation, a VPA it does not own (Off, so no conflict), an HPA on
another Deployment and an Hvpa on another target. `hvpa explain` decides
from plain reads of the API (HTTP, the metrics APIs included); the same
objects, as the API prints them, make a scenario for `hvpa recommend`'s
loader. The two decisions, explanation included, must be identical.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from integration_cluster import Load, MiniCluster
from integration_helpers import VIRTUAL_TIME, hvpa_manifest, recommend
from prometheus_client import CollectorRegistry

from hvpa.controller.explain import explain
from hvpa.engine.decide import decide
from hvpa.engine.decision import decision_to_dict
from hvpa.engine.settings import Settings as EngineSettings
from hvpa.kube.client import client_from_kubeconfig
from hvpa.kube.metrics import KubeMetrics
from hvpa.labels import LabelSelector
from hvpa.records import format_time
from hvpa.scenario import parse_scenario
from hvpa.sim.apiserver import ApiServer

pytestmark = VIRTUAL_TIME

NAMESPACE = "default"
ALL = LabelSelector()


def _node(name: str, *, ready: str = "True", cordoned: bool = False) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"pool": "web"}},
        "spec": {"unschedulable": cordoned},
        "status": {
            "allocatable": {"cpu": "4", "memory": "16Gi"},
            "conditions": [{"type": "Ready", "status": ready}],
        },
    }


def _hvpa() -> dict[str, Any]:
    manifest = hvpa_manifest(vpa=True, vpa_weight=50, max_replicas=8)
    template = manifest["spec"]["hpa"]["template"]["spec"]
    template["metrics"] += [
        {
            "type": "Pods",
            "pods": {
                "metric": {"name": "qps"},
                "target": {"type": "AverageValue", "averageValue": "10"},
            },
        },
        {
            "type": "Object",
            "object": {
                "describedObject": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "api"},
                "metric": {"name": "rps"},
                "target": {"type": "Value", "value": "100"},
            },
        },
        {
            "type": "External",
            "external": {
                "metric": {"name": "Queue_Depth", "selector": {"matchLabels": {"queue": "web"}}},
                "target": {"type": "AverageValue", "averageValue": "30"},
            },
        },
    ]
    manifest["spec"]["clusterProportional"] = {
        "configMapRef": {"name": "web-autoscaler"},
        "nodeSelector": {"pool": "web"},
    }
    return manifest


def _setup(apiserver: ApiServer, cluster: MiniCluster) -> None:
    objects, metrics = apiserver.objects, apiserver.metrics
    cluster.deployment(
        "web", replicas=2, requests={"cpu": "100m", "memory": "64Mi"}, load=Load(cpu_millicores=150)
    )
    cluster.deployment("api", replicas=1, requests={"cpu": "100m", "memory": "64Mi"})
    hvpa = objects.create("hvpas", _hvpa(), namespace=NAMESPACE)
    uid = hvpa["metadata"]["uid"]
    objects.create(
        "verticalpodautoscalers",
        {
            "apiVersion": "autoscaling.k8s.io/v1",
            "kind": "VerticalPodAutoscaler",
            "metadata": {
                "name": "web-vpa",
                "labels": {"role": "web-vpa"},
                "ownerReferences": [
                    {
                        "apiVersion": "autoscaling.k8s.io/v1alpha1",
                        "kind": "Hvpa",
                        "name": "web",
                        "uid": uid,
                        "controller": True,
                    }
                ],
            },
            "spec": {
                "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "updatePolicy": {"updateMode": "Off"},
            },
        },
        namespace=NAMESPACE,
    )
    recommend(apiserver, cpu="300m", memory="128Mi")
    objects.create(
        "verticalpodautoscalers",
        {
            "apiVersion": "autoscaling.k8s.io/v1",
            "kind": "VerticalPodAutoscaler",
            "metadata": {"name": "someone-elses"},
            "spec": {
                "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "updatePolicy": {"updateMode": "Off"},
            },
        },
        namespace=NAMESPACE,
    )
    objects.create(
        "horizontalpodautoscalers.autoscaling",
        {
            "apiVersion": "autoscaling/v2",
            "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "api"},
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "api"},
                "maxReplicas": 3,
            },
        },
        namespace=NAMESPACE,
    )
    objects.create("hvpas", hvpa_manifest("api", target="api"), namespace=NAMESPACE)
    for node in (_node("n1"), _node("n2"), _node("n3", ready="False"), _node("n4", cordoned=True)):
        objects.create("nodes", node)
    objects.create(
        "configmaps",
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "web-autoscaler"},
            "data": {"linear": '{"nodesPerReplica": 1, "min": 1}'},
        },
        namespace=NAMESPACE,
    )
    for pod in objects.list("pods", namespace=NAMESPACE, label_selector="app=web"):
        metrics.set_custom_metric("pods", pod["metadata"]["name"], "qps", "25", namespace=NAMESPACE)
    metrics.set_custom_metric("deployments.apps", "api", "rps", "150", namespace=NAMESPACE)
    metrics.set_external_metric(NAMESPACE, "queue_depth", "100", labels={"queue": "web"})
    metrics.set_external_metric(NAMESPACE, "queue_depth", "900", labels={"queue": "batch"})


def _scenario(apiserver: ApiServer, now: float) -> dict[str, Any]:
    """The cluster's objects as the API prints them, the metrics APIs' answers included."""
    objects, metrics = apiserver.objects, apiserver.metrics
    autoscalers = objects.list("horizontalpodautoscalers.autoscaling", namespace=NAMESPACE)
    vpas = objects.list("verticalpodautoscalers", namespace=NAMESPACE)
    hvpas = objects.list("hvpas", namespace=NAMESPACE)
    return {
        "now": format_time(now),
        "hvpa": next(h for h in hvpas if h["metadata"]["name"] == "web"),
        "target": objects.get("deployments.apps", "web", namespace=NAMESPACE),
        "pods": objects.list("pods", namespace=NAMESPACE),
        "podMetrics": metrics.pod_metrics(NAMESPACE, None, ALL),
        "customMetrics": metrics.custom_metric_values("pods", NAMESPACE, "*", "qps", ALL, ALL)
        + metrics.custom_metric_values("deployments.apps", NAMESPACE, "api", "rps", ALL, ALL),
        "externalMetrics": metrics.external_metric_values(NAMESPACE, "queue_depth", ALL),
        "nodes": objects.list("nodes"),
        "configMaps": objects.list("configmaps", namespace=NAMESPACE),
        "vpa": next(v for v in vpas if v["metadata"]["name"] == "web-vpa"),
        "autoscalers": [
            *autoscalers,
            *(v for v in vpas if v["metadata"]["name"] != "web-vpa"),
        ],
        "otherHvpas": [h for h in hvpas if h["metadata"]["name"] != "web"],
    }


async def test_recommend_decides_on_the_clusters_objects_as_explain_does(
    apiserver: ApiServer, cluster: MiniCluster, clock: Callable[[], float]
) -> None:
    _setup(apiserver, cluster)
    now = float(int(clock()))
    client = await client_from_kubeconfig(
        metrics=KubeMetrics(CollectorRegistry()), path=str(apiserver.kubeconfig_path)
    )
    async with client:
        live = await explain(
            client=client,
            namespace=NAMESPACE,
            name="web",
            engine=EngineSettings(),
            clock=lambda: now,
            metrics_timeout_seconds=5,
        )
    loaded = parse_scenario(_scenario(apiserver, now))
    offline = decide(loaded.hvpa, loaded.snapshot, loaded.now, EngineSettings())

    explained = decision_to_dict(live)
    recommended = decision_to_dict(offline)
    assert recommended == explained
    # The decision read every input: each metric, the CPA's schedulable nodes, the VPA.
    metrics = explained["horizontal"]["metrics"]
    assert [m["type"] for m in metrics] == ["Resource", "Pods", "Object", "External"]
    assert all(m.get("error") is None for m in metrics), metrics
    assert explained["horizontal"]["clusterProportional"] == 2
    assert explained["vertical"]["containers"], explained["explanation"]
