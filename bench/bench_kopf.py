"""A peer: hvpa's informer and a minimal kopf operator watching the same pods.

The API server (bench.cluster) holds N realistic pods. Each watcher
(bench.watchers) runs alone in its own process against it, one after the
other, so neither takes CPU from the other: it lists every pod (its RSS is
read once synced), then the server makes a burst of M pod status updates
(a container's restartCount; every pod once) as fast as it can, followed by
a write to a marker pod. The watcher counts the MODIFIED events it
processed until the marker, and its CPU time (user + system) meanwhile.

Rows: events per CPU-second (how many events one core of the watcher
processes per second: the burst over the watcher's CPU time, which is
robust to the server's pace) and RSS after the initial list; ratios are
hvpa against kopf (above 1: hvpa does better).

kopf comes from the `bench` extra (`pip install -e '.[bench]'`, which
`make bench` does); without it the rows are skipped with a message.
"""

from __future__ import annotations

import importlib.util
from typing import Any

from bench.cluster import ClusterSpec, serve
from bench.harness import Child, Row, Size, note, pick
from bench.watchers import hvpa_watcher, kopf_watcher

MB = 1_000_000


def _watch(
    cluster: Child, target: Any, kubeconfig: str, pods: int, burst: int, name: str
) -> dict[str, Any]:
    with Child(target, kubeconfig, pods, name=name) as watcher:
        synced = watcher.recv(timeout=600)
        writes = cluster.ask(("count_writes",))["writes"] + burst
        watcher.send(("go", str(writes)))
        cluster.ask(("burst", burst), timeout=600)
        result = watcher.recv(timeout=600)
        watcher.send(("stop",))
    if result["events"] != burst:
        raise RuntimeError(f"{name} processed {result['events']} events of {burst}")
    return {**result, "rss_synced": synced["rss"]}


def run(size: Size = "full") -> list[Row]:
    if importlib.util.find_spec("kopf") is None:
        note("  kopf is not installed: skipped (pip install -e '.[bench]' installs it)")
        return []
    pods = pick(size, 200, 5_000, 20_000)
    burst = pods
    with Child(serve, ClusterSpec(pods=pods), _extra, name="apiserver") as cluster:
        info = cluster.recv(timeout=600)
        hvpa = _watch(cluster, hvpa_watcher, info["kubeconfig"], pods, burst, "hvpa")
        note(f"  hvpa: {burst / hvpa['cpu']:,.0f} events/CPU-s; kopf...")
        kopf = _watch(cluster, kopf_watcher, info["kubeconfig"], pods, burst, "kopf")
        cluster.ask(("stop",))
    hvpa_rate, kopf_rate = burst / hvpa["cpu"], burst / kopf["cpu"]
    return [
        Row.compared(
            f"watch {burst:,} pod events: events per CPU-second (ref kopf)",
            hvpa_rate,
            "events/CPU-s",
            kopf_rate,
        ),
        Row.compared(
            f"watch {burst:,} pod events: wall clock to the last (ref kopf)",
            hvpa["wall"],
            "s",
            kopf["wall"],
            invert=True,
        ),
        Row.compared(
            f"watcher RSS with {pods:,} pods listed (ref kopf)",
            hvpa["rss_synced"] / MB,
            "MB",
            kopf["rss_synced"] / MB,
            invert=True,
        ),
    ]


def _extra(server: Any, spec: ClusterSpec, churn: Any) -> dict[str, Any]:
    async def count_writes() -> dict[str, Any]:
        return {"writes": churn.writes}

    return {"count_writes": count_writes}
