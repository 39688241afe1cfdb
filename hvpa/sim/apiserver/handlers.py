"""The HTTP surface: URL routing, query parameters, bodies and responses.

Handlers translate HTTP to registry calls and back, and nothing more: every
rule about objects lives in the registry, every rule about watching in
watching.py. Successful reads and writes answer with stored bytes, never
re-serialized; lists are the items' bytes joined. Errors answer with the
metav1.Status of the ApiError raised.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import orjson
import yaml
from aiohttp import web

from hvpa.sim.apiserver.admission import Admission
from hvpa.sim.apiserver.discovery import CUSTOM_METRICS, EXTERNAL_METRICS, Discovery
from hvpa.sim.apiserver.errors import (
    ApiError,
    BadRequest,
    FieldError,
    InternalError,
    Invalid,
    MethodNotAllowed,
    NotAcceptable,
    NotFound,
    UnsupportedMediaType,
)
from hvpa.sim.apiserver.faults import Faults
from hvpa.sim.apiserver.gotext import go_v
from hvpa.sim.apiserver.managedfields import MAX_MANAGER_LENGTH, manager_from_user_agent
from hvpa.sim.apiserver.metrics import Metrics
from hvpa.sim.apiserver.openapi import OpenApi
from hvpa.sim.apiserver.patching import PatchType
from hvpa.sim.apiserver.protobuf import decode as decode_protobuf
from hvpa.sim.apiserver.registry import LIST_OPTIONS, Registry, parse_resource_version
from hvpa.sim.apiserver.requestlog import (
    TRUE_WORDS,
    RequestLog,
    RequestRecord,
    request_attributes,
)
from hvpa.sim.apiserver.resizing import SUBRESOURCE as RESIZE
from hvpa.sim.apiserver.resizing import PodResizes
from hvpa.sim.apiserver.resources import ResourceType
from hvpa.sim.apiserver.reviews import Reviews
from hvpa.sim.apiserver.selectors import parse_label_selector
from hvpa.sim.apiserver.storage import Entry, ListPage
from hvpa.sim.apiserver.tables import TablePrinter, table_printer
from hvpa.sim.apiserver.watching import Watch, Watches, WatchRequest

__all__ = ["HttpApi"]

logger = logging.getLogger(__name__)

_JSON: Final = "application/json"
_PROTOBUF: Final = "protobuf"
_FIELD_VALIDATION: Final = ("", "Ignore", "Strict", "Warn")
# What a 422 about a write's query parameters names, by method (upstream's *Options kinds).
_WRITE_OPTIONS: Final = {
    method: ResourceType("meta.k8s.io", "v1", kind.lower(), "", kind)
    for method, kind in (
        ("POST", "CreateOptions"),
        ("PUT", "UpdateOptions"),
        ("PATCH", "PatchOptions"),
    )
}
# The review APIs (create only, never stored) and the Reviews method that answers each.
_REVIEWS: Final[Mapping[tuple[str, str, tuple[str, ...]], str]] = {
    ("authentication.k8s.io", "v1", ("tokenreviews",)): "token_review",
    ("authorization.k8s.io", "v1", ("subjectaccessreviews",)): "access_review",
}
_NOT_FOUND: Final = "the server could not find the requested resource"
_APPLY: Final = "application/apply-patch+yaml"


@dataclass(frozen=True, slots=True)
class _Target:
    rtype: ResourceType
    namespace: str | None
    name: str | None
    subresource: str | None
    watch: bool


class HttpApi:
    def __init__(
        self,
        *,
        registry: Registry,
        metrics: Metrics,
        discovery: Discovery,
        faults: Faults,
        watches: Watches,
        log: RequestLog,
        reviews: Reviews,
        rng: random.Random,
        openapi: OpenApi,
        bookmark_interval_seconds: float,
        min_request_timeout_seconds: float,
        resizes: PodResizes,
        admission: Admission,
    ) -> None:
        self._registry = registry
        self._metrics = metrics
        self._discovery = discovery
        self._faults = faults
        self._watches = watches
        self._log = log
        self._reviews = reviews
        self._rng = rng
        self._openapi = openapi
        self._bookmark_interval = bookmark_interval_seconds
        self._min_request_timeout = min_request_timeout_seconds
        self._resizes = resizes
        self._admission = admission

    def application(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self.handle)
        return app

    async def handle(self, request: web.Request) -> web.StreamResponse:
        record = request_attributes(request.method, request.path, request.query)
        record.raw_path = request.rel_url.raw_path
        self._log.add(record)
        try:
            delay = self._faults.latency_for(request.method, request.path)
            if delay > 0:
                await asyncio.sleep(delay)
            failure = self._faults.failure_for(request.method, request.path)
            if failure is not None:
                raise failure
            response = await self._dispatch(request, record)
        except ApiError as error:
            response = _error(error)
        except Exception:
            logger.exception("request failed", extra={"fields": {"path": request.path}})
            response = _error(
                InternalError("an error on the server has prevented the request from succeeding")
            )
        if record.status is None:
            record.status = response.status
        return response

    # ================================================================ routing

    async def _dispatch(self, request: web.Request, record: RequestRecord) -> web.StreamResponse:
        parts = [p for p in request.path.split("/") if p]
        if not parts:
            return _json({"paths": ["/api", "/api/v1", "/apis", "/version"]})
        head = parts[0]
        if head == "version" and len(parts) == 1:
            return _json(self._discovery.version())
        if head in ("healthz", "livez", "readyz") and len(parts) == 1:
            return web.Response(text="ok", content_type="text/plain")
        if head == "openapi" and request.method == "GET":
            return self._openapi_document(request, parts[1:])
        if head == "api":
            if len(parts) == 1:
                return _json(self._discovery.api_versions(request.host))
            if parts[1] != "v1":
                raise NotFound(_NOT_FOUND, details={})
            return await self._group_version(request, record, "", "v1", parts[2:])
        if head == "apis":
            if len(parts) == 1:
                return _json(self._discovery.group_list())
            if len(parts) == 2:
                return _json(_found(self._discovery.group(parts[1])))
            return await self._group_version(request, record, parts[1], parts[2], parts[3:])
        raise NotFound(_NOT_FOUND, details={})

    async def _group_version(
        self,
        request: web.Request,
        record: RequestRecord,
        group: str,
        version: str,
        rest: list[str],
    ) -> web.StreamResponse:
        if not rest:
            return _json(_found(self._discovery.resource_list(group, version)))
        if (group, version) == CUSTOM_METRICS:
            return self._custom_metrics(request, rest)
        review = _REVIEWS.get((group, version, tuple(rest)))
        if review is not None:
            if request.method != "POST":
                raise _not_allowed()
            answer = getattr(self._reviews, review)
            return _json(answer(await _body(request)), 201)
        if (group, version) == EXTERNAL_METRICS:
            return self._external_metrics(request, rest)
        target = self._target(group, version, rest)
        if target.rtype.metrics:
            return self._resource_metrics(request, target)
        return await self._resource(request, record, target)

    def _target(self, group: str, version: str, rest: list[str]) -> _Target:
        table = self._registry.table
        watch = False
        if rest[0] == "watch":
            watch, rest = True, rest[1:]
        namespace = None
        if len(rest) >= 3 and rest[0] == "namespaces":
            inner = table.at(group, version, rest[2])
            if inner is not None and inner.namespaced:
                namespace, rest = rest[1], rest[2:]
        if not rest or len(rest) > 3:
            raise NotFound(_NOT_FOUND, details={})
        rtype = table.at(group, version, rest[0])
        if rtype is None or (rtype.namespaced and namespace is None and len(rest) > 1):
            raise NotFound(_NOT_FOUND, details={})
        name = rest[1] if len(rest) > 1 else None
        subresource = rest[2] if len(rest) > 2 else None
        served = subresource is None or subresource in rtype.subresources
        if not served and not (subresource == RESIZE and self._serves_resize(rtype)):
            raise NotFound(_NOT_FOUND, details={})
        return _Target(rtype, namespace, name, subresource, watch)

    def _openapi_document(self, request: web.Request, rest: list[str]) -> web.Response:
        """/openapi/v2 (JSON only), /openapi/v3 and /openapi/v3/api/v1, /openapi/v3/apis/G/V."""
        if rest == ["v2"]:
            accept = request.headers.get("Accept", "")
            if _PROTOBUF in accept and _JSON not in accept and "*/*" not in accept:
                raise NotAcceptable("only the following media types are accepted: application/json")
            return _raw_json(self._openapi.v2().body)
        if rest == ["v3"]:
            return _json(self._openapi.v3_root())
        if rest[:1] == ["v3"]:
            document = self._openapi.v3("/".join(rest[1:]))
            if document is not None:
                return _raw_json(document.body)
        raise NotFound(_NOT_FOUND, details={})

    def _serves_resize(self, rtype: ResourceType) -> bool:
        return self._resizes.served and rtype is self._registry.resource("pods")

    # ================================================================ resources

    async def _resource(
        self, request: web.Request, record: RequestRecord, target: _Target
    ) -> web.StreamResponse:
        method = request.method
        query = request.query
        rtype, namespace, name = target.rtype, target.namespace, target.name
        registry = self._registry
        dry_run = query.get("dryRun") == "All"
        manager = _field_manager(request) if method in _WRITE_OPTIONS else None
        if name is None:
            if method == "GET":
                if target.watch or query.get("watch") in TRUE_WORDS:
                    return await self._watch(request, record, rtype, namespace)
                return self._list(request, rtype, namespace)
            if method == "POST":
                body = await _body(request)
                warnings = self._unknown_fields(request, rtype, body, None)
                if isinstance(body, dict):
                    body = await self._admission.admit(rtype, namespace, body, dry_run=dry_run)
                made = registry.create(rtype, namespace, body, dry_run=dry_run, manager=manager)
                return _warned(_entry(made, 201), warnings)
            if method == "DELETE" and "deletecollection" in rtype.verbs:
                return await self._delete_collection(request, rtype, namespace, dry_run)
            raise _not_allowed()
        if target.watch:
            raise _not_allowed()
        sub = target.subresource
        if method in ("PUT", "PATCH"):
            conflict = self._faults.conflict_for(rtype, namespace, name)
            if conflict is not None:
                raise conflict
        if method == "PATCH" and _is_apply(request):
            return await self._apply(request, rtype, namespace, name, sub, dry_run)
        if method == "PATCH" and "force" in query:
            raise Invalid.of(
                _WRITE_OPTIONS["PATCH"],
                "",
                [FieldError.forbidden("force", "may not be specified for non-apply patch")],
            )
        if sub == "scale":
            if method == "GET":
                return _json(registry.get_scale(rtype, namespace, name))
            if method == "PUT":
                body = await _body(request)
                return _json(
                    registry.update_scale(
                        rtype, namespace, name, body, dry_run=dry_run, manager=manager
                    )
                )
            if method == "PATCH":
                patch_type = PatchType.from_content_type(request.content_type)
                body = await _body(request)
                return _json(
                    registry.patch_scale(
                        rtype, namespace, name, body, patch_type, dry_run=dry_run, manager=manager
                    )
                )
            raise _not_allowed()
        if sub == RESIZE:
            if namespace is None or method not in ("GET", "PUT", "PATCH"):
                raise _not_allowed()
            if method == "GET":
                return _entry(registry.get(rtype, namespace, name))
            how = PatchType.from_content_type(request.content_type) if method == "PATCH" else None
            body = await _body(request)
            return _entry(self._resizes.resize(namespace, name, body, how, dry_run=dry_run))
        if sub == "binding":
            if method != "POST" or namespace is None:
                raise _not_allowed()
            registry.bind(namespace, name, await _body(request), dry_run=dry_run)
            return _json(
                {
                    "kind": "Status",
                    "apiVersion": "v1",
                    "metadata": {},
                    "status": "Success",
                    "code": 201,
                },
                201,
            )
        if method == "GET":
            entry = registry.get(rtype, namespace, name)
            if _wants_table(request):
                return self._table(request, rtype, [entry], {"resourceVersion": str(entry.rv)})
            return _entry(entry)
        if method == "PUT":
            body = await _body(request)
            warnings = self._unknown_fields(request, rtype, body, None)
            entry, created = registry.update(
                rtype, namespace, name, body, subresource=sub, dry_run=dry_run, manager=manager
            )
            return _warned(_entry(entry, 201 if created else 200), warnings)
        if method == "PATCH":
            patch_type = PatchType.from_content_type(request.content_type)
            body = await _body(request)
            registry.get(rtype, namespace, name)  # a missing object is a 404 first
            warnings = self._unknown_fields(request, rtype, body, patch_type)
            entry = registry.patch(
                rtype,
                namespace,
                name,
                body,
                patch_type,
                subresource=sub,
                dry_run=dry_run,
                manager=manager,
            )
            if warnings:
                return _warned(_entry(entry), warnings)
            return _entry(entry)
        if method == "DELETE" and sub is None:
            options = await _body(request, optional=True) or {}
            grace = _int(query.get("gracePeriodSeconds"), "gracePeriodSeconds")
            if grace is None and isinstance(options.get("gracePeriodSeconds"), int):
                grace = options["gracePeriodSeconds"]
            entry, gone = registry.delete(
                rtype,
                namespace,
                name,
                grace_period_seconds=grace,
                preconditions=options.get("preconditions"),
                dry_run=dry_run or "All" in (options.get("dryRun") or []),
            )
            if gone and not rtype.return_deleted_object:
                return _json(_success(rtype, entry))
            return _entry(entry)
        raise _not_allowed()

    async def _apply(
        self,
        request: web.Request,
        rtype: ResourceType,
        namespace: str | None,
        name: str,
        subresource: str | None,
        dry_run: bool,
    ) -> web.Response:
        """Server-side apply: a YAML (or JSON) configuration, a fieldManager it must name."""
        query = request.query
        manager = query.get("fieldManager", "")
        if not manager:
            raise Invalid.of(
                _WRITE_OPTIONS["PATCH"],
                "",
                [FieldError.required("fieldManager", "is required for apply patch")],
            )
        force_text = query.get("force", "false")
        if force_text not in ("true", "false", "1", "0", "True", "False"):
            raise BadRequest(f"force: {force_text!r} is not a boolean")
        if subresource == "scale":
            raise UnsupportedMediaType(
                "the in-repo API server does not serve server-side apply on /scale; "
                "PUT or PATCH the Scale instead"
            )
        raw = await request.read()
        try:
            config = yaml.safe_load(raw) if raw.strip() else None
        except yaml.YAMLError as error:
            raise BadRequest(f"error decoding YAML: {error}") from error
        entry, created = self._registry.apply(
            rtype,
            namespace,
            name,
            config,
            manager=manager,
            force=force_text in ("true", "1", "True"),
            subresource=subresource,
            dry_run=dry_run,
        )
        return _entry(entry, 201 if created else 200)

    def _page(self, request: web.Request, rtype: ResourceType, namespace: str | None) -> ListPage:
        query = request.query
        return self._registry.list(
            rtype,
            namespace=namespace,
            label_selector=query.get("labelSelector", ""),
            field_selector=query.get("fieldSelector", ""),
            limit=_int(query.get("limit"), "limit"),
            continue_token=query.get("continue") or None,
            resource_version=query.get("resourceVersion"),
            resource_version_match=query.get("resourceVersionMatch") or None,
        )

    def _list(
        self, request: web.Request, rtype: ResourceType, namespace: str | None
    ) -> web.Response:
        page = self._page(request, rtype, namespace)
        metadata: dict[str, Any] = {"resourceVersion": str(page.resource_version)}
        if page.continue_token:
            metadata["continue"] = page.continue_token
        if page.remaining is not None:
            metadata["remainingItemCount"] = page.remaining
        if _wants_table(request):
            return self._table(request, rtype, page.entries, metadata)
        return _list_response(rtype, metadata, page.entries)

    def _table(
        self,
        request: web.Request,
        rtype: ResourceType,
        entries: list[Entry],
        metadata: dict[str, Any],
    ) -> web.Response:
        printer = table_printer(rtype)
        table = printer.table(
            [entry.load() for entry in entries],
            now=self._registry.clock(),
            include=request.query.get("includeObject"),
            metadata=metadata,
        )
        return _json(table)

    def _unknown_fields(
        self, request: web.Request, rtype: ResourceType, body: Any, patch_type: PatchType | None
    ) -> list[str]:
        """fieldValidation: Strict refuses a body with fields the kind's schema does not know;
        Warn (the default) lets it through with a Warning header per field; Ignore says nothing."""
        directive = request.query.get("fieldValidation", "")
        if directive not in _FIELD_VALIDATION:
            raise Invalid.of(
                _WRITE_OPTIONS[request.method],
                "",
                [FieldError.not_supported("fieldValidation", directive, list(_FIELD_VALIDATION))],
            )
        if directive == "Ignore" or patch_type is PatchType.JSON:
            return []
        unknown = self._registry.unknown_fields(rtype, body, patch=patch_type is not None)
        if unknown and directive == "Strict":
            found = ", ".join(f'unknown field "{path}"' for path in unknown)
            if patch_type is None:
                raise BadRequest(
                    f'{rtype.kind} in version "{rtype.version}" cannot be handled as a '
                    f"{rtype.kind}: strict decoding error: {found}"
                )
            raise _strict_patch_error(body, patch_type, found)
        return [f'unknown field "{path}"' for path in unknown]

    async def _delete_collection(
        self, request: web.Request, rtype: ResourceType, namespace: str | None, dry_run: bool
    ) -> web.Response:
        query = request.query
        page = self._page(request, rtype, namespace)
        grace = _int(query.get("gracePeriodSeconds"), "gracePeriodSeconds")
        deleted: list[Entry] = []
        for entry in page.entries:
            obj_meta = entry.load()["metadata"]
            done, _ = self._registry.delete(
                rtype,
                obj_meta.get("namespace"),
                obj_meta["name"],
                grace_period_seconds=grace,
                dry_run=dry_run,
            )
            deleted.append(done)
        metadata = {"resourceVersion": str(self._registry.storage.resource_version)}
        return _list_response(rtype, metadata, deleted)

    async def _watch(
        self,
        request: web.Request,
        record: RequestRecord,
        rtype: ResourceType,
        namespace: str | None,
    ) -> web.StreamResponse:
        query = request.query
        registry = self._registry
        predicate = registry.predicate(
            rtype, query.get("labelSelector", ""), query.get("fieldSelector", "")
        )
        text_rv = query.get("resourceVersion", "")
        rv = parse_resource_version(text_rv) if text_rv else 0
        bookmarks = query.get("allowWatchBookmarks") in TRUE_WORDS
        initial = query.get("sendInitialEvents") in TRUE_WORDS
        if initial:
            errors = []
            if query.get("resourceVersionMatch") != "NotOlderThan":
                errors.append(
                    FieldError.forbidden(
                        "resourceVersionMatch",
                        "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
                    )
                )
            if not bookmarks:
                errors.append(
                    FieldError.forbidden(
                        "allowWatchBookmarks",
                        "sendInitialEvents requires setting allowWatchBookmarks to true",
                    )
                )
            if errors:
                raise Invalid.of(LIST_OPTIONS, "", errors)
        timeout = _int(query.get("timeoutSeconds"), "timeoutSeconds")
        if timeout is None or timeout <= 0:
            low = self._min_request_timeout
            seconds = self._rng.uniform(low, 2 * low)
        else:
            seconds = float(timeout)
        render = (
            _TableEvents(table_printer(rtype), self._registry.clock, query.get("includeObject"))
            if _wants_table(request)
            else None
        )
        watch = Watch(
            registry.storage,
            WatchRequest(
                rtype,
                namespace,
                predicate,
                rv if rv > 0 else None,
                bookmarks,
                seconds,
                initial,
                render,
            ),
            bookmark_interval_seconds=self._bookmark_interval,
        )
        response = web.StreamResponse(status=200, headers={"Content-Type": _JSON})
        response.enable_chunked_encoding()
        self._watches.add(watch)
        try:
            await response.prepare(request)
            record.status = 200
            await watch.run(response.write)
            await response.write_eof()
        except (ConnectionResetError, ConnectionError):
            pass
        finally:
            self._watches.discard(watch)
        return response

    # ================================================================ metrics

    def _resource_metrics(self, request: web.Request, target: _Target) -> web.Response:
        if request.method != "GET" or target.watch or request.query.get("watch") in TRUE_WORDS:
            raise _not_allowed()
        if target.subresource is not None:
            raise NotFound(_NOT_FOUND, details={})
        selector = parse_label_selector(request.query.get("labelSelector", ""))
        if target.rtype.namespaced:
            items = self._metrics.pod_metrics(target.namespace, target.name, selector)
        else:
            items = self._metrics.node_metrics(target.name, selector)
        if target.name is not None:
            return _json(items[0])
        return _item_list(f"{target.rtype.kind}List", target.rtype.api_version, items)

    def _custom_metrics(self, request: web.Request, rest: list[str]) -> web.Response:
        if request.method != "GET":
            raise _not_allowed()
        if len(rest) == 5 and rest[0] == "namespaces":
            namespace, resource, name, metric = rest[1], rest[2], rest[3], rest[4]
        elif len(rest) == 4 and rest[0] == "namespaces" and rest[2] == "metrics":
            namespace, resource, name, metric = None, "namespaces", rest[1], rest[3]
        elif len(rest) == 3:
            namespace, resource, name, metric = None, rest[0], rest[1], rest[2]
        else:
            raise NotFound(_NOT_FOUND, details={})
        query = request.query
        items = self._metrics.custom_metric_values(
            resource,
            namespace,
            name,
            metric,
            parse_label_selector(query.get("labelSelector", "")),
            parse_label_selector(query.get("metricLabelSelector", "")),
        )
        return _item_list("MetricValueList", "/".join(CUSTOM_METRICS), items)

    def _external_metrics(self, request: web.Request, rest: list[str]) -> web.Response:
        if request.method != "GET":
            raise _not_allowed()
        if len(rest) != 3 or rest[0] != "namespaces":
            raise NotFound(_NOT_FOUND, details={})
        items = self._metrics.external_metric_values(
            rest[1], rest[2], parse_label_selector(request.query.get("labelSelector", ""))
        )
        return _item_list("ExternalMetricValueList", "/".join(EXTERNAL_METRICS), items)


# ==================================================================== helpers


def _found(document: dict[str, Any] | None) -> dict[str, Any]:
    if document is None:
        raise NotFound(_NOT_FOUND, details={})
    return document


def _not_allowed() -> MethodNotAllowed:
    return MethodNotAllowed("the server does not allow this method on the requested resource")


async def _body(request: web.Request, *, optional: bool = False) -> Any:
    raw = await request.read()
    if _PROTOBUF in request.content_type:
        # Typed clients (kubectl create configmap|deployment|namespace) send protobuf.
        return decode_protobuf(raw)
    if not raw.strip():
        if optional:
            return None
        raise BadRequest("the request needs a body")
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as error:
        raise BadRequest(f"the body of the request is not valid JSON: {error}") from error


def _is_apply(request: web.Request) -> bool:
    return request.content_type.split(";", 1)[0].strip().lower() == _APPLY


def _field_manager(request: web.Request) -> str:
    """The manager a write is recorded under: ?fieldManager=, else the User-Agent's first
    segment (upstream's default); a name the real server refuses is refused here too."""
    given = request.query.get("fieldManager")
    if given is None:
        return manager_from_user_agent(request.headers.get("User-Agent", ""))
    options = _WRITE_OPTIONS[request.method]
    if len(given.encode()) > MAX_MANAGER_LENGTH:
        raise Invalid.of(options, "", [FieldError.too_long("fieldManager", MAX_MANAGER_LENGTH)])
    if not given.isprintable():
        raise Invalid.of(
            options,
            "",
            [
                FieldError.invalid(
                    "fieldManager", given, "FieldManager must only contain printable characters"
                )
            ],
        )
    return given


def _int(text: str | None, name: str) -> int | None:
    if text is None or text == "":
        return None
    try:
        return int(text)
    except ValueError:
        raise BadRequest(f"{name}: {text!r} is not an integer") from None


def _json(document: Mapping[str, Any], status: int = 200) -> web.Response:
    return web.Response(body=orjson.dumps(document), status=status, content_type=_JSON)


def _raw_json(body: bytes) -> web.Response:
    return web.Response(body=body, content_type=_JSON)


def _warned(response: web.Response, warnings: list[str]) -> web.Response:
    """One `Warning: 299 - "..."` header per warning, as the real server sends them."""
    for warning in warnings:
        response.headers.add("Warning", f"299 - {orjson.dumps(warning).decode()}")
    return response


def _item_list(kind: str, api_version: str, items: list[dict[str, Any]]) -> web.Response:
    """A list of the metrics APIs: built per request, never stored, so no resourceVersion."""
    return _json({"kind": kind, "apiVersion": api_version, "metadata": {}, "items": items})


def _entry(entry: Entry, status: int = 200) -> web.Response:
    return web.Response(body=entry.json, status=status, content_type=_JSON)


def _list_response(
    rtype: ResourceType, metadata: dict[str, Any], entries: list[Entry]
) -> web.Response:
    head = (
        b'{"kind":"'
        + rtype.list_kind.encode()
        + b'","apiVersion":"'
        + rtype.api_version.encode()
        + b'","metadata":'
        + orjson.dumps(metadata)
        + b',"items":['
    )
    if rtype.custom:
        items = b",".join([entry.json for entry in entries])
    elif entries:
        items = b"{" + b",{".join([entry.untyped_tail() for entry in entries])
    else:
        items = b""
    return web.Response(body=b"".join((head, items, b"]}")), content_type=_JSON)


def _success(rtype: ResourceType, entry: Entry) -> dict[str, Any]:
    metadata = entry.load()["metadata"]
    details: dict[str, Any] = {"name": metadata["name"]}
    if rtype.group:
        details["group"] = rtype.group
    details["kind"] = rtype.plural
    details["uid"] = metadata.get("uid")
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": details,
    }


