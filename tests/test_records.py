"""Slim records: what is kept from each object, interning, rollout detection, and what an
unreadable field does (RecordError, or an `unreadable` entry naming it)."""

import re
from collections.abc import Callable
from typing import Any

import msgspec
import orjson
import pytest

from hvpa.records import (
    PodWire,
    RecordError,
    Resources,
    UnreadableInput,
    check_readable,
    decode_node,
    decode_pod,
    decode_pod_metrics,
    decode_target,
    decode_vpa,
    parse_time,
    pod_from_wire,
    pod_wire_digest,
    pod_with_version,
)


def pod(name: str, **status: object) -> dict[str, object]:
    return {
        "metadata": {
            "name": name,
            "namespace": "shop",
            "labels": {"app": "web", "pod-template-hash": "abc"},
            "managedFields": [{"manager": "kubelet", "fieldsV1": {"f:status": {}}}],
            "ownerReferences": [
                {"uid": "rs-1", "controller": True, "kind": "ReplicaSet", "name": "web-abc"}
            ],
        },
        "spec": {
            "nodeName": "node-a",
            "containers": [
                {
                    "name": "app",
                    "image": "web:1",
                    "resources": {
                        "requests": {"cpu": "500m", "memory": "1Gi"},
                        "limits": {"memory": "2Gi"},
                    },
                }
            ],
            "initContainers": [
                {"name": "init", "resources": {"requests": {"cpu": "1"}}},
                {
                    "name": "proxy",
                    "restartPolicy": "Always",
                    "resources": {"requests": {"cpu": "100m", "ephemeral-storage": "1Gi"}},
                },
            ],
        },
        "status": {
            "phase": "Running",
            "startTime": "2026-11-21T10:00:00Z",
            "conditions": [
                {"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-21T10:00:20Z"}
            ],
            **status,
        },
    }


def test_pod_keeps_what_the_engine_needs() -> None:
    record = decode_pod(pod("web-0"))
    assert record.key == "shop/web-0"
    assert record.phase == "Running" and not record.deleting
    assert record.ready == "True"
    assert record.ready_transition is not None and record.start_time is not None
    assert record.ready_transition - record.start_time == 20
    assert [c.name for c in record.containers] == [
        "app",
        "proxy",
    ]  # plain init containers are dropped
    app, proxy = record.containers
    assert (app.requests.cpu, app.requests.memory, app.limits.memory) == (
        500,
        1073741824000,
        2147483648000,
    )
    assert proxy.sidecar and proxy.other_requests == ("ephemeral-storage",)
    assert record.owner_uid == "rs-1"


def test_pods_of_one_template_share_labels_and_containers() -> None:
    first, second = decode_pod(pod("web-0")), decode_pod(pod("web-1"))
    assert first.labels is second.labels
    assert first.containers is second.containers


def _set_limit(obj: dict[str, Any]) -> None:
    obj["spec"]["containers"][0]["resources"]["limits"]["memory"] = "3Gi"


def _set_request(obj: dict[str, Any]) -> None:
    obj["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "600m"


def _plain_init(obj: dict[str, Any]) -> None:
    del obj["spec"]["initContainers"][1]["restartPolicy"]


def _rename(obj: dict[str, Any]) -> None:
    obj["spec"]["containers"][0]["name"] = "main"


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        pytest.param(_set_limit, ("app", 500, 3 * 2**30 * 1000, "proxy"), id="limit"),
        pytest.param(_set_request, ("app", 600, 2 * 2**30 * 1000, "proxy"), id="request"),
        pytest.param(_plain_init, ("app", 500, 2 * 2**30 * 1000, None), id="sidecar-no-more"),
        pytest.param(_rename, ("main", 500, 2 * 2**30 * 1000, "proxy"), id="name"),
    ],
)
def test_pods_whose_containers_differ_get_their_own_specs(
    change: Callable[[dict[str, Any]], None], expected: tuple[object, ...]
) -> None:
    """Container specs are cached by their raw fields: any field that changes a spec misses."""
    decode_pod(pod("web-0"))  # fills the cache with the template's specs
    changed = pod("web-1")
    change(changed)
    app, *sidecars = decode_pod(changed).containers
    proxy = sidecars[0].name if sidecars else None
    assert (app.name, app.requests.cpu, app.limits.memory, proxy) == expected


