"""The size a new pod gets at admission (`pod_patch`), and the webhooks the leader registers
(`desired_webhooks`), from a cache of records."""

from __future__ import annotations

import base64
from typing import Any

import msgspec
import pytest
from controller_records import target

from hvpa.controller.admission import pod_patch
from hvpa.controller.cache import Cache
from hvpa.controller.resources import HvpaRecord, HvpaWire, hvpa_from_wire
from hvpa.controller.webhooks import WebhookClient, desired_webhooks, webhook_name

SIZED = {
    "containers": [
        {"name": "app", "requests": {"cpu": "800m", "memory": "1Gi"}, "limits": {"cpu": "2"}},
        {"name": "proxy", "requests": {"cpu": "50m"}},
    ],
    "pods": 2,
}


def hvpa(
    name: str = "web",
    *,
    mode: str | None = "InPlaceOrRollout",
    sized: dict[str, Any] | None = SIZED,
    created: str = "2025-01-01T00:00:00Z",
    target_name: str = "web",
) -> HvpaRecord:
    vpa: dict[str, Any] = {"deploy": True}
    if mode is not None:
        vpa["resizeMode"] = mode
    body: dict[str, Any] = {
        "apiVersion": "autoscaling.k8s.io/v1alpha1",
        "kind": "Hvpa",
        "metadata": {
            "name": name,
            "namespace": "default",
            "uid": f"uid-{name}",
            "resourceVersion": "1",
            "creationTimestamp": created,
        },
        "spec": {
            "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target_name},
            "vpa": vpa,
        },
    }
    if sized is not None:
        body["status"] = {"podResources": sized}
    return hvpa_from_wire(msgspec.convert(body, HvpaWire))


def pod(**labels: str) -> dict[str, Any]:
    return {
        "metadata": {"generateName": "web-", "labels": labels or {"app": "web"}},
        "spec": {
            "initContainers": [
                {"name": "proxy", "image": "p:1", "restartPolicy": "Always"},
                {"name": "setup", "image": "s:1"},
            ],
            "containers": [
                {
                    "name": "app",
                    "image": "app:1",
                    "resources": {
                        "requests": {"cpu": "100m", "ephemeral-storage": "1Gi"},
                        "limits": {"memory": "2Gi"},
                    },
                }
            ],
        },
    }


def cache(*hvpas: HvpaRecord) -> Cache:
    return Cache.of_records(hvpas=hvpas, targets=[target("web")])


def test_a_new_pod_gets_the_decided_size_its_other_resources_kept() -> None:
    sizing = pod_patch(cache(hvpa()), pod(), "default")
    assert sizing is not None and sizing.hvpa == "default/web"
    assert list(sizing.operations) == [
        {
            "op": "add",
            "path": "/spec/containers/0/resources",
            "value": {
                "requests": {"cpu": "800m", "memory": "1Gi", "ephemeral-storage": "1Gi"},
                "limits": {"cpu": "2"},
            },
        },
        # The restartable init container (a sidecar) too; a plain one never.
        {
            "op": "add",
            "path": "/spec/initContainers/0/resources",
            "value": {"requests": {"cpu": "50m"}},
        },
    ]


@pytest.mark.parametrize(
    ("hvpas", "labels"),
    [
        pytest.param([hvpa(mode=None)], {}, id="rollout-mode"),
        pytest.param([hvpa(mode="Rollout")], {}, id="rollout-mode-written"),
        pytest.param([hvpa(sized=None)], {}, id="nothing-decided-yet"),
        pytest.param([hvpa()], {"app": "other"}, id="another-workload"),
        pytest.param([hvpa(target_name="db")], {}, id="another-target"),
        # Two Hvpas on one target: the older acts (here a Rollout one), the newer holds.
        pytest.param(
            [hvpa("old", mode="Rollout", created="2024-01-01T00:00:00Z"), hvpa("new")],
            {},
            id="the-older-hvpa-acts",
        ),
    ],
)
def test_no_patch(hvpas: list[HvpaRecord], labels: dict[str, str]) -> None:
    assert pod_patch(cache(*hvpas), pod(**labels), "default") is None


def test_a_pod_already_at_the_size_needs_no_patch() -> None:
    body = pod()
    body["spec"]["containers"][0]["resources"] = {
        "requests": {"cpu": "800m", "memory": "1Gi"},
        "limits": {"cpu": "2"},
    }
    body["spec"]["initContainers"][0]["resources"] = {"requests": {"cpu": "50m"}}
    assert pod_patch(cache(hvpa()), body, "default") is None


def test_one_webhook_per_in_place_hvpa_scoped_to_its_namespace_and_pods() -> None:
    registration = WebhookClient(service=("hvpa-system", "hvpa-webhook", 443))
    webhooks = desired_webhooks(
        cache(hvpa(), hvpa("legacy", mode=None)), registration, b"-----CA-----"
    )
    assert [w["name"] for w in webhooks] == ["default.web.pods.hvpa.autoscaling.k8s.io"]
    (webhook,) = webhooks
    assert webhook["failurePolicy"] == "Ignore"
    assert webhook["sideEffects"] == "None"
    assert webhook["admissionReviewVersions"] == ["v1"]
    assert webhook["namespaceSelector"] == {
        "matchLabels": {"kubernetes.io/metadata.name": "default"}
    }
    assert webhook["objectSelector"] == {
        "matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}]
    }
    assert webhook["rules"][0]["operations"] == ["CREATE"]
    assert webhook["rules"][0]["resources"] == ["pods"]
    assert webhook["clientConfig"] == {
        "service": {
            "namespace": "hvpa-system",
            "name": "hvpa-webhook",
            "path": "/mutate-pods",
            "port": 443,
        },
        "caBundle": base64.b64encode(b"-----CA-----").decode(),
    }


def test_webhook_names_are_valid_however_long_the_hvpa_name() -> None:
    long = "a" * 63 + "." + "b" * 63 + "." + "c" * 63 + "." + "d" * 50
    name = webhook_name("default", long)
    assert len(name) <= 253 and name.endswith(".pods.hvpa.autoscaling.k8s.io")
    assert webhook_name("default", long) != webhook_name("other", long)
