"""hvpa's MutatingWebhookConfiguration, kept by the leader: one webhook per Hvpa that sizes in place.

The manifests create the configuration (`--webhook-configuration-name`,
default `hvpa`) with no webhooks; the leader keeps its list in line with the
cache, so the API server calls hvpa only for the pods it may size:

- one webhook per valid Hvpa whose `spec.vpa.resizeMode` is InPlaceOrRollout
  or InPlace and whose target exists, named `<namespace>.<name>.` plus
  `WEBHOOK_SUFFIX` (a hash of the two instead when that would be longer than
  a name may be), in key order;
- scoped to the Hvpa's namespace (`namespaceSelector` on
  `kubernetes.io/metadata.name`) and to its target's pods (`objectSelector`:
  the target's selector), for CREATE of pods only;
- `failurePolicy: Ignore` (a pod is never held back by hvpa: one created
  while the webhook cannot answer starts at the template's size and is
  resized in place right after), `sideEffects: None`, a short
  `timeoutSeconds`, `reinvocationPolicy: Never`, AdmissionReview v1;
- `clientConfig`: the webhook Service (`--webhook-service`) or a URL
  (`--webhook-url`), with the CA bundle of hvpa's own certificate; when hvpa
  does not manage the certificate (cert-manager's cainjector writes the
  bundle), the bundle in place is kept.

The configuration is read with a GET and written only when it differs (a
JSON merge patch with its resourceVersion: a 409 means someone else wrote
it, and the next pass looks again). A pass that reads the resourceVersion it
last found in line, and wants the same webhooks as then, stops there: the
webhooks themselves are neither decoded nor compared (an edit by anyone
gives the object a new resourceVersion, and is compared and put back). It
is cluster-scoped and hvpa may read and patch only that one name (RBAC
resourceNames).
"""

from __future__ import annotations

import base64
import hashlib
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import msgspec

from hvpa.controller.applier import Applier
from hvpa.controller.cache import Cache
from hvpa.engine.inplace import IN_PLACE_MODES
from hvpa.kube.client import KubeClient
from hvpa.kube.errors import Conflict, KubeError, NotFound
from hvpa.kube.resources import api_path
from hvpa.labels import LabelSelector
from hvpa.logs import fields

__all__ = [
    "WEBHOOK_PATH",
    "WEBHOOK_SUFFIX",
    "WebhookClient",
    "WebhookConfiguration",
    "desired_webhooks",
]

_logger = logging.getLogger(__name__)

WEBHOOK_PATH: Final = "/mutate-pods"
WEBHOOK_SUFFIX: Final = "pods.hvpa.autoscaling.k8s.io"
# The webhook answers from its cache: a second is ample; the API server waits no longer.
TIMEOUT_SECONDS: Final = 5
_MAX_NAME: Final = 253
_NAMESPACE_LABEL: Final = "kubernetes.io/metadata.name"


@dataclass(frozen=True, slots=True)
class WebhookClient:
    """Where the API server reaches the webhook: a Service (namespace, name, port) or a URL."""

    service: tuple[str, str, int] | None = None
    url: str | None = None

    def config(self, ca_bundle: bytes | None) -> dict[str, Any]:
        config: dict[str, Any] = {}
        if self.url is not None:
            config["url"] = self.url.rstrip("/") + WEBHOOK_PATH
        elif self.service is not None:
            namespace, name, port = self.service
            config["service"] = {
                "namespace": namespace,
                "name": name,
                "path": WEBHOOK_PATH,
                "port": port,
            }
        if ca_bundle is not None:
            config["caBundle"] = base64.b64encode(ca_bundle).decode()
        return config


def webhook_name(namespace: str, name: str) -> str:
    """A name unique per Hvpa and valid as a webhook's (a DNS subdomain of three labels or more)."""
    plain = f"{namespace}.{name}.{WEBHOOK_SUFFIX}"
    if len(plain) <= _MAX_NAME:
        return plain
    digest = hashlib.sha256(f"{namespace}/{name}".encode()).hexdigest()[:32]
    return f"h{digest}.{WEBHOOK_SUFFIX}"


def _selector(selector: LabelSelector) -> dict[str, Any]:
    """A parsed selector back in metav1.LabelSelector form (set-based: matchExpressions)."""
    operators = {"Equals": "In", "NotEquals": "NotIn"}
    expressions = []
    for requirement in selector.requirements:
        operator = operators.get(requirement.operator, requirement.operator)
        expression: dict[str, Any] = {"key": requirement.key, "operator": operator}
        if requirement.values:
            expression["values"] = list(requirement.values)
        expressions.append(expression)
    return {"matchExpressions": expressions} if expressions else {}


