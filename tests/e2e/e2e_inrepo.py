"""The in-repo API server (hvpa/sim/apiserver) on a thread of its own, so the synchronous
differential tests can send it the same requests as the real server.

It runs on a real-time asyncio loop here (no looptime): the comparison is of answers, and a
watch's timeoutSeconds must mean the same seconds on both servers.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from e2e_api import Api

from hvpa.sim.apiserver import ApiServer

__all__ = ["InRepoServer"]

TOKEN = "hvpa-e2e-differential"


class InRepoServer:
    def __init__(self, **options: Any) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="in-repo-apiserver", daemon=True
        )
        self._options = {"token": TOKEN, **options}
        self.server: ApiServer | None = None
        self.api: Api | None = None

    def start(self) -> Api:
        self._thread.start()
        self.server = self._call(self._start())
        api = Api(self.server.url, token=TOKEN)
        self.api = api
        return api

    async def _start(self) -> ApiServer:
        server = ApiServer(**self._options)
        await server.start()
        return server

    def compact(self) -> None:
        """Forget every resource's history up to now (as etcd's compaction does), on the
        server's own loop."""
        self._call(self._compact())

    async def _compact(self) -> None:
        assert self.server is not None
        self.server.faults.compact()

    def _call(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout=30)

    def stop(self) -> None:
        if self.server is not None:
            self._call(self.server.stop())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
