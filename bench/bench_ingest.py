"""Ingest: watch-event lines of realistic pods through the reflector into the store.

What runs is the real path: an `Informer` over PODS with the controller's
pod indexes, its `Reflector` reading a watch stream (64 KiB chunks, split
into lines, each decoded by msgspec into the wire struct, converted to a
PodRecord, upserted into the indexed store). Only the transport is replaced:
a stand-in client answers the list with no items and the watch with the
recorded bytes. Half the lines add pods, half modify them (a restart count
and resourceVersion change), so the store's re-indexing path runs too.

Reference: `orjson.loads` of the same lines, the result dropped - merely
parsing the whole object, not even keeping it. Best of three rounds each,
rounds interleaved. Ratio = reference time / hvpa time (>= 1: storing a
slim record is no slower than parsing the object).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any

import orjson

from bench.corpus import pod
from bench.harness import Row, Size, pick
from hvpa.controller.cache import pod_indexers
from hvpa.kube.informer import Informer
from hvpa.kube.resources import PODS
from hvpa.kube.settings import WatchSettings

CHUNK_BYTES = 64 * 1024
_EMPTY_LIST = b'{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[]}'


def event_lines(pods: int, *, per_workload: int = 50) -> list[bytes]:
    """`pods` ADDED events, then a MODIFIED event for each (a container restarted)."""
    objects = [pod(index // per_workload, index % per_workload) for index in range(pods)]
    lines = [orjson.dumps({"type": "ADDED", "object": obj}) for obj in objects]
    for obj in objects:
        metadata, status = obj["metadata"], obj["status"]
        metadata["resourceVersion"] = str(int(metadata["resourceVersion"]) + 10_000_000)
        status["containerStatuses"][0]["restartCount"] = 1
        lines.append(orjson.dumps({"type": "MODIFIED", "object": obj}))
    return lines


class _Chunks:
    def __init__(self, data: bytes) -> None:
        self._data = memoryview(data)
        self._offset = 0

    async def read_chunk(self) -> bytes:
        chunk = bytes(self._data[self._offset : self._offset + CHUNK_BYTES])
        self._offset += len(chunk)
        return chunk


class ReplayClient:
    """Answers the reflector's list with nothing and its first watch with `data`; the second
    watch sets `done` and hangs until cancelled."""

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._watches = 0
        self.done = asyncio.Event()

    async def request(self, method: str, path: str, **_: Any) -> bytes:
        return _EMPTY_LIST

    @contextlib.asynccontextmanager
    async def stream(self, path: str, **_: Any) -> AsyncIterator[_Chunks]:
        self._watches += 1
        if self._watches > 1:
            self.done.set()
            await asyncio.Event().wait()
        yield _Chunks(self._data)


async def _replay(data: bytes, expected: int) -> float:
    client = ReplayClient(data)
    informer: Informer[Any, Any] = Informer(
        client=client,  # type: ignore[arg-type]
        resource=PODS,
        indexers=pod_indexers(),
        # The replay answers a list, then a watch (not a watch-list).
        settings=WatchSettings(watch_list=False),
    )
    started = time.perf_counter()
    task = asyncio.create_task(informer.run())
    await client.done.wait()
    elapsed = time.perf_counter() - started
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    if informer.size != expected or informer.reflector.skipped:
        raise RuntimeError(f"stored {informer.size} pods of {expected}")
    return elapsed


def hvpa_seconds(lines: list[bytes], expected: int) -> float:
    return asyncio.run(_replay(b"\n".join(lines) + b"\n", expected))


def orjson_seconds(lines: list[bytes]) -> float:
    loads = orjson.loads
    started = time.perf_counter()
    for line in lines:
        loads(line)
    return time.perf_counter() - started


def run(size: Size = "full") -> list[Row]:
    pods = pick(size, 100, 5_000, 15_000)
    lines = event_lines(pods)
    hvpa, reference = [], []
    for _ in range(pick(size, 1, 3, 3)):
        reference.append(orjson_seconds(lines))
        hvpa.append(hvpa_seconds(lines, pods))
    per_hvpa = min(hvpa) / len(lines) * 1e6
    per_reference = min(reference) / len(lines) * 1e6
    mean_kib = sum(map(len, lines)) / len(lines) / 1024
    return [
        Row.compared(
            f"ingest: watch line -> slim record in store ({mean_kib:.1f} KiB pods; ref orjson.loads)",
            per_hvpa,
            "us/event",
            per_reference,
            invert=True,
            ratio_at_least=1.0,
        )
    ]