def desired_webhooks(
    cache: Cache, client: WebhookClient, ca_bundle: bytes | None
) -> list[dict[str, Any]]:
    """The webhooks the configuration should hold now (module docstring)."""
    webhooks = []
    for key in cache.hvpa_keys():
        record = cache.hvpas.get(key)
        if record is None or record.hvpa is None or record.deleting or record.target is None:
            continue
        if record.hvpa.spec.vpa.resize_mode not in IN_PLACE_MODES:
            continue
        target = cache.target(*record.target)
        if target is None or target.selector.nothing:
            continue
        webhooks.append(
            {
                "name": webhook_name(record.namespace, record.name),
                "admissionReviewVersions": ["v1"],
                "sideEffects": "None",
                "failurePolicy": "Ignore",
                "matchPolicy": "Equivalent",
                "reinvocationPolicy": "Never",
                "timeoutSeconds": TIMEOUT_SECONDS,
                "clientConfig": client.config(ca_bundle),
                "rules": [
                    {
                        "operations": ["CREATE"],
                        "apiGroups": [""],
                        "apiVersions": ["v1"],
                        "resources": ["pods"],
                        "scope": "Namespaced",
                    }
                ],
                "namespaceSelector": {"matchLabels": {_NAMESPACE_LABEL: record.namespace}},
                "objectSelector": _selector(target.selector),
            }
        )
    return webhooks


class _Meta(msgspec.Struct, rename="camel"):
    resource_version: str = ""


class _Configuration(msgspec.Struct):
    metadata: _Meta = msgspec.field(default_factory=_Meta)
    webhooks: list[dict[str, Any]] | None = None


class _Versioned(msgspec.Struct):
    """Only the metadata: the webhooks list is skipped, not decoded."""

    metadata: _Meta = msgspec.field(default_factory=_Meta)


_decode: Final = msgspec.json.Decoder(_Configuration).decode
_decode_version: Final = msgspec.json.Decoder(_Versioned).decode


@dataclass(frozen=True, slots=True)
class _InLine:
    """The resourceVersion last found in line, with the bundle and the webhooks wanted then."""

    resource_version: str
    bundle: bytes | None
    webhooks: list[dict[str, Any]]


class WebhookConfiguration:
    """The leader's pass over the configuration: read it, write it when it differs."""

    def __init__(
        self,
        *,
        client: KubeClient,
        applier: Applier,
        cache: Cache,
        name: str,
        webhook: WebhookClient,
    ) -> None:
        self._client = client
        self._applier = applier
        self._cache = cache
        self.name = name
        self._webhook = webhook
        self._missing_warned = False
        self._in_line: _InLine | None = None
        # Passes that decoded and compared the live webhooks (a test sees unchanged ones skipped).
        self.comparisons = 0

    async def sync(self, ca_bundle: bytes | None) -> None:
        """Bring the configuration in line; `ca_bundle` None: keep the bundles it has."""
        path = api_path(
            group="admissionregistration.k8s.io",
            version="v1",
            plural="mutatingwebhookconfigurations",
            name=self.name,
        )
        try:
            body = await self._client.get(path)
            version = _decode_version(body).metadata.resource_version
        except NotFound:
            if not self._missing_warned:
                _logger.warning(
                    "the MutatingWebhookConfiguration does not exist; new pods are not sized at "
                    "admission (apply the manifests to create it)",
                    extra=fields(name=self.name),
                )
                self._missing_warned = True
            self._in_line = None
            return
        except (KubeError, msgspec.DecodeError) as error:
            _logger.info("cannot read the webhook configuration", extra=fields(error=str(error)))
            return
        self._missing_warned = False
        in_line = self._in_line
        if in_line is not None and version and in_line.resource_version == version:
            # The same object as then, so the same bundle when the live one is kept.
            bundle = ca_bundle if ca_bundle is not None else in_line.bundle
            if desired_webhooks(self._cache, self._webhook, bundle) == in_line.webhooks:
                return
        await self._compare_and_write(body, ca_bundle)

    async def _compare_and_write(self, body: bytes, ca_bundle: bytes | None) -> None:
        """Decode the live webhooks, and write the wanted ones when they differ."""
        self._in_line = None
        try:
            live = _decode(body)
        except msgspec.DecodeError as error:
            _logger.info("cannot read the webhook configuration", extra=fields(error=str(error)))
            return
        self.comparisons += 1
        bundle = ca_bundle if ca_bundle is not None else _live_bundle(live.webhooks or [])
        wanted = desired_webhooks(self._cache, self._webhook, bundle)
        if _comparable(wanted) == _comparable(live.webhooks or []):
            self._in_line = _InLine(live.metadata.resource_version, bundle, wanted)
            return
        try:
            await self._applier.write_webhook_configuration(
                name=self.name, resource_version=live.metadata.resource_version, webhooks=wanted
            )
        except Conflict:
            _logger.info("webhook configuration changed meanwhile; next pass")


def _live_bundle(webhooks: Sequence[Mapping[str, Any]]) -> bytes | None:
    for webhook in webhooks:
        bundle = (webhook.get("clientConfig") or {}).get("caBundle")
        if bundle:
            try:
                return base64.b64decode(bundle, validate=True)
            except ValueError:
                return None
    return None


def _comparable(webhooks: Sequence[Mapping[str, Any]]) -> list[Any]:
    """The fields hvpa sets, so the server's defaults on the rest do not count as a change."""
    keys = (
        "name",
        "admissionReviewVersions",
        "sideEffects",
        "failurePolicy",
        "matchPolicy",
        "reinvocationPolicy",
        "timeoutSeconds",
        "clientConfig",
        "rules",
        "namespaceSelector",
        "objectSelector",
    )
    return [{k: w.get(k) for k in keys} for w in webhooks]
