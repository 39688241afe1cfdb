"""What every benchmark module shares: rows, sizes, process measurements, child processes.

A benchmark module defines `run(size) -> list[Row]`. `size` is "full" (what
`make bench` runs), "quick" (`make bench ARGS=--quick`) or "tiny" (the smoke
test: checks the code runs, measures nothing worth reading). Each row holds
a measured value and the reference it is compared with, measured in the
same run on the same machine, and their ratio; `target` says what the ratio
(or value) should reach, `met` whether it did.

Processes: RSS is read from /proc/self/status (VmRSS) and CPU time is
`time.process_time()` (user + system of the whole process), both of the
process that did the work: loads that need the API server run it in a child
process of its own, so the two never share an event loop or a core's
accounting.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

__all__ = [
    "SIZES",
    "Child",
    "Row",
    "Size",
    "counter_total",
    "cpu_seconds",
    "in_child",
    "pick",
    "quantile",
    "rss_bytes",
    "run_delay_seconds",
]

Size = Literal["tiny", "quick", "full"]
SIZES: tuple[Size, ...] = ("tiny", "quick", "full")
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Row:
    """One measured figure against its reference; `ratio` oriented so that higher is better
    unless `target` says otherwise."""

    name: str
    value: float
    unit: str
    reference: float | None = None
    ratio: float | None = None
    target: str = ""
    met: bool | None = None

    @classmethod
    def compared(
        cls,
        name: str,
        value: float,
        unit: str,
        reference: float,
        *,
        invert: bool = False,
        ratio_at_least: float | None = None,
        target: str = "",
        met: bool | None = None,
    ) -> Row:
        """`ratio` = value / reference, or reference / value with `invert` (for costs, so that
        a ratio above 1 always means hvpa does better than the reference). `ratio_at_least`
        sets the target and whether it was met from the ratio."""
        if invert:
            ratio = reference / value if value else float("inf")
        else:
            ratio = value / reference if reference else float("inf")
        if ratio_at_least is not None:
            target = target or f"ratio >= {ratio_at_least:g}"
            met = ratio >= ratio_at_least if met is None else met and ratio >= ratio_at_least
        return cls(name, value, unit, reference, ratio, target, met)

    def as_dict(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "unit": self.unit,
            "reference": self.reference,
            "ratio": self.ratio,
            "target": self.target or None,
            "met": self.met,
        }


def pick(size: Size, tiny: T, quick: T, full: T) -> T:
    return {"tiny": tiny, "quick": quick, "full": full}[size]


def rss_bytes() -> int:
    """This process's resident set size (VmRSS)."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def cpu_seconds() -> float:
    return time.process_time()


def run_delay_seconds() -> float:
    """Time this process's threads have spent runnable but waiting for a CPU (the second
    field of /proc/PID/task/TID/schedstat): on a shared machine, the part of a wall-clock
    figure that was the machine's, not the process's. 0 where the kernel does not say."""
    total_ns = 0
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return 0.0
    for task in tasks:
        try:
            with open(f"/proc/self/task/{task}/schedstat", encoding="ascii") as schedstat:
                total_ns += int(schedstat.read().split()[1])
        except (OSError, IndexError, ValueError):
            continue  # a thread that ended meanwhile
    return total_ns / 1e9


def counter_total(families: Iterable[Any], name: str, **labels: str) -> float:
    """The sum of a Prometheus counter family's `_total` samples, over every label set that
    has `labels`.

    `families` is what `CollectorRegistry.collect()` yields: pass one pass's list to take
    several totals from it, since each pass renders every series of the registry (at
    10,000 Hvpas, hundreds of thousands of samples)."""
    total = 0.0
    for family in families:
        if family.name != name:
            continue
        for sample in family.samples:
            if sample.name == f"{name}_total" and all(
                sample.labels.get(label) == value for label, value in labels.items()
            ):
                total += sample.value
    return total


def quantile(samples: Sequence[float], q: float) -> float:
    """The q-quantile (0..1) by linear interpolation; samples need not be sorted."""
    if len(samples) == 1:
        return samples[0]
    cuts = statistics.quantiles(samples, n=1000, method="inclusive")
    index = min(max(round(q * 1000) - 1, 0), len(cuts) - 1)
    return cuts[index]


_SPAWN = multiprocessing.get_context("spawn")


def in_child(func: Callable[..., T], *args: Any) -> T:
    """Run `func(*args)` in a fresh Python process (spawned: nothing inherited) and return
    its result; an exception in the child is raised here."""
    with ProcessPoolExecutor(max_workers=1, mp_context=_SPAWN) as pool:
        return pool.submit(func, *args).result()


class Child:
    """A long-running child process that talks over a pipe: `send` a message, `recv` a reply.

    The target is called as `target(conn, *args)`; it replies on `conn`. On
    exit the pipe is closed (the child should end on EOF) and the process
    joined, then terminated if it lingers.
    """

    def __init__(self, target: Callable[..., None], *args: Any, name: str) -> None:
        parent, child = _SPAWN.Pipe()
        self._conn = parent
        self._process = _SPAWN.Process(target=target, args=(child, *args), name=name, daemon=True)
        self._process.start()
        child.close()

    def send(self, message: Any) -> None:
        self._conn.send(message)

    def recv(self, timeout: float = 600.0) -> Any:
        if not self._conn.poll(timeout):
            raise TimeoutError(f"{self._process.name} did not answer in {timeout} s")
        reply = self._conn.recv()
        if isinstance(reply, BaseException):
            raise reply
        return reply

    def ask(self, message: Any, timeout: float = 600.0) -> Any:
        self.send(message)
        return self.recv(timeout)

    @property
    def pid(self) -> int:
        pid = self._process.pid
        assert pid is not None
        return pid

    def close(self) -> None:
        self._conn.close()
        self._process.join(30)
        if self._process.is_alive():
            self._process.terminate()
            self._process.join(10)

    def __enter__(self) -> Child:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def nproc() -> int:
    return len(os.sched_getaffinity(0))


