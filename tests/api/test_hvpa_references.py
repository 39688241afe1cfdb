"""Names that reach request paths (metric names, described objects, the target) and the ConfigMap
reference: refused as upstream refuses them, so that no Hvpa can steer the controller's requests.

Path segment cases are apimachinery's (pkg/api/validate/content/path_test.go,
TestIsPathSegmentName) applied to a Pods metric name, with upstream's messages; the object
reference cases are kubernetes' (pkg/apis/autoscaling/validation/validation_test.go,
TestValidateHorizontalPodAutoscaler: "scaleTargetRef.name: Invalid" with name "..",
"object.describedObject.kind: Required").
"""

from __future__ import annotations

from typing import Any

import pytest
from hvpa_samples import DELETE, edited

from hvpa.api import InvalidHvpa, parse_hvpa
from hvpa.api.references import is_api_version, path_segment_problems

T = "spec.hpa.template.spec"
MM = f"{T}.metrics[0]"


def problems_of(manifest: Any) -> list[str]:
    try:
        parse_hvpa(manifest)
    except InvalidHvpa as error:
        return [str(problem) for problem in error.problems]
    return []


def pods_metric(name: str) -> dict[str, Any]:
    return edited(
        {
            f"{T}.metrics": [
                {
                    "type": "Pods",
                    "pods": {
                        "metric": {"name": name},
                        "target": {"type": "AverageValue", "averageValue": "1"},
                    },
                }
            ]
        }
    )


def object_metric(**described: Any) -> dict[str, Any]:
    return edited(
        {
            f"{T}.metrics": [
                {
                    "type": "Object",
                    "object": {
                        "describedObject": described,
                        "metric": {"name": "requests"},
                        "target": {"type": "Value", "value": "10"},
                    },
                }
            ]
        }
    )


# apimachinery TestIsPathSegmentName: (name, the message upstream reports, or none).
PATH_SEGMENTS = [
    pytest.param("foo", [], id="valid short"),
    pytest.param("foo.bar.baz", [], id="valid long"),
    pytest.param("sha256:ABCDEF012345@ABCDEF012345", [], id="valid complex"),
    pytest.param("Iñtërnâtiônàlizætiøn", [], id="valid extended charset"),
    pytest.param(".", ["may not be '.'"], id="dot"),
    pytest.param(".test", [], id="dot leading"),
    pytest.param("..", ["may not be '..'"], id="dot dot"),
    pytest.param("..test", [], id="dot dot leading"),
    pytest.param("foo/bar", ["may not contain '/'"], id="slash"),
    pytest.param("foo%bar", ["may not contain '%'"], id="percent"),
    # issue 15's hostile names: a path walk, and both forbidden characters at once.
    pytest.param("../../../../../../../api/v1/pods", ["may not contain '/'"], id="path-walk"),
    pytest.param("a/%2e%2e", ["may not contain '/'", "may not contain '%'"], id="slash-percent"),
]


@pytest.mark.parametrize(("name", "messages"), PATH_SEGMENTS)
def test_path_segment_rule(name: str, messages: list[str]) -> None:
    assert path_segment_problems(name) == messages


@pytest.mark.parametrize(("name", "messages"), PATH_SEGMENTS)
def test_metric_name_is_a_path_segment(name: str, messages: list[str]) -> None:
    where = f"{MM}.pods.metric.name"
    assert problems_of(pods_metric(name)) == [f"{where}: {m}" for m in messages]


def test_query_characters_pass_validation_as_upstream() -> None:
    """Upstream accepts `?` and `&` in a metric name; the metrics reader escapes them."""
    assert problems_of(pods_metric("x?watch=true&timeoutSeconds=300&")) == []


def test_v2beta1_metric_name_reported_as_written() -> None:
    manifest = edited(
        {
            f"{T}.metrics": [
                {"type": "Pods", "pods": {"metricName": "..", "targetAverageValue": "1"}}
            ]
        }
    )
    assert problems_of(manifest) == [f"{MM}.pods.metricName: may not be '..'"]