def test_wire_decode_from_bytes_matches_dict_decode() -> None:
    raw = orjson.dumps(pod("web-0"))
    assert pod_from_wire(msgspec.json.decode(raw, type=PodWire)) == decode_pod(orjson.loads(raw))


def test_oom_kill_is_recorded() -> None:
    record = decode_pod(
        pod(
            "web-0",
            containerStatuses=[
                {
                    "name": "app",
                    "lastState": {
                        "terminated": {"reason": "OOMKilled", "finishedAt": "2026-11-21T11:00:00Z"}
                    },
                }
            ],
        )
    )
    assert [(k.container, k.finished_at is not None) for k in record.oom_kills] == [("app", True)]


def test_pod_level_requests() -> None:
    """spec.resources.requests (PodLevelResources): cpu and memory, none when the pod sets none."""
    assert decode_pod(pod("web-0")).requests == Resources()
    with_pod_level = pod("web-0")
    with_pod_level["spec"]["resources"] = {"requests": {"cpu": "2", "memory": "1Gi"}}  # type: ignore[index]
    assert decode_pod(with_pod_level).requests == Resources(cpu=2000, memory=1073741824000)


def test_bad_quantity_names_the_field() -> None:
    bad = pod("web-0")
    bad["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "lots"  # type: ignore[index]
    with pytest.raises(RecordError, match=r"containers\[app\]\.resources\.requests\.cpu"):
        decode_pod(bad)


def test_node() -> None:
    record = decode_node(
        {
            "metadata": {"name": "n1", "labels": {"pool": "a"}},
            "spec": {"unschedulable": True},
            "status": {
                "allocatable": {"cpu": "3920m", "memory": "15Gi"},
                "conditions": [{"type": "Ready", "status": "False"}],
            },
        }
    )
    assert (record.unschedulable, record.ready, record.allocatable.cpu) == (True, "False", 3920)


def deployment(**status: object) -> dict[str, object]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop", "generation": 3, "uid": "d-1"},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "app"}]},
            },
        },
        "status": {
            "observedGeneration": 3,
            "replicas": 3,
            "updatedReplicas": 3,
            "readyReplicas": 3,
            "availableReplicas": 3,
            **status,
        },
    }


@pytest.mark.parametrize(
    ("status", "reason"),
    [
        pytest.param({}, None, id="settled"),
        pytest.param({"observedGeneration": 2}, "not yet observed", id="unobserved"),
        pytest.param({"updatedReplicas": 1}, "1 of 3 replicas updated", id="updating"),
        pytest.param({"replicas": 4}, "old replicas pending termination", id="old-pods"),
        pytest.param(
            {"availableReplicas": 2}, "2 of 3 updated replicas available", id="unavailable"
        ),
    ],
)
def test_rollout_in_progress(status: dict[str, object], reason: str | None) -> None:
    found = decode_target(deployment(**status)).rollout_in_progress()
    assert (found is None) if reason is None else (found is not None and reason in found)


def test_target_selector_and_default_replicas() -> None:
    obj = deployment()
    del obj["spec"]["replicas"]  # type: ignore[attr-defined]
    record = decode_target(obj)
    assert record.spec_replicas == 1
    assert record.selector.matches({"app": "web"})


