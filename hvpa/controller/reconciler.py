"""Reconcile one Hvpa: snapshot, metric reads, `decide`, apply, report.

Level-triggered: a reconcile reads the current state from the cache and
converges; it never depends on which event queued it. The steps:

1. gone: forget its series and debug entry; being deleted: nothing (the
   garbage collector removes the child VPA); invalid: the InvalidSpec
   condition and a Warning Event, no scaling.
   An object it reads with a quantity that cannot be read (1e38 or more):
   `ScalingActive=False, reason=UnreadableInput` naming the field,
   a Warning Event, no scaling.
2. The cache still shows an object this controller has just overwritten
   (the watch has not delivered the write yet), or one whose write the
   server refused with 409 Conflict (the server holds a newer version):
   try again shortly instead of deciding on what is known to be stale
   ("expectations", as client-go's ReplicaSet controller keeps them), until
   the watch delivers a newer version or `expectation_timeout_seconds`
   pass. So a 409 costs one write per change the watch brings, not one
   per retry: a cache that stays stale cannot turn into a conflict storm.
3. The child VPA, when `vpa.deploy` (created or brought back to its template).
   A reconcile that has just created it ends there: the VPA's ADDED event
   queues the Hvpa again, and that reconcile decides with the VPA in the cache.
4. The snapshot (`hvpa.controller.snapshot`), the metric reads
   (`hvpa.controller.metricsapi`; a failed read is a reading, not an
   exception), and `decide` at the injected clock's `now`.
5. Apply through the applier: replicas, then container resources (the
   template; in the in-place resize modes the pods, through pods/resize,
   and the template only when the engine falls back to a rollout), then
   the status (only when it changed); Events for each scaling (right after
   it landed), for each newly blocked change and each condition that newly
   turned False (after the status that records them landed, so a retried
   reconcile does not announce them twice).

Errors are raised to the worker, which retries with backoff (a 409 too:
through the per-key rate limiter, then the stale check above holds it).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Final

import msgspec

from hvpa.api import API_VERSION as HVPA_API_VERSION
from hvpa.api import KIND as HVPA_KIND
from hvpa.api.base import plain
from hvpa.api.resource import Hvpa
from hvpa.api.status import BlockedScaling, HvpaStatus
from hvpa.controller.applier import Applier, ContainerResources
from hvpa.controller.cache import Cache
from hvpa.controller.events import InvolvedObject, RecordedEvent
from hvpa.controller.inplace import ResizeDiscovery, Resizer
from hvpa.controller.metricsapi import MetricsReader
from hvpa.controller.observability import Observations
from hvpa.controller.resources import HvpaRecord
from hvpa.controller.snapshot import Prepared, SnapshotInputs, complete, prepare
from hvpa.controller.status import (
    DRY_RUN,
    INVALID_SPEC,
    UNREADABLE_INPUT,
    invalid_status,
    status_to_write,
)
from hvpa.controller.vpa import vpa_body, vpa_changes, vpa_name
from hvpa.engine.conditions import ABLE_TO_SCALE, SCALING_ACTIVE, VERTICAL_SCALING_ACTIVE
from hvpa.engine.decide import decide
from hvpa.engine.decision import Decision, Snapshot, format_resources, written_resources
from hvpa.engine.inplace import IN_PLACE_MODES, RESIZING_IN_PLACE
from hvpa.engine.settings import Settings as EngineSettings
from hvpa.kube.errors import Conflict
from hvpa.logs import fields
from hvpa.records import TargetRecord, UnreadableInput
from hvpa.settings import ControllerSettings

__all__ = ["Reconciler"]

_logger = logging.getLogger(__name__)

# Conditions whose turning False a person should notice (a Warning Event), and
# the reasons that are a choice rather than a problem.
_WATCHED_CONDITIONS: Final = (
    ABLE_TO_SCALE,
    SCALING_ACTIVE,
    VERTICAL_SCALING_ACTIVE,
    RESIZING_IN_PLACE,
)
_QUIET_REASONS: Final = frozenset({"ScalingDisabled", "VerticalScalingOff"})


@dataclass(slots=True)
class _Expectation:
    superseded: set[str] = field(default_factory=set)
    until: float = 0.0


_VPA_API_NOT_SERVED: Final = (
    "spec.vpa.deploy is true but the VerticalPodAutoscaler API "
    "(autoscaling.k8s.io/v1) is not served; install its CRD"
)


def _involved(record: HvpaRecord) -> InvolvedObject:
    return InvolvedObject(HVPA_API_VERSION, HVPA_KIND, record.namespace, record.name, record.uid)


def _block_keys(entries: Iterable[BlockedScaling] | None) -> set[tuple[str, str]]:
    """(reason, axis) of each block a status records."""
    keys: set[tuple[str, str]] = set()
    for entry in entries or ():
        scaling = entry.scaling_status
        if entry.reason is None or scaling is None:
            continue
        if scaling.hpa_status is not None:
            keys.add((entry.reason, "horizontal"))
        if scaling.vpa_status is not None:
            keys.add((entry.reason, "vertical"))
    return keys


@dataclass(frozen=True, slots=True)
class _UnwrittenHistory:
    """A status that differs from the written one only in its history."""

    based_on: str  # the Hvpa resourceVersion it was decided from
    status: HvpaStatus
    since: float  # when the oldest unwritten change was made


class Reconciler:
    def __init__(
        self,
        *,
        cache: Cache,
        reader: MetricsReader,
        applier: Applier,
        observations: Observations,
        clock: Callable[[], float],
        engine: EngineSettings,
        settings: ControllerSettings,
        vpa_api_served: Callable[[], bool] = lambda: True,
        resize_discovery: ResizeDiscovery | None = None,
    ) -> None:
        """`vpa_api_served` False: the VerticalPodAutoscaler CRD is not installed, so
        no VPA is created (the engine holds the vertical axis for want of one).
        `resize_discovery`: whether the server serves pods/resize (None: it does)."""
        self._cache = cache
        self._resize_discovery = resize_discovery
        self._resizer = (
            Resizer(applier, resize_discovery, expect_seconds=settings.expectation_timeout_seconds)
            if resize_discovery is not None
            else None
        )
        self._vpa_api_served = vpa_api_served
        self._reader = reader
        self._applier = applier
        self._observations = observations
        self._clock = clock
        self._engine = engine
        self._settings = settings
        self._expectations: dict[str, dict[str, _Expectation]] = {}
        self._unwritten_history: dict[str, _UnwrittenHistory] = {}
        self._warned: set[tuple[str, str]] = set()

    @property
    def dry_run(self) -> bool:
        return self._applier.dry_run

    # -- expectations ------------------------------------------------------------

    def _expect(self, key: str, what: str, before: str, after: str | None) -> None:
        """After writing `what` (was `before`, now `after`), distrust a cache that still shows `before`."""
        if not after or after == before:
            return
        expectation = self._expectations.setdefault(key, {}).setdefault(what, _Expectation())
        expectation.superseded.add(before)
        expectation.until = (
            asyncio.get_running_loop().time() + self._settings.expectation_timeout_seconds
        )

    def _distrust(self, key: str, what: str, resource_version: str) -> None:
        """The server refused a write of `what` based on `resource_version` (409): it holds a
        newer version, so a cache that still shows this one is stale."""
        expectation = self._expectations.setdefault(key, {}).setdefault(what, _Expectation())
        expectation.superseded.add(resource_version)
        expectation.until = (
            asyncio.get_running_loop().time() + self._settings.expectation_timeout_seconds
        )

    @contextlib.contextmanager
    def _stale_on_conflict(self, key: str, what: str, resource_version: str) -> Iterator[None]:
        """Around a write based on `resource_version` of `what`: a 409 marks that version stale."""
        try:
            yield
        except Conflict:
            self._distrust(key, what, resource_version)
            raise

    def _stale(self, key: str, seen: dict[str, str]) -> bool:
        expectations = self._expectations.get(key)
        if not expectations:
            return False
        now = asyncio.get_running_loop().time()
        for what in list(expectations):
            expectation = expectations[what]
            current = seen.get(what)
            if now >= expectation.until or current is None:
                del expectations[what]
            elif current in expectation.superseded:
                return True
            else:
                del expectations[what]
        if not expectations:
            del self._expectations[key]
        return False

    def _seen(self, record: HvpaRecord) -> dict[str, str]:
        seen = {"hvpa": record.resource_version}
        target = record.target
        if target is not None:
            found = self._cache.target(*target)
            if found is not None:
                seen["target"] = found.resource_version
        return seen

    # -- the reconcile -------------------------------------------------------------

    async def reconcile(self, key: str) -> float | None:
        """Converge one Hvpa; returns seconds after which to look again, or None."""
        record = self._cache.hvpas.get(key)
        if record is None:
            self._observations.forget(key)
            self._expectations.pop(key, None)
            if self._resizer is not None:
                self._resizer.forget(key)
            self._unwritten_history.pop(key, None)
            self._warned = {w for w in self._warned if w[0] != key}
            return None
        if record.deleting:
            return None
        if self._stale(key, self._seen(record)):
            _logger.debug("cache behind our last write; waiting", extra=fields(hvpa=key))
            return self._settings.stale_cache_retry_seconds
        if record.hvpa is None:
            await self._invalid(record)
            return None
        try:
            prepared = prepare(record, self._cache)
        except UnreadableInput as unreadable:
            await self._unreadable(record, unreadable.problems)
            return None
        if prepared.unsynced_config_maps:
            return self._settings.config_map_sync_retry_seconds
        if await self._ensure_vpa(record, prepared):
            # The VPA was just created: its ADDED event queues this Hvpa again, and that
            # reconcile decides with it. Deciding now, without it, would write a status
            # saying there is no VPA yet, and the next one a second status saying it has no
            # recommendation: two decisions and two status writes an Hvpa at the start.
            return None
        readings = await self._reader.read(prepared.queries)
        snapshot = await self._with_resize_facts(key, prepared.hvpa, complete(prepared, readings))
        now = self._clock()
        decided_from = self._with_unwritten_history(record, prepared.hvpa)
        decision = decide(decided_from, snapshot, now, self._engine)
        self._observe(record, prepared, snapshot, decision, now)
        await self._apply(record, prepared, decided_from, decision, now)
        return None

    async def _with_resize_facts(self, key: str, hvpa: Hvpa, snapshot: Snapshot) -> Snapshot:
        """What only the controller knows about resizing in place: whether the server serves
        pods/resize (looked up only for an Hvpa that asks for it), and what it refused."""
        if hvpa.spec.vpa.resize_mode not in IN_PLACE_MODES or self._resize_discovery is None:
            return snapshot
        await self._resize_discovery.refresh()
        assert self._resizer is not None
        return replace(
            snapshot,
            resize_served=self._resize_discovery.served(),
            resize_refused=self._resizer.refusals(key),
        )

    def _with_unwritten_history(self, record: HvpaRecord, hvpa: Hvpa) -> Hvpa:
        """The Hvpa as the last decision left it, when only its history is still unwritten.

        Kept only while nobody else has written the Hvpa since: a newer object
        (an edit, another leader's status) is the truth again."""
        unwritten = self._unwritten_history.get(record.key)
        if unwritten is None:
            return hvpa
        if unwritten.based_on != record.resource_version:
            del self._unwritten_history[record.key]
            return hvpa
        return msgspec.structs.replace(hvpa, status=unwritten.status)

    def _observe(
        self,
        record: HvpaRecord,
        prepared: Prepared,
        snapshot: Snapshot,
        decision: Decision,
        now: float,
    ) -> None:
        observation = self._observations.get(record.key)
        observation.time = now
        observation.invalid = ()
        observation.dry_run = self.dry_run
        observation.decision = decision
        observation.inputs = SnapshotInputs.of(snapshot, prepared.vpa)

    async def _invalid(self, record: HvpaRecord) -> None:
        observation = self._observations.get(record.key)
        observation.time = self._clock()
        observation.invalid = record.problems
        observation.decision = None
        observation.inputs = {}
        await self._hold(record, record.problems, INVALID_SPEC, "the spec is invalid")

    async def _unreadable(self, record: HvpaRecord, problems: tuple[str, ...]) -> None:
        observation = self._observations.get(record.key)
        observation.time = self._clock()
        observation.invalid = ()
        observation.decision = None
        observation.inputs = {"unreadable": list(problems)}
        summary = "an object the decision reads cannot be read"
        await self._hold(record, problems, UNREADABLE_INPUT, summary)

    async def _hold(
        self, record: HvpaRecord, problems: tuple[str, ...], reason: str, summary: str
    ) -> None:
        """Nothing is decided: `ScalingActive=False` (`reason`) and a Warning Event name the
        problems; written only when the condition changes."""
        now = self._clock()
        status = invalid_status(
            record.raw_status, problems, record.generation, now, reason=reason, summary=summary
        )
        if status == record.raw_status:
            return
        _logger.warning(summary, extra=fields(hvpa=record.key, problems="; ".join(problems)))
        with self._stale_on_conflict(record.key, "hvpa", record.resource_version):
            written = await self._applier.write_status(
                namespace=record.namespace,
                name=record.name,
                resource_version=record.resource_version,
                status=status,
            )
        self._expect(record.key, "hvpa", record.resource_version, written)
        await self._applier.record(
            RecordedEvent(
                _involved(record),
                "Warning",
                reason,
                f"{summary}, nothing is scaled: " + "; ".join(problems),
            )
        )

    def _warn_once(self, key: str, message: str, **extra: str) -> None:
        """A condition that every reconcile of the Hvpa meets again (a missing CRD, a
        foreign VPA) is worth one warning, not one per resync: later ones are debug."""
        seen = (key, message)
        level = logging.DEBUG if seen in self._warned else logging.WARNING
        self._warned.add(seen)
        _logger.log(level, message, extra=fields(hvpa=key, **extra))

    async def _ensure_vpa(self, record: HvpaRecord, prepared: Prepared) -> bool:
        """Create, update or delete the Hvpa's own VPA as its spec says; whether it created one."""
        hvpa = prepared.hvpa
        owned = prepared.vpa or self._cache.owned_vpa(record, None)
        if not hvpa.spec.vpa.deploy:
            if owned is not None:
                await self._applier.delete_vpa(owned)
            return False
        if not self._vpa_api_served():
            self._warn_once(record.key, _VPA_API_NOT_SERVED)
            return False
        self._warned.discard((record.key, _VPA_API_NOT_SERVED))
        target_api_version = prepared.target.api_version if prepared.target else "apps/v1"
        if owned is not None:
            patch = vpa_changes(hvpa, owned, target_api_version)
            if patch is not None:
                await self._applier.update_vpa(owned, patch)
            return False
        name = vpa_name(hvpa)
        squatter = self._cache.vpas.get(f"{record.namespace}/{name}")
        if squatter is not None:
            self._warn_once(
                record.key,
                "a VPA of that name exists and is not this Hvpa's; not taking it over",
                vpa=name,
            )
            return False
        return await self._applier.create_vpa(vpa_body(hvpa, record.uid, target_api_version))

    async def _apply(
        self,
        record: HvpaRecord,
        prepared: Prepared,
        decided_from: Hvpa,
        decision: Decision,
        now: float,
    ) -> None:
        """`decided_from`: the Hvpa `decide` saw (with any unwritten history); its status
        is what the new one is built on, the written one (`prepared.hvpa`) what it is
        compared with."""
        target = prepared.target
        key = record.key
        involved = _involved(record)
        if target is not None and not self.dry_run:
            await self._apply_target(key, target, decision, involved)
        status = status_to_write(
            hvpa=decided_from,
            decision=decision,
            target=target,
            dry_run=self.dry_run,
            now=now,
        )
        previous = prepared.hvpa.status or HvpaStatus()
        if status == previous:
            self._unwritten_history.pop(key, None)
            return
        if self._defer_history(record, previous, status, now):
            return
        with self._stale_on_conflict(key, "hvpa", record.resource_version):
            written = await self._applier.write_status(
                namespace=record.namespace,
                name=record.name,
                resource_version=record.resource_version,
                status=plain(status),
            )
        # Only now: a write that failed leaves the history in memory for the retry.
        self._unwritten_history.pop(key, None)
        self._expect(key, "hvpa", record.resource_version, written)
        await self._report(key, involved, target, decision, previous, status)

    def _defer_history(
        self, record: HvpaRecord, written: HvpaStatus, status: HvpaStatus, now: float
    ) -> bool:
        """Keep a history-only change in memory until it is `history_flush_seconds` old.

        Every resync records the raw recommendation in `status.history`, so
        writing each one would cost a status write per Hvpa per sync period
        for nothing a reader needs; the engine reads the unwritten history
        back through `_with_unwritten_history`. A leader change loses at most
        one flush interval of recommendations (upstream's HPA keeps them only
        in memory and loses them all)."""
        if msgspec.structs.replace(status, history=written.history) != written:
            return False
        unwritten = self._unwritten_history.get(record.key)
        since = unwritten.since if unwritten is not None else now
        if now - since >= self._settings.history_flush_seconds:
            return False
        self._unwritten_history[record.key] = _UnwrittenHistory(
            record.resource_version, status, since
        )
        return True

    async def _apply_target(
        self, key: str, target: TargetRecord, decision: Decision, involved: InvolvedObject
    ) -> None:
        resource_version = target.resource_version
        current, desired = decision.current_replicas, decision.desired_replicas
        if desired != current:
            with self._stale_on_conflict(key, "target", resource_version):
                written = await self._applier.write_target_replicas(target, desired)
            self._expect(key, "target", resource_version, written)
            resource_version = written or resource_version
            direction = "up" if desired > current else "down"
            self._observations.count_scaling(key, "horizontal", direction)
            await self._applier.record(
                RecordedEvent(
                    involved,
                    "Normal",
                    "SuccessfulRescale",
                    f"New size: {desired} (was {current}); {target.kind} {target.name}",
                )
            )
        if decision.in_place is not None:
            await self._apply_in_place(key, target, resource_version, decision, involved)
            return
        changed = self._changed_containers(target, decision)
        if not changed:
            return
        with self._stale_on_conflict(key, "target", resource_version):
            written = await self._applier.write_target_resources(target, resource_version, changed)
        self._expect(key, "target", resource_version, written)
        self._count_resize(key, target, decision)
        names = {c.name for c in changed}
        shown = [  # the Event spells amounts for a reader; the patch, as the server stores them
            ContainerResources(
                c.name, False, format_resources(c.requests), format_resources(c.limits)
            )
            for c in decision.containers
            if c.name in names
        ]
        await self._applier.record(
            RecordedEvent(involved, "Normal", "SuccessfulResize", _describe_changes(shown))
        )

    def _count_resize(self, key: str, target: TargetRecord, decision: Decision) -> None:
        """Count the resize by direction: against the template, or, in place (where the
        template keeps an older size), by the direction of each change the engine applied."""
        directions: list[str]
        if decision.in_place is not None:
            directions = sorted(
                {str(change.direction) for c in decision.containers for change in c.applied}
            )
        else:
            directions = self._vertical_directions(target, decision)
        for direction in directions:
            self._observations.count_scaling(key, "vertical", direction)
        self._observations.count_oomkill_scale_ups(key, decision)

    async def _apply_in_place(
        self,
        key: str,
        target: TargetRecord,
        resource_version: str,
        decision: Decision,
        involved: InvolvedObject,
    ) -> None:
        """Resize the pods the plan names; roll the size out through the template only when
        the engine says so (InPlaceOrRollout, a pod that cannot be resized in place)."""
        plan = decision.in_place
        assert plan is not None and self._resizer is not None
        if plan.rollout:
            changed = self._changed_containers(target, decision)
            if changed:
                with self._stale_on_conflict(key, "target", resource_version):
                    written = await self._applier.write_target_resources(
                        target, resource_version, changed
                    )
                self._expect(key, "target", resource_version, written)
        sidecars = [c.name for c in target.containers if c.sidecar]
        outcome = await self._resizer.resize(key, target.namespace, plan, sidecars)
        if any(c.changed for c in decision.containers):
            self._count_resize(key, target, decision)
            pods = len(plan.pods)
            sized = [
                ContainerResources(
                    c.name, False, format_resources(c.requests), format_resources(c.limits)
                )
                for c in plan.containers
            ]
            await self._applier.record(
                RecordedEvent(
                    involved,
                    "Normal",
                    "SuccessfulResize",
                    f"{_describe_changes(sized)} (in place, {pods} pod{'s' if pods != 1 else ''})",
                )
            )
        if outcome.refused:
            _logger.info(
                "resizes refused; the next decision treats those pods as not resizable in place",
                extra=fields(hvpa=key, pods=",".join(pod for pod, _ in outcome.refused)),
            )

    @staticmethod
    def _changed_containers(target: TargetRecord, decision: Decision) -> list[ContainerResources]:
        """The containers whose decided resources differ from the template's.

        Usually those the decision changed; also those a pod was resized to in
        place while the template kept its size, when the template catches up
        (a fall back to a rollout, or resizeMode switched back to Rollout)."""
        template = {c.name: c for c in target.containers}
        sidecars = {c.name for c in target.containers if c.sidecar}
        return [
            ContainerResources(
                name=c.name,
                sidecar=c.name in sidecars,
                requests=written_resources(c.requests),
                limits=written_resources(c.limits),
            )
            for c in decision.containers
            if c.name in template
            and (c.requests, c.limits) != (template[c.name].requests, template[c.name].limits)
        ]

    @staticmethod
    def _vertical_directions(target: TargetRecord, decision: Decision) -> list[str]:
        before = {c.name: c.requests for c in target.containers}
        directions: set[str] = set()
        for container in decision.containers:
            if not container.changed:
                continue
            old = before.get(container.name)
            for resource in ("cpu", "memory"):
                new_amount = container.requests.get(resource)
                old_amount = old.get(resource) if old is not None else None
                if new_amount is not None and old_amount is not None and new_amount != old_amount:
                    directions.add("up" if new_amount > old_amount else "down")
        return sorted(directions)

    async def _report(
        self,
        key: str,
        involved: InvolvedObject,
        target: TargetRecord | None,
        decision: Decision,
        previous: HvpaStatus,
        status: HvpaStatus,
    ) -> None:
        """Events for what is new in the status just written: blocks, failures, a dry run's plan."""
        before = _block_keys(previous.last_blocked_scaling)
        recorded = _block_keys(status.last_blocked_scaling)
        announced: set[tuple[str, str, str]] = set()
        for block in decision.blocked:
            block_key = (block.reason, block.axis)
            if block_key not in recorded or block_key in before:
                continue
            if (block.axis, block.direction, block.reason) in announced:
                continue
            announced.add((block.axis, block.direction, block.reason))
            self._observations.count_block(key, block.axis, block.direction, block.reason)
            await self._applier.record(
                RecordedEvent(
                    involved,
                    "Normal",
                    "ScalingBlocked",
                    f"{block.axis} scale-{block.direction} blocked by {block.reason}: {block.message}",
                )
            )
        old_conditions = {c.type: c for c in previous.conditions or ()}
        for condition in status.conditions or ():
            old = old_conditions.get(condition.type)
            if condition.type == DRY_RUN:
                if old is None or old.message != condition.message:
                    if decision.scales:
                        self._count_dry_run(key, target, decision)
                    await self._applier.record(
                        RecordedEvent(involved, "Normal", "DryRun", condition.message)
                    )
                continue
            if condition.type not in _WATCHED_CONDITIONS or condition.status != "False":
                continue
            if condition.reason in _QUIET_REASONS:
                continue
            if old is not None and (old.status, old.reason) == ("False", condition.reason):
                continue
            await self._applier.record(
                RecordedEvent(involved, "Warning", condition.reason, condition.message)
            )

    def _count_dry_run(self, key: str, target: TargetRecord | None, decision: Decision) -> None:
        """A dry run counts what it reports on both axes, as an applied decision would count."""
        current, desired = decision.current_replicas, decision.desired_replicas
        if desired != current:
            self._observations.count_scaling(
                key, "horizontal", "up" if desired > current else "down"
            )
        if target is not None:
            for direction in self._vertical_directions(target, decision):
                self._observations.count_scaling(key, "vertical", direction)
            self._observations.count_oomkill_scale_ups(key, decision)


def _describe_changes(changed: Iterable[ContainerResources]) -> str:
    return "; ".join(
        f"container {c.name}: requests {_show(c.requests)}, limits {_show(c.limits)}"
        for c in changed
    )


def _show(amounts: dict[str, str] | object) -> str:
    if not isinstance(amounts, dict) or not amounts:
        return "none"
    return ", ".join(f"{resource} {value}" for resource, value in sorted(amounts.items()))
