"""The scalability envelope: the whole controller at a cluster's size, and what it asks of it.

The same two processes as bench_controller (the in-repo API server playing the
cluster, the VPA recommender and the kubelets; the real Manager over HTTP), at
the envelope's shape: about 15 pods per Hvpa (150,000 pods, 5,000 nodes and
10,000 Hvpas at full size, over bench.corpus's 200 namespaces), with a mix of
Hvpas: three in four scale vertically on a CPU-utilization HPA template (as in
bench_controller), one in four also deploy the HPA side (replicas held at their
count, so every decision computes both axes and writes only on a change) with
an AverageValue memory metric.

Steps:
1. Wall clock from the controller's start to its caches synced, and to every
   Hvpa's first decision (the controller's observations: each creates its VPA
   first, and decides in the reconcile the VPA's ADDED event queues), with the
   requests of that start by verb. Target: <= 60 s for all of them.
2. Settle, write every VPA's first recommendation (nothing to change), settle
   (each settle given up after SETTLE_PERIODS sync periods: a controller short
   of CPU never drains the resync's queue). RSS here. Target: <= 512 MiB. Then
   a sync period with no churn and no trigger: what a decision of the resync
   alone costs, to tell it from the churn's cost below.
3. Measured phase of two sync periods (30 s): pod churn at 1,000 status
   updates/s, VPA triggers answered by a template PATCH (latency as in
   bench_controller; target p99 <= 100 ms); every request the server sees is
   counted by verb and resource. Rows:
   - decisions per Hvpa per 15 s sync period (target >= 1);
   - API requests per Hvpa per sync period against the upstream HPA
     controller's pattern, one GET of /scale and one status write per HPA per
     sync (2);
   - metrics-API reads per sync period against the number of namespaces with
     Hvpas, and the shortest time between two reads of one namespace against
     the sync period (both shown without a target: the server's view wavers,
     and the rule, one read per namespace per period, is the controller's by
     construction and tested);
   - requests/s by verb (informational; at steady state a status write is made
     only when a status changed, so writes follow the triggers, not the Hvpas);
   - the controller's event-loop stalls and GC pauses over the window, and the
     share of the slowest answers (those at or above the p99) that overlap one;
     the p99 of the answers clear of each process's stalls, then of either's
     (a bound: leaving out the answers a stall reached keeps the luckier ones),
     which says whose stalls the tail is made of;
   - each answer split in five parts at moments taken in both processes
     (TriggerSplit; bench.controller_process.TriggerMoments, VpaWatchWrites):
     the server's watch, the delivery, the controller's own part (its p50 and
     p99, shown beside the 100 ms the whole answer is held to), the sending and
     the return;
     each part's p99, its share of the slowest answers' time, and the answers
     whose controller part held a read of their namespace's PodMetrics;
   - each process's CPU and its wait for a CPU (schedstat run delay), so a
     reader can tell a busy machine from a slow controller.
4. A leader restart: the controller stops, a new one starts; the requests from
   its start until every Hvpa is decided and a sync period more, by verb,
   against the upstream HPA's GET /scale and status write per HPA per sync.

The full size needs a few GB of RAM for the server process (its store and
history), and on two shared cores several minutes; `--quick` runs 1,000 Hvpas.
"""

from __future__ import annotations

import itertools
import math
import os
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any, Final

import orjson

from bench import corpus
from bench.bench_controller import (
    Recommender,
    hvpa_manifest,
    settle_and_measure,
    wait_until_decided,
)
from bench.cluster import ClusterSpec, PodChurn, serve
from bench.controller_process import MAX_MOMENTS, controller_main
from bench.harness import Child, Row, Size, note, pick, quantile, run_delay_seconds
from hvpa.sim.apiserver import ApiServer
from hvpa.sim.apiserver.watching import Watch

MIB = 1 << 20
PODS_PER_HVPA = 15
SYNC_PERIOD_SECONDS = 15.0  # ControllerSettings' default resync
# The tiny size (the test suite's smoke run) syncs every 3 s: its measures mean nothing, and at
# 15 s it spent some 40 s of the suite's wall clock waiting out the window and the restart.
TINY_SYNC_PERIOD_SECONDS = 3.0
QUEUE_SLACK_SECONDS = 1.0
# The upstream HPA controller, per HPA and sync: GET /scale, and a status write.
HPA_REQUESTS_PER_SYNC = 2.0
# A controller short of CPU never drains the queue the resync fills (at 10,000 Hvpas on one core
# it did not in 5 minutes): after this many sync periods of settling the window is measured
# anyway, and its rows say how far the decisions fall short and what they would need.
SETTLE_PERIODS = 4


def envelope_manifest(workload: int) -> dict[str, Any]:
    """bench_controller's Hvpa; every fourth also deploys its HPA side on a memory value."""
    manifest = hvpa_manifest(workload)
    if workload % 4 == 3:
        hpa = manifest["spec"]["hpa"]
        hpa["deploy"] = True
        hpa["template"]["spec"].update(
            minReplicas=PODS_PER_HVPA,
            maxReplicas=PODS_PER_HVPA,
            metrics=[
                {
                    "type": "Resource",
                    "resource": {
                        "name": "memory",
                        "target": {"type": "AverageValue", "averageValue": "300M"},
                    },
                }
            ],
        )
    return manifest


