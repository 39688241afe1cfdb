"""Memory per cached pod: hvpa's indexed store of slim records against a dict cache of full objects.

Each side runs in a fresh child process. The child makes the watch-event
lines of N realistic pods (bench.corpus, 50 pods per workload), collects
garbage and reads its RSS (VmRSS); then it builds its cache and reads RSS
again; the difference over N is the cost per pod.

- hvpa: the lines go through the real reflector and informer (bench_ingest's
  replay client) into a Store with the controller's pod indexes
  (`pod_indexers()`: namespace, namespace+label), with the record module's
  interning of labels and container specs, as the controller runs it; then
  the heap is frozen as the controller does after its first sync.
- reference: `{namespace/name: orjson.loads(line)["object"]}`, the cache of
  full objects a dict-based controller keeps.

Method: RSS deltas (not tracemalloc: tracing 40 million allocations of the
dict cache would take minutes), so allocator overhead and fragmentation
count, as they do in a real process. Targets: <= 1 KiB per pod, and <= 10%
of the dict cache (ratio >= 10).
"""

from __future__ import annotations

import asyncio
import gc

import orjson

from bench.bench_ingest import ReplayClient
from bench.corpus import pod
from bench.harness import Row, Size, in_child, pick, rss_bytes
from hvpa.controller.cache import pod_indexers
from hvpa.kube.informer import Informer
from hvpa.kube.resources import PODS
from hvpa.kube.settings import WatchSettings
from hvpa.kube.store import freeze_heap

KIB = 1024


def _lines(pods: int) -> list[bytes]:
    return [
        orjson.dumps({"type": "ADDED", "object": pod(index // 50, index % 50)})
        for index in range(pods)
    ]


async def _fill_store(data: bytes) -> Informer[object, object]:
    client = ReplayClient(data)
    informer: Informer[object, object] = Informer(
        client=client,  # type: ignore[arg-type]
        resource=PODS,  # type: ignore[arg-type]
        indexers=pod_indexers(),  # type: ignore[arg-type]
        # The replay answers a list, then a watch (not a watch-list).
        settings=WatchSettings(watch_list=False),
    )
    task = asyncio.create_task(informer.run())
    await client.done.wait()
    task.cancel()
    return informer


def store_bytes(pods: int) -> int:
    """In a child: RSS growth from filling hvpa's indexed store with `pods` pods."""
    data = b"\n".join(_lines(pods)) + b"\n"
    gc.collect()
    before = rss_bytes()
    informer = asyncio.run(_fill_store(data))
    freeze_heap()
    after = rss_bytes()
    if informer.size != pods:
        raise RuntimeError(f"stored {informer.size} pods of {pods}")
    return after - before


def dict_cache_bytes(pods: int) -> int:
    """In a child: RSS growth from a dict of the full objects."""
    lines = _lines(pods)
    gc.collect()
    before = rss_bytes()
    cache = {}
    for line in lines:
        obj = orjson.loads(line)["object"]
        metadata = obj["metadata"]
        cache[f"{metadata['namespace']}/{metadata['name']}"] = obj
    gc.collect()
    after = rss_bytes()
    if len(cache) != pods:
        raise RuntimeError(f"cached {len(cache)} pods of {pods}")
    return after - before


def run(size: Size = "full") -> list[Row]:
    pods = pick(size, 2_000, 20_000, 100_000)
    hvpa = in_child(store_bytes, pods) / pods
    reference = in_child(dict_cache_bytes, pods) / pods
    return [
        Row.compared(
            f"memory per cached pod at {pods:,} pods (RSS delta; ref dict of orjson.loads)",
            hvpa,
            "B/pod",
            reference,
            invert=True,
            ratio_at_least=10.0,
            target="<= 1 KiB/pod and ratio >= 10",
            met=hvpa <= KIB,
        )
    ]
