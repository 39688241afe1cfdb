"""The in-repo server's bookmarks have kube-apiserver's shape: for a built-in type, the typed
object's zero value beside the metadata (nulls included); for a custom resource, nothing but
kind, apiVersion and metadata. The expected objects are what kube-apiserver v1.37.2 sent
(tests/e2e/e2e_corpus.py, bookmark_shape, compares the two servers live).
"""

from __future__ import annotations

from typing import Any

import pytest
from apiserver_http import Http
from apiserver_objects import deployment, pod

INITIAL_EVENTS = {
    "sendInitialEvents": "true",
    "allowWatchBookmarks": "true",
    "resourceVersionMatch": "NotOlderThan",
    "resourceVersion": "",
}


@pytest.mark.parametrize(
    ("path", "body", "zero_value"),
    [
        pytest.param(
            "/api/v1/namespaces/default/pods",
            pod("a"),
            {"spec": {"containers": None}, "status": {}},
            id="pod",
        ),
        pytest.param(
            "/apis/apps/v1/namespaces/default/deployments",
            deployment("a"),
            {
                "spec": {
                    "replicas": 0,
                    "selector": None,
                    "template": {"metadata": {}, "spec": {"containers": None}},
                    "strategy": {},
                },
                "status": {},
            },
            id="deployment",
        ),
        pytest.param(
            "/apis/autoscaling.k8s.io/v1alpha1/namespaces/default/hvpas",
            {
                "apiVersion": "autoscaling.k8s.io/v1alpha1",
                "kind": "Hvpa",
                "metadata": {"name": "a"},
                "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "a"}},
            },
            {},
            id="custom-resource",
        ),
    ],
)
async def test_a_bookmark_carries_the_types_zero_value(
    http: Http, watch: Any, path: str, body: dict[str, Any], zero_value: dict[str, Any]
) -> None:
    await http.post(path, body)
    stream = await watch(path, **INITIAL_EVENTS)
    _, bookmark = await stream.take(2)
    assert bookmark["type"] == "BOOKMARK"
    obj = bookmark["object"]
    assert {
        key: value for key, value in obj.items() if key not in ("kind", "apiVersion", "metadata")
    } == zero_value
    assert obj["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
