"""ApiServer: the in-process Kubernetes API server, its lifecycle and its test-facing handles.

    async with ApiServer() as server:
        server.url, server.kubeconfig_path      # for kubernetes_asyncio, kubectl, hvpa run
        server.objects.create("pods", {...})    # in-process writes: same rules, same watch events
        server.metrics.set_pod_metrics(...)     # metrics.k8s.io, custom and external metrics
        server.faults.fail(status=429, path="/pods")
        server.requests                         # what clients asked for
        server.reviews.add_token("t", "alice")  # TokenReviews; SubjectAccessReviews from
        server.reviews.allow("alice", "get", "/metrics")   # an allow list

Time: object timestamps come from `clock` (seconds since the epoch) so the
simulator's virtual time shows in creationTimestamp and metric timestamps,
and so does every answer's `Date` header (`hvpa explain` reads the cluster's
now from it); watch timeouts and bookmark intervals follow the running
loop's clock.
`seed` makes uids and generated names reproducible.
"""

from __future__ import annotations

import email.utils
import logging
import random
import shutil
import socket
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, Final

from aiohttp import web

from hvpa.sim.apiserver.admission import Admission
from hvpa.sim.apiserver.default_crds import default_crds
from hvpa.sim.apiserver.discovery import Discovery
from hvpa.sim.apiserver.faults import Faults
from hvpa.sim.apiserver.handlers import HttpApi
from hvpa.sim.apiserver.kubeconfig import write_kubeconfig
from hvpa.sim.apiserver.metrics import Metrics
from hvpa.sim.apiserver.objects import Objects
from hvpa.sim.apiserver.openapi import OpenApi
from hvpa.sim.apiserver.registry import Registry
from hvpa.sim.apiserver.requestlog import RequestLog, RequestRecord
from hvpa.sim.apiserver.resizing import PodResizes, resize_served
from hvpa.sim.apiserver.resources import ResourceTable
from hvpa.sim.apiserver.reviews import Reviews
from hvpa.sim.apiserver.storage import Storage
from hvpa.sim.apiserver.watching import Watches

__all__ = ["ApiServer"]

logger = logging.getLogger(__name__)

DEFAULT_NAMESPACES: Final = ("default", "kube-system", "kube-public", "kube-node-lease")


class ApiServer:
    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        clock: Callable[[], float] = time.time,
        seed: int | None = None,
        history_limit: int = 50_000,
        bookmark_interval_seconds: float = 60.0,
        min_request_timeout_seconds: float = 1800.0,
        request_log_limit: int = 100_000,
        kubernetes_version: str = "v1.32.0",
        token: str = "hvpa-sim-token",
        kubeconfig_path: str | Path | None = None,
        namespaces: Iterable[str] = DEFAULT_NAMESPACES,
        crds: Iterable[Mapping[str, Any]] | None = None,
        shutdown_timeout_seconds: float = 1.0,
        pod_resize: bool | None = None,
    ) -> None:
        """`history_limit` is the events kept per resource (the watch cache's size):
        older watches and continue tokens get 410. Without timeoutSeconds a watch
        lasts between one and two `min_request_timeout_seconds`, as upstream.
        `crds` are installed at start (default: the Hvpa and VerticalPodAutoscaler
        CRDs, default_crds.py); more can be created like any object.
        `pod_resize`: serve pods/resize; None: as `kubernetes_version` does (1.33 and later)."""
        self._host = host
        self._clock = clock
        self._requested_port = port
        self._token = token
        self._shutdown_timeout = shutdown_timeout_seconds
        self._kubeconfig_wanted = Path(kubeconfig_path) if kubeconfig_path is not None else None
        rng = random.Random(seed)
        table = ResourceTable()
        self._storage = Storage(table, history_limit=history_limit)
        registry = Registry(table, self._storage, clock=clock, rng=rng)
        watches = Watches()
        self._watches = watches
        self._log = RequestLog(request_log_limit)
        self.objects = Objects(registry)
        self.metrics = Metrics(table, self._storage, clock=clock)
        self.faults = Faults(self._storage, watches, registry.resource)
        self.reviews = Reviews()
        served = resize_served(kubernetes_version) if pod_resize is None else pod_resize
        self.resizes = PodResizes(registry, kubernetes_version=kubernetes_version, served=served)
        self.admission = Admission(registry)
        self._http = HttpApi(
            registry=registry,
            metrics=self.metrics,
            discovery=Discovery(
                table,
                self.metrics,
                kubernetes_version=kubernetes_version,
                pod_resize=lambda: self.resizes.served,
            ),
            faults=self.faults,
            watches=watches,
            log=self._log,
            reviews=self.reviews,
            rng=rng,
            openapi=OpenApi(table, kubernetes_version=kubernetes_version),
            bookmark_interval_seconds=bookmark_interval_seconds,
            min_request_timeout_seconds=min_request_timeout_seconds,
            resizes=self.resizes,
            admission=self.admission,
        )
        self._runner: web.AppRunner | None = None
        self._port: int | None = None
        self._kubeconfig: Path | None = None
        self._tempdir: Path | None = None
        for name in namespaces:
            self.objects.create("namespaces", {"metadata": {"name": name}})
        for crd in default_crds() if crds is None else crds:
            self.objects.create("customresourcedefinitions", crd)

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        if self._runner is not None:
            raise RuntimeError("the API server is already running")
        application = self._http.application()
        application.on_response_prepare.append(self._stamp_date)
        runner = web.AppRunner(
            application,
            handle_signals=False,
            access_log=None,
            handler_cancellation=True,
            shutdown_timeout=self._shutdown_timeout,
        )
        await runner.setup()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self._host, self._requested_port))
        sock.setblocking(False)
        site = web.SockSite(runner, sock)
        await site.start()
        self._runner = runner
        self._port = int(sock.getsockname()[1])
        if self._kubeconfig_wanted is not None:
            path = self._kubeconfig_wanted
        else:
            self._tempdir = Path(tempfile.mkdtemp(prefix="hvpa-apiserver-"))
            path = self._tempdir / "kubeconfig"
        self._kubeconfig = write_kubeconfig(path, server=self.url, token=self._token)
        logger.info("API server listening", extra={"fields": {"url": self.url}})

    async def _stamp_date(self, request: web.Request, response: web.StreamResponse) -> None:
        """`Date` from the server's clock, as kube-apiserver's comes from its machine's
        (aiohttp would stamp the machine's, which is not the simulated cluster's)."""
        del request
        response.headers["Date"] = email.utils.formatdate(self._clock(), usegmt=True)

    async def stop(self) -> None:
        runner, self._runner = self._runner, None
        if runner is None:
            return
        self._watches.close_all()
        await runner.cleanup()
        if self._tempdir is not None:
            shutil.rmtree(self._tempdir, ignore_errors=True)
            self._tempdir = None
        self._kubeconfig = None

    async def __aenter__(self) -> ApiServer:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.stop()

    # ------------------------------------------------------------------ handles

    @property
    def url(self) -> str:
        if self._port is None:
            raise RuntimeError("the API server is not running")
        return f"http://{self._host}:{self._port}"

    @property
    def kubeconfig_path(self) -> Path:
        if self._kubeconfig is None:
            raise RuntimeError("the API server is not running")
        return self._kubeconfig

    @property
    def resource_version(self) -> int:
        return self._storage.resource_version

    @property
    def requests(self) -> list[RequestRecord]:
        """Every request so far (up to request_log_limit), oldest first."""
        return list(self._log)

    def clear_requests(self) -> None:
        self._log.clear()

    @property
    def open_watches(self) -> int:
        return len(self._watches)
