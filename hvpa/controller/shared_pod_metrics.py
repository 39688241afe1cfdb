"""PodMetrics read once per namespace per period and shared by the Hvpas that need them.

The HPA controller reads metrics.k8s.io once per HPA per sync, by the HPA's
label selector; 10,000 Hvpas doing the same would make some 670 requests a
second to metrics-server. A namespace's PodMetrics answer every selector in
it, so when several Hvpas of a namespace read metrics (valid ones, not being
deleted) this module reads the whole namespace once, keeps the answer for
`max_age_seconds` (the sync period; a fifth more while the next is read, as
below), and gives each query the items its selector selects. Requests to
metrics-server fall to at most one per namespace per period.

The decision must not change, so the selection has to be the one the server
would have made, and a failure must reach exactly the queries it reached
before:

- metrics-server (since v0.5) copies each pod's labels onto its PodMetrics
  and matches a `labelSelector` on them; the same selector matched here on
  the same labels selects the same items, in the server's order. An answer
  none of whose items carries labels (an adapter that leaves them out)
  cannot be filtered, so the namespace is read by selector instead.
- An item whose usage cannot be read fails only the queries that select it,
  with the message a read by selector would have given (the first such item
  in the answer's order).
- An answer that is not a PodMetricsList, or a request that fails, fails
  every query waiting for it with the message each read would have got; a
  failure is not kept, so the next query asks again, as it would have.
- An item that does not fit the PodMetrics shape at all cannot be
  attributed to a selector, and an answer longer than the reader's byte
  bound is not read further (the bound holds as it did): either way the
  namespace is read by selector until the period is over.

A namespace with a single Hvpa gains nothing from a namespace-wide read and
could pay for thousands of other pods, so it is read by selector; such an
answer is kept for the period too (keyed by the selector), so the Hvpa's
event-driven reconciles between two resyncs do not read it again.

Concurrent reconciles that need one answer share one request in flight.

A namespace-wide answer is read again without any query waiting for it: the
first query in the `STALE_FRACTION` of a period after the answer's period
gets that answer at once and starts the next read in the background; the
queries after the read came back get the new answer. The read happens when
it did (the first query after the period), so there are no more reads than
before; what changes is who waits. A namespace's answer is all its pods
(750 of them at 10,000 Hvpas over 200 namespaces), and the reconcile that
happened to be first - often one a change had queued, whose write someone
is waiting for - waited for the server to build it and for the controller
to decode it, tens of milliseconds, for the benefit of the 49 Hvpas after
it. The price is the age of that one reading: at most a period and a fifth,
where metrics-server's own data is refreshed once a period (its
`--metric-resolution`, 15 s by default) anyway. A read by selector (a
namespace with one Hvpa) is the Hvpa's own and is waited for, as upstream's
HPA waits for its read; so is any answer past that fifth.

A namespace's answer waits for a turn of the loop in which no other is
converted (a TurnBudget of one, controller/turns.py). Answers come back
together when the server has held them (its own pause, a slow network), and
each used to be converted the moment its task ran: in the benchmark, a
pause of the server sent back enough answers to hold the controller's loop
for 314 ms, and every change's write waited behind them. Its items are
decoded one at a time as they are converted (`Fetched`), so an answer that
waits holds its bytes, not every item's structs.

The clock is the running loop's: virtual time in the simulator and the
tests.
"""

from __future__ import annotations

import asyncio
import enum
from array import array
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

import msgspec

from hvpa.controller.turns import TurnBudget
from hvpa.engine.metrics import MetricReadError, PodMetricsList
from hvpa.labels import LabelSelector
from hvpa.records import (
    DECODING_ERRORS,
    PodMetricsRecord,
    PodMetricsWire,
    intern_labels,
    pod_metrics_from_wire,
)

__all__ = [
    "Fetch",
    "Fetched",
    "PodName",
    "SharedPodMetrics",
    "Unshareable",
    "own_name",
    "read_by_selector",
]

# What a query gets: the items it selects, or the failure a read by selector would have met.
PodMetricsReading = PodMetricsList | MetricReadError


class Unshareable(enum.Enum):
    """Why a namespace-wide answer cannot serve the queries: each is read by its selector."""

    TOO_LARGE = "the namespace's answer is longer than the bound"
    UNLABELLED = "the answer's items carry no labels to select on"
    MISFIT = "an item does not fit the PodMetrics shape"


