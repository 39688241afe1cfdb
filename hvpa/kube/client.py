"""An async API client over aiohttp, configured by kubernetes_asyncio's config loaders.

kubernetes_asyncio is used for what it does well - reading a kubeconfig or
the in-cluster service account (host, bearer token including exec plugins
and token files, CA, client certificates, the verify flag) - and nothing
else: its generated API classes build full model objects from every
response, which hvpa never needs. This client returns raw bytes; callers
decode them with msgspec into the structs they need.

What can go wrong, and what the client does about it:
- Every request has a timeout (`ClientSettings.request_timeout_seconds`
  unless given); a watch stream's is its server-side timeout plus a margin.
- Every response body is bounded: it is read as it arrives and the read
  stops at `max_response_bytes` (`ClientSettings.max_response_bytes` unless
  the request names its own), raising `ResponseTooLarge`, which names the
  request and the bound. A caller that expects small answers passes a small
  bound (a metrics read: `request("GET", path, max_response_bytes=...)`), a
  list page a larger one; an error body is read up to 64 KiB at most. A
  watch stream is unbounded as a whole; its reader bounds each event.
- Errors become the classes of `hvpa.kube.errors`; nothing is swallowed:
  after the retries, the last error is raised.
- Reads (GET) are retried with backoff on connection errors, timeouts, 429
  and 5xx. Writes are retried only when the server says it did nothing:
  429, or a 5xx with Retry-After (as client-go's rest client). Retry-After
  is honoured, capped at `max_retry_after_seconds`. `retry=False` turns
  retries off for a caller with its own loop (the reflector, the elector).
- `guard`, when given, is called before every attempt of the request - the
  first, each retry after its wait, and the resend after a 401 - and what
  it raises aborts the request unsent. The applier passes its leadership
  check, so a write that waits in Retry-After is not sent once the lease is
  lost. (Cancelling the calling task aborts any wait or request at once.)
- Every write (POST, PUT, PATCH) names its field manager
  (`ClientSettings.field_manager`, `hvpa run --field-manager`) in the
  `fieldManager` query parameter unless the caller names one, so the API
  server records what hvpa set under that name in `managedFields`, not
  under a name it derives from the User-Agent (docs/gitops.md).
- A 401 re-runs the credential loader once (an exec plugin's token expired,
  a projected token was rotated) and repeats the request.
- Every response (and every failure to get one, as code "<error>") is
  counted in `rest_client_requests_total{code,method,host}`; every request
  but a watch is timed in `rest_client_request_duration_seconds{verb,host}`
  from its start to its end, retries and their waits included, as
  client-go times it (a watch lasts as long as its timeout: its duration
  says nothing about the server).
"""

from __future__ import annotations

import asyncio
import email.utils
import enum
import logging
import os
import random
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from types import TracebackType
from typing import Any, Final
from urllib.parse import urlsplit

import aiohttp
import msgspec
from kubernetes_asyncio import config as kube_config
from kubernetes_asyncio.client import Configuration
from prometheus_client import Counter, Histogram

from hvpa.kube.backoff import Backoff
from hvpa.kube.errors import (
    ApiError,
    KubeError,
    ResponseTooLarge,
    ServerError,
    TooManyRequests,
    TransportError,
    Unauthorized,
    error_from_response,
)
from hvpa.kube.metrics import KubeMetrics
from hvpa.kube.settings import ClientSettings
from hvpa.logs import fields

__all__ = [
    "ByteStream",
    "Guard",
    "KubeClient",
    "PatchType",
    "client_from_kubeconfig",
    "client_in_cluster",
    "load_client",
]

_logger = logging.getLogger(__name__)

_IDEMPOTENT: Final = frozenset({"GET", "HEAD"})
# The verbs the API server records a field manager for (DELETE changes no field).
_WRITES: Final = frozenset({"POST", "PUT", "PATCH"})
_JSON: Final = "application/json"
# An error answer is a metav1.Status of a few hundred bytes; more is not read.
_MAX_ERROR_BODY_BYTES: Final = 64 * 1024
Params = Mapping[str, str | int | bool]
# Called before every attempt of a request; what it raises aborts the request unsent.
Guard = Callable[[], None]


class PatchType(enum.StrEnum):
    """The content types of PATCH, each a different merge semantics."""

    JSON = "application/json-patch+json"
    MERGE = "application/merge-patch+json"
    STRATEGIC = "application/strategic-merge-patch+json"
    APPLY = "application/apply-patch+yaml"


def _query(params: Params | None) -> dict[str, str]:
    if not params:
        return {}
    return {
        key: ("true" if value else "false") if isinstance(value, bool) else str(value)
        for key, value in params.items()
    }


def _ssl_context(configuration: Any) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=configuration.ssl_ca_cert)
    if configuration.cert_file:
        context.load_cert_chain(configuration.cert_file, keyfile=configuration.key_file)
    if not configuration.verify_ssl:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context