def _error(error: ApiError) -> web.Response:
    headers = {}
    if error.retry_after_seconds is not None:
        headers["Retry-After"] = str(error.retry_after_seconds)
    return web.Response(
        body=orjson.dumps(error.status()), status=error.code, content_type=_JSON, headers=headers
    )


def _wants_table(request: web.Request) -> bool:
    return "as=Table" in request.headers.get("Accept", "")


def _strict_patch_error(body: Any, patch_type: PatchType, found: str) -> Invalid:
    """A patch with unknown fields, under Strict: the real server's 422 on the `patch` field.

    It shows a strategic merge patch as Go prints the map, and a merge patch as the patched
    object's JSON; this server shows the merge patch itself (it checks the patch, not the
    patched object)."""
    shown = go_v(body) if patch_type is PatchType.STRATEGIC else orjson.dumps(body).decode()
    cause = FieldError.invalid("patch", shown, f"strict decoding error: {found}")
    return Invalid(f' "" is invalid: {cause}', details={"causes": [cause.cause()]})


class _TableEvents:
    """Watch events of a watch asked for as a Table: one-row Tables, headers in the first."""

    def __init__(
        self, printer: TablePrinter, clock: Callable[[], float], include: str | None
    ) -> None:
        self._printer = printer
        self._clock = clock
        self._include = include
        self._headers = True

    def __call__(self, event_type: str, entry: Entry | None, rv: int) -> bytes:
        objects = [entry.load()] if entry is not None else []
        table = self._printer.table(
            objects,
            now=self._clock(),
            include=self._include,
            metadata={"resourceVersion": str(entry.rv if entry is not None else rv)},
            headers=self._headers,
        )
        self._headers = False
        return orjson.dumps({"type": event_type, "object": table}) + b"\n"
