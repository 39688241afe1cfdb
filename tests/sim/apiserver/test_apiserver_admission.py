"""Mutating admission: a create goes through each matching MutatingWebhookConfiguration's webhook
over HTTPS (AdmissionReview v1), its JSONPatch applied, failurePolicy and timeoutSeconds
honoured, namespace and object selectors respected (kube-apiserver's mutating webhook plugin)."""

from __future__ import annotations

import asyncio
import base64
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import orjson
import pytest
from aiohttp import web
from apiserver_http import Http

from hvpa.server.certificates import load_pair, tls_context
from hvpa.server.webhook_tls import issue_serving, make_ca
from hvpa.sim.apiserver import ApiServer

PODS = "/api/v1/namespaces/default/pods"
NOW = 1_800_000_000.0


@dataclass
class Webhook:
    """An HTTPS webhook in the test: it records each review and answers with `answer(review)`."""

    url: str
    ca: bytes
    reviews: list[dict[str, Any]] = field(default_factory=list)
    answer: Callable[[dict[str, Any]], Awaitable[dict[str, Any]]] | None = None


def allowing(patch: list[dict[str, Any]] | None = None) -> Callable[..., Awaitable[dict[str, Any]]]:
    async def answer(review: dict[str, Any]) -> dict[str, Any]:
        response: dict[str, Any] = {"uid": review["request"]["uid"], "allowed": True}
        if patch is not None:
            response["patchType"] = "JSONPatch"
            response["patch"] = base64.b64encode(orjson.dumps(patch)).decode()
        return {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "response": response,
        }

    return answer


@pytest.fixture
async def webhook() -> AsyncIterator[Webhook]:
    ca = make_ca(now=time.time(), days=1)
    serving = issue_serving(ca, ["127.0.0.1"], now=time.time(), days=1)
    context = tls_context()
    load_pair(context, serving.certificate, serving.key)
    hook = Webhook(url="", ca=ca.certificate, answer=allowing())

    async def handle(request: web.Request) -> web.Response:
        review = await request.json()
        hook.reviews.append(review)
        assert hook.answer is not None
        return web.json_response(await hook.answer(review))

    app = web.Application()
    app.router.add_post("/mutate", handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=context)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    hook.url = f"https://127.0.0.1:{port}/mutate"
    yield hook
    await runner.cleanup()


@pytest.fixture
async def http(server: ApiServer) -> AsyncIterator[Http]:
    async with aiohttp.ClientSession() as session:
        yield Http(session, server.url)


def configuration(
    webhook: Webhook,
    *,
    failure_policy: str = "Fail",
    timeout: int | None = None,
    object_selector: dict[str, Any] | None = None,
    namespace: str | None = None,
    ca: bytes | None = None,
) -> dict[str, Any]:
    hook: dict[str, Any] = {
        "name": "size.pods.example.com",
        "admissionReviewVersions": ["v1"],
        "sideEffects": "None",
        "failurePolicy": failure_policy,
        "clientConfig": {
            "url": webhook.url,
            "caBundle": base64.b64encode(ca or webhook.ca).decode(),
        },
        "rules": [
            {
                "operations": ["CREATE"],
                "apiGroups": [""],
                "apiVersions": ["v1"],
                "resources": ["pods"],
            }
        ],
    }
    if timeout is not None:
        hook["timeoutSeconds"] = timeout
    if object_selector is not None:
        hook["objectSelector"] = object_selector
    if namespace is not None:
        hook["namespaceSelector"] = {"matchLabels": {"kubernetes.io/metadata.name": namespace}}
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": "sizer"},
        "webhooks": [hook],
    }


def pod(name: str = "web-0", **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels or {"app": "web"}},
        "spec": {
            "containers": [
                {"name": "app", "image": "app:1", "resources": {"requests": {"cpu": "100m"}}}
            ]
        },
    }


SIZE = [{"op": "add", "path": "/spec/containers/0/resources/requests/cpu", "value": "750m"}]