class Envelope(Recommender):
    """bench_controller's cluster side, counting every request of the measured phase."""

    def __init__(self, server: ApiServer, spec: ClusterSpec, churn: PodChurn) -> None:
        self.requests: Counter[tuple[str, str]] = Counter()
        self.metrics_reads: list[tuple[str, float]] = []  # (namespace, received at)
        super().__init__(server, spec, churn)
        self.watch_writes = VpaWatchWrites()
        # The mix: replace what Recommender created with the envelope's manifests.
        for workload in range(self.workloads):
            if workload % 4 == 3:
                name = corpus.workload_name(workload)
                namespace = corpus.namespace_of(workload)
                server.objects.delete("hvpas", name, namespace=namespace)
                server.objects.create("hvpas", envelope_manifest(workload), namespace=namespace)

    def _count(self) -> None:
        for record in self.server.requests:
            what = record.resource + (f"/{record.subresource}" if record.subresource else "")
            if record.api_group == "metrics.k8s.io":
                what = f"metrics.k8s.io {what}"
                self.metrics_reads.append((record.namespace, record.received_at))
            self.requests[(record.verb, what)] += 1

    def _answers(self, pending: dict[tuple[str, str], float], latencies: list[float]) -> None:
        self._count()
        super()._answers(pending, latencies)

    async def mark(self) -> dict[str, Any]:
        """Count requests from here on (for the restart: from before the new leader starts)."""
        self.server.clear_requests()
        self.requests.clear()
        return {}

    async def counted(self) -> dict[str, Any]:
        """The requests since `mark`, by (verb, resource)."""
        self._count()
        self.server.clear_requests()
        return {"requests": dict(self.requests)}

    async def measure(
        self, churn_per_second: float, triggers_per_second: float, seconds: float
    ) -> dict[str, Any]:
        self.requests.clear()
        self.metrics_reads.clear()
        began = time.monotonic()
        cpu_began, delay_began = time.process_time(), run_delay_seconds()
        self.watch_writes.take()  # from here on
        result = await super().measure(churn_per_second, triggers_per_second, seconds)
        result["vpa_watch_writes"] = self.watch_writes.take()
        result["elapsed"] = time.monotonic() - began
        result["server_cpu"] = time.process_time() - cpu_began
        result["server_run_delay"] = run_delay_seconds() - delay_began
        result["requests"] = dict(self.requests)
        result["metrics_reads"] = list(self.metrics_reads)
        return result


def _cluster_commands(server: ApiServer, spec: ClusterSpec, churn: PodChurn) -> dict[str, Any]:
    envelope = Envelope(server, spec, churn)
    return {
        "baseline": envelope.baseline,
        "quiesce": envelope.quiesce,
        "measure": envelope.measure,
        "mark": envelope.mark,
        "counted": envelope.counted,
    }


def _tail_explained(
    measured: dict[str, Any], p99_seconds: float, hiccups: list[tuple[float, float]]
) -> float:
    """The share of answers at or above the p99 whose wait overlaps a loop stall or GC pause
    of a process (`hiccups`: (ended at, seconds), time.monotonic of this machine)."""
    began = measured["began"]
    tail = [
        (began + at, latency) for at, latency, _ in measured["answered"] if latency >= p99_seconds
    ]
    if not tail:
        return 0.0
    hit = sum(1 for start, latency in tail if _overlaps(start, start + latency, hiccups))
    return hit / len(tail)


def _overlaps(start: float, end: float, hiccups: list[tuple[float, float]]) -> bool:
    """Whether a wait from `start` to `end` overlaps one of `hiccups` ((ended at, seconds))."""
    return any(ended - length < end and ended > start for ended, length in hiccups)


def _p99_clear_of(
    measured: dict[str, Any], hiccups: list[tuple[float, float]]
) -> tuple[float, int]:
    """The p99 (seconds) of the answers whose wait overlaps none of `hiccups`, and how many
    such answers there are: what the tail would be without those stalls, the rest unchanged.
    Leaving out the answers a stall reached selects the luckier ones, so this is a bound on
    what removing the stalls would give, not a measurement of it."""
    began = measured["began"]
    clear = [
        latency
        for at, latency, _ in measured["answered"]
        if not _overlaps(began + at, began + at + latency, hiccups)
    ]
    return (quantile(clear, 0.99) if clear else 0.0), len(clear)


