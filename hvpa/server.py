"""The aiohttp side channels: health probes, Prometheus metrics and `/debug/state`.

Two listeners, as controller-runtime splits them, so a NetworkPolicy can
open the probes to the kubelet and the metrics to Prometheus separately:

- probes (`--health-probe-bind-address`, default `:8081`):
  `/healthz` 200 while no background task of the controller has failed;
  `/readyz` 200 once every cache has synced and this instance leads, or is
  a standby whose elector is still running (503 otherwise);
- metrics (`--metrics-bind-address`, default `:8080`): `/metrics` in the
  Prometheus text format from the controller's registry, and `/debug/state`
  (JSON; 404 with `--debug-state=false`).

Everything served is a read-only view of the Manager; nothing here writes to
the cluster. An address of `0` turns its listener off; port 0 binds a free
port (`metrics_port`, `probe_port` tell which).
"""

from __future__ import annotations

import logging
import socket
from types import TracebackType
from typing import Final

import orjson
from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

from hvpa.controller.manager import Manager
from hvpa.logs import fields
from hvpa.settings import ServerSettings

__all__ = ["Server", "parse_address"]

_logger = logging.getLogger(__name__)

_DISABLED: Final = "0"


def parse_address(address: str) -> tuple[str, int] | None:
    """`host:port`, `:port` (every interface) or `[v6]:port`; None for `0` (off)."""
    if address == _DISABLED:
        return None
    host, separator, port = address.rpartition(":")
    if not separator or not port.isdigit():
        raise ValueError(f"{address!r} is not host:port, :port or 0")
    return host.strip("[]") or "0.0.0.0", int(port)


class Server:
    def __init__(self, *, manager: Manager, settings: ServerSettings) -> None:
        self._manager = manager
        self._settings = settings
        self._runners: list[web.AppRunner] = []
        self.metrics_port: int | None = None
        self.probe_port: int | None = None

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
        body = orjson.dumps(self._manager.state(), option=orjson.OPT_INDENT_2)
        return web.Response(body=body, content_type="application/json")

    # -- lifecycle -----------------------------------------------------------------

    async def _listen(self, app: web.Application, address: tuple[str, int]) -> int:
        runner = web.AppRunner(app, handle_signals=False, access_log=None)
        await runner.setup()
        self._runners.append(runner)
        family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.setblocking(False)
        await web.SockSite(runner, sock).start()
        port = int(sock.getsockname()[1])
        _logger.info("listening", extra=fields(host=address[0], port=port))
        return port

    async def start(self) -> None:
        """Bind both listeners; raise OSError (address in use...) or ValueError (bad address)."""
        metrics = parse_address(self._settings.metrics_bind_address)
        probes = parse_address(self._settings.health_probe_bind_address)
        try:
            if metrics is not None:
                app = web.Application()
                app.router.add_get("/metrics", self._metrics)
                if self._settings.debug_state:
                    app.router.add_get("/debug/state", self._debug_state)
                self.metrics_port = await self._listen(app, metrics)
            if probes is not None:
                app = web.Application()
                app.router.add_get("/healthz", self._healthz)
                app.router.add_get("/readyz", self._readyz)
                self.probe_port = await self._listen(app, probes)
        except BaseException:
            await self.stop()
            raise

    async def stop(self) -> None:
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