async def test_a_matching_webhook_patches_the_pod(
    server: ApiServer, http: Http, webhook: Webhook
) -> None:
    webhook.answer = allowing(SIZE)
    server.objects.create("mutatingwebhookconfigurations", configuration(webhook))
    created = await http.post(PODS, pod())
    assert created.status == 201, created.body
    assert created.body["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "750m"
    (review,) = webhook.reviews
    request = review["request"]
    assert (review["apiVersion"], review["kind"]) == ("admission.k8s.io/v1", "AdmissionReview")
    assert request["kind"] == {"group": "", "version": "v1", "kind": "Pod"}
    assert request["resource"] == {"group": "", "version": "v1", "resource": "pods"}
    assert (request["operation"], request["namespace"]) == ("CREATE", "default")
    assert request["object"]["metadata"]["name"] == "web-0"
    assert request["oldObject"] is None
    assert server.admission.calls == [("size.pods.example.com", "patched")]


@pytest.mark.parametrize(
    ("selectors", "called"),
    [
        pytest.param({"object_selector": {"matchLabels": {"app": "web"}}}, True, id="object-match"),
        pytest.param({"object_selector": {"matchLabels": {"app": "db"}}}, False, id="object-miss"),
        pytest.param({"namespace": "default"}, True, id="namespace-by-name"),
        pytest.param({"namespace": "kube-system"}, False, id="namespace-miss"),
    ],
)
async def test_selectors(
    server: ApiServer, http: Http, webhook: Webhook, selectors: dict[str, Any], called: bool
) -> None:
    server.objects.create("mutatingwebhookconfigurations", configuration(webhook, **selectors))
    assert (await http.post(PODS, pod())).status == 201
    assert bool(webhook.reviews) is called


async def test_other_resources_and_in_process_creates_are_not_sent(
    server: ApiServer, http: Http, webhook: Webhook
) -> None:
    server.objects.create("mutatingwebhookconfigurations", configuration(webhook))
    configmap = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    assert (await http.post("/api/v1/namespaces/default/configmaps", configmap)).status == 201
    server.objects.create("pods", pod("direct"))
    assert webhook.reviews == []


@pytest.mark.parametrize(
    ("failure", "policy", "status"),
    [
        pytest.param("down", "Ignore", 201, id="down-ignore"),
        pytest.param("down", "Fail", 500, id="down-fail"),
        pytest.param("slow", "Ignore", 201, id="timeout-ignore"),
        pytest.param("slow", "Fail", 500, id="timeout-fail"),
        pytest.param("wrong-ca", "Fail", 500, id="untrusted-certificate"),
        pytest.param("wrong-uid", "Fail", 500, id="wrong-uid"),
        pytest.param("wrong-uid", "Ignore", 201, id="wrong-uid-ignore"),
    ],
)
async def test_failure_policy(
    server: ApiServer, http: Http, webhook: Webhook, failure: str, policy: str, status: int
) -> None:
    other_ca = make_ca(now=NOW, days=1).certificate
    if failure == "slow":

        async def slow(review: dict[str, Any]) -> dict[str, Any]:
            await asyncio.sleep(2)
            return await allowing(SIZE)(review)

        webhook.answer = slow
    elif failure == "wrong-uid":

        async def wrong(review: dict[str, Any]) -> dict[str, Any]:
            answer = await allowing(SIZE)(review)
            answer["response"]["uid"] = "someone-else"
            return answer

        webhook.answer = wrong
    else:
        webhook.answer = allowing(SIZE)
    if failure == "down":
        webhook.url = "https://127.0.0.1:9/mutate"
    body = configuration(
        webhook,
        failure_policy=policy,
        timeout=1 if failure == "slow" else None,
        ca=other_ca if failure == "wrong-ca" else None,
    )
    server.objects.create("mutatingwebhookconfigurations", body)
    created = await http.post(PODS, pod())
    assert created.status == status, created.body
    if status == 201:
        assert created.body["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "100m"
    else:
        assert created.body["reason"] == "InternalError"
        assert created.body["message"].startswith(
            'Internal error occurred: failed calling webhook "size.pods.example.com": '
        )
        assert (await http.get(f"{PODS}/web-0")).status == 404


async def test_a_denial_refuses_the_create(server: ApiServer, http: Http, webhook: Webhook) -> None:
    async def deny(review: dict[str, Any]) -> dict[str, Any]:
        return {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "response": {
                "uid": review["request"]["uid"],
                "allowed": False,
                "status": {"code": 403, "message": "no pods today"},
            },
        }

    webhook.answer = deny
    server.objects.create("mutatingwebhookconfigurations", configuration(webhook))
    refused = await http.post(PODS, pod())
    assert refused.status == 403
    assert refused.body["message"] == (
        'admission webhook "size.pods.example.com" denied the request: no pods today'
    )