def _clear_of_stalls_rows(
    measured: dict[str, Any], controller_hiccups: list[tuple[float, float]]
) -> list[Row]:
    """The trigger's p99 without the answers a stall of one process, then of either,
    reached: which process's stalls the tail is made of, and so what meeting the target
    on this machine would need."""
    answered = len(measured["answered"])
    rows = []
    for whose, hiccups in (
        ("the API server process's stalls over 50 ms", measured["stalls"]),
        ("the controller's stalls over 50 ms and GC pauses", controller_hiccups),
        ("either process's stalls and pauses", measured["stalls"] + controller_hiccups),
    ):
        p99, clear = _p99_clear_of(measured, hiccups)
        rows.append(
            Row(
                f"trigger -> write p99 of the answers clear of {whose} ({clear} of {answered}; "
                "a bound: those a stall reached are left out)",
                1000 * p99,
                "ms",
            )
        )
    return rows


@dataclass(frozen=True, slots=True)
class TriggerSplit:
    """One answered trigger's latency in five parts (seconds), each ending at a moment taken
    in one of the processes:

    - `server`: the VPA's status written -> the server's watch taking its event to write it
      (the in-repo server's loop);
    - `delivery`: that -> the VPA's update in the controller's handlers (the server writing
      the event, the wire, the controller's loop reading and decoding the stream);
    - `controller`: that update (its Hvpa queued in the same call) -> the reconcile handing
      the Deployment's PATCH to its client (the queue, the reconcile);
    - `sending`: that -> the client having written the PATCH's headers to the connection
      (the controller's client and loop);
    - `return_`: that -> the server reading the PATCH (the wire, the server's loop)."""

    server: float
    delivery: float
    controller: float
    sending: float
    return_: float
    key: str = ""  # the Deployment's "namespace/name"
    handled_at: float = 0.0  # when the controller's own part began (time.monotonic)

    @property
    def total(self) -> float:
        return self.server + self.delivery + self.controller + self.sending + self.return_

    def held_a_read(self, reads: dict[str, list[float]]) -> bool:
        """Whether a PodMetrics read of its namespace came back during the controller's own
        part (`reads`: when each namespace's reads came back): the reconcile most likely
        waited for it (a read under way is shared, one that came back earlier was kept)."""
        namespace = self.key.partition("/")[0]
        ended = self.handled_at + self.controller
        return any(self.handled_at <= at <= ended for at in reads.get(namespace, ()))


@dataclass(frozen=True, slots=True)
class _Part:
    attribute: str
    name: str
    span: str


_OWN_PART: Final = _Part(
    "controller",
    "the controller's own part",
    "its VPA update handled -> its PATCH handed to its client",
)
_PARTS: Final = (
    _Part(
        "server", "the API server process's watch", "the VPA written -> its watch taking the event"
    ),
    _Part("delivery", "delivery", "the event taken -> its update in the controller's handlers"),
    _OWN_PART,
    _Part("sending", "sending", "the PATCH handed to the client -> its headers written"),
    _Part("return_", "return", "the PATCH written -> read by the API server process"),
)


def split_triggers(
    began: float,
    answered: list[tuple[float, float, str]],
    moments: dict[str, list[tuple[str, float]]],
    watch_writes: list[tuple[str, float]],
) -> list[TriggerSplit]:
    """Each answer (seconds after `began`, latency, "namespace/name") split at the first
    moments after its trigger, in turn: the server's watch taking the VPA's event
    (`watch_writes`, VpaWatchWrites), the controller's update of that VPA, its PATCH of
    the Deployment handed to the client and written (`moments`,
    bench.controller_process.TriggerMoments). An answer missing
    one of them, or whose PATCH came after the server read its answer (an earlier PATCH
    answered it), is left out."""
    series = {
        "watch": _by_key(watch_writes),
        "update": _by_key(moments["vpa_updates"]),
        "patch": _by_key(moments["patches"]),
        "sent": _by_key(moments["sent"]),
    }
    splits = []
    for offset, latency, key in answered:
        triggered = began + offset
        received = triggered + latency
        at = [triggered]
        for name in ("watch", "update", "patch", "sent"):
            found = next((t for t in series[name].get(key, ()) if t >= at[-1]), None)
            if found is None or found > received:
                break
            at.append(found)
        else:
            at.append(received)
            parts = (b - a for a, b in itertools.pairwise(at))
            splits.append(TriggerSplit(*parts, key=key, handled_at=at[2]))
    return splits


def _by_key(moments: list[tuple[str, float]]) -> dict[str, list[float]]:
    """The moments of each key, in the order taken (each process's, in time order)."""
    by_key: dict[str, list[float]] = {}
    for key, at in moments:
        by_key.setdefault(key, []).append(at)
    return by_key


