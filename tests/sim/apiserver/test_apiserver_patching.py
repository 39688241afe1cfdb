"""The three patch formats, against the semantics their specs and the Go types define;
and over HTTP, the patch preconditions and refusals the real server applies."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from apiserver_http import Http
from apiserver_objects import deployment, widget

from hvpa.sim.apiserver.errors import ApiError, BadRequest, Invalid
from hvpa.sim.apiserver.patching import PatchType, apply_patch

POD_SPEC: dict[str, Any] = {
    "spec": {
        "containers": [
            {
                "name": "app",
                "image": "app:1",
                "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                "ports": [{"containerPort": 80, "name": "http"}],
                "volumeMounts": [{"mountPath": "/data", "name": "data"}],
                "resources": {"requests": {"cpu": "100m"}},
            },
            {"name": "sidecar", "image": "side:1"},
        ],
        "volumes": [{"name": "data", "emptyDir": {}}],
        "tolerations": [{"key": "a"}],
    },
    "metadata": {"finalizers": ["x"], "labels": {"app": "web"}},
    "status": {"conditions": [{"type": "Ready", "status": "False"}]},
}


def strategic(patch: dict[str, Any]) -> dict[str, Any]:
    return apply_patch(copy.deepcopy(POD_SPEC), patch, PatchType.STRATEGIC)


def container(result: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c for c in result["spec"]["containers"] if c["name"] == name)


@pytest.mark.parametrize(
    ("patch", "check"),
    [
        pytest.param(
            {"spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": "200m"}}}]}},
            lambda r: (
                container(r, "app")["resources"] == {"requests": {"cpu": "200m"}}
                and container(r, "app")["image"] == "app:1"
                and len(r["spec"]["containers"]) == 2
            ),
            id="containers-merge-by-name",
        ),
        pytest.param(
            {"spec": {"containers": [{"name": "new", "image": "n:1"}]}},
            lambda r: [c["name"] for c in r["spec"]["containers"]] == ["app", "sidecar", "new"],
            id="containers-append",
        ),
        pytest.param(
            {"spec": {"containers": [{"name": "sidecar", "$patch": "delete"}]}},
            lambda r: [c["name"] for c in r["spec"]["containers"]] == ["app"],
            id="containers-patch-delete",
        ),
        pytest.param(
            {
                "spec": {
                    "containers": [
                        {
                            "name": "app",
                            "env": [{"name": "B", "value": "3"}, {"name": "C", "value": "4"}],
                        }
                    ]
                }
            },
            lambda r: (
                container(r, "app")["env"]
                == [
                    {"name": "A", "value": "1"},
                    {"name": "B", "value": "3"},
                    {"name": "C", "value": "4"},
                ]
            ),
            id="env-merge-by-name",
        ),
        pytest.param(
            {
                "spec": {
                    "containers": [
                        {"name": "app", "ports": [{"containerPort": 80, "protocol": "TCP"}]}
                    ]
                }
            },
            lambda r: (
                container(r, "app")["ports"]
                == [{"containerPort": 80, "name": "http", "protocol": "TCP"}]
            ),
            id="ports-merge-by-containerPort",
        ),
        pytest.param(
            {
                "spec": {
                    "containers": [
                        {"name": "app", "volumeMounts": [{"mountPath": "/data", "readOnly": True}]}
                    ]
                }
            },
            lambda r: (
                container(r, "app")["volumeMounts"]
                == [{"mountPath": "/data", "name": "data", "readOnly": True}]
            ),
            id="volumeMounts-merge-by-mountPath",
        ),
        pytest.param(
            {"spec": {"volumes": [{"name": "cache", "emptyDir": {}}]}},
            lambda r: [v["name"] for v in r["spec"]["volumes"]] == ["data", "cache"],
            id="volumes-merge-by-name",
        ),
        pytest.param(
            {
                "status": {
                    "conditions": [
                        {"type": "Ready", "status": "True"},
                        {"type": "Scheduled", "status": "True"},
                    ]
                }
            },
            lambda r: (
                r["status"]["conditions"]
                == [{"type": "Ready", "status": "True"}, {"type": "Scheduled", "status": "True"}]
            ),
            id="conditions-merge-by-type",
        ),
        pytest.param(
            {"spec": {"tolerations": [{"key": "b"}]}},
            lambda r: r["spec"]["tolerations"] == [{"key": "b"}],
            id="list-without-key-replaced",
        ),
        pytest.param(
            {"metadata": {"finalizers": ["y"]}},
            lambda r: r["metadata"]["finalizers"] == ["x", "y"],
            id="finalizers-union",
        ),
        pytest.param(
            {"metadata": {"$deleteFromPrimitiveList/finalizers": ["x"]}},
            lambda r: r["metadata"]["finalizers"] == [],
            id="delete-from-primitive-list",
        ),
        pytest.param(
            {"metadata": {"labels": {"app": None, "tier": "front"}}},
            lambda r: r["metadata"]["labels"] == {"tier": "front"},
            id="null-deletes-key",
        ),
        pytest.param(
            {
                "spec": {
                    "$setElementOrder/containers": [{"name": "sidecar"}, {"name": "app"}],
                    "containers": [{"name": "app", "image": "app:2"}],
                }
            },
            lambda r: (
                [c["name"] for c in r["spec"]["containers"]] == ["sidecar", "app"]
                and container(r, "app")["image"] == "app:2"
            ),
            id="set-element-order",
        ),
        pytest.param(
            {
                "spec": {
                    "volumes": [
                        {
                            "name": "data",
                            "$retainKeys": ["name", "hostPath"],
                            "hostPath": {"path": "/x"},
                        }
                    ]
                }
            },
            lambda r: r["spec"]["volumes"] == [{"name": "data", "hostPath": {"path": "/x"}}],
            id="retain-keys",
        ),
        pytest.param(
            {"metadata": {"labels": {"$patch": "replace", "only": "this"}}},
            lambda r: r["metadata"]["labels"] == {"only": "this"},
            id="map-patch-replace",
        ),
        pytest.param(
            {"spec": {"containers": [{"$patch": "replace"}, {"name": "solo", "image": "s:1"}]}},
            lambda r: r["spec"]["containers"] == [{"name": "solo", "image": "s:1"}],
            id="list-patch-replace",
        ),
    ],
)
def test_strategic_merge(patch: dict[str, Any], check: Any) -> None:
    assert check(strategic(patch))


@pytest.mark.parametrize(
    ("patch", "expected"),
    [
        pytest.param(
            {"a": {"b": None, "c": 2}}, {"a": {"c": 2}, "l": [9]}, id="nested-merge-and-delete"
        ),
        pytest.param({"l": [1]}, {"a": {"b": 1}, "l": [1]}, id="list-replaced"),
        pytest.param({"a": 5}, {"a": 5, "l": [9]}, id="map-replaced-by-scalar"),
    ],
)
def test_merge_patch(patch: dict[str, Any], expected: dict[str, Any]) -> None:
    assert apply_patch({"a": {"b": 1}, "l": [9]}, patch, PatchType.MERGE) == expected


@pytest.mark.parametrize(
    ("operations", "expected"),
    [
        pytest.param(
            [{"op": "add", "path": "/l/-", "value": 3}],
            {"a": {"b": 1}, "l": [1, 2, 3]},
            id="append",
        ),
        pytest.param(
            [{"op": "add", "path": "/l/0", "value": 0}],
            {"a": {"b": 1}, "l": [0, 1, 2]},
            id="insert",
        ),
        pytest.param([{"op": "remove", "path": "/a/b"}], {"a": {}, "l": [1, 2]}, id="remove"),
        pytest.param(
            [{"op": "replace", "path": "/a/b", "value": 7}],
            {"a": {"b": 7}, "l": [1, 2]},
            id="replace",
        ),
        pytest.param(
            [{"op": "move", "from": "/a/b", "path": "/c"}],
            {"a": {}, "l": [1, 2], "c": 1},
            id="move",
        ),
        pytest.param(
            [{"op": "copy", "from": "/l", "path": "/m"}],
            {"a": {"b": 1}, "l": [1, 2], "m": [1, 2]},
            id="copy",
        ),
        pytest.param(
            [
                {"op": "test", "path": "/a/b", "value": 1},
                {"op": "add", "path": "/a~1x", "value": 1},
            ],
            {"a": {"b": 1}, "l": [1, 2], "a/x": 1},
            id="test-then-escaped-add",
        ),
    ],
)
def test_json_patch(operations: list[dict[str, Any]], expected: dict[str, Any]) -> None:
    assert apply_patch({"a": {"b": 1}, "l": [1, 2]}, operations, PatchType.JSON) == expected


@pytest.mark.parametrize(
    ("document", "patch", "patch_type", "error"),
    [
        pytest.param(
            {},
            [{"op": "test", "path": "/a", "value": 1}],
            PatchType.JSON,
            Invalid,
            id="failed-test",
        ),
        pytest.param(
            {},
            [{"op": "replace", "path": "/a", "value": 1}],
            PatchType.JSON,
            Invalid,
            id="replace-missing",
        ),
        pytest.param(
            {}, [{"op": "jump", "path": "/a"}], PatchType.JSON, BadRequest, id="unknown-op"
        ),
        pytest.param({}, {"op": "add"}, PatchType.JSON, BadRequest, id="not-a-list"),
        pytest.param(
            {"spec": {"containers": []}},
            {"spec": {"containers": [{"image": "x"}]}},
            PatchType.STRATEGIC,
            BadRequest,
            id="missing-merge-key",
        ),
    ],
)
def test_patch_errors(
    document: dict[str, Any], patch: Any, patch_type: PatchType, error: type[ApiError]
) -> None:
    with pytest.raises(error):
        apply_patch(document, patch, patch_type)


DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"


async def test_patch_resource_version_is_a_precondition(http: Http) -> None:
    created = (await http.post(DEPLOYMENTS, deployment())).body
    rv = created["metadata"]["resourceVersion"]
    first = await http.patch(
        f"{DEPLOYMENTS}/web", {"metadata": {"resourceVersion": rv}, "spec": {"replicas": 2}}
    )
    assert first.status == 200
    stale = await http.patch(
        f"{DEPLOYMENTS}/web", {"metadata": {"resourceVersion": rv}, "spec": {"replicas": 3}}
    )
    assert stale.status == 409
    assert stale.body["reason"] == "Conflict"
    unconditional = await http.patch(f"{DEPLOYMENTS}/web", {"spec": {"replicas": 3}})
    assert unconditional.status == 200


async def test_strategic_patch_of_template_resources_over_http(http: Http) -> None:
    body = deployment()
    body["spec"]["template"]["spec"]["containers"].append({"name": "sidecar", "image": "side:1"})
    await http.post(DEPLOYMENTS, body)
    patch = {
        "spec": {
            "template": {
                "spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": 0.25}}}]}
            }
        }
    }
    reply = await http.patch(f"{DEPLOYMENTS}/web", patch, kind="strategic")
    containers = reply.body["spec"]["template"]["spec"]["containers"]
    assert [c["name"] for c in containers] == ["app", "sidecar"]
    assert containers[0]["resources"] == {"requests": {"cpu": "250m"}}
    assert reply.body["metadata"]["generation"] == 2


@pytest.mark.parametrize(
    ("content_type", "code"),
    [
        pytest.param(
            "application/strategic-merge-patch+json", 415, id="strategic-on-custom-resource"
        ),
        pytest.param("text/plain", 415, id="unknown"),
    ],
)
async def test_unsupported_patch_types(
    http: Http, widgets: str, content_type: str, code: int
) -> None:
    await http.post(widgets, widget("h"))
    reply = await http.call(
        "PATCH", f"{widgets}/h", {"spec": {"size": 2}}, content_type=content_type
    )
    assert reply.status == code
    assert reply.body["reason"] == "UnsupportedMediaType"