@dataclass(frozen=True, slots=True)
class Fetched:
    """One answer: its items, or the message of its failure as a whole. A namespace-wide
    answer's items are left undecoded (`msgspec.Raw`, each a view of the answer's bytes):
    each is decoded as it is converted, so one item's structs at a time are alive, not
    the whole namespace's while the answer waits for its turn to be converted."""

    items: Sequence[PodMetricsWire] | Sequence[msgspec.Raw] = ()
    failure: str = ""


# Reads one namespace's PodMetrics, all of them (selector None) or by a selector. Never
# raises but for cancellation: a failed request is a Fetched with its failure's message,
# and only a namespace-wide read answers Unshareable.
Fetch = Callable[[str, LabelSelector | None], Awaitable[Fetched | Unshareable]]

# The copy of a pod's name (namespace, name) that is kept anyway: the pod store's, or the
# name given when the store holds no such pod. Equal to the name given, always.
PodName = Callable[[str, str], str]


def own_name(namespace: str, name: str) -> str:
    """The PodName of a reader that keeps nothing else: the name given."""
    return name


# An answer kept: the namespace's (selector None) or one selector's (its string, which is ""
# for the empty selector: hence None, not "", for the namespace's).
_Key = tuple[str, str | None]


# One item's usage in a kept answer: its record, or why its usage cannot be read.
_Usage = PodMetricsRecord | str

# A kept answer's items, in two tuples, not an object per item: one struct an item (48 bytes
# allocated, against the second tuple's 8) was some 6 MiB at 150,000 pods.
_Kept = tuple[tuple[Mapping[str, str], ...], tuple[_Usage, ...]]


@dataclass(frozen=True, slots=True)
class _Answer:
    """Items, or why they cannot serve the queries; `read_at`: when the request went out
    (the data is at least that fresh).

    `positions` indexes the items by label, one label key at a time, built when a
    selector first asks for that key: a namespace's answer is selected from by each of
    its Hvpas, and matching every item against every selector cost each reconcile time
    in proportion to the namespace's pods (750 of them, 50 Hvpas, at 10,000 Hvpas over
    200 namespaces), not to its own."""

    read_at: float
    labels: tuple[Mapping[str, str], ...] = ()  # each item's
    usages: tuple[_Usage, ...] = ()  # each item's, in the same order
    unshareable: Unshareable | None = None
    # label key -> value -> the ascending positions of the items that carry it
    positions: dict[str, dict[str, array[int]]] = field(
        default_factory=dict, compare=False, repr=False
    )

    def carrying(self, key: str) -> Mapping[str, array[int]]:
        """The positions of the items by their value of label `key`."""
        found = self.positions.get(key)
        if found is None:
            found = self.positions[key] = {}
            for position, labels in enumerate(self.labels):
                value = labels.get(key)
                if value is not None:
                    found.setdefault(value, array("I")).append(position)
        return found


def _item(
    wire: PodMetricsWire, pod_name: PodName, scrape_times: dict[str | None, float | None]
) -> tuple[Mapping[str, str], _Usage]:
    """The item as kept for the period. Its labels are the pod's, so they are the shared
    copy the pod store holds too: kept apart they were half of an answer's bytes (1,126 B
    a pod with the benchmark's six labels; 627 B shared; tracemalloc of an answer of 75 pods).
    So is its name (`pod_name`): at 150,000 pods a copy of each name was about 12 MB."""
    meta = wire.metadata
    labels = intern_labels(meta.labels)
    try:
        name = pod_name(meta.namespace, meta.name)
        return labels, pod_metrics_from_wire(wire, name, scrape_times)
    except DECODING_ERRORS as error:
        return labels, f"cannot read the answer: {error}"


_decode_item: Final = msgspec.json.Decoder(PodMetricsWire).decode

_Wires = Sequence[PodMetricsWire] | Sequence[msgspec.Raw]


def _wires(fetched: Fetched | Unshareable) -> _Wires:
    """The items to convert: none of an answer that failed or cannot be shared."""
    return fetched.items if isinstance(fetched, Fetched) and not fetched.failure else ()