def _split_rows(
    splits: list[TriggerSplit],
    answered: int,
    p99_seconds: float,
    metrics_reads: list[tuple[str, float]],
) -> list[Row]:
    """Each part's p99 (the controller's own part also at p50), and each part's share of the
    slowest answers' time. The controller's own part is shown beside the 100 ms the whole
    answer is held to, not held to it: the controller's loop also delays the delivery and
    the sending."""
    if len(splits) < answered:
        note(
            f"trigger split: {answered - len(splits)} of {answered} answers had no moments to split at"
        )
    if not splits:
        return []
    tail = [split for split in splits if split.total >= p99_seconds]
    tail_time = sum(split.total for split in tail)
    own = _OWN_PART
    rows = [
        Row(
            f"trigger -> write, {own.name} ({own.span}), p50 ({len(splits)} of {answered} split)",
            1000 * quantile([split.controller for split in splits], 0.5),
            "ms",
        )
    ]
    for part in _PARTS:
        rows.append(
            Row(
                f"trigger -> write, {part.name} ({part.span}), p99"
                + (" (ref: the whole answer's 100 ms)" if part is own else ""),
                1000 * quantile([getattr(split, part.attribute) for split in splits], 0.99),
                "ms",
            )
        )
    for part in _PARTS:
        in_part = sum(getattr(split, part.attribute) for split in tail)
        rows.append(
            Row(
                f"share of the slowest answers' time (the {len(tail)} at or above the p99) "
                f"in {part.name}",
                100 * in_part / tail_time if tail_time else 0.0,
                "%",
            )
        )
    return rows + _read_rows(splits, tail, _by_key(metrics_reads))


def _read_rows(
    splits: list[TriggerSplit], tail: list[TriggerSplit], reads: dict[str, list[float]]
) -> list[Row]:
    """How often the controller's own part held a read of its namespace's PodMetrics, and
    what that part is without them."""
    without = [split.controller for split in splits if not split.held_a_read(reads)]
    held = len(splits) - len(without)
    held_in_tail = sum(1 for split in tail if split.held_a_read(reads))
    rows = [
        Row(
            "answers whose controller part held a PodMetrics read of their namespace "
            f"(one came back during it; {held} of {len(splits)})",
            100 * held / len(splits),
            "%",
        ),
        Row(
            f"the same among the slowest answers ({len(tail)} at or above the p99)",
            100 * held_in_tail / len(tail) if tail else 0.0,
            "%",
        ),
    ]
    if without:
        rows.append(
            Row(
                "trigger -> write, the controller's own part of the answers that held no "
                f"such read ({len(without)}), p99",
                1000 * quantile(without, 0.99),
                "ms",
            )
        )
    return rows


class VpaWatchWrites:
    """When the API server process's watches took each VPA's event to write it, keyed by
    the Deployment's "namespace/name" (its VPA is NAME-vpa): a watch's task wakes on a
    write and takes the events since its last, so this is the server's own delay before the
    event goes to the controller. Taken by wrapping the in-repo server's Watch._lines in
    this process (the cluster's, not the controller's), once per process: one Envelope is
    made in it. Every event a VPA watch takes is recorded, those its namespace or selector
    then filters out too: right for the envelope's controller, whose one VPA watch is
    cluster-wide and unfiltered."""

    def __init__(self) -> None:
        self.recording = False
        self.moments: list[tuple[str, float]] = []
        original = Watch._lines

        def timed_lines(watch: Watch, events: list[Any]) -> list[bytes]:
            lines = original(watch, events)
            if (
                self.recording
                and watch.rtype.plural == "verticalpodautoscalers"
                and len(self.moments) < MAX_MOMENTS
            ):
                now = time.monotonic()
                self.moments.extend((event.entry.key.removesuffix("-vpa"), now) for event in events)
            return lines

        Watch._lines = timed_lines  # type: ignore[method-assign]

    def take(self) -> list[tuple[str, float]]:
        """What was recorded since the last take; recording goes on from now."""
        taken, self.moments = self.moments, []
        self.recording = True
        return taken


def run(size: Size = "full") -> list[Row]:
    """`HVPA_BENCH_ENVELOPE_HVPAS=N` runs N Hvpas (and N / 2 nodes) at the full size's
    rates instead: a point between --quick and the full size."""
    hvpas = pick(size, 8, 1_000, 10_000)
    nodes = pick(size, 10, 500, 5_000)
    if size == "full" and (chosen := os.environ.get("HVPA_BENCH_ENVELOPE_HVPAS")):
        hvpas, nodes = int(chosen), int(chosen) // 2
    sync_period = pick(size, TINY_SYNC_PERIOD_SECONDS, SYNC_PERIOD_SECONDS, SYNC_PERIOD_SECONDS)
    # Past one sync period even at tiny size: each namespace's shared read falls inside.
    seconds = pick(size, 1.5 * sync_period, 2 * sync_period, 2 * sync_period)
    churn = pick(size, 100.0, 1_000.0, 1_000.0)
    triggers_per_second = min(hvpas / seconds, 20.0)
    spec = ClusterSpec(
        pods=hvpas * PODS_PER_HVPA,
        nodes=nodes,
        pods_per_workload=PODS_PER_HVPA,
        deployments=True,
        history_limit=max(200_000, 4 * hvpas * PODS_PER_HVPA),
    )
    namespaces = min(hvpas, corpus.NAMESPACES)
    note(f"  envelope: {hvpas:,} Hvpas, {spec.pods:,} pods, {nodes:,} nodes...")
    with Child(serve, spec, _cluster_commands, name="apiserver") as cluster:
        info = cluster.recv(timeout=3600)
        cluster.ask(("mark",))
        started = time.monotonic()
        with Child(
            controller_main, info["kubeconfig"], sync_period, name="controller"
        ) as controller:
            controller.recv(timeout=1800)
            synced_wall = time.monotonic() - started
            note(f"  synced in {synced_wall:.1f} s; first decisions...")
            wait_until_decided(controller, within=1800, poll=0.2)
            decided_wall = time.monotonic() - started
            decided_cpu = controller.ask(("cpu",))
            start_requests = cluster.ask(("counted",))["requests"]
            note(f"  every Hvpa decided {decided_wall:.1f} s after start; settling...")
            settled, before, measured, after = settle_and_measure(
                controller,
                cluster,
                churn,
                triggers_per_second,
                seconds,
                timeout=1800,
                settle_within=SETTLE_PERIODS * sync_period,
                quiet_seconds=sync_period,
            )
            _write_stalls(cluster.pid, controller.pid, measured, after)
        restart = _restart(cluster, info["kubeconfig"], sync_period)
        cluster.ask(("stop",))
    rows = _rows(
        hvpas,
        sync_period,
        nodes,
        spec,
        namespaces,
        (synced_wall, decided_wall, decided_cpu),
        settled,
        before,
        after,
        measured,
    )
    return rows + _start_rows(hvpas, start_requests) + _restart_rows(hvpas, sync_period, restart)


