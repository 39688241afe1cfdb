"""`kubectl get`'s Table answers: the columns and cells of each kind as the real server prints them.

The expected columns and cells were read off a real kube-apiserver v1.37.2 given the same
objects (ages aside: the real ones were counted from a wall clock, these from the test's
fixed clock, FAKE_NOW, with timestamps set relative to it).
"""

from __future__ import annotations

from typing import Any

from apiserver_http import FAKE_NOW, Http
from apiserver_objects import widget

from hvpa.records import format_time
from hvpa.sim.apiserver import ApiServer

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
NS = "/api/v1/namespaces/default"
TEMPLATE = {
    "metadata": {"labels": {"app": "web"}},
    "spec": {
        "containers": [
            {"name": "web", "image": "nginx:1.25"},
            {"name": "side", "image": "busybox:1.36"},
        ]
    },
}


def ago(seconds: float) -> str:
    return format_time(FAKE_NOW - seconds)


async def table(http: Http, path: str, **params: str) -> dict[str, Any]:
    reply = await http.call("GET", path, params=params or None, headers={"Accept": TABLE})
    assert reply.status == 200, reply.body
    assert reply.body["kind"] == "Table"
    result: dict[str, Any] = reply.body
    return result


def columns(result: dict[str, Any]) -> list[tuple[str, str, str, int]]:
    return [(c["name"], c["type"], c["format"], c["priority"]) for c in result["columnDefinitions"]]


async def test_workload_tables(server: ApiServer, http: Http) -> None:
    selector = {"matchLabels": {"app": "web"}}
    status = {"replicas": 3, "updatedReplicas": 2, "readyReplicas": 1, "availableReplicas": 1}
    spec = {"replicas": 3, "selector": selector, "template": TEMPLATE}
    server.objects.create(
        "deployments",
        {"metadata": {"name": "web"}, "spec": spec, "status": status},
        keep_status=True,
    )
    server.objects.create(
        "replicasets",
        {
            "metadata": {"name": "web-abc"},
            "spec": spec,
            "status": {"replicas": 3, "readyReplicas": 2},
        },
        keep_status=True,
    )
    server.objects.create(
        "statefulsets",
        {
            "metadata": {"name": "db"},
            "spec": {**spec, "replicas": 2, "serviceName": "db"},
            "status": {"replicas": 2, "readyReplicas": 1},
        },
        keep_status=True,
    )
    deployments = await table(http, "/apis/apps/v1/namespaces/default/deployments")
    assert columns(deployments) == [
        ("Name", "string", "name", 0),
        ("Ready", "string", "", 0),
        ("Up-to-date", "string", "", 0),
        ("Available", "string", "", 0),
        ("Age", "string", "", 0),
        ("Containers", "string", "", 1),
        ("Images", "string", "", 1),
        ("Selector", "string", "", 1),
    ]
    assert [r["cells"] for r in deployments["rows"]] == [
        ["web", "1/3", 2, 1, "0s", "web,side", "nginx:1.25,busybox:1.36", "app=web"]
    ]
    replicasets = await table(http, "/apis/apps/v1/namespaces/default/replicasets")
    assert [c[0] for c in columns(replicasets)][:5] == [
        "Name",
        "Desired",
        "Current",
        "Ready",
        "Age",
    ]
    assert [r["cells"] for r in replicasets["rows"]] == [
        ["web-abc", 3, 3, 2, "0s", "web,side", "nginx:1.25,busybox:1.36", "app=web"]
    ]
    statefulsets = await table(http, "/apis/apps/v1/namespaces/default/statefulsets")
    assert [r["cells"] for r in statefulsets["rows"]] == [
        ["db", "1/2", "0s", "web,side", "nginx:1.25,busybox:1.36"]
    ]