def _items(wires: _Wires, pod_name: PodName) -> _Kept:
    """The items as kept; msgspec.ValidationError for an undecoded one that does not fit
    the PodMetrics shape."""
    labels: list[Mapping[str, str]] = []
    usages: list[_Usage] = []
    scrape_times: dict[str | None, float | None] = {}  # the items of a node share one float
    for wire in wires:
        decoded = wire if isinstance(wire, PodMetricsWire) else _decode_item(wire)
        item_labels, usage = _item(decoded, pod_name, scrape_times)
        labels.append(item_labels)
        usages.append(usage)
    return tuple(labels), tuple(usages)


def _answer(
    read_at: float,
    fetched: Fetched | Unshareable,
    items: _Kept | Unshareable,
    *,
    filtered: bool,
) -> _Answer | str:
    """What to keep of a response, its `_wires` converted to `items` (`filtered`: it will
    be selected from); a failure's message is returned, not kept."""
    if isinstance(fetched, Unshareable):
        return _Answer(read_at, unshareable=fetched)
    if fetched.failure:
        return fetched.failure
    if isinstance(items, Unshareable):
        return _Answer(read_at, unshareable=items)
    labels, usages = items
    if filtered and labels and not any(labels):
        return _Answer(read_at, unshareable=Unshareable.UNLABELLED)
    return _Answer(read_at, labels, usages)


def _candidates(answer: _Answer, selector: LabelSelector) -> Sequence[int] | None:
    """Ascending positions of the items `selector` may select (None: any item may): those
    carrying the values of its most selective `key=value` / `key in (...)` requirement,
    as the pod store's `select` narrows its search."""
    smallest: Sequence[int] | None = None
    for key, values in selector.anchors:
        by_value = answer.carrying(key)
        found = [by_value.get(value, ()) for value in values]
        positions = found[0] if len(found) == 1 else sorted(set().union(*found))
        if smallest is None or len(positions) < len(smallest):
            smallest = positions
    return smallest


def _select(answer: _Answer, selector: LabelSelector | None) -> PodMetricsReading:
    """The items `selector` selects (None: all), in the answer's order; the first unreadable
    one fails the reading."""
    labels, usages = answer.labels, answer.usages
    candidates = None if selector is None else _candidates(answer, selector)
    selected: list[PodMetricsRecord] = []
    for position in range(len(usages)) if candidates is None else candidates:
        if selector is not None and not selector.matches(labels[position]):
            continue
        usage = usages[position]
        if isinstance(usage, str):
            return MetricReadError(usage)
        selected.append(usage)
    return PodMetricsList(tuple(selected))


def _reading(answer: _Answer | str) -> PodMetricsReading:
    """A read by selector's answer as its query's reading: all its items, or its failure."""
    if isinstance(answer, str):
        return MetricReadError(answer)
    return _select(answer, None)


async def read_by_selector(
    fetch: Fetch, namespace: str, selector: LabelSelector
) -> PodMetricsReading:
    """One read of `selector`'s PodMetrics, kept nowhere: where nothing is shared (`hvpa
    explain` decides once), the same reading a shared read by selector gives."""
    read_at = asyncio.get_running_loop().time()
    fetched = await fetch(namespace, selector)
    return _reading(_answer(read_at, fetched, _items(_wires(fetched), own_name), filtered=False))


# How many Hvpas a namespace needs before one read of all its pods is worth it.
SHARE_FROM_HVPAS: Final = 2

# The share of a period, after a namespace-wide answer's own, during which the answer is
# still given while the next read is in flight.
STALE_FRACTION: Final = 0.2

# An answer of this many items or more, about a reconcile's time to convert (5-9 us each,
# against about a millisecond), waits for a turn in which no other is converted; a
# smaller one is converted at once.
LARGE_ANSWER_ITEMS: Final = 150