def _restart(cluster: Child, kubeconfig: str, sync_period: float) -> dict[str, Any]:
    """A new leader after the old one stopped (no churn, no triggers): the requests from its
    start until every Hvpa is decided and one sync period more."""
    note("  restart: a new controller...")
    cluster.ask(("mark",))
    started = time.monotonic()
    with Child(controller_main, kubeconfig, sync_period, name="controller") as controller:
        controller.recv(timeout=1800)
        wait_until_decided(controller, within=1800, poll=0.2)
        decided = time.monotonic() - started
        time.sleep(sync_period)
        counted = cluster.ask(("counted",))
        seconds = time.monotonic() - started
        controller.send(("stop",))
        controller.recv(timeout=300)
    note(f"  restart: every Hvpa decided {decided:.1f} s after start; {seconds:.0f} s counted")
    return {"requests": counted["requests"], "seconds": seconds, "decided": decided}


def _window(measured: dict[str, Any]) -> tuple[float, float]:
    """The measured window's start and end (time.monotonic, comparable between processes)."""
    began: float = measured["began"]
    return began, began + measured["elapsed"]


def _write_stalls(
    server_pid: int, controller_pid: int, measured: dict[str, Any], after: dict[str, Any]
) -> None:
    """`HVPA_BENCH_STALLS=path`: the window's stalls of both processes, written there as
    JSON with their pids and time.monotonic ends, so that a native profile taken beside
    the run (`perf record -a -k CLOCK_MONOTONIC`) can be cut to the moments a loop stood
    still; the sampler in the process sees little of a stall spent in C code holding the
    GIL."""
    path = os.environ.get("HVPA_BENCH_STALLS")
    if not path:
        return
    stalls = {
        "window": list(_window(measured)),
        "server": {"pid": server_pid, "stalls": measured["stalls"]},
        "controller": {
            "pid": controller_pid,
            "stalls": after["stalls"],
            "thread_cpu": after["stall_thread_cpu"],
            "gc": after["gc"],
        },
    }
    with open(path, "wb") as out:
        out.write(orjson.dumps(stalls))


def _restart_rows(hvpas: int, sync_period: float, restart: dict[str, Any]) -> list[Row]:
    """The upstream HPA controller after a restart does what it does at every sync: a GET of
    /scale and a status write per HPA (its informers' lists besides)."""
    requests: dict[tuple[str, str], int] = restart["requests"]
    total = sum(requests.values())
    rows = [
        Row(
            "after a leader restart: every Hvpa decided (s after the new leader's start)",
            restart["decided"],
            "s",
        ),
        Row.compared(
            f"after a leader restart: API requests per Hvpa, start to a sync period after "
            f"every Hvpa was decided ({restart['seconds']:.0f} s; ref: upstream HPA, GET /scale "
            "+ status write per HPA per sync, for the periods counted)",
            total / hvpas,
            "requests/Hvpa",
            HPA_REQUESTS_PER_SYNC * restart["seconds"] / sync_period,
            invert=True,
        ),
    ]
    return rows + _by_verb_rows("after a leader restart", requests)


def _start_rows(hvpas: int, requests: dict[tuple[str, str], int]) -> list[Row]:
    """What the first start asked of the API server until every Hvpa was decided: its
    informers' lists and watches, each Hvpa's VPA created, its first status, Events."""
    total = sum(requests.values())
    head = Row(
        "at the start: API requests per Hvpa, until every Hvpa was decided",
        total / hvpas,
        "requests/Hvpa",
    )
    return [head, *_by_verb_rows("at the start", requests)]