async def test_pod_table(server: ApiServer, http: Http) -> None:
    crashing = {
        "phase": "Running",
        "podIP": "10.0.0.5",
        "conditions": [{"type": "Ready", "status": "False"}],
        "containerStatuses": [
            {
                "name": "web",
                "ready": True,
                "restartCount": 2,
                "state": {"running": {"startedAt": ago(3600)}},
                "lastState": {
                    "terminated": {"exitCode": 137, "reason": "OOMKilled", "finishedAt": ago(481)}
                },
            },
            {
                "name": "side",
                "ready": False,
                "restartCount": 1,
                "state": {"waiting": {"reason": "CrashLoopBackOff"}},
            },
        ],
    }
    server.objects.create(
        "pods",
        {"metadata": {"name": "p1"}, "spec": TEMPLATE["spec"], "status": crashing},
        keep_status=True,
    )
    server.objects.create(
        "pods",
        {
            "metadata": {"name": "p2"},
            "spec": {"nodeName": "n1", "containers": TEMPLATE["spec"]["containers"][:1]},
        },
    )
    pods = await table(http, f"{NS}/pods")
    assert columns(pods) == [
        ("Name", "string", "name", 0),
        ("Ready", "string", "", 0),
        ("Status", "string", "", 0),
        ("Restarts", "string", "", 0),
        ("Age", "string", "", 0),
        ("IP", "string", "", 1),
        ("Node", "string", "", 1),
        ("Nominated Node", "string", "", 1),
        ("Readiness Gates", "string", "", 1),
    ]
    # The real server showed "3 (8m1s ago)" for a restart 481 s before its clock.
    assert [r["cells"] for r in pods["rows"]] == [
        [
            "p1",
            "1/2",
            "CrashLoopBackOff",
            "3 (8m1s ago)",
            "0s",
            "10.0.0.5",
            "<none>",
            "<none>",
            "<none>",
        ],
        ["p2", "0/1", "Pending", "0", "0s", "<none>", "n1", "<none>", "<none>"],
    ]
    server.objects.delete("pods", "p2")  # scheduled: only marked for deletion
    terminating = await table(http, f"{NS}/pods/p2")
    assert terminating["rows"][0]["cells"][2] == "Terminating"


async def test_node_lease_configmap_namespace_and_hpa_tables(server: ApiServer, http: Http) -> None:
    server.objects.create(
        "nodes",
        {
            "metadata": {"name": "n1", "labels": {"node-role.kubernetes.io/worker": ""}},
            "status": {
                "conditions": [{"type": "Ready", "status": "True"}],
                "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}],
                "nodeInfo": {
                    "kubeletVersion": "v1.32.0",
                    "kernelVersion": "6.1",
                    "osImage": "Debian",
                    "containerRuntimeVersion": "containerd://1.7",
                    "architecture": "amd64",
                },
            },
        },
    )
    server.objects.create(
        "leases", {"metadata": {"name": "hvpa"}, "spec": {"holderIdentity": "pod-a_123"}}
    )
    server.objects.create("configmaps", {"metadata": {"name": "cm"}, "data": {"a": "1", "b": "2"}})
    server.objects.create(
        "horizontalpodautoscalers",
        {
            "metadata": {"name": "web"},
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "minReplicas": 1,
                "maxReplicas": 5,
                "metrics": [
                    {
                        "type": "Resource",
                        "resource": {
                            "name": "cpu",
                            "target": {"type": "Utilization", "averageUtilization": 60},
                        },
                    }
                ],
            },
            "status": {
                "currentReplicas": 3,
                "currentMetrics": [
                    {
                        "type": "Resource",
                        "resource": {"name": "cpu", "current": {"averageUtilization": 75}},
                    }
                ],
            },
        },
        keep_status=True,
    )
    nodes = await table(http, "/api/v1/nodes")
    assert [r["cells"] for r in nodes["rows"]] == [
        [
            "n1",
            "Ready",
            "worker",
            "0s",
            "v1.32.0",
            "10.0.0.1",
            "<none>",
            "Debian",
            "6.1 (amd64)",
            "containerd://1.7",
        ]
    ]
    leases = await table(http, "/apis/coordination.k8s.io/v1/namespaces/default/leases")
    assert [r["cells"] for r in leases["rows"]] == [["hvpa", "pod-a_123", "0s"]]
    configmaps = await table(http, f"{NS}/configmaps")
    assert [r["cells"] for r in configmaps["rows"]] == [["cm", 2, "0s"]]
    namespaces = await table(http, "/api/v1/namespaces")
    assert ["default", "Active", "0s"] in [r["cells"] for r in namespaces["rows"]]
    hpas = await table(http, "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers")
    assert [r["cells"] for r in hpas["rows"]] == [
        ["web", "Deployment/web", "cpu: 75%/60%", "1", 5, 3, "0s"]
    ]