async def _read_at_most(content: aiohttp.StreamReader, limit: int) -> tuple[bytes, bool]:
    """Up to `limit` bytes of a body as it arrives, and whether there was more.

    Reading stops at the first chunk that would pass the limit, so no more
    than the limit (and aiohttp's own small read buffer) is ever held.
    """
    body = bytearray()
    while chunk := await content.readany():
        if len(body) + len(chunk) > limit:
            body += chunk[: limit - len(body)]
            return bytes(body), True
        body += chunk
    return bytes(body), False


def _transport_reason(error: BaseException) -> str:
    """Why no answer came, as a sentence: aiohttp's message ("Cannot connect to host
    127.0.0.1:6443 ssl:default [Connect call failed ...]"), not its repr (a ConnectionKey
    dump); a client-side timeout has no message of its own."""
    if isinstance(error, TimeoutError):
        return "no answer within the client's timeout"
    return str(error) or type(error).__name__


class ByteStream:
    """A response body read as it arrives; a broken connection is a TransportError."""

    def __init__(self, content: aiohttp.StreamReader, what: str) -> None:
        self._content = content
        self._what = what

    async def read_chunk(self) -> bytes:
        """The bytes that have arrived (waiting for some); b"" at the end of the body."""
        try:
            return await self._content.readany()
        except (aiohttp.ClientError, ConnectionError, TimeoutError) as error:
            raise TransportError(f"{self._what}: {_transport_reason(error)}") from error