def _by_verb_rows(
    label: str,
    requests: dict[tuple[str, str], int],
    *,
    unit: str = "requests",
    per_seconds: float = 1.0,
) -> list[Row]:
    """One row per verb and resource, the most requested first: each count, or with
    `per_seconds` its rate over that many seconds."""
    ordered = sorted(requests.items(), key=lambda item: -item[1])
    return [
        Row(f"{label}: {verb} {what}", count / per_seconds, unit) for (verb, what), count in ordered
    ]


def _what_a_period_needs(
    hvpas: int,
    sync_period: float,
    window: tuple[float, float, float],
    settled: dict[str, Any],
) -> list[Row]:
    """What deciding every Hvpa each sync period asks of the controller, beyond the
    window's decisions per CPU-second (its churn's and triggers' share included).

    `window`: the measured window's decisions, controller CPU seconds and wall seconds.
    The churn's share is a fixed cost a second, spread over however many decisions the
    controller made, so the rate says little of a controller that made fewer than a
    period asks. The quiet window (`settled["quiet"]`: the resync alone) separates the
    two: a decision's own cost, and the rest of the window's CPU as the churn's; the cores
    a period needs are then one plus the other at the rate every Hvpa asks. When the
    settle gave up, how many keys were still queued then.
    """
    decisions, cpu_seconds, wall_seconds = window
    rows: list[Row] = []
    quiet = settled.get("quiet")
    if decisions and quiet and quiet["decisions"] and wall_seconds:
        per_decision = quiet["cpu"] / quiet["decisions"]
        churn_cores = max(0.0, cpu_seconds - per_decision * decisions) / wall_seconds
        rows += [
            Row(
                f"controller CPU per decision of the resync alone (a {quiet['seconds']:g} s "
                "window with no pod churn or trigger)",
                1000 * per_decision,
                "ms",
            ),
            Row(
                "controller CPU for the pod churn and the triggers' writes in the window "
                "(its CPU less its decisions at that cost), share of one core",
                100 * churn_cores,
                "%",
            ),
            Row.compared(
                "cores the controller needs to decide every Hvpa each sync period under "
                "that churn (ref: one process's core)",
                per_decision * hvpas / sync_period + churn_cores,
                "cores",
                1.0,
                invert=True,
                ratio_at_least=1.0,
                target="<= 1 core",
            ),
        ]
    if not settled.get("settled", True):
        rows.append(
            Row(
                f"work queue keys still waiting after {SETTLE_PERIODS} sync periods of "
                "settling (the window was measured anyway)",
                settled["queued"],
                "keys",
            )
        )
    return rows


def _gc_delta(what: str, before: dict[str, Any], after: dict[str, Any]) -> list[Any]:
    """`what` (a per-generation count) over the window."""
    return [n - m for n, m in zip(after[what], before[what], strict=True)]


