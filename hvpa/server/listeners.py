"""The listeners: health probes, metrics with `/debug/state`, and the pod admission webhook.

Separate listeners, as controller-runtime splits them, so a NetworkPolicy can
open the probes to the kubelet, the metrics to Prometheus and the webhook to
the API server separately:

- probes (`--health-probe-bind-address`, default `:8081`), plain HTTP:
  `/healthz` 200 while no background task of the controller has failed;
  `/readyz` 200 once every cache has synced and this instance leads, or is
  a standby whose elector is still running (503 otherwise);
- metrics (`--metrics-bind-address`, default `:8443`): `/metrics` in the
  Prometheus text format from the controller's registry, and `/debug/state`
  (JSON, bounded in bytes by `hvpa.server.debug_state`; 404 with
  `--debug-state=false`). With `--metrics-secure` (the default) it speaks
  HTTPS (`hvpa.server.certificates`) and serves only callers the API server
  authenticates and authorizes for the path (`hvpa.server.access`);
- the admission webhook (`--webhook-bind-address`, default `:9443`), HTTPS
  with hvpa's own certificate or one from a directory: `POST /mutate-pods`
  (`hvpa.server.webhook`, the one endpoint that takes a body); its
  certificate and the webhook configuration are refreshed by a background
  task while it runs.

The probe and metrics listeners protect themselves from a client that holds connections:
a request's headers must arrive within `header_timeout_seconds` of the
connection opening or of the previous answer (aiohttp's keep-alive timer
closes a connection that has not delivered a whole request by then), a
request with a body is refused (nothing here takes one) and its body read
for at most `body_timeout_seconds`, and at most `max_connections`
connections are open at once per listener (more are closed on accept). No
answer names the server software or its version: every one says `Server: hvpa`
(aiohttp would say `Python/3.x aiohttp/3.x`), including aiohttp's own answer to
a request it cannot parse.

The probe and metrics listeners are read-only views of the Manager; the
webhook's task (the leader's) writes its own Secret and configuration only.
An address of `0` turns its listener off; port 0 binds a free port
(`metrics_port`, `probe_port`, `webhook_port` tell which).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import ssl
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Final

from aiohttp import hdrs, web
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

from hvpa.controller.manager import Manager
from hvpa.kube.client import KubeClient
from hvpa.logs import fields
from hvpa.server.access import AccessReviews, access_middleware
from hvpa.server.certificates import (
    CertificateError,
    CertificateFiles,
    certificate_files,
    server_context,
)
from hvpa.server.debug_state import encode_state
from hvpa.server.webhook import AdmissionWebhook
from hvpa.settings import ServerSettings

__all__ = ["Server", "parse_address", "reload_on_change"]

_logger = logging.getLogger(__name__)

_DISABLED: Final = "0"
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def parse_address(address: str) -> tuple[str, int] | None:
    """`host:port`, `:port` (every interface) or `[v6]:port`; None for `0` (off)."""
    if address == _DISABLED:
        return None
    host, separator, port = address.rpartition(":")
    if not separator or not port.isdigit():
        raise ValueError(f"{address!r} is not host:port, :port or 0")
    return host.strip("[]") or "0.0.0.0", int(port)


class _Refused(asyncio.Protocol):
    """Stands in for a connection over the limit: closes it as soon as it is made."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        transport.close()


class _LimitedSite(web.SockSite):
    """A site whose connections get hvpa's handler and timeouts, and no more than the limit.

    aiohttp keeps the open connections' handlers in `Server.connections`; the
    protocol factory consults it for each accepted connection and closes one
    past `max_connections` at once.
    """

    def __init__(
        self,
        runner: web.AppRunner,
        sock: socket.socket,
        *,
        ssl_context: ssl.SSLContext | None,
        settings: ServerSettings,
    ) -> None:
        super().__init__(runner, sock, ssl_context=ssl_context)
        self._settings = settings

    def _protocol(self) -> asyncio.BaseProtocol:
        server = self._runner.server
        assert server is not None
        settings = self._settings
        if len(server.connections) >= settings.max_connections:
            return _Refused()
        return _Handler(
            server,
            loop=asyncio.get_running_loop(),
            access_log=None,  # type: ignore[arg-type]  # None turns access logs off
            keepalive_timeout=settings.header_timeout_seconds,
            lingering_time=settings.body_timeout_seconds,
        )

    async def start(self) -> None:
        await web.BaseSite.start(self)
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(
            self._protocol, sock=self._sock, ssl=self._ssl_context, backlog=self._backlog
        )