def note(message: str) -> None:
    """Progress on stderr, so the table on stdout stays clean."""
    print(message, file=sys.stderr, flush=True)


class LoopLag:
    """How late the running loop wakes a 10 ms sleeper: its stalls, with when they ended
    (time.monotonic, comparable between processes on one Linux machine), and how much of
    each the loop's thread spent on a CPU (`thread_cpu`): a stall the thread computed
    through is the process's own, one it spent waiting is the machine's (or another
    thread's, holding the GIL)."""

    def __init__(self, period_seconds: float = 0.01) -> None:
        self.period = period_seconds
        self.stalls: list[tuple[float, float]] = []  # (ended at, seconds late) over 50 ms
        self.thread_cpu: list[float] = []  # the loop thread's CPU seconds in each stall
        self.beat = time.monotonic()  # when the sleeper last woke (StallSampler reads it)

    async def run(self) -> None:
        import asyncio

        while True:
            before = self.beat = time.monotonic()
            cpu_before = time.thread_time()
            await asyncio.sleep(self.period)
            self.beat = time.monotonic()
            late = self.beat - before - self.period
            if late > 0.05:
                self.stalls.append((self.beat, late))
                self.thread_cpu.append(time.thread_time() - cpu_before)


class GcPauses:
    """The garbage collector's pauses over 20 ms in this process: (ended at, generation, seconds),
    and the collecting thread's CPU seconds in each (`thread_cpu`: a pause much longer than
    its CPU was the machine's); and all of its CPU time, by generation (what its share of the
    CPU is; how many collections and what they found, gc.get_stats() keeps)."""

    def __init__(self) -> None:
        import gc

        self.pauses: list[tuple[float, int, float]] = []
        self.thread_cpu: list[float] = []
        self._thread_cpu_started = 0.0
        self.cpu = [0.0, 0.0, 0.0]  # the process's CPU time: the collector's own cost
        self._started = self._cpu_started = 0.0
        gc.callbacks.append(self._callback)

    def close(self) -> None:
        """Stop timing collections."""
        import gc

        if self._callback in gc.callbacks:
            gc.callbacks.remove(self._callback)

    def _callback(self, phase: str, info: dict[str, int]) -> None:
        now, cpu, thread_cpu = time.monotonic(), time.process_time(), time.thread_time()
        if phase == "start":
            self._started, self._cpu_started = now, cpu
            self._thread_cpu_started = thread_cpu
            return
        generation, took = info["generation"], now - self._started
        self.cpu[generation] += cpu - self._cpu_started
        if took > 0.02:
            self.pauses.append((now, generation, took))
            self.thread_cpu.append(thread_cpu - self._thread_cpu_started)


class StallSampler:
    """What the loop's thread was running while its loop stalled: the stack's samples.

    A stall's length (LoopLag) says that the loop paused, not why; the tail of a
    latency is only removed once the code that held the loop is known. A thread
    wakes every `interval` and, when the LoopLag's sleeper is more than
    `threshold` late, records the loop thread's innermost frames (those of hvpa
    first). Each sample stands for about `interval` seconds of Python running:
    a C call that holds the GIL, a garbage collection among them, keeps the
    thread out until it returns (GcPauses times collections). The thread takes
    the GIL only to look, so the stall it measures is barely longer.
    """

    def __init__(
        self,
        lag: LoopLag,
        *,
        threshold: float = 0.05,
        interval: float = 0.005,
    ) -> None:
        import threading
        from collections import Counter

        self.lag = lag
        self.threshold, self.interval = threshold, interval
        self.samples: Counter[str] = Counter()
        self._loop_thread = threading.get_ident()
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._sample, name="stall-sampler", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stopped.set()

    def _sample(self) -> None:
        while not self._stopped.wait(self.interval):
            if time.monotonic() - self.lag.beat <= self.threshold:
                continue
            frame = sys._current_frames().get(self._loop_thread)
            if frame is not None:
                self.samples[_stack_key(frame)] += 1


def _stack_key(frame: Any, own: int = 4) -> str:
    """The innermost `own` frames of hvpa's or the benchmark's code (innermost first) and the
    innermost frame of all when it is not one of them: `hvpa.engine.decide:decide < ...
    [json:loads]`."""
    innermost = frame
    ours: list[str] = []
    while frame is not None and len(ours) < own:
        module = frame.f_globals.get("__name__", "?")
        if module.startswith(("hvpa.", "bench.")):
            ours.append(f"{module}:{frame.f_code.co_name}")
        frame = frame.f_back
    module = innermost.f_globals.get("__name__", "?")
    where = f"{module}:{innermost.f_code.co_name}"
    key = " < ".join(ours) or "(no hvpa frame)"
    return key if ours and ours[0] == where else f"{key} [{where}]"


class LoopWatch:
    """A process's loop watched three ways for the time it runs: its stalls (LoopLag), its
    collector's pauses (GcPauses) and what it ran while stalled (StallSampler)."""

    def __init__(self, *, threshold: float = 0.05, interval: float = 0.005) -> None:
        self.lag = LoopLag()
        self.pauses = GcPauses()
        self.sampler = StallSampler(self.lag, threshold=threshold, interval=interval)
        self._lag_task: Any = None

    def start(self) -> None:
        """From inside the running loop."""
        import asyncio

        self.sampler.start()
        self._lag_task = asyncio.create_task(self.lag.run())

    def stop(self) -> None:
        self.sampler.stop()
        if self._lag_task is not None:
            self._lag_task.cancel()
        self.pauses.close()