def test_external_metric_name_is_a_path_segment() -> None:
    manifest = edited(
        {
            f"{T}.minReplicas": 1,
            f"{T}.metrics": [
                {
                    "type": "External",
                    "external": {
                        "metric": {"name": "queue/../../pods"},
                        "target": {"type": "Value", "value": "3"},
                    },
                }
            ],
        }
    )
    assert problems_of(manifest) == [f"{MM}.external.metric.name: may not contain '/'"]


@pytest.mark.parametrize(
    ("described", "expected"),
    [
        pytest.param({"kind": "Service", "name": "web"}, [], id="valid"),
        pytest.param(
            {"kind": "Ingress", "name": "web", "apiVersion": "networking.k8s.io/v1"},
            [],
            id="valid-with-group",
        ),
        pytest.param(
            {"name": "web"}, ["describedObject.kind: required"], id="upstream-kind-required"
        ),
        pytest.param(
            {"kind": "..", "name": "web"}, ["describedObject.kind: may not be '..'"], id="kind-dots"
        ),
        pytest.param(
            {"kind": "Service", "name": ".."},
            ["describedObject.name: may not be '..'"],
            id="upstream-name-dots",
        ),
        pytest.param(
            {"kind": "pods/..", "name": "x%2F"},
            [
                "describedObject.kind: may not contain '/'",
                "describedObject.name: may not contain '%'",
            ],
            id="kind-and-name",
        ),
        pytest.param(
            {"kind": "Service", "name": "web", "apiVersion": "../../api/v1"},
            [
                "describedObject.apiVersion: must be VERSION or GROUP/VERSION, a DNS subdomain "
                'and a DNS label (e.g. "v1", "apps/v1")'
            ],
            id="apiVersion-path-walk",
        ),
    ],
)
def test_described_object(described: dict[str, Any], expected: list[str]) -> None:
    where = f"{MM}.object"
    assert problems_of(object_metric(**described)) == [f"{where}.{e}" for e in expected]


@pytest.mark.parametrize(
    ("text", "valid"),
    [
        ("v1", True),
        ("apps/v1", True),
        ("custom.metrics.k8s.io/v1beta2", True),
        ("", False),
        ("/v1", False),
        ("apps/", False),
        ("a/b/c", False),
        ("Apps/v1", False),
        ("apps/v1?watch=1", False),
        ("apps/..", False),
        (f"{'a' * 63}.{'b' * 63}.{'c' * 63}.{'d' * 61}/v1", True),  # a group of 253 characters
        (f"{'a' * 63}.{'b' * 63}.{'c' * 63}.{'d' * 62}/v1", False),  # 254
        (f"{'a' * 64}/v1", False),  # a DNS label is at most 63 characters
    ],
)
def test_api_version(text: str, valid: bool) -> None:
    assert is_api_version(text) is valid


def test_target_name_is_a_path_segment() -> None:
    """Upstream TestValidateHorizontalPodAutoscaler, "scaleTargetRef.name: Invalid"."""
    assert problems_of(edited({"spec.targetRef.name": ".."})) == [
        "spec.targetRef.name: may not be '..'"
    ]


@pytest.mark.parametrize(
    "ref",
    [
        pytest.param({"name": "params", "namespace": "kube-system"}, id="another-namespace"),
        pytest.param({"name": "params", "namespace": "default"}, id="its-own-namespace"),
        pytest.param({"name": "params", "namespace": ""}, id="empty"),
    ],
)
def test_config_map_namespace_is_refused(ref: dict[str, str]) -> None:
    manifest = edited({"spec.clusterProportional": {"configMapRef": ref}})
    assert problems_of(manifest) == [
        "spec.clusterProportional.configMapRef.namespace: must not be set: the ConfigMap is "
        "always read from the Hvpa's own namespace"
    ]


def test_config_map_in_own_namespace() -> None:
    manifest = edited({"spec.clusterProportional": {"configMapRef": {"name": "params"}}})
    assert problems_of(manifest) == []


def test_target_api_version_absent_is_fine() -> None:
    assert problems_of(edited({"spec.targetRef.apiVersion": DELETE})) == []