@web.middleware
async def _refuse_bodies(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Nothing served takes a body: refuse one unread, and close the connection after."""
    if request.body_exists:
        return web.Response(
            status=413, text="no request body is accepted", headers={hdrs.CONNECTION: "close"}
        )
    return await handler(request)


SERVER_NAME: Final = "hvpa"


async def _name_server(request: web.Request, response: web.StreamResponse) -> None:
    """Replace aiohttp's `Server: Python/... aiohttp/...`: versions help only an attacker."""
    response.headers[hdrs.SERVER] = SERVER_NAME


class _Handler(web.RequestHandler):
    """aiohttp's connection handler, whose own error answers (a request it cannot parse is
    answered without the application, so without its response hook) name no version."""

    def handle_error(
        self,
        request: web.BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        response = super().handle_error(request, status, exc, message)
        response.headers[hdrs.SERVER] = SERVER_NAME
        return response


class Server:
    def __init__(
        self,
        *,
        manager: Manager,
        settings: ServerSettings,
        client: KubeClient | None = None,
    ) -> None:
        """`client` asks the API server who a caller is; secure metrics serving needs one."""
        self._manager = manager
        self._settings = settings
        self._client = client
        self._runners: list[web.AppRunner] = []
        self.metrics_port: int | None = None
        self.probe_port: int | None = None
        self.webhook_port: int | None = None
        self.reviews: AccessReviews | None = None
        self.webhook: AdmissionWebhook | None = None
        self._webhook_task: asyncio.Task[None] | None = None
        self._metrics_files: CertificateFiles | None = None
        self._metrics_files_task: asyncio.Task[None] | None = None

    # -- handlers ----------------------------------------------------------------

    async def _healthz(self, request: web.Request) -> web.Response:
        if self._manager.healthy():
            return web.Response(text="ok")
        return web.Response(status=500, text="a background task failed")

    async def _readyz(self, request: web.Request) -> web.Response:
        if self._manager.ready():
            return web.Response(text="ok")
        return web.Response(status=503, text="not ready: caches not synced, or not electing")

    async def _metrics(self, request: web.Request) -> web.Response:
        registry: CollectorRegistry | None = self._manager.registry
        body = generate_latest(registry) if registry is not None else b""
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def _debug_state(self, request: web.Request) -> web.Response:
        body = encode_state(
            self._manager.state(),
            max_entry_bytes=self._settings.debug_state_max_entry_bytes,
            max_bytes=self._settings.debug_state_max_bytes,
        )
        return web.Response(body=body, content_type="application/json")

    # -- lifecycle -----------------------------------------------------------------

    def _application(
        self, middlewares: list[Callable[..., Awaitable[web.StreamResponse]]]
    ) -> web.Application:
        app = web.Application(middlewares=[_refuse_bodies, *middlewares], client_max_size=1024)
        app.on_response_prepare.append(_name_server)
        return app

    async def _listen(
        self, app: web.Application, address: tuple[str, int], tls: ssl.SSLContext | None
    ) -> int:
        runner = web.AppRunner(app, handle_signals=False, access_log=None)
        await runner.setup()
        self._runners.append(runner)
        family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.setblocking(False)
        site = _LimitedSite(runner, sock, ssl_context=tls, settings=self._settings)
        await site.start()
        port = int(sock.getsockname()[1])
        _logger.info("listening", extra=fields(host=address[0], port=port, tls=tls is not None))
        return port

    def _metrics_app(self) -> tuple[web.Application, ssl.SSLContext | None]:
        settings = self._settings
        middlewares = []
        tls = None
        if settings.metrics_secure:
            if self._client is None:
                raise ValueError("serving metrics securely needs an API client for the reviews")
            self._metrics_files = certificate_files(settings.metrics_cert_path)
            tls = (
                self._metrics_files.context
                if self._metrics_files is not None
                else server_context(None)
            )
            self.reviews = AccessReviews(client=self._client, settings=settings.access)
            middlewares.append(access_middleware(self.reviews))
        app = self._application(middlewares)
        app.router.add_get("/metrics", self._metrics)
        if settings.debug_state:
            app.router.add_get("/debug/state", self._debug_state)
        return app, tls

    async def start(self) -> None:
        """Bind both listeners; raise OSError (address in use...), ValueError (bad address)
        or CertificateError (a serving certificate that cannot be loaded)."""
        metrics = parse_address(self._settings.metrics_bind_address)
        probes = parse_address(self._settings.health_probe_bind_address)
        try:
            if metrics is not None:
                app, tls = self._metrics_app()
                self.metrics_port = await self._listen(app, metrics, tls)
                if self._metrics_files is not None:
                    self._metrics_files_task = asyncio.create_task(
                        reload_on_change(self._metrics_files, self._settings),
                        name="metrics-certificate",
                    )
            if probes is not None:
                app = self._application([])
                app.router.add_get("/healthz", self._healthz)
                app.router.add_get("/readyz", self._readyz)
                self.probe_port = await self._listen(app, probes, None)
            await self._start_webhook()
        except BaseException:
            await self.stop()
            raise

    async def _start_webhook(self) -> None:
        address = parse_address(self._settings.webhook.bind_address)
        if address is None:
            return
        if self._client is None:
            raise ValueError("the admission webhook needs an API client")
        webhook = AdmissionWebhook(
            manager=self._manager, client=self._client, settings=self._settings.webhook
        )
        app = webhook.application()
        app.on_response_prepare.append(_name_server)
        self.webhook_port = await self._listen(app, address, webhook.tls.context)
        self.webhook = webhook
        self._webhook_task = asyncio.create_task(webhook.run(), name="webhook-refresh")

    async def stop(self) -> None:
        tasks = (self._webhook_task, self._metrics_files_task)
        self._webhook_task = self._metrics_files_task = None
        for task in tasks:
            if task is None:
                continue
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        runners, self._runners = self._runners, []
        for runner in runners:
            await runner.cleanup()

    async def __aenter__(self) -> Server:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.stop()


async def reload_on_change(files: CertificateFiles, settings: ServerSettings) -> None:
    """Serve a renewed pair from the metrics directory (cert-manager renews it in place).

    A pair that does not load is logged once and the one before keeps serving."""
    failing = False
    while True:
        await asyncio.sleep(settings.certificate_refresh_seconds)
        try:
            reloaded = files.refresh()
        except CertificateError as error:
            if not failing:
                _logger.warning(
                    "the metrics certificate cannot be reloaded; serving the previous one",
                    extra=fields(error=str(error)),
                )
            failing = True
            continue
        failing = False
        if reloaded:
            _logger.info(
                "serving a renewed metrics certificate",
                extra=fields(path=str(files.certificate.parent)),
            )