def _rows(
    hvpas: int,
    sync_period: float,
    nodes: int,
    spec: ClusterSpec,
    namespaces: int,
    start: tuple[float, float, dict[str, float]],
    settled: dict[str, Any],
    before: dict[str, Any],
    after: dict[str, Any],
    measured: dict[str, Any],
) -> list[Row]:
    """`start`: wall clock to the caches synced and to every Hvpa decided, and the
    controller's CPU and run delay (seconds) at the latter."""
    shape = f"{hvpas:,} Hvpas, {spec.pods:,} pods, {nodes:,} nodes"
    synced_wall, decided_wall, decided_cpu = start
    elapsed = measured["elapsed"]
    syncs = elapsed / sync_period
    latencies = measured["latencies"]
    if not latencies:
        raise RuntimeError(f"no trigger was answered: {measured}")
    p99 = quantile(latencies, 0.99)
    window_start, window_end = _window(measured)
    in_window = [
        (stall, cpu)
        for stall, cpu in zip(after["stalls"], after["stall_thread_cpu"], strict=True)
        if window_start <= stall[0] <= window_end
    ]
    stalls = [stall for stall, _ in in_window]
    gc_in_window = [
        (pause, cpu)
        for pause, cpu in zip(after["gc"], after["gc_thread_cpu"], strict=True)
        if window_start <= pause[0] <= window_end
    ]
    pauses_by_generation = [pause for pause, _ in gc_in_window]
    pauses = [(e, s) for e, _, s in pauses_by_generation]
    requests: dict[tuple[str, str], int] = measured["requests"]
    total = sum(requests.values())
    metrics_reads = sum(n for (_, what), n in requests.items() if what.startswith("metrics.k8s.io"))
    decisions = after["decisions"] - before["decisions"]
    cpu_seconds = after["cpu_before_pass"] - before["cpu"]
    wall_seconds = after["time"] - before["time"]
    # The target, Hvpa by Hvpa: decided at least once in the last sync period of the window.
    # Each is queued exactly a period after the last time, so a second is left for the wait
    # in the queue; without it an Hvpa due in that second would count as late.
    recent = after["time"] - sync_period - QUEUE_SLACK_SECONDS
    decided_recently = sum(1 for at in after["decided_at"].values() if at >= recent)
    rows = [
        Row.compared(
            f"initial sync, {shape}: wall clock to caches synced (ref: the 60 s target)",
            synced_wall,
            "s",
            60.0,
            invert=True,
        ),
        Row.compared(
            f"initial sync and first decisions of all {hvpas:,} Hvpas (ref: the 60 s target)",
            decided_wall,
            "s",
            60.0,
            invert=True,
            ratio_at_least=1.0,
            target="<= 60 s",
        ),
        Row(
            "controller CPU from its start to every Hvpa decided (what a quiet machine's wall "
            "clock would need at least)",
            decided_cpu["cpu"],
            "s",
        ),
        Row(
            "controller's wait for a CPU from its start to every Hvpa decided (run delay)",
            decided_cpu["run_delay"],
            "s",
        ),
        Row.compared(
            f"controller RSS, {shape} (ref: the 512 MiB target)",
            settled["rss"] / MIB,
            "MiB",
            512.0,
            invert=True,
            ratio_at_least=1.0,
            target="<= 512 MiB",
        ),
        Row.compared(
            f"decisions per Hvpa per {sync_period:g} s sync period, {shape}, "
            f"{measured['churn_rate']:.0f} pod events/s (ref: one)",
            decisions / hvpas / syncs,
            "decisions/Hvpa/sync",
            1.0,
            ratio_at_least=1.0,
            target=">= 1",
        ),
        Row.compared(
            f"Hvpas decided in the window's last {sync_period:g} s "
            f"(and {QUEUE_SLACK_SECONDS:g} s in the queue; ref: all {hvpas:,})",
            100 * decided_recently / hvpas,
            "%",
            100.0,
            ratio_at_least=1.0,
            target="100 %",
        ),
        Row.compared(
            "decisions per CPU-second of the controller in the window, its share of the "
            f"watch events and writes included (ref: every Hvpa each {sync_period:g} s sync "
            "period on one core)",
            decisions / cpu_seconds if cpu_seconds else 0.0,
            "decisions/CPU-s",
            hvpas / sync_period,
            ratio_at_least=1.0,
            target=f">= {hvpas / sync_period:.3g}",
        ),
        *_what_a_period_needs(hvpas, sync_period, (decisions, cpu_seconds, wall_seconds), settled),
        Row(
            "controller CPU in the window, share of one core",
            100 * cpu_seconds / wall_seconds if wall_seconds else 0.0,
            "%",
        ),
        Row(
            "work queue adds per second in the window (handlers and resync)",
            (after["queue_adds"] - before["queue_adds"]) / wall_seconds if wall_seconds else 0.0,
            "adds/s",
        ),
        Row.compared(
            f"trigger -> write p99 under {measured['churn_rate']:.0f} pod events/s, {shape} "
            f"({len(latencies)}/{measured['triggers']} answered; ref: the 100 ms target)",
            1000 * p99,
            "ms",
            100.0,
            invert=True,
            ratio_at_least=1.0,
            target="<= 100 ms",
            met=measured["unanswered"] == 0,
        ),
        Row(
            "trigger -> write p50 (ref: the p99)",
            1000 * quantile(latencies, 0.5),
            "ms",
        ),
        Row(
            "API server process CPU in the window (churn, triggers and every request), "
            "share of one core",
            100 * measured["server_cpu"] / elapsed,
            "%",
        ),
        Row(
            "controller's wait for a CPU while runnable (schedstat run delay), share of the window",
            100 * (after["run_delay"] - before["run_delay"]) / wall_seconds
            if wall_seconds
            else 0.0,
            "%",
        ),
        Row(
            "API server process's wait for a CPU while runnable, share of the window",
            100 * measured["server_run_delay"] / elapsed,
            "%",
        ),
        Row(
            "reconciles that decided nothing and requeued (a stale cache, an unsynced "
            "ConfigMap) per second in the window",
            (after["reconciles"] - before["reconciles"] - decisions) / wall_seconds
            if wall_seconds
            else 0.0,
            "reconciles/s",
        ),
        Row(
            "controller event-loop stalls over 50 ms in the window: the longest",
            1000 * max((s for _, s in stalls), default=0.0),
            "ms",
        ),
        Row(
            f"controller event-loop stalls over 50 ms in the window ({len(stalls)}): "
            "the share of their time its loop's thread was on a CPU (the rest it waited: "
            "for a CPU, or for the GIL)",
            _on_cpu_share([(s, cpu) for (_, s), cpu in in_window]),
            "%",
        ),
        Row(
            "controller GC CPU time in the window, share of its CPU (collections of "
            f"generations 0/1/2: {'/'.join(str(n) for n in _gc_delta('gc_collections', before, after))}, "
            f"objects found unreachable: {'/'.join(str(n) for n in _gc_delta('gc_collected', before, after))})",
            100 * sum(_gc_delta("gc_cpu", before, after)) / cpu_seconds if cpu_seconds else 0.0,
            "%",
        ),
        *(
            Row(
                f"controller GC pauses over 20 ms in the window, generation {generation}: "
                f"the longest (of {sum(1 for _, g, _ in pauses_by_generation if g == generation)})",
                1000 * max((s for _, g, s in pauses_by_generation if g == generation), default=0.0),
                "ms",
            )
            for generation in (0, 1, 2)
        ),
        Row(
            "one full collection of the controller's heap, timed after the window (the pacer "
            "makes one every 10 minutes; a window seldom holds one)",
            1000 * after["full_collection"]["seconds"],
            "ms",
        ),
        Row(
            f"controller GC pauses over 20 ms in the window ({len(gc_in_window)}): the share "
            "of their time the collecting thread was on a CPU",
            _on_cpu_share([(s, cpu) for (_, _, s), cpu in gc_in_window]),
            "%",
        ),
        Row(
            "share of the answers at or above the p99 that overlap a stall or GC pause",
            100 * _tail_explained(measured, p99, stalls + pauses),
            "%",
        ),
        Row(
            "API server process loop stalls over 50 ms in the window (the cluster's, not the "
            f"controller's; {len(measured['stalls'])}): the longest",
            1000 * max((s for _, s in measured["stalls"]), default=0.0),
            "ms",
        ),
        Row(
            "share of the answers at or above the p99 that overlap a stall over 50 ms of the "
            "API server process",
            100 * _tail_explained(measured, p99, measured["stalls"]),
            "%",
        ),
        *_clear_of_stalls_rows(measured, stalls + pauses),
        *_split_rows(
            split_triggers(
                measured["began"],
                measured["answered"],
                after["trigger_moments"],
                measured["vpa_watch_writes"],
            ),
            len(measured["answered"]),
            p99,
            after["trigger_moments"]["metrics_reads"],
        ),
        Row.compared(
            "API requests per Hvpa per sync period, every verb "
            "(ref: upstream HPA, GET /scale + status write per HPA per sync)",
            total / hvpas / syncs,
            "requests/Hvpa/sync",
            HPA_REQUESTS_PER_SYNC,
            invert=True,
        ),
        # Per period, the reads' count over the window's periods wavers by the namespaces
        # read once more or less at its two edges; "at most one read per namespace per
        # period" is the shortest time between two reads of one namespace. The server sees
        # each read when it arrives, after however long it waited in either process, so that
        # time is shown against the period, without a target: the rule itself (an answer
        # serves one period, from when its request went out) is the controller's by
        # construction, and tests/controller/test_shared_pod_metrics.py checks it.
        Row.compared(
            f"metrics-API reads per sync period (ref: {namespaces} namespaces with Hvpas; "
            "a namespace read at both edges of the window counts once more)",
            metrics_reads / syncs,
            "reads/sync",
            float(namespaces),
            invert=True,
        ),
    ]
    # A window in which no namespace was read twice (a tiny run's, under load) has no
    # such time to show.
    if math.isfinite(reread := _shortest_reread(measured["metrics_reads"])):
        rows.append(
            Row.compared(
                "metrics-API reads of one namespace: the shortest time between two, as the "
                "server saw them (ref: the sync period; a request a stall of either process "
                "held arrives late, so two can arrive a little closer than the period)",
                reread,
                "s",
                sync_period,
            )
        )
    rows += _stall_rows(after, "controller")
    rows += _stall_rows(measured, "API server process")
    return rows + _by_verb_rows(
        "requests/s at steady state", requests, unit="requests/s", per_seconds=elapsed
    )