class KubeClient:
    """One connection pool to one API server, with its credentials.

    Build it with `client_from_kubeconfig`, `client_in_cluster` or
    `load_client`, and close it (`async with` or `close()`).
    """

    def __init__(
        self,
        *,
        configuration: Any,
        metrics: KubeMetrics,
        settings: ClientSettings | None = None,
        refresh_credentials: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        """`configuration` is a kubernetes_asyncio Configuration, already loaded."""
        self._configuration = configuration
        self._settings = settings or ClientSettings()
        self._metrics = metrics
        self._refresh_credentials = refresh_credentials
        self.host: str = configuration.host.rstrip("/")
        self._host_label = urlsplit(self.host).netloc
        # Each request's series, looked up once per code and method: `labels()` takes a lock
        # and builds a key at every call, on every request.
        self._counted: dict[tuple[str, str], Counter] = {}
        self._timed: dict[str, Histogram] = {}
        # The jitter of every request's retries: one generator, not one seeded per request.
        self._rng = random.Random()
        self._ssl: ssl.SSLContext | None = (
            _ssl_context(configuration) if self.host.startswith("https:") else None
        )
        self._session: aiohttp.ClientSession | None = None

    # -- lifecycle -------------------------------------------------------------

    def _get_session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(
                limit=self._settings.connection_limit,
                ssl=self._ssl if self._ssl is not None else True,
            )
            self._session = aiohttp.ClientSession(
                connector=connector,
                headers={"User-Agent": self._settings.user_agent, "Accept": _JSON},
                auto_decompress=True,
                raise_for_status=False,
                trace_configs=list(self._settings.trace_configs) or None,
            )
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def __aenter__(self) -> KubeClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

    # -- requests ------------------------------------------------------------

    async def _headers(self, content_type: str | None) -> dict[str, str]:
        headers: dict[str, str] = {}
        configuration = self._configuration
        token = await configuration.get_api_key_with_prefix("BearerToken")
        if token:
            headers["Authorization"] = token
        elif configuration.username:
            headers["Authorization"] = configuration.get_basic_auth_token()
        if content_type is not None:
            headers["Content-Type"] = content_type
        return headers

    def _count(self, code: str, method: str) -> None:
        counter = self._counted.get((code, method))
        if counter is None:
            counter = self._metrics.rest_requests.labels(code, method, self._host_label)
            self._counted[(code, method)] = counter
        counter.inc()

    def _latency(self, method: str) -> Histogram:
        histogram = self._timed.get(method)
        if histogram is None:
            histogram = self._metrics.request_latency.labels(method, self._host_label)
            self._timed[method] = histogram
        return histogram

    @asynccontextmanager
    async def _open(
        self,
        method: str,
        path: str,
        *,
        params: Params | None,
        body: bytes | None,
        content_type: str | None,
        timeout_seconds: float,
        guard: Guard | None = None,
    ) -> AsyncIterator[aiohttp.ClientResponse]:
        """One attempt: a response with a 2xx status, else the error it means."""
        url = self.host + path
        refreshed = False
        while True:
            if guard is not None:
                guard()
            headers = await self._headers(content_type if body is not None else None)
            timeout = aiohttp.ClientTimeout(
                total=timeout_seconds, connect=self._settings.connect_timeout_seconds
            )
            try:
                response = await self._get_session().request(
                    method,
                    url,
                    params=_query(params),
                    data=body,
                    headers=headers,
                    timeout=timeout,
                    server_hostname=getattr(self._configuration, "tls_server_name", None),
                    # A redirect is answered as the error it is: following one would send
                    # hvpa's token, or a tenant-shaped path, to wherever the answer points.
                    allow_redirects=False,
                )
            except (aiohttp.ClientError, TimeoutError) as error:
                self._count("<error>", method)
                raise TransportError(f"{method} {url}: {_transport_reason(error)}") from error
            self._count(str(response.status), method)
            try:
                if response.status < 300:
                    yield response
                    return
                try:
                    payload, _ = await _read_at_most(response.content, _MAX_ERROR_BODY_BYTES)
                except (aiohttp.ClientError, TimeoutError) as error:
                    raise TransportError(f"{method} {url}: {_transport_reason(error)}") from error
                error_ = error_from_response(
                    response.status,
                    payload,
                    retry_after_header=response.headers.get("Retry-After"),
                    method=method,
                    url=url,
                )
            finally:
                response.release()
            if (
                isinstance(error_, Unauthorized)
                and not refreshed
                and self._refresh_credentials is not None
            ):
                refreshed = True
                _logger.info("refreshing credentials after 401", extra=fields(url=url))
                await self._refresh_credentials()
                continue
            raise error_

    def _retry_delay(self, error: KubeError, method: str, backoff: Backoff) -> float | None:
        """Seconds to wait before retrying, or None when retrying is unsafe or useless."""
        retry_after = error.retry_after if isinstance(error, ApiError) else None
        if isinstance(error, TooManyRequests) or (
            isinstance(error, ServerError) and retry_after is not None
        ):
            pass
        elif method not in _IDEMPOTENT or not isinstance(error, ServerError | TransportError):
            return None
        if retry_after is not None:
            return min(retry_after, self._settings.max_retry_after_seconds)
        return backoff.next_delay()

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Params | None = None,
        body: object = None,
        content_type: str = _JSON,
        timeout_seconds: float | None = None,
        retry: bool = True,
        max_response_bytes: int | None = None,
        guard: Guard | None = None,
    ) -> bytes:
        """Send a request and return the body of its 2xx response.

        `body` is bytes as is, or anything msgspec encodes to JSON. With
        `retry=False` the first failure is raised (callers with their own
        retry loop, like the leader elector, use that). A body longer than
        `max_response_bytes` (default: the client's setting) raises
        ResponseTooLarge; `guard` runs before every attempt (module docstring).
        """
        payload = body if body is None or isinstance(body, bytes) else msgspec.json.encode(body)
        if method in _WRITES and not (params and "fieldManager" in params):
            params = {**(params or {}), "fieldManager": self._settings.field_manager}
        timeout = timeout_seconds or self._settings.request_timeout_seconds
        limit = max_response_bytes or self._settings.max_response_bytes
        loop = asyncio.get_running_loop()
        started = loop.time()
        try:
            return await self._attempts(
                method,
                path,
                params,
                payload,
                content_type,
                timeout_seconds=timeout,
                retry=retry,
                limit=limit,
                guard=guard,
            )
        finally:
            self._latency(method).observe(loop.time() - started)

    async def _attempts(
        self,
        method: str,
        path: str,
        params: Params | None,
        payload: bytes | None,
        content_type: str,
        *,
        timeout_seconds: float,
        retry: bool,
        limit: int,
        guard: Guard | None,
    ) -> bytes:
        """`request`'s attempts: the first 2xx body, or the last error once retrying stops."""
        backoff = Backoff(
            self._settings.backoff, clock=asyncio.get_running_loop().time, rng=self._rng
        )
        attempt = 0
        while True:
            attempt += 1
            try:
                async with self._open(
                    method,
                    path,
                    params=params,
                    body=payload,
                    content_type=content_type,
                    timeout_seconds=timeout_seconds,
                    guard=guard,
                ) as response:
                    return await self._read_body(response, limit, f"{method} {path}")
            except KubeError as error:
                delay = self._retry_delay(error, method, backoff) if retry else None
                if delay is None or attempt > self._settings.max_retries:
                    raise
                _logger.info(
                    "retrying request",
                    extra=fields(
                        method=method, path=path, error=str(error), attempt=attempt, delay=delay
                    ),
                )
                await asyncio.sleep(delay)

    @staticmethod
    async def _read_body(response: aiohttp.ClientResponse, limit: int, what: str) -> bytes:
        """The whole body, unless it is longer than `limit`: then ResponseTooLarge, read no further."""
        declared = response.content_length
        if (
            declared is not None
            and declared > limit
            and not response.headers.get("Content-Encoding")
        ):
            response.close()
            raise ResponseTooLarge(what, limit_bytes=limit, declared_bytes=declared)
        try:
            body, more = await _read_at_most(response.content, limit)
        except (aiohttp.ClientError, TimeoutError) as error:
            raise TransportError(f"{what}: {_transport_reason(error)}") from error
        if more:
            response.close()  # the rest of the body is never read: the connection is spent
            raise ResponseTooLarge(what, limit_bytes=limit)
        return body

    @asynccontextmanager
    async def stream(
        self,
        path: str,
        *,
        params: Params | None = None,
        timeout_seconds: float,
    ) -> AsyncIterator[ByteStream]:
        """A GET whose body is read as it arrives (a watch); not retried.

        The caller reads the stream with its own inactivity timeout; the
        whole response is bounded by `timeout_seconds`.
        """
        async with self._open(
            "GET",
            path,
            params=params,
            body=None,
            content_type=None,
            timeout_seconds=timeout_seconds,
        ) as response:
            try:
                yield ByteStream(response.content, f"GET {path}")
            finally:
                # A watch ends mid-body (our timeout, a re-list): the connection
                # cannot be reused for another request, so close it.
                response.close()

    async def server_time(self) -> float | None:
        """The API server's clock: the `Date` header of its answer to GET /version (which
        every client may read), in seconds since the epoch, to the second; None when the
        answer carries no Date that can be read. Not retried: a caller that needs the
        cluster has already reached it."""
        async with self._open(
            "GET",
            "/version",
            params=None,
            body=None,
            content_type=None,
            timeout_seconds=self._settings.request_timeout_seconds,
        ) as response:
            date = response.headers.get("Date")
        if not date:
            return None
        try:
            return email.utils.parsedate_to_datetime(date).timestamp()
        except (TypeError, ValueError):
            return None

    # -- verbs ---------------------------------------------------------------

    async def get(
        self, path: str, *, params: Params | None = None, max_response_bytes: int | None = None
    ) -> bytes:
        return await self.request("GET", path, params=params, max_response_bytes=max_response_bytes)

    async def create(
        self, path: str, body: object, *, params: Params | None = None, guard: Guard | None = None
    ) -> bytes:
        """POST to a collection path."""
        return await self.request("POST", path, params=params, body=body, guard=guard)

    async def update(
        self, path: str, body: object, *, params: Params | None = None, guard: Guard | None = None
    ) -> bytes:
        """PUT an object; a metadata.resourceVersion in it makes the write conditional (409)."""
        return await self.request("PUT", path, params=params, body=body, guard=guard)

    async def patch(
        self,
        path: str,
        body: object,
        *,
        patch_type: PatchType = PatchType.MERGE,
        params: Params | None = None,
        guard: Guard | None = None,
    ) -> bytes:
        return await self.request(
            "PATCH", path, params=params, body=body, content_type=patch_type.value, guard=guard
        )

    async def delete(
        self,
        path: str,
        *,
        body: object = None,
        params: Params | None = None,
        guard: Guard | None = None,
    ) -> bytes:
        return await self.request("DELETE", path, params=params, body=body, guard=guard)