def test_vpa_policies_and_recommendation() -> None:
    record = decode_vpa(
        {
            "metadata": {"name": "v", "namespace": "shop"},
            "spec": {
                "targetRef": {"kind": "Deployment", "name": "web"},
                "updatePolicy": {"updateMode": "Off"},
                "resourcePolicy": {
                    "containerPolicies": [
                        {
                            "containerName": "*",
                            "minAllowed": {"cpu": "100m"},
                            "controlledValues": "RequestsOnly",
                        }
                    ]
                },
            },
            "status": {
                "recommendation": {
                    "containerRecommendations": [
                        {"containerName": "app", "target": {"cpu": "1", "memory": "1G"}}
                    ]
                },
                "conditions": [{"type": "RecommendationProvided", "status": "True"}],
            },
        }
    )
    assert record.update_mode == "Off"
    assert record.container_policies[0].controlled_values == "RequestsOnly"
    assert record.container_policies[0].controlled_resources == ("cpu", "memory")
    assert record.recommendations is not None and record.recommendations[0].target.cpu == 1000
    assert record.conditions["RecommendationProvided"][0] == "True"


def test_vpa_without_recommendation() -> None:
    assert decode_vpa({"metadata": {"name": "v"}}).recommendations is None


def test_pod_metrics_window() -> None:
    record = decode_pod_metrics(
        {
            "metadata": {"name": "p"},
            "timestamp": "2026-11-21T11:59:30Z",
            "window": "1m0s",
            "containers": [{"name": "app", "usage": {"cpu": "250m"}}],
        }
    )
    assert record.window_seconds == 60
    assert record.containers[0].usage.cpu == 250


def test_labels_are_forgotten_when_no_record_holds_them() -> None:
    """StatefulSet and Job pods carry labels of their own: the intern table must not keep
    the labels of every pod ever deleted."""
    from hvpa import records

    unique = pod("db-0")
    unique["metadata"]["labels"] = {"app": "db", "statefulset.kubernetes.io/pod-name": "db-0"}  # type: ignore[index]
    key = (("app", "db"), ("statefulset.kubernetes.io/pod-name", "db-0"))
    record = decode_pod(unique)
    again = decode_pod(unique)
    assert record.labels is again.labels  # shared while held
    assert key in records._labels_seen
    del record, again
    assert key not in records._labels_seen


# -- unreadable fields -------------------------------------------------------------------------

HUGE = "1e51"  # a quantity the API server stores, past the 1e38 hvpa reads


def test_a_huge_request_is_kept_as_unreadable_on_the_wire_path() -> None:
    """Informers keep the pod (so the decision can say what is wrong) with the amount None."""
    bad = pod("web-0")
    bad["spec"]["containers"][0]["resources"]["requests"]["cpu"] = HUGE  # type: ignore[index]
    record = pod_from_wire(msgspec.json.decode(orjson.dumps(bad), type=PodWire))
    assert record.containers[0].requests.cpu is None
    assert record.containers[0].requests.memory == 1073741824000
    (problem,) = record.unreadable
    assert problem.startswith("Pod shop/web-0 spec.containers[app].resources.requests.cpu: ")
    assert "beyond the largest quantity" in problem
    assert decode_pod(bad, strict=False).unreadable == record.unreadable
    with pytest.raises(RecordError, match=r"requests\.cpu: '?1e51"):
        decode_pod(bad)


def test_unreadable_containers_are_not_cached_under_another_pods_name() -> None:
    first, second = pod("web-0"), pod("web-1")
    for each in (first, second):
        each["spec"]["containers"][0]["resources"]["limits"]["memory"] = HUGE  # type: ignore[index]
    assert "web-0" in decode_pod(first, strict=False).unreadable[0]
    assert "web-1" in decode_pod(second, strict=False).unreadable[0]


