"""Protobuf request bodies (kubectl's typed clients: create configmap|deployment|namespace) read
as their JSON would decode: zeros of plain fields dropped, of pointer fields kept; a kind or a
field this reader does not know refused with 415 rather than lost."""

from __future__ import annotations

from typing import Any

import pytest
from apiserver_http import Http

from hvpa.sim.apiserver.errors import UnsupportedMediaType
from hvpa.sim.apiserver.protobuf import MAGIC, decode

PROTOBUF = "application/vnd.kubernetes.protobuf"


def varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def number(field: int, value: int) -> bytes:
    return varint(field << 3) + varint(value)


def nested(field: int, payload: bytes) -> bytes:
    return varint(field << 3 | 2) + varint(len(payload)) + payload


def text(field: int, value: str) -> bytes:
    return nested(field, value.encode())


def entry(field: int, key: str, value: bytes) -> bytes:
    """A map entry: key 1, value 2 (a string's bytes, or a message's)."""
    return nested(field, text(1, key) + nested(2, value))


def envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    """The k8s magic, then runtime.Unknown{typeMeta{apiVersion 1, kind 2}, raw 2}."""
    return MAGIC + nested(1, text(1, api_version) + text(2, kind)) + nested(2, raw)


# Field numbers from the API's generated.proto: ObjectMeta name 1, namespace 3, labels 11,
# creationTimestamp 8; ConfigMap metadata 1, data 2, immutable 4; Deployment metadata 1,
# spec 2, status 3; DeploymentSpec replicas 1, selector 2, template 3, strategy 4,
# minReadySeconds 5; LabelSelector matchLabels 1; PodTemplateSpec metadata 1, spec 2;
# PodSpec containers 2; Container name 1, image 2, resources 8; ResourceRequirements
# requests 2; Quantity string 1.
META = text(1, "web") + text(3, "") + nested(8, b"") + entry(11, "app", b"web")


def test_a_deployment_reads_as_its_json() -> None:
    container = text(1, "app") + text(2, "nginx:1.25") + nested(8, entry(2, "cpu", text(1, "250m")))
    template = nested(1, entry(11, "app", b"web")) + nested(2, nested(2, container))
    spec = (
        number(1, 0)  # replicas 0: a pointer, kept
        + nested(2, entry(1, "app", b"web"))
        + nested(3, template)
        + nested(4, b"")  # an empty strategy: a struct, kept as {}
        + number(5, 0)  # minReadySeconds 0: a plain int, dropped
    )
    body = envelope("apps/v1", "Deployment", nested(1, META) + nested(2, spec) + nested(3, b""))
    assert decode(body) == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [
                        {
                            "name": "app",
                            "image": "nginx:1.25",
                            "resources": {"requests": {"cpu": "250m"}},
                        }
                    ]
                },
            },
            "strategy": {},
        },
        "status": {},
    }


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(envelope("v1", "Service", nested(1, META)), id="a-kind-not-read"),
        pytest.param(
            envelope("v1", "ConfigMap", nested(1, META) + text(99, "something")),
            id="a-field-not-read",
        ),
    ],
)
def test_what_cannot_be_read_is_refused(body: bytes) -> None:
    with pytest.raises(UnsupportedMediaType):
        decode(body)


async def test_a_configmap_is_created_from_protobuf(http: Http) -> None:
    body = envelope("v1", "ConfigMap", nested(1, META) + entry(2, "a", b"1") + number(4, 1))
    async with http.session.post(
        f"{http.base}/api/v1/namespaces/default/configmaps",
        data=body,
        headers={"Content-Type": PROTOBUF, "Accept": f"{PROTOBUF},application/json"},
    ) as response:
        assert response.status == 201, await response.text()
        created: dict[str, Any] = await response.json()
    assert created["data"] == {"a": "1"} and created["immutable"] is True
    refused = await http.call(
        "POST", "/api/v1/namespaces/default/configmaps", {"x": 1}, content_type=PROTOBUF
    )
    assert refused.status == 400  # not the protobuf envelope at all
