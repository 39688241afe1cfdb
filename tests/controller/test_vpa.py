"""The child VPA: its shape from the Hvpa's vpa.template (updateMode Off, owned, labelled),
and the merge patch that brings an existing one back to it (None when it already matches)."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from controller_records import hvpa, vpa

from hvpa.controller.resources import VpaObjectWire, vpa_object_from_wire
from hvpa.controller.vpa import vpa_body, vpa_changes

POLICY = {"containerPolicies": [{"containerName": "app", "maxAllowed": {"cpu": "2"}}]}
VPA_SPEC = {
    "deploy": True,
    "selector": {"matchLabels": {"role": "web-vpa"}},
    "template": {"metadata": {"labels": {"role": "web-vpa"}}, "spec": {"resourcePolicy": POLICY}},
}


def spec() -> Any:
    record = hvpa(vpa=VPA_SPEC)
    assert record.hvpa is not None
    return record.hvpa


def test_body() -> None:
    body = vpa_body(spec(), "uid-web", "apps/v1")
    assert body == {
        "apiVersion": "autoscaling.k8s.io/v1",
        "kind": "VerticalPodAutoscaler",
        "metadata": {
            "name": "web-vpa",
            "namespace": "default",
            "ownerReferences": [
                {
                    "apiVersion": "autoscaling.k8s.io/v1alpha1",
                    "kind": "Hvpa",
                    "name": "web",
                    "uid": "uid-web",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
            "labels": {"role": "web-vpa"},
        },
        "spec": {
            "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "updatePolicy": {"updateMode": "Off"},
            "resourcePolicy": POLICY,
        },
    }


def test_a_matching_vpa_needs_no_write() -> None:
    body = vpa_body(spec(), "uid-web", "apps/v1")
    body["metadata"]["resourceVersion"] = "5"
    body["spec"]["recommenders"] = [{"name": "default"}]  # defaulted by someone else: left alone
    existing = vpa_object_from_wire(msgspec.convert(body, VpaObjectWire))
    assert vpa_changes(spec(), existing, "apps/v1") is None


@pytest.mark.parametrize(
    ("existing", "patch"),
    [
        pytest.param(
            vpa(labels={"role": "web-vpa"}, mode="Auto", spec=None),
            {
                "metadata": {"resourceVersion": "3"},
                "spec": {"updatePolicy": {"updateMode": "Off"}, "resourcePolicy": POLICY},
            },
            id="mode-and-policy",
        ),
        pytest.param(
            vpa(
                labels={},
                spec={
                    "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                    "updatePolicy": {"updateMode": "Off"},
                    "resourcePolicy": POLICY,
                },
            ),
            {"metadata": {"resourceVersion": "3", "labels": {"role": "web-vpa"}}},
            id="labels",
        ),
    ],
)
def test_changes(existing: Any, patch: dict[str, Any]) -> None:
    assert vpa_changes(spec(), existing, "apps/v1") == patch


def test_a_policy_removed_from_the_template_is_removed() -> None:
    record = hvpa(vpa={**VPA_SPEC, "template": {"metadata": {"labels": {"role": "web-vpa"}}}})
    assert record.hvpa is not None
    existing = vpa(
        labels={"role": "web-vpa"},
        spec={
            "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "updatePolicy": {"updateMode": "Off"},
            "resourcePolicy": POLICY,
        },
    )
    assert vpa_changes(record.hvpa, existing, "apps/v1") == {
        "metadata": {"resourceVersion": "3"},
        "spec": {"resourcePolicy": None},
    }