def test_node_target_and_vpa_name_their_unreadable_fields() -> None:
    node = decode_node(
        {"metadata": {"name": "n1"}, "status": {"allocatable": {"memory": HUGE}}}, strict=False
    )
    assert node.unreadable[0].startswith("Node n1 status.allocatable.memory: ")
    target = decode_target(
        {
            "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "shop"},
            "spec": {
                "selector": {"matchLabels": {"app": "web"}},
                "template": {"spec": {"containers": [pod("x")["spec"]["containers"][0]]}},  # type: ignore[index]
            },
        },
        strict=False,
    )
    assert target.unreadable == ()
    vpa = decode_vpa(
        {
            "metadata": {"name": "v", "namespace": "shop"},
            "spec": {
                "resourcePolicy": {
                    "containerPolicies": [{"containerName": "app", "maxAllowed": {"cpu": HUGE}}]
                }
            },
            "status": {
                "recommendation": {
                    "containerRecommendations": [
                        {"containerName": "app", "target": {"cpu": "1", "memory": HUGE}}
                    ]
                }
            },
        },
        strict=False,
    )
    assert [p.split(":")[0] for p in vpa.unreadable] == [
        "VerticalPodAutoscaler shop/v spec.resourcePolicy.containerPolicies[app].maxAllowed.cpu",
        "VerticalPodAutoscaler shop/v "
        "status.recommendation.containerRecommendations[app].target.memory",
    ]
    assert vpa.recommendations is not None
    assert vpa.recommendations[0].target.cpu == 1000
    assert vpa.recommendations[0].target.memory is None


def test_check_readable_names_every_problem() -> None:
    bad = pod("web-0")
    bad["spec"]["containers"][0]["resources"]["requests"]["cpu"] = HUGE  # type: ignore[index]
    good = decode_pod(pod("web-1"))
    check_readable([good, None])
    with pytest.raises(UnreadableInput) as unreadable:
        check_readable([good, decode_pod(bad, strict=False), None])
    assert len(unreadable.value.problems) == 1
    assert "web-0" in str(unreadable.value)


def test_an_unreadable_usage_fails_the_pod_metrics() -> None:
    """A metrics answer is read as a whole: its reader turns the error into a failed reading."""
    with pytest.raises(RecordError, match=r"PodMetrics shop/p containers\[app\]\.usage\.cpu"):
        decode_pod_metrics(
            {
                "metadata": {"name": "p", "namespace": "shop"},
                "containers": [{"name": "app", "usage": {"cpu": HUGE}}],
            }
        )


@pytest.mark.parametrize(
    ("usage", "named"),
    [
        pytest.param({"cpu": "250m", "memory": HUGE}, ["memory"], id="memory-only"),
        pytest.param({"cpu": HUGE, "memory": HUGE}, ["cpu", "memory"], id="both"),
    ],
)
def test_the_failure_names_each_unreadable_usage_and_no_other(
    usage: dict[str, str], named: list[str]
) -> None:
    """Readable amounts are read without building a message; one that is not falls back to
    naming every unreadable field, and only those."""
    with pytest.raises(RecordError) as failure:
        decode_pod_metrics(
            {
                "metadata": {"name": "p", "namespace": "shop"},
                "containers": [
                    {"name": "side", "usage": {"cpu": "1m"}},
                    {"name": "app", "usage": usage},
                ],
            }
        )
    fields = re.findall(r"containers\[(\w+)\]\.usage\.(\w+)", str(failure.value))
    assert fields == [("app", resource) for resource in named]


@pytest.mark.parametrize(
    ("selector", "match"),
    [
        pytest.param(
            {"matchExpressions": [{"key": "a", "operator": "Near"}]}, "operator", id="operator"
        ),
        pytest.param(
            {"matchExpressions": [{"key": "a", "operator": "In", "values": 5}]},
            "values",
            id="values-not-a-list",
        ),
        pytest.param(
            {"matchExpressions": ["a"]}, "matchExpressions", id="expression-not-an-object"
        ),
    ],
)
def test_a_broken_target_selector_is_a_record_error(selector: object, match: str) -> None:
    with pytest.raises(RecordError, match=match):
        decode_target(
            {"kind": "Deployment", "metadata": {"name": "w"}, "spec": {"selector": selector}}
        )


@pytest.mark.parametrize("obj", [[], "pod", 5, None])
def test_a_document_that_is_not_an_object_is_a_record_error(obj: Any) -> None:
    with pytest.raises(RecordError):
        decode_target(obj)
    with pytest.raises(RecordError):
        decode_pod(obj)