def _shortest_reread(reads: list[tuple[str, float]]) -> float:
    """The shortest time between two reads of one namespace (`reads`: (namespace, at));
    infinite when no namespace was read twice."""
    ordered = [sorted(times) for times in _by_key(reads).values()]
    gaps = (later - earlier for times in ordered for earlier, later in itertools.pairwise(times))
    return min(gaps, default=float("inf"))


def _on_cpu_share(pauses: list[tuple[float, float]]) -> float:
    """Of (seconds, thread CPU seconds) pauses, the share of their time on a CPU (percent;
    0 for none)."""
    total = sum(seconds for seconds, _ in pauses)
    return 100 * sum(cpu for _, cpu in pauses) / total if total else 0.0


STALL_ROWS = 6


def _stall_rows(sampled: dict[str, Any], process: str) -> list[Row]:
    """Where a process's loop stalls in the window went (bench.harness.StallSampler): the
    stacks sampled most, each as the time its samples stand for."""
    samples: dict[str, int] = sampled["stall_samples"]
    seconds_per_sample = sampled["stall_sample_seconds"]
    top = sorted(samples.items(), key=lambda item: -item[1])[:STALL_ROWS]
    return [
        Row(
            f"{process} loop stalled over 50 ms in the window, sampled in: {stack}",
            1000 * count * seconds_per_sample,
            "ms",
        )
        for stack, count in top
    ]