async def test_event_tables(server: ApiServer, http: Http) -> None:
    server.objects.create(
        "events",
        {
            "metadata": {"name": "web.1"},
            "involvedObject": {"kind": "Hvpa", "namespace": "default", "name": "web"},
            "reason": "SuccessfulRescale",
            "message": "New size: 4",
            "type": "Normal",
            "source": {"component": "hvpa"},
            "firstTimestamp": ago(1920),
            "lastTimestamp": ago(176),
            "count": 3,
        },
    )
    server.objects.create(
        "events",
        {
            "metadata": {"name": "web.2"},
            "involvedObject": {"kind": "Pod", "name": "p1", "fieldPath": "spec.containers{web}"},
            "reason": "Pulled",
            "message": "pulled",
            "type": "Warning",
            "source": {"component": "kubelet", "host": "n1"},
            "firstTimestamp": ago(720),
            "lastTimestamp": ago(720),
        },
    )
    server.objects.create(
        "events.events.k8s.io",
        {
            "metadata": {"name": "web.3"},
            "regarding": {"kind": "Deployment", "name": "web"},
            "reason": "ScalingReplicaSet",
            "note": "Scaled up",
            "type": "Normal",
            "reportingController": "deployment-controller",
            "reportingInstance": "kcm-1",
            "eventTime": format_time(FAKE_NOW - 116).replace("Z", ".000000Z"),
        },
    )
    core = await table(http, f"{NS}/events")
    assert [c[0] for c in columns(core)] == [
        "Last Seen",
        "Type",
        "Reason",
        "Object",
        "Subobject",
        "Source",
        "Message",
        "First Seen",
        "Count",
        "Name",
    ]
    assert [r["cells"] for r in core["rows"]] == [
        [
            "2m56s",
            "Normal",
            "SuccessfulRescale",
            "hvpa/web",
            "",
            "hvpa",
            "New size: 4",
            "32m",
            3,
            "web.1",
        ],
        [
            "12m",
            "Warning",
            "Pulled",
            "pod/p1",
            "spec.containers{web}",
            "kubelet, n1",
            "pulled",
            "12m",
            1,
            "web.2",
        ],
    ]
    v1 = await table(http, "/apis/events.k8s.io/v1/namespaces/default/events")
    assert [r["cells"] for r in v1["rows"]] == [
        [
            "116s",
            "Normal",
            "ScalingReplicaSet",
            "deployment/web",
            "",
            "deployment-controller, kcm-1",
            "Scaled up",
            "116s",
            1,
            "web.3",
        ]
    ]