class SharedPodMetrics:
    """The PodMetrics answers of the last period, and the requests in flight."""

    def __init__(
        self,
        *,
        fetch: Fetch,
        max_age_seconds: float,
        hvpas_in: Callable[[str], int],
        pod_name: PodName = own_name,
    ) -> None:
        """`fetch` reads one namespace; `hvpas_in` says how many Hvpas of a namespace read
        metrics (an invalid or deleting one reads none); `pod_name`, the copy of a pod's
        name that its kept items share (the pod store's).
        `max_age_seconds`: how long an answer serves (at most the sync period)."""
        self._fetch = fetch
        self._one_a_turn = TurnBudget(per_turn=1)  # a large answer's conversion
        self._max_age = max_age_seconds
        self._hvpas_in = hvpas_in
        self._pod_name = pod_name
        self._stale_for = max_age_seconds * STALE_FRACTION
        self._answers: dict[_Key, _Answer] = {}
        self._in_flight: dict[_Key, asyncio.Future[_Answer | str | None]] = {}
        self._refreshing: set[asyncio.Task[_Answer | str | None]] = set()
        self._pruned_at = 0.0

    def __len__(self) -> int:
        """How many answers are kept (at most those of one period, however many Hvpas came
        and went)."""
        return len(self._answers)

    async def read(self, namespace: str, selector: LabelSelector) -> PodMetricsReading:
        """What a read of `selector` in `namespace` would answer, from an answer of this period."""
        if self._hvpas_in(namespace) >= SHARE_FROM_HVPAS:
            answer = await self._answer((namespace, None), None)
            if isinstance(answer, str):
                return MetricReadError(answer)
            if answer.unshareable is None:
                return _select(answer, selector)
        return _reading(await self._answer((namespace, str(selector)), selector))

    async def close(self) -> None:
        """Cancel the reads in the background (the controller is stopping)."""
        for task in list(self._refreshing):
            task.cancel()
        await asyncio.gather(*self._refreshing, return_exceptions=True)

    async def _answer(self, key: _Key, selector: LabelSelector | None) -> _Answer | str:
        """A kept answer of this period, or a new one (a failure's message is not kept); a
        namespace-wide answer just past its period is given while the next is read."""
        loop = asyncio.get_running_loop()
        while True:
            kept = self._answers.get(key)
            if kept is not None:
                age = loop.time() - kept.read_at
                if age < self._max_age:
                    return kept
                if age < self._use(key):
                    self._refresh(key)
                    return kept
            pending = self._in_flight.get(key)
            outcome = await (
                asyncio.shield(pending) if pending is not None else self._request(key, selector)
            )
            if outcome is not None:
                return outcome
            # The reader was cancelled before its answer came: ask again.

    def _refresh(self, key: _Key) -> None:
        """Start the next read of a namespace's answer in a task of its own, unless one is
        in flight; queries that come before it ends are given the answer it replaces."""
        if key in self._in_flight:
            return
        task = asyncio.get_running_loop().create_task(
            self._request(key, None), name=f"pod metrics of {key[0]}"
        )
        self._refreshing.add(task)
        task.add_done_callback(self._refreshing.discard)

    def _prune(self, now: float) -> None:
        """Drop the answers past any use, once a period: a selector whose Hvpa is gone
        is never asked for again, and its answer must not stay."""
        if now - self._pruned_at < self._max_age:
            return
        self._pruned_at = now
        for key in [k for k, kept in self._answers.items() if now - kept.read_at >= self._use(k)]:
            del self._answers[key]

    def _use(self, key: _Key) -> float:
        """How long an answer can be given: a namespace's, a fifth of a period longer, while
        its next read runs."""
        _, selector = key
        return self._max_age if selector is not None else self._max_age + self._stale_for

    async def _converted(self, wires: _Wires) -> _Kept | Unshareable:
        """The items as kept, a large answer's in a turn of the loop that converts no other
        (why: the module's docstring). In one turn, not a reconcile's share of many: in
        slices, its kept items were allocated among every reconcile's short-lived objects,
        and the envelope's memory rose by some 10 MiB (docs/benchmarks.md). An item that
        does not fit the PodMetrics shape leaves the answer unshareable."""
        try:
            if len(wires) >= LARGE_ANSWER_ITEMS:
                await self._one_a_turn.begin()
            return _items(wires, self._pod_name)
        except msgspec.ValidationError:
            return Unshareable.MISFIT

    async def _request(self, key: _Key, selector: LabelSelector | None) -> _Answer | str | None:
        """Make the read, with waiters sharing it; a waiter's cancellation does not reach it."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[_Answer | str | None] = loop.create_future()
        self._in_flight[key] = future
        outcome: _Answer | str | None = None
        try:
            read_at = loop.time()
            fetched = await self._fetch(key[0], selector)
            items = await self._converted(_wires(fetched))
            outcome = _answer(read_at, fetched, items, filtered=selector is None)
            if isinstance(outcome, _Answer):
                self._prune(read_at)
                self._answers[key] = outcome
            return outcome
        finally:
            del self._in_flight[key]
            future.set_result(outcome)
