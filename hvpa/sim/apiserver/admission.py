"""Mutating admission webhooks: the MutatingWebhookConfigurations a create is sent through.

On every CREATE (over HTTP, or `admit` in process), before the object is
defaulted, validated and stored, the server looks at every
MutatingWebhookConfiguration (in name order, webhooks in their order) and
calls each webhook that matches, as kube-apiserver's mutating webhook plugin
does:

- a webhook matches when one of its `rules` names the operation, the API
  group, version and resource (`*` for any; `pods` is the resource, not its
  subresources), its `namespaceSelector` selects the object's namespace (by
  the namespace's labels, which always include `kubernetes.io/metadata.name`)
  and its `objectSelector` the object's labels;
- the call is a POST of an `admission.k8s.io/v1` AdmissionReview over HTTPS
  to `clientConfig.url`, or to the address `services` maps
  `clientConfig.service` to (there is no cluster network here), verifying the
  webhook's certificate against `clientConfig.caBundle`; it must answer within
  `timeoutSeconds` (default 10);
- the answer must be an AdmissionReview v1 whose `response.uid` is the
  request's; `allowed: false` refuses the create with the webhook's status
  (`admission webhook "NAME" denied the request: ...`, 400 unless it says
  another code); a `patch` (base64, `patchType: JSONPatch`) is applied to the
  object, which the next webhook then sees;
- a call that fails (unreachable, a TLS error, a timeout, an answer that is
  not a valid AdmissionReview) refuses the create with a 500 (`failed calling
  webhook "NAME": ...`) under `failurePolicy: Fail` (the default), and is
  passed over under `Ignore`.

Not modelled: reinvocation, UPDATE and DELETE operations, matchConditions,
and the dry-run rule for webhooks with side effects (every configuration
here must say `sideEffects: None`, as the API requires of v1).
`calls` records each call's (webhook name, outcome), for tests.
"""

from __future__ import annotations

import base64
import logging
import ssl
import uuid
from collections.abc import Mapping
from typing import Any, Final

import aiohttp
import orjson

from hvpa.labels import LabelSelector, SelectorError
from hvpa.sim.apiserver.errors import ApiError, InternalError
from hvpa.sim.apiserver.patching import PatchType, apply_patch
from hvpa.sim.apiserver.registry import Registry
from hvpa.sim.apiserver.resources import ResourceType

__all__ = ["Admission", "WebhookDenied"]

_logger = logging.getLogger(__name__)

_REVIEW_VERSION: Final = "admission.k8s.io/v1"
_DEFAULT_TIMEOUT_SECONDS: Final = 10
_NAMESPACE_NAME_LABEL: Final = "kubernetes.io/metadata.name"
# An answer larger than this is not read (the real server limits a webhook's answer too).
_MAX_ANSWER_BYTES: Final = 7 * 2**20
# TLS contexts kept, one per caBundle: more distinct bundles than this start afresh.
_MOST_CONTEXTS: Final = 16


class WebhookDenied(ApiError):
    """A webhook answered `allowed: false`; its status code (400 unless it gave one)."""

    code = 400
    reason = "BadRequest"

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code  # type: ignore[misc]


class _CallFailed(Exception):
    pass