async def test_custom_resource_tables_follow_the_crds_columns(
    server: ApiServer, http: Http, widgets: str
) -> None:
    spec = {
        "size": 3,
        "ratio": 1.5,
        "mode": "A",
        "enabled": True,
        "when": ago(329 * 86400),
        "tags": ["x", "y"],
        "free": {"k": "v"},
    }
    await http.post(widgets, {**widget("full"), "spec": spec})
    # 2.0, not 2: an integer meets multipleOf 0.5 truncated to 0 (the real server's quirk).
    await http.post(widgets, widget("bare", ratio=2.0))
    widget_table = await table(http, widgets)
    assert columns(widget_table) == [
        ("Name", "string", "name", 0),
        ("Size", "integer", "", 0),
        ("Ratio", "number", "", 0),
        ("Mode", "string", "", 0),
        ("Enabled", "boolean", "", 0),
        ("When", "date", "", 0),
        ("Tag", "string", "", 1),
        ("Free", "string", "", 0),
        ("Age", "date", "", 0),
    ]
    descriptions = [c["description"] for c in widget_table["columnDefinitions"]]
    assert descriptions[1] == "Custom resource definition column (in JSONPath format): .spec.size"
    assert descriptions[3] == "the mode"
    # A string column shows a list or a map as JSON; a number column an integral value bare.
    assert [r["cells"] for r in widget_table["rows"]] == [
        ["bare", 1, 2, None, None, None, None, None, "0s"],
        ["full", 3, 1.5, "A", True, "329d", '["x","y"]', '{"k":"v"}', "0s"],
    ]
    assert widget_table["rows"][0]["object"]["kind"] == "PartialObjectMetadata"
    crds = await table(http, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions")
    widget_crd = next(r["cells"] for r in crds["rows"] if r["cells"][0] == "widgets.example.com")
    assert widget_crd == [
        "widgets.example.com",
        "Namespaced",
        "v1(storage)",
        format_time(FAKE_NOW),
        "example.com",
        "Widget",
        "wd",
        True,
    ]


async def test_hvpa_and_vpa_tables(server: ApiServer, http: Http) -> None:
    hvpas = await table(http, "/apis/autoscaling.k8s.io/v1alpha1/hvpas")
    assert [c[0] for c in columns(hvpas)] == [
        "Name",
        "Target",
        "Strategy",
        "Desired",
        "Current",
        "Age",
    ]
    vpas = await table(http, "/apis/autoscaling.k8s.io/v1/verticalpodautoscalers")
    assert [c[0] for c in columns(vpas)] == ["Name", "Mode", "CPU", "Mem", "Provided", "Age"]
    server.objects.create(
        "verticalpodautoscalers",
        {
            "metadata": {"name": "web-vpa"},
            "spec": {
                "targetRef": {"kind": "Deployment", "name": "web"},
                "updatePolicy": {"updateMode": "Off"},
            },
            "status": {
                "recommendation": {
                    "containerRecommendations": [
                        {"containerName": "app", "target": {"cpu": "250m", "memory": "256Mi"}}
                    ]
                },
                "conditions": [{"type": "RecommendationProvided", "status": "True"}],
            },
        },
        keep_status=True,
    )
    vpas = await table(
        http, "/apis/autoscaling.k8s.io/v1/namespaces/default/verticalpodautoscalers"
    )
    assert [r["cells"] for r in vpas["rows"]] == [["web-vpa", "Off", "250m", "256Mi", "True", "0s"]]


async def test_tables_page_and_include_objects(server: ApiServer, http: Http) -> None:
    for name in ("a", "b", "c"):
        server.objects.create("configmaps", {"metadata": {"name": name}})
    first = await table(http, f"{NS}/configmaps", limit="2", includeObject="Object")
    assert [r["cells"][0] for r in first["rows"]] == ["a", "b"]
    assert first["metadata"]["remainingItemCount"] == 1
    assert first["rows"][0]["object"]["kind"] == "ConfigMap"
    rest = await table(
        http, f"{NS}/configmaps", limit="2", **{"continue": first["metadata"]["continue"]}
    )
    assert [r["cells"][0] for r in rest["rows"]] == ["c"]
    bare = await table(http, f"{NS}/configmaps/a", includeObject="None")
    assert "object" not in bare["rows"][0]


async def test_a_table_watch_sends_headers_once(server: ApiServer, http: Http) -> None:
    server.objects.create("configmaps", {"metadata": {"name": "a"}})
    async with http.session.get(
        http.base + f"{NS}/configmaps",
        params={"watch": "true", "timeoutSeconds": "1"},
        headers={"Accept": TABLE},
    ) as response:
        first = await response.content.readline()
        server.objects.create("configmaps", {"metadata": {"name": "b"}})
        second = await response.content.readline()
    import orjson

    added, later = orjson.loads(first), orjson.loads(second)
    assert added["object"]["kind"] == "Table"
    assert [c["name"] for c in added["object"]["columnDefinitions"]] == ["Name", "Data", "Age"]
    assert added["object"]["rows"][0]["cells"][0] == "a"
    assert later["object"]["columnDefinitions"] is None
    assert later["object"]["rows"][0]["cells"][0] == "b"
