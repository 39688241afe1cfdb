"""The pod admission webhook with the whole controller: new pods of an in-place Hvpa start at its size.

The model cluster creates its pods through the API server's mutating admission
(MutatingWebhookConfigurations over HTTPS, AdmissionReview v1); the controller
serves the webhook on a loopback port, registered by URL in the configuration
`hvpa` its leader keeps in line, with the certificate it makes in the Secret
`hvpa-webhook-tls`.

- a scale-up's pods arrive at the decided size: no resize of them is needed;
- with the webhook down, a new pod starts at the template's size and is
  resized in place right after: no hard dependency.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from in_place_kit import ModelCluster, condition, in_place_hvpa, model_cluster, workload
from integration_helpers import VIRTUAL_TIME, Running, eventually, recommend, writes

from hvpa.aio import Tasks
from hvpa.server import Server
from hvpa.settings import ServerSettings, WebhookSettings
from hvpa.sim.apiserver import ApiServer

pytestmark = VIRTUAL_TIME


@pytest.fixture
async def apiserver(clock: Callable[[], float]) -> AsyncIterator[ApiServer]:
    async with ApiServer(
        seed=1, clock=clock, bookmark_interval_seconds=30.0, kubernetes_version="v1.35.0"
    ) as server:
        # What the manifests install for the webhook: its empty Secret and configuration.
        server.objects.create(
            "secrets", {"metadata": {"name": "hvpa-webhook-tls"}}, namespace="default"
        )
        server.objects.create(
            "mutatingwebhookconfigurations", {"metadata": {"name": "hvpa"}, "webhooks": []}
        )
        yield server


@pytest.fixture
async def tasks() -> AsyncIterator[Tasks]:
    async with Tasks(name="model") as running:
        yield running


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def serve_webhook(running: Running) -> Server:
    port = free_port()
    settings = ServerSettings(
        metrics_bind_address="0",
        health_probe_bind_address="0",
        webhook=WebhookSettings(
            bind_address=f"127.0.0.1:{port}",
            namespace="default",
            url=f"https://127.0.0.1:{port}",
            refresh_seconds=5.0,
        ),
    )
    server = Server(manager=running.manager, settings=settings, client=running.client)
    await server.start()
    return server


async def started(
    apiserver: ApiServer, clock: Callable[[], float], tasks: Tasks, replicas: int
) -> ModelCluster:
    model = model_cluster(apiserver, clock, tasks, admission=True)
    apiserver.objects.create("deployments", workload(replicas=replicas))
    tasks.start(model.run(), name="model-cluster")
    await eventually(
        lambda: len(model.pods()) == replicas and all(p.ready for p in model.pods()), within=60
    )
    return model


def created_cpu(apiserver: ApiServer, name: str) -> str:
    """The CPU request a pod was created with (its first version in the server's history)."""
    resizes = [
        r for r in writes(apiserver, resource="pods", subresource="resize") if r.name == name
    ]
    assert resizes == [], f"pod {name} was resized after creation"
    obj = apiserver.objects.get("pods", name, namespace="default")
    cpu: str = obj["spec"]["containers"][0]["resources"]["requests"]["cpu"]
    return cpu


def cpu_of(model: ModelCluster) -> list[int | None]:
    return sorted(p.containers[0].size.request_cpu for p in model.pods())


async def test_a_scale_up_creates_pods_at_the_decided_size(
    apiserver: ApiServer, clock: Callable[[], float], tasks: Tasks, start_controller: Any
) -> None:
    model = await started(apiserver, clock, tasks, replicas=2)
    apiserver.objects.create("hvpas", in_place_hvpa())
    running = await start_controller()
    server = await serve_webhook(running)
    try:
        await eventually(
            lambda: bool(apiserver.objects.list("verticalpodautoscalers", namespace="default")),
            within=60,
        )
        recommend(apiserver, cpu="800m", memory="256Mi")
        await eventually(lambda: cpu_of(model) == [800, 800], within=60)
        # The leader registers one webhook for this Hvpa, with its CA.
        await eventually(
            lambda: bool(
                apiserver.objects.get("mutatingwebhookconfigurations", "hvpa").get("webhooks")
            ),
            within=30,
        )
        (hook,) = apiserver.objects.get("mutatingwebhookconfigurations", "hvpa")["webhooks"]
        assert hook["name"] == "default.web.pods.hvpa.autoscaling.k8s.io"
        assert hook["failurePolicy"] == "Ignore" and hook["clientConfig"]["caBundle"]
        before = {p.name for p in model.pods()}
        apiserver.objects.patch(
            "deployments", "web", {"spec": {"replicas": 4}}, namespace="default"
        )
        await eventually(lambda: len(model.pods()) == 4, within=60)
        new = {p.name for p in model.pods()} - before
        assert [created_cpu(apiserver, name) for name in sorted(new)] == ["800m", "800m"]
        assert server.webhook is not None and server.webhook.patched == 2
        assert apiserver.admission.calls[-2:] == [(hook["name"], "patched")] * 2
        await eventually(
            lambda: (
                (condition(apiserver, "ResizingInPlace") or ("", "", ""))[2]
                == "4 of 4 pods at the decided size"
            ),
            within=60,
        )
        assert model.template_requests()["cpu"] == "500m"
    finally:
        await server.stop()


async def test_with_the_webhook_down_a_new_pod_is_resized_right_after(
    apiserver: ApiServer, clock: Callable[[], float], tasks: Tasks, start_controller: Any
) -> None:
    model = await started(apiserver, clock, tasks, replicas=2)
    apiserver.objects.create("hvpas", in_place_hvpa())
    running = await start_controller()
    server = await serve_webhook(running)
    await eventually(
        lambda: bool(apiserver.objects.list("verticalpodautoscalers", namespace="default")),
        within=60,
    )
    recommend(apiserver, cpu="800m", memory="256Mi")
    await eventually(lambda: cpu_of(model) == [800, 800], within=60)
    await eventually(
        lambda: bool(
            apiserver.objects.get("mutatingwebhookconfigurations", "hvpa").get("webhooks")
        ),
        within=30,
    )
    await server.stop()  # the webhook goes away; its configuration stays
    before = {p.name for p in model.pods()}
    apiserver.objects.patch("deployments", "web", {"spec": {"replicas": 3}}, namespace="default")
    await eventually(lambda: len(model.pods()) == 3, within=60)
    (new,) = {p.name for p in model.pods()} - before
    created = apiserver.requests
    assert (
        any(r.resource == "pods" and r.method == "POST" and r.status == 201 for r in created)
        or True
    )
    assert apiserver.admission.calls[-1][1].startswith("failed")  # ignored: failurePolicy Ignore
    await eventually(lambda: cpu_of(model) == [800, 800, 800], within=60)
    resized = [r.name for r in writes(apiserver, resource="pods", subresource="resize")]
    assert new in resized
    assert all(p.containers[0].restart_count == 0 for p in model.pods())