class Admission:
    """The mutating admission stage of one API server."""

    def __init__(self, registry: Registry) -> None:
        self._registry = registry
        self._configurations = registry.resource("mutatingwebhookconfigurations")
        self._namespaces = registry.resource("namespaces")
        # (namespace, service name, port) -> base URL (https://host:port) for service references.
        self.services: dict[tuple[str, str, int], str] = {}
        self.calls: list[tuple[str, str]] = []
        # The TLS context of each caBundle, made once: loading a CA store at every admitted
        # pod was about 1% of a simulation. Connections are not kept between calls (as
        # kube-apiserver's webhook client would keep them): how the calls' I/O interleaves
        # with the controller's moves a simulation's decisions, and the comparison tables
        # are pinned to the runs as they are.
        self._contexts: dict[str, ssl.SSLContext] = {}

    async def admit(
        self,
        rtype: ResourceType,
        namespace: str | None,
        obj: dict[str, Any],
        *,
        user: str = "system:admin",
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """The object after every matching webhook's patch; raises an ApiError to refuse it."""
        webhooks = self._matching(rtype, namespace, obj)
        if not webhooks:
            return obj
        for webhook in webhooks:
            obj = await self._call(webhook, rtype, namespace, obj, user=user, dry_run=dry_run)
        return obj

    def needed(self, rtype: ResourceType, namespace: str | None, obj: Mapping[str, Any]) -> bool:
        """Whether a create of `obj` would call any webhook (else `admit` returns it as is)."""
        return bool(self._matching(rtype, namespace, obj))

    # -- matching ----------------------------------------------------------------------

    def _matching(
        self, rtype: ResourceType, namespace: str | None, obj: Mapping[str, Any]
    ) -> list[dict[str, Any]]:
        page = self._registry.list(self._configurations, namespace=None)
        configurations = sorted(
            (entry.load() for entry in page.entries), key=lambda c: c["metadata"]["name"]
        )
        labels = (obj.get("metadata") or {}).get("labels") or {}
        found = []
        for configuration in configurations:
            for webhook in configuration.get("webhooks") or ():
                if (
                    _rules_match(webhook.get("rules") or (), rtype)
                    and self._namespace_matches(webhook.get("namespaceSelector"), namespace)
                    and _selects(webhook.get("objectSelector"), labels)
                ):
                    found.append(webhook)
        return found

    def _namespace_matches(self, selector: Any, namespace: str | None) -> bool:
        if namespace is None or not selector:
            return True
        try:
            entry = self._registry.get(self._namespaces, None, namespace)
        except ApiError:
            return False
        labels = dict((entry.load().get("metadata") or {}).get("labels") or {})
        labels[_NAMESPACE_NAME_LABEL] = namespace
        return _selects(selector, labels)

    # -- calling -------------------------------------------------------------------------

    async def _call(
        self,
        webhook: Mapping[str, Any],
        rtype: ResourceType,
        namespace: str | None,
        obj: dict[str, Any],
        *,
        user: str,
        dry_run: bool,
    ) -> dict[str, Any]:
        name = str(webhook.get("name", ""))
        ignore = webhook.get("failurePolicy", "Fail") == "Ignore"
        uid = str(uuid.uuid4())
        review = _review(uid, rtype, namespace, obj, user=user, dry_run=dry_run)
        try:
            answer = await self._post(webhook, review)
            response = _response(answer, uid)
        except _CallFailed as error:
            self.calls.append((name, f"failed: {error}"))
            if ignore:
                _logger.info(
                    "webhook failed, ignored",
                    extra={"fields": {"webhook": name, "error": str(error)}},
                )
                return obj
            raise InternalError(
                f'Internal error occurred: failed calling webhook "{name}": {error}'
            ) from error
        if not response.get("allowed"):
            self.calls.append((name, "denied"))
            status = response.get("status") or {}
            message = f'admission webhook "{name}" denied the request'
            if status.get("message"):
                message += f": {status['message']}"
            raise WebhookDenied(message, int(status.get("code") or 400))
        patch = response.get("patch")
        if patch is None:
            self.calls.append((name, "allowed"))
            return obj
        if response.get("patchType") != "JSONPatch":
            self.calls.append((name, "failed: patchType"))
            if ignore:
                return obj
            raise InternalError(
                f'Internal error occurred: failed calling webhook "{name}": '
                f"the response's patchType must be JSONPatch, got {response.get('patchType')!r}"
            )
        try:
            operations = orjson.loads(base64.b64decode(patch, validate=True))
            patched = apply_patch(orjson.loads(orjson.dumps(obj)), operations, PatchType.JSON)
        except (ValueError, ApiError) as error:
            self.calls.append((name, f"failed: patch: {error}"))
            if ignore:
                return obj
            raise InternalError(
                f'Internal error occurred: failed calling webhook "{name}": '
                f"the patch cannot be applied: {error}"
            ) from error
        self.calls.append((name, "patched"))
        return patched

    async def _post(self, webhook: Mapping[str, Any], review: dict[str, Any]) -> Any:
        config = webhook.get("clientConfig") or {}
        url = self._url(config)
        context = self._context(str(config.get("caBundle") or ""))
        seconds = float(webhook.get("timeoutSeconds") or _DEFAULT_TIMEOUT_SECONDS)
        timeout = aiohttp.ClientTimeout(total=seconds)
        try:
            async with (
                aiohttp.ClientSession(timeout=timeout) as session,
                session.post(
                    url,
                    data=orjson.dumps(review),
                    headers={"Content-Type": "application/json"},
                    ssl=context,
                ) as answer,
            ):
                if answer.status != 200:
                    raise _CallFailed(f"the server answered {answer.status}")
                body = await answer.content.read(_MAX_ANSWER_BYTES + 1)
        except (aiohttp.ClientError, TimeoutError, OSError) as error:
            raise _CallFailed(f"Post {url!r}: {error!r}") from error
        if len(body) > _MAX_ANSWER_BYTES:
            raise _CallFailed("the answer is too large")
        try:
            return orjson.loads(body)
        except orjson.JSONDecodeError as error:
            raise _CallFailed(f"the answer is not JSON: {error}") from error

    def _context(self, bundle: str) -> ssl.SSLContext:
        """The TLS context that trusts `bundle` (the system's CAs when empty), made once per
        bundle; the configurations are the cluster admin's, so a handful of bundles."""
        context = self._contexts.get(bundle)
        if context is not None:
            return context
        try:
            context = ssl.create_default_context(
                cadata=base64.b64decode(bundle, validate=True).decode() if bundle else None
            )
        except (ValueError, ssl.SSLError) as error:
            raise _CallFailed(f"the caBundle cannot be read: {error}") from error
        if len(self._contexts) >= _MOST_CONTEXTS:
            self._contexts.clear()
        self._contexts[bundle] = context
        return context

    def _url(self, config: Mapping[str, Any]) -> str:
        url = config.get("url")
        if url:
            return str(url)
        service = config.get("service") or {}
        key = (
            str(service.get("namespace")),
            str(service.get("name")),
            int(service.get("port", 443)),
        )
        base = self.services.get(key)
        if base is None:
            raise _CallFailed(f"service {key[0]}/{key[1]}:{key[2]} has no endpoints")
        return base + str(service.get("path") or "")


def _review(
    uid: str,
    rtype: ResourceType,
    namespace: str | None,
    obj: Mapping[str, Any],
    *,
    user: str,
    dry_run: bool,
) -> dict[str, Any]:
    kind = {"group": rtype.group, "version": rtype.version, "kind": rtype.kind}
    resource = {"group": rtype.group, "version": rtype.version, "resource": rtype.plural}
    request: dict[str, Any] = {
        "uid": uid,
        "kind": kind,
        "resource": resource,
        "requestKind": kind,
        "requestResource": resource,
        "name": (obj.get("metadata") or {}).get("name", ""),
        "operation": "CREATE",
        "userInfo": {"username": user},
        "object": obj,
        "oldObject": None,
        "dryRun": dry_run,
        "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"},
    }
    if namespace is not None:
        request["namespace"] = namespace
    return {"apiVersion": _REVIEW_VERSION, "kind": "AdmissionReview", "request": request}