def test_a_time_without_a_zone_is_utc() -> None:
    assert parse_time("2026-01-01T00:00:00") == parse_time("2026-01-01T00:00:00Z")
    with pytest.raises(RecordError, match="not an RFC 3339 time"):
        parse_time("0001-01-01T00:00:00+14:00x")


# ---------------------------------------------------------------- in-place resize


def _resizing_pod(**status: Any) -> dict[str, Any]:
    body: dict[str, Any] = pod("web-0", **status)
    container = body["spec"]["containers"][0]
    container["resizePolicy"] = [
        {"resourceName": "cpu", "restartPolicy": "NotRequired"},
        {"resourceName": "memory", "restartPolicy": "RestartContainer"},
    ]
    return body


def test_pod_resize_conditions_and_actual_resources() -> None:
    record = decode_pod(
        _resizing_pod(
            qosClass="Burstable",
            conditions=[
                {"type": "Ready", "status": "True"},
                {
                    "type": "PodResizePending",
                    "status": "True",
                    "reason": "Infeasible",
                    "message": "Node didn't have enough capacity: cpu",
                    "lastTransitionTime": "2026-01-01T00:00:10Z",
                },
            ],
            containerStatuses=[
                {
                    "name": "app",
                    "state": {"running": {}},
                    "resources": {"requests": {"cpu": "250m"}, "limits": {"cpu": "1"}},
                }
            ],
        )
    )
    assert record.resize is not None
    assert (record.resize.pending, record.resize.message) == (
        "Infeasible",
        "Node didn't have enough capacity: cpu",
    )
    assert record.resize.pending_since == 1767225610.0
    assert record.actual is not None and record.actual[0].requests == Resources(cpu=250)
    assert record.containers[0].restart_on_resize == ("memory",)
    assert (record.qos_class, record.resize_unsupported) == ("Burstable", False)


def test_a_running_container_without_status_resources_cannot_be_resized() -> None:
    record = decode_pod(
        _resizing_pod(containerStatuses=[{"name": "app", "state": {"running": {}}}])
    )
    assert record.actual is None and record.resize_unsupported


def test_nulls_in_the_resize_fields_are_tolerated() -> None:
    """A status written with `qosClass: null` (the in-repo server wrote one for a status patch
    of a pod created with a status) must not make the informer skip the pod."""
    body = _resizing_pod(qosClass=None, initContainerStatuses=None)
    body["spec"]["containers"][0]["resizePolicy"] = [{"resourceName": None, "restartPolicy": None}]
    raw = orjson.dumps(body)
    record = pod_from_wire(msgspec.json.Decoder(PodWire).decode(raw))
    assert record.qos_class == "" and record.containers[0].restart_on_resize == ()


@pytest.mark.parametrize(
    ("kind", "spec", "expected"),
    [
        ("Deployment", {"strategy": {"rollingUpdate": {"maxUnavailable": "25%"}}}, "25%"),
        ("StatefulSet", {"updateStrategy": {"rollingUpdate": {"maxUnavailable": 2}}}, 2),
        ("StatefulSet", {"updateStrategy": {"type": "RollingUpdate"}}, None),
    ],
)
def test_target_max_unavailable(kind: str, spec: dict[str, Any], expected: Any) -> None:
    record = decode_target(
        {
            "apiVersion": "apps/v1",
            "kind": kind,
            "metadata": {"name": "web", "namespace": "shop"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, **spec},
        }
    )
    assert record.max_unavailable == expected


# ---------------------------------------------------------------- renewing a pod's record


def _wire(body: dict[str, Any]) -> PodWire:
    return msgspec.json.decode(orjson.dumps(body), type=PodWire)


def _churned(body: dict[str, Any]) -> None:
    """What a kubelet writes most often: restart counts, probe results, IPs, when a
    container started."""
    body["metadata"]["resourceVersion"] = "99"
    body["metadata"]["managedFields"] = [{"manager": "kubelet", "time": "2026-11-21T11:00:00Z"}]
    body["status"]["podIP"] = "10.0.0.7"
    body["status"]["containerStatuses"] = [
        {
            "name": "app",
            "restartCount": 3,
            "ready": True,
            "state": {"running": {"startedAt": "2026-11-21T10:59:00Z"}},
        }
    ]