# ---------------------------------------------------------------------------
# Construction from a kubeconfig or the in-cluster service account


async def client_from_kubeconfig(
    *,
    metrics: KubeMetrics,
    path: str | None = None,
    context: str | None = None,
    settings: ClientSettings | None = None,
) -> KubeClient:
    """A client for a kubeconfig file (default: $KUBECONFIG or ~/.kube/config)."""
    configuration = Configuration()
    loader = await kube_config.load_kube_config(
        config_file=path,
        context=context,
        client_configuration=configuration,
        persist_config=False,
    )

    async def refresh() -> None:
        await loader.load_and_set(configuration)

    return KubeClient(
        configuration=configuration,
        metrics=metrics,
        settings=settings,
        refresh_credentials=refresh,
    )


async def client_in_cluster(
    *, metrics: KubeMetrics, settings: ClientSettings | None = None
) -> KubeClient:
    """A client with the pod's service account; the token file is re-read as it rotates."""
    configuration = Configuration()
    kube_config.load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]

    async def refresh() -> None:
        kube_config.load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]

    return KubeClient(
        configuration=configuration,
        metrics=metrics,
        settings=settings,
        refresh_credentials=refresh,
    )


async def load_client(
    *,
    metrics: KubeMetrics,
    kubeconfig: str | None = None,
    context: str | None = None,
    settings: ClientSettings | None = None,
) -> KubeClient:
    """A kubeconfig when one is named; else in-cluster inside a pod; else the default kubeconfig."""
    if kubeconfig is None and os.environ.get("KUBERNETES_SERVICE_HOST"):
        return await client_in_cluster(metrics=metrics, settings=settings)
    return await client_from_kubeconfig(
        metrics=metrics, path=kubeconfig, context=context, settings=settings
    )