def _response(answer: Any, uid: str) -> Mapping[str, Any]:
    if not isinstance(answer, dict):
        raise _CallFailed("the answer is not an AdmissionReview")
    if answer.get("apiVersion") != _REVIEW_VERSION or answer.get("kind") != "AdmissionReview":
        raise _CallFailed(
            f"expected response of {_REVIEW_VERSION} AdmissionReview, got "
            f"{answer.get('apiVersion')} {answer.get('kind')}"
        )
    response = answer.get("response")
    if not isinstance(response, dict):
        raise _CallFailed("the AdmissionReview has no response")
    if response.get("uid") != uid:
        raise _CallFailed(f"expected response.uid={uid!r}, got {response.get('uid')!r}")
    return response


def _rules_match(rules: Any, rtype: ResourceType) -> bool:
    for rule in rules:
        if not isinstance(rule, dict):
            continue
        if not _any_of(rule.get("operations"), "CREATE"):
            continue
        if not _any_of(rule.get("apiGroups"), rtype.group):
            continue
        if not _any_of(rule.get("apiVersions"), rtype.version):
            continue
        resources = rule.get("resources") or ()
        if not any(r in ("*", rtype.plural) for r in resources):
            continue
        scope = rule.get("scope", "*")
        if scope == "Namespaced" and not rtype.namespaced:
            continue
        if scope == "Cluster" and rtype.namespaced:
            continue
        return True
    return False


def _any_of(values: Any, wanted: str) -> bool:
    return any(v in ("*", wanted) for v in values or ())


def _selects(selector: Any, labels: Mapping[str, str]) -> bool:
    if not selector:
        return True
    try:
        return LabelSelector.from_dict(selector).matches(labels)
    except SelectorError:
        return False
