"""The webhook listener's protocol: an AdmissionReview v1 in, the same uid out, always allowed;
anything else answered 400, an oversized body 413, no patch in a dry run; the certificate and the
configuration refreshed by the leader only (the sizing itself: tests/controller/test_admission.py
and tests/integration/test_in_place_webhook.py)."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from prometheus_client import CollectorRegistry

from hvpa.controller.manager import Manager
from hvpa.kube.client import KubeClient
from hvpa.kube.metrics import KubeMetrics
from hvpa.server import Server
from hvpa.settings import ControllerSettings, ServerSettings, WebhookSettings
from hvpa.sim.apiserver import ApiServer


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
async def apiserver() -> AsyncIterator[ApiServer]:
    async with ApiServer(seed=1) as server:
        yield server


async def listening(client: KubeClient, *, dry_run: bool = False, max_bytes: int = 4096) -> Server:
    manager = Manager(
        client=client,
        kube_metrics=KubeMetrics(CollectorRegistry()),
        settings=ControllerSettings(dry_run=dry_run),
    )
    port = free_port()
    settings = ServerSettings(
        metrics_bind_address="0",
        health_probe_bind_address="0",
        webhook=WebhookSettings(
            bind_address=f"127.0.0.1:{port}",
            namespace="default",
            url=f"https://127.0.0.1:{port}",
            max_request_bytes=max_bytes,
        ),
    )
    server = Server(manager=manager, settings=settings, client=client)
    await server.start()
    return server


def review(uid: str = "u-1") -> dict[str, Any]:
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": uid,
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "operation": "CREATE",
            "namespace": "default",
            "object": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": []}},
        },
    }


async def post(server: Server, body: Any) -> tuple[int, Any]:
    url = f"https://127.0.0.1:{server.webhook_port}/mutate-pods"
    async with (
        aiohttp.ClientSession() as session,
        # The certificate is hvpa's stand-in until a leader has made one: not verified here.
        session.post(url, json=body, ssl=False) as answer,
    ):
        text = await answer.read()
        if answer.content_type == "application/json":
            return answer.status, await answer.json()
        return answer.status, text


async def test_a_review_is_answered_with_its_uid_and_allowed(client: KubeClient) -> None:
    server = await listening(client)
    try:
        status, answer = await post(server, review("abc"))
        assert status == 200
        assert answer == {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "response": {"uid": "abc", "allowed": True},
        }
    finally:
        await server.stop()


@pytest.mark.parametrize(
    "body",
    [
        pytest.param({"kind": "AdmissionReview"}, id="no-version"),
        pytest.param({**review(), "apiVersion": "admission.k8s.io/v1beta1"}, id="v1beta1"),
        pytest.param({**review(), "request": {"uid": 5}}, id="uid-not-a-string"),
        pytest.param([1, 2], id="not-an-object"),
    ],
)
async def test_what_is_not_a_review_is_a_bad_request(client: KubeClient, body: Any) -> None:
    server = await listening(client)
    try:
        status, _ = await post(server, body)
        assert status == 400
    finally:
        await server.stop()


async def test_an_oversized_body_is_refused(client: KubeClient) -> None:
    server = await listening(client, max_bytes=1024)
    try:
        big = review()
        big["request"]["object"]["metadata"]["annotations"] = {"x": "y" * 2048}
        status, _ = await post(server, big)
        assert status == 413
    finally:
        await server.stop()


async def test_a_standby_neither_rotates_nor_registers(
    apiserver: ApiServer, client: KubeClient
) -> None:
    apiserver.objects.create("secrets", {"metadata": {"name": "hvpa-webhook-tls"}})
    apiserver.objects.create(
        "mutatingwebhookconfigurations", {"metadata": {"name": "hvpa"}, "webhooks": []}
    )
    server = await listening(client)  # not run: never synced, so never the leader's passes
    try:
        assert server.webhook is not None
        await server.webhook.refresh()
        assert not apiserver.objects.get("secrets", "hvpa-webhook-tls").get("data")
        assert server.webhook.tls.serving is None
    finally:
        await server.stop()