def _set(*path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(body: dict[str, Any]) -> None:
        node = body
        for step in path[:-1]:
            node = node.setdefault(step, {})
        node[path[-1]] = value

    return change


def _app(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(body: dict[str, Any]) -> None:
        body["spec"]["containers"][0][key] = value

    return change


# Each changes one field the record reads (the record differs), on top of the churn.
_KEPT_CHANGES = [
    pytest.param(_set("metadata", "labels", value={"app": "web"}), id="labels"),
    pytest.param(
        _set("metadata", "deletionTimestamp", value="2026-11-21T11:00:00Z"), id="deleting"
    ),
    pytest.param(_set("metadata", "ownerReferences", value=[]), id="owner"),
    pytest.param(_set("spec", "nodeName", value="node-b"), id="node"),
    pytest.param(_app("resources", {"requests": {"cpu": "600m"}}), id="requests"),
    pytest.param(
        _app("resizePolicy", [{"resourceName": "cpu", "restartPolicy": "RestartContainer"}]),
        id="resize-policy",
    ),
    pytest.param(_set("spec", "resources", value={"requests": {"cpu": "2"}}), id="pod-requests"),
    pytest.param(_set("status", "phase", value="Failed"), id="phase"),
    pytest.param(_set("status", "startTime", value="2026-11-21T10:00:01Z"), id="start"),
    pytest.param(_set("status", "qosClass", value="Burstable"), id="qos"),
    pytest.param(
        _set("status", "conditions", value=[{"type": "Ready", "status": "False"}]), id="ready"
    ),
    pytest.param(
        _set(
            "status",
            "conditions",
            value=[
                {"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-21T10:00:20Z"},
                {"type": "PodResizePending", "status": "True", "reason": "Infeasible"},
            ],
        ),
        id="resize-pending",
    ),
    pytest.param(
        _set(
            "status",
            "containerStatuses",
            value=[
                {
                    "name": "app",
                    "lastState": {"terminated": {"reason": "OOMKilled"}},
                    "state": {"running": {}},
                }
            ],
        ),
        id="oom-kill",
    ),
    pytest.param(
        _set(
            "status",
            "containerStatuses",
            value=[
                {"name": "app", "state": {"running": {}}, "resources": {"requests": {"cpu": "1"}}}
            ],
        ),
        id="actual-resources",
    ),
]


def test_a_pods_digest_ignores_its_resource_version_and_what_the_record_does_not_keep() -> None:
    """The churn (a restart count, an IP, managedFields, the resourceVersion) leaves the
    digest as it was, and renewing the first record gives what converting the second does."""
    first = pod("web-0", containerStatuses=[{"name": "app", "state": {"running": {}}}])
    first["metadata"]["resourceVersion"] = "5"
    second = orjson.loads(orjson.dumps(first))
    _churned(second)
    before, after = _wire(first), _wire(second)
    assert pod_wire_digest(before) == pod_wire_digest(after)
    assert after.metadata.resource_version == "99"  # the digest puts it back
    renewed = pod_with_version(pod_from_wire(before), after)
    assert renewed == pod_from_wire(after)
    assert renewed.resource_version == "99"


@pytest.mark.parametrize("change", _KEPT_CHANGES)
def test_a_pods_digest_moves_with_every_field_its_record_keeps(
    change: Callable[[dict[str, Any]], None],
) -> None:
    """Each field the record reads, changed with the churn: the record differs, and so does
    the digest (else the informer would renew a record that no longer holds)."""
    first = pod("web-0", containerStatuses=[{"name": "app", "state": {"running": {}}}])
    second = orjson.loads(orjson.dumps(first))
    _churned(second)
    change(second)
    before, after = _wire(first), _wire(second)
    assert pod_from_wire(before) != msgspec.structs.replace(
        pod_from_wire(after), resource_version=""
    )
    assert pod_wire_digest(before) != pod_wire_digest(after)
