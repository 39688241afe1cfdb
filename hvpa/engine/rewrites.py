"""Another writer rewriting what hvpa set: noticing it, and holding the axis it fights over.

A GitOps tool (Argo CD, Flux, a `kubectl apply` in CI) that re-applies a
manifest from git puts back the replica count or the resources hvpa changed;
hvpa would change them again, and in the rollout mode each round rolls every
pod. This module turns that loop into a bounded number of writes and a
condition a person can act on. The rule, in the order `assess` runs it:

1. What hvpa wrote: each decision that changes an axis records, in
   `status.history.writes`, the fields it set (named as the API server names
   them: `.spec.replicas`), the values it set and the values they replaced.
   The status is written right after the target, so a leader change or a
   restart forgets nothing.
2. A rewrite: a field hvpa set no longer holds hvpa's value, and either
   managedFields name another manager as its owner now, or (a server or a
   client that keeps no managedFields) the value is back at the one hvpa
   replaced. A change to some third value that no managedFields explain is
   someone else's business (a person's one-off edit): not counted. Each write
   is counted once, in `status.history.rewrites`, at the other manager's
   managedFields time (else when hvpa saw it).
3. The hold: rewrites of one axis "in a row" count up: the next one is in a
   row when it comes within the window of the one before (before a hold), or
   during a hold or within the window after it ends. From the second in a
   row (more than once in a window) the axis is held: hvpa does not write it
   for one window after the rewrite, twice that after the third, four times
   after the fourth, up to `max_write_hold_seconds`. So while the other
   writer keeps at it, hvpa writes once per hold, and holds grow: a handful
   of writes a day, then one a day, instead of one per sync of the GitOps
   tool. The hold is an ordinary Hold (reason `ConflictingFieldManager`),
   so the axis shows as blocked, the conditions say who and which field, and
   the controller raises the Warning Event the condition turning False raises.
4. Resuming: a hold ends when it runs out (the other writer was quiet for the
   window: hvpa writes again, and if that is rewritten too the next hold is
   twice as long), when the other manager no longer owns the field (it
   stopped applying it: server-side apply releases a field the configuration
   leaves out), or when the Hvpa carries the annotation
   `autoscaling.k8s.io/hvpa-resume-writes` with a time at or after the latest
   rewrite (`kubectl annotate --overwrite hvpa NAME
   autoscaling.k8s.io/hvpa-resume-writes=$(date -u +%Y-%m-%dT%H:%M:%SZ)`):
   every rewrite up to that time is forgiven. A value that is not an RFC
   3339 time, or one more than five minutes ahead of now (clock skew aside,
   it would switch the guard off ahead of time), is ignored and the
   explanation says why.

Everything here is a function of the Hvpa's status, the target record (its
values and field owners) and `now`: `hvpa explain` and `hvpa recommend` see
the same holds the controller does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final

from hvpa.api.resource import Hvpa
from hvpa.api.status import AxisWrite, FieldRewrite, FieldWrite, History
from hvpa.engine.decision import format_amount
from hvpa.engine.settings import Settings
from hvpa.engine.strategies.plan import Axis, Hold
from hvpa.engine.vertical import ContainerResources
from hvpa.quantity import QuantityError, parse_milli
from hvpa.records import (
    CPU,
    MEMORY,
    REPLICAS_FIELD,
    ContainerSpec,
    FieldOwner,
    RecordError,
    TargetRecord,
    container_field,
    format_time,
    parse_time,
)

__all__ = [
    "CONFLICTING_FIELD_MANAGER",
    "RESUME_ANNOTATION",
    "Assessment",
    "assess",
    "hold_seconds",
    "record_writes",
]

CONFLICTING_FIELD_MANAGER: Final = "ConflictingFieldManager"
RESUME_ANNOTATION: Final = "autoscaling.k8s.io/hvpa-resume-writes"
# "More than once in a window": the second rewrite in a row holds the axis.
REWRITES_TO_HOLD: Final = 2
# How far ahead of now a resume time may be (clocks of laptops and servers disagree a little).
RESUME_SKEW_SECONDS: Final = 300.0
_SECTIONS: Final = ("requests", "limits")
_WHAT: Final[Mapping[str, str]] = {
    "horizontal": "the replica count",
    "vertical": "the containers' resources",
}


@dataclass(frozen=True, slots=True)
class Assessment:
    """What the status says about rewrites, brought up to `now`."""

    holds: tuple[Hold, ...]
    writes: tuple[AxisWrite, ...]  # hvpa's writes not (yet) seen rewritten
    rewrites: tuple[FieldRewrite, ...]  # the latest rewrite of each axis that still counts
    explanation: tuple[str, ...]


def hold_seconds(count: int, settings: Settings) -> float:
    """How long the `count`-th rewrite in a row holds its axis (0: it does not)."""
    if count < REWRITES_TO_HOLD:
        return 0.0
    window = settings.rewrite_window_seconds
    doubled = window * 2.0 ** min(count - REWRITES_TO_HOLD, 62)
    return min(doubled, max(settings.max_write_hold_seconds, window))


def _in_a_row(previous: FieldRewrite | None, time: float, settings: Settings) -> int:
    """The count of a rewrite at `time` after `previous` (the axis's latest)."""
    if previous is None:
        return 1
    since = previous.time.timestamp()
    window = settings.rewrite_window_seconds
    held_until = since + hold_seconds(previous.count, settings)
    if time <= max(held_until, since) + window:
        return previous.count + 1
    return 1


def _current_values(target: TargetRecord) -> dict[str, str]:
    """The fields hvpa writes, as the target has them now, spelled as hvpa writes them."""
    values = {REPLICAS_FIELD: str(target.spec_replicas)}
    for container in target.containers:
        for section in _SECTIONS:
            amounts = getattr(container, section)
            for resource in (CPU, MEMORY):
                milli = amounts.get(resource)
                if milli is not None:
                    field = container_field(container.name, container.sidecar, section, resource)
                    values[field] = format_amount(resource, milli)
    return values


def _container_fields(target: TargetRecord) -> set[str]:
    """Every resource field the target's containers could hold (set or not)."""
    return {
        container_field(c.name, c.sidecar, section, resource)
        for c in target.containers
        for section in _SECTIONS
        for resource in (CPU, MEMORY)
    }


def _same_amount(found: str | None, recorded: str | None) -> bool:
    """Whether a field's value and the one a status records are the same amount.

    Compared as quantities, not as text: a status written by an earlier hvpa
    may spell the same amount another way (`672138k` for `656.385Ki`), and
    that must not read as somebody else's rewrite after an upgrade."""
    if found is None or recorded is None:
        return found == recorded
    try:
        return parse_milli(found) == parse_milli(recorded)
    except QuantityError:
        return found == recorded


def _other_owner(owners: Iterable[FieldOwner], field: str, ours: str) -> FieldOwner | None:
    """The latest other manager that owns `field`, or None."""
    others = [o for o in owners if o.field == field and o.manager != ours]
    return max(others, key=lambda o: o.time or 0.0, default=None)


def _find_rewrite(
    write: AxisWrite, target: TargetRecord, now: float, settings: Settings
) -> tuple[FieldWrite, str, float, str | None] | None:
    """(the field, the manager, when, the value found) of the first rewritten field, or None."""
    values = _current_values(target)
    existing = _container_fields(target) | {REPLICAS_FIELD}
    written_at = write.time.timestamp()
    for field in write.fields:
        if field.field not in existing:
            continue  # the container is gone: the template changed shape, not a rewrite
        found = values.get(field.field)
        if _same_amount(found, field.value):
            continue
        owner = _other_owner(target.field_owners, field.field, settings.field_manager)
        if owner is not None:
            when = owner.time if owner.time is not None and written_at <= owner.time <= now else now
            return field, owner.manager, when, found
        if _same_amount(found, field.earlier):
            return field, "", now, found
    return None


def _superseded(write: AxisWrite, target: TargetRecord) -> bool:
    """Some field of the write no longer holds hvpa's value (rewritten or not)."""
    values = _current_values(target)
    return any(not _same_amount(values.get(field.field), field.value) for field in write.fields)


def _resume_time(hvpa: Hvpa, now: float) -> tuple[float | None, str]:
    """The annotation's time, or None and why it is ignored ('' when it is absent)."""
    annotations = hvpa.metadata.get("annotations")
    text = annotations.get(RESUME_ANNOTATION) if isinstance(annotations, Mapping) else None
    if text is None:
        return None, ""
    if not isinstance(text, str):
        return None, f"annotation {RESUME_ANNOTATION} is not a string: ignored"
    try:
        moment = parse_time(text)
    except RecordError:
        moment = None
    if moment is None:
        return (
            None,
            f"annotation {RESUME_ANNOTATION}: {text[:64]!r} is not an RFC 3339 time: ignored",
        )
    if moment > now + RESUME_SKEW_SECONDS:
        return None, (
            f"annotation {RESUME_ANNOTATION}: {text} is more than "
            f"{RESUME_SKEW_SECONDS:g}s ahead of now: ignored"
        )
    return moment, ""


def _who(rewrite: FieldRewrite) -> str:
    if rewrite.manager:
        return f'field manager "{rewrite.manager}"'
    return "a writer managedFields do not name (the value went back to the one hvpa replaced)"


def _hold_message(rewrite: FieldRewrite, until: float, target: TargetRecord) -> str:
    found = rewrite.value if rewrite.value is not None else "(removed)"
    return (
        f"{_who(rewrite)} rewrote {rewrite.field} of {target.kind} {target.key} "
        f"{rewrite.count} times in a row (last at {format_time(rewrite.time.timestamp())}: "
        f"{found}, hvpa had set {rewrite.written}); hvpa does not write "
        f"{_WHAT[rewrite.axis]} until {format_time(until)}, or until the annotation "
        f"{RESUME_ANNOTATION} names a later time (docs/gitops.md)"
    )


def _how_to_resolve(rewrite: FieldRewrite, hvpa: Hvpa, settings: Settings) -> tuple[str, ...]:
    manager = rewrite.manager or "the other writer"
    return (
        f"to resolve: stop {manager} from setting {rewrite.field}, or leave the field to hvpa "
        f"(Argo CD: ignoreDifferences with managedFieldsManagers [{settings.field_manager}] "
        "and the sync option RespectIgnoreDifferences=true; Flux: leave the field out of git, "
        "or ignore it in the HelmRelease's driftDetection; docs/gitops.md),",
        f"then resume at once: kubectl annotate --overwrite hvpa -n {hvpa.namespace} "
        f"{hvpa.name} {RESUME_ANNOTATION}=$(date -u +%Y-%m-%dT%H:%M:%SZ)",
    )


def _moment(seconds: float) -> datetime:
    return datetime.fromtimestamp(int(seconds), UTC)


def assess(hvpa: Hvpa, target: TargetRecord, now: float, settings: Settings) -> Assessment:
    """Rewrites seen since the last decision, and the holds they and the earlier ones make."""
    history = (hvpa.status.history if hvpa.status else None) or History()
    explanation: list[str] = []
    latest: dict[str, FieldRewrite] = {r.axis: r for r in history.rewrites or ()}
    writes: list[AxisWrite] = []
    for write in history.writes or ():
        found = _find_rewrite(write, target, now, settings)
        if found is None:
            if not _superseded(write, target):
                writes.append(write)
            continue
        field, manager, when, value = found
        rewrite = FieldRewrite(
            axis=write.axis,
            time=_moment(when),
            field=field.field,
            manager=manager,
            value=value,
            written=field.value,
            count=_in_a_row(latest.get(write.axis), when, settings),
        )
        latest[write.axis] = rewrite
        explanation.append(
            f"{_who(rewrite)} rewrote {field.field} ({value if value is not None else 'removed'}"
            f", hvpa had set {field.value}): rewrite {rewrite.count} in a row of {_WHAT[write.axis]}"
        )
    resume_at, ignored = _resume_time(hvpa, now)
    if ignored:
        explanation.append(ignored)
    holds: list[Hold] = []
    kept: list[FieldRewrite] = []
    for axis, rewrite in sorted(latest.items()):
        time = rewrite.time.timestamp()
        until = time + hold_seconds(rewrite.count, settings)
        if resume_at is not None and resume_at >= time:
            explanation.append(
                f"{_WHAT[axis]}: rewrites up to {format_time(resume_at)} forgiven "
                f"({RESUME_ANNOTATION})"
            )
            continue
        if now >= max(until, time) + settings.rewrite_window_seconds:
            continue  # quiet for a window after the hold: the fight is over
        kept.append(rewrite)
        if now >= until:
            continue
        if rewrite.manager and _released(target, rewrite):
            explanation.append(
                f'{_WHAT[axis]}: field manager "{rewrite.manager}" no longer owns '
                f"{rewrite.field}: writes resume"
            )
            kept.pop()
            continue
        message = _hold_message(rewrite, until, target)
        holds.append(Hold(_axis(axis), CONFLICTING_FIELD_MANAGER, message))
        explanation.append(f"writes held: {message}")
        explanation += _how_to_resolve(rewrite, hvpa, settings)
    return Assessment(tuple(holds), tuple(writes), tuple(kept), tuple(explanation))


def _axis(name: str) -> Axis:
    return "horizontal" if name == "horizontal" else "vertical"


def _released(target: TargetRecord, rewrite: FieldRewrite) -> bool:
    """The target keeps managedFields, and the manager of the rewrite owns the field no more."""
    if not target.field_owners:
        return False
    return not any(
        o.field == rewrite.field and o.manager == rewrite.manager for o in target.field_owners
    )


def record_writes(
    earlier: tuple[AxisWrite, ...],
    now: float,
    *,
    current: int,
    replicas: int,
    before: tuple[ContainerSpec, ...],
    after: tuple[ContainerResources, ...],
) -> tuple[AxisWrite, ...]:
    """The writes to remember after a decision: each axis it changes replaces that axis's entry."""
    made: dict[str, AxisWrite] = {w.axis: w for w in earlier}
    if replicas != current:
        made["horizontal"] = AxisWrite(
            axis="horizontal",
            time=_moment(now),
            fields=(FieldWrite(field=REPLICAS_FIELD, value=str(replicas), earlier=str(current)),),
        )
    fields = _resource_writes(before, after)
    if fields:
        made["vertical"] = AxisWrite(axis="vertical", time=_moment(now), fields=fields)
    return tuple(made[axis] for axis in sorted(made))


def _resource_writes(
    before: tuple[ContainerSpec, ...], after: tuple[ContainerResources, ...]
) -> tuple[FieldWrite, ...]:
    old = {c.name: c for c in before}
    fields: list[FieldWrite] = []
    for result in after:
        was = old.get(result.name)
        if not result.changed or was is None:
            continue
        for section in _SECTIONS:
            new_amounts, old_amounts = getattr(result, section), getattr(was, section)
            for resource in (CPU, MEMORY):
                new, previous = new_amounts.get(resource), old_amounts.get(resource)
                if new is None or new == previous:
                    continue
                fields.append(
                    FieldWrite(
                        field=container_field(was.name, was.sidecar, section, resource),
                        value=format_amount(resource, new),
                        earlier=None if previous is None else format_amount(resource, previous),
                    )
                )
    return tuple(fields)
