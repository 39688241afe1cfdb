"""The pod admission webhook: new pods of an in-place Hvpa start at the size it decided.

Served on its own HTTPS listener (`--webhook-bind-address`, default
`:9443`), by every replica (the API server reaches whichever the Service
picks; standbys keep warm caches). `POST /mutate-pods` takes an
`admission.k8s.io/v1` AdmissionReview and always allows the pod; for a pod
an Hvpa sizes in place it adds a JSONPatch giving its containers the
decided requests and limits (hvpa.controller.admission). It never refuses a
pod and never fails a call on a pod it does not know: a wrong or missing
answer would only leave the pod at its template's size, which the resize
path corrects right after. A body that is not an AdmissionReview v1 is
answered 400; one larger than `max_request_bytes` is refused unread (413);
in a dry run no pod is patched.

Alongside, every `refresh_seconds`: each replica serves the certificate the
Secret (or the certificate directory) holds now (hvpa.server.webhook_tls);
the leader first rotates it when due and then brings the
MutatingWebhookConfiguration in line with the Hvpas and the CA bundle
(hvpa.controller.webhooks). Nothing of this is written in a dry run.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import time
from collections.abc import Callable
from typing import Any, Final
from urllib.parse import urlsplit

import orjson
from aiohttp import web

from hvpa.controller.admission import pod_patch
from hvpa.controller.manager import Manager
from hvpa.controller.webhooks import WEBHOOK_PATH, WebhookClient, WebhookConfiguration
from hvpa.kube.client import KubeClient
from hvpa.logs import fields
from hvpa.server.webhook_tls import WebhookTls
from hvpa.settings import WebhookSettings

__all__ = ["AdmissionWebhook", "service_names"]

_logger = logging.getLogger(__name__)

_REVIEW_VERSION: Final = "admission.k8s.io/v1"


def service_names(settings: WebhookSettings) -> tuple[str, ...]:
    """The names the serving certificate must carry: the URL's host, or the Service's DNS names."""
    if settings.url:
        host = urlsplit(settings.url).hostname
        if not host:
            raise ValueError(f"--webhook-url {settings.url!r} names no host")
        return (host,)
    name, namespace = settings.service, settings.namespace
    return (
        name,
        f"{name}.{namespace}",
        f"{name}.{namespace}.svc",
        f"{name}.{namespace}.svc.cluster.local",
    )


class AdmissionWebhook:
    """The webhook's application, its certificate and its configuration, for one replica."""

    def __init__(
        self,
        *,
        manager: Manager,
        client: KubeClient,
        settings: WebhookSettings,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self._manager = manager
        self._settings = settings
        self.tls = WebhookTls(
            client=client,
            applier=manager.applier,
            namespace=settings.namespace,
            secret_name=settings.secret_name,
            names=service_names(settings),
            cert_path=settings.cert_path,
            wall_clock=wall_clock,
        )
        registration = (
            WebhookClient(url=settings.url)
            if settings.url
            else WebhookClient(
                service=(settings.namespace, settings.service, settings.service_port)
            )
        )
        self.configuration = WebhookConfiguration(
            client=client,
            applier=manager.applier,
            cache=manager.cache,
            name=settings.configuration_name,
            webhook=registration,
        )
        self.reviewed = 0
        self.patched = 0

    def application(self) -> web.Application:
        app = web.Application(client_max_size=self._settings.max_request_bytes)
        app.router.add_post(WEBHOOK_PATH, self._review)
        return app

    async def run(self) -> None:
        """Refresh the certificate and, on the leader, the configuration, until cancelled."""
        while True:
            await self.refresh()
            await asyncio.sleep(self._settings.refresh_seconds)

    async def refresh(self) -> None:
        dry_run = self._manager.settings.dry_run
        leading = self._manager.leading() and self._manager.synced and not dry_run
        await self.tls.refresh(leading=leading)
        if leading:
            managed = self._settings.cert_path is None
            await self.configuration.sync(self.tls.ca_bundle if managed else None)

    async def _review(self, request: web.Request) -> web.Response:
        try:
            review = orjson.loads(await request.read())
        except orjson.JSONDecodeError:
            return web.Response(status=400, text="the body is not JSON")
        admission = review.get("request") if isinstance(review, dict) else None
        if (
            not isinstance(review, dict)
            or review.get("apiVersion") != _REVIEW_VERSION
            or review.get("kind") != "AdmissionReview"
            or not isinstance(admission, dict)
            or not isinstance(admission.get("uid"), str)
        ):
            return web.Response(status=400, text=f"expected a {_REVIEW_VERSION} AdmissionReview")
        self.reviewed += 1
        response: dict[str, Any] = {"uid": admission["uid"], "allowed": True}
        patch = self._patch(admission)
        if patch is not None:
            response["patchType"] = "JSONPatch"
            response["patch"] = base64.b64encode(patch).decode()
            self.patched += 1
        body = {"apiVersion": _REVIEW_VERSION, "kind": "AdmissionReview", "response": response}
        return web.Response(body=orjson.dumps(body), content_type="application/json")

    def _patch(self, admission: dict[str, Any]) -> bytes | None:
        """The JSONPatch for a pod being created, or None (anything else, or nothing to do)."""
        kind = admission.get("kind") or {}
        pod = admission.get("object")
        namespace = admission.get("namespace")
        if (
            self._manager.settings.dry_run
            or admission.get("operation") != "CREATE"
            or not isinstance(kind, dict)
            or (kind.get("group"), kind.get("version"), kind.get("kind")) != ("", "v1", "Pod")
            or not isinstance(pod, dict)
            or not isinstance(namespace, str)
        ):
            return None
        try:
            sizing = pod_patch(self._manager.cache, pod, namespace)
        except Exception:  # never fail a pod's creation: it is resized in place anyway
            _logger.exception("cannot size a new pod", extra=fields(namespace=namespace))
            return None
        if sizing is None:
            return None
        _logger.info(
            "sizing a new pod", extra=fields(hvpa=sizing.hvpa, containers=len(sizing.operations))
        )
        return orjson.dumps(list(sizing.operations))
