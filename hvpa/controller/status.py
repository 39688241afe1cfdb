"""The Hvpa status the controller writes: the engine's, plus what only the controller knows.

The engine's Decision carries the status as if its changes were applied.
The controller adds, on top:

- `replicas` and `targetSelector`: the target's replica count and pod selector;
  `targetRef` (the target, whichever form the spec names it in) and
  `desiredReplicas` (what the decision wants, dry run or not), for the
  `kubectl get hvpa` columns;
- in a dry run, nothing that says a change was applied: `lastScaling`,
  `hpaWeight`/`vpaWeight`, `overrideScaleUpStabilization` and the history of
  applied changes (`scaleUpEvents`, `scaleDownEvents`, `lastScaleTimes`, and
  `writes`, what rewrites are checked against) and the size the in-place
  modes gave the pods (`podResources`) keep their
  previous values, so rate limits and stabilization windows behave as
  they would for the real thing; the raw recommendations, conditions and
  `lastBlockedScaling` are written (they are what a dry run reports); an
  `AbleToScale` condition claiming a successful rescale says `DryRun`
  instead; and a `DryRun` condition (True) states what would be done;
- out of a dry run, no `DryRun` condition;
- for a spec that parses again, no stale `ScalingActive=False, InvalidSpec`: the engine
  drops one it did not set in this decision (`Conditions.drop_stale`), and keeps one it
  did (cluster-proportional parameters a ConfigMap holds are checked only there);
- for inputs that read again, no stale `ScalingActive=False, UnreadableInput`: only the
  controller sets that reason, without a decision, so any decision drops it.

An invalid Hvpa cannot be parsed into the engine's types, and an Hvpa whose
inputs cannot be read is not decided, so their status is edited as written
(`invalid_status`): only the `ScalingActive` condition and
`observedGeneration` change.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, Final

from msgspec.structs import replace

from hvpa.api.resource import Hvpa
from hvpa.api.status import Condition, HvpaStatus
from hvpa.engine.conditions import ABLE_TO_SCALE, INVALID_SPEC, SCALING_ACTIVE
from hvpa.engine.decision import Decision
from hvpa.records import TargetRecord, format_time

__all__ = [
    "DRY_RUN",
    "INVALID_SPEC",
    "UNREADABLE_INPUT",
    "dry_run_summary",
    "invalid_status",
    "status_to_write",
]

DRY_RUN: Final = "DryRun"
# An object the decision reads holds a field hvpa cannot read (a quantity of 1e38 or more).
UNREADABLE_INPUT: Final = "UnreadableInput"
# metav1.Condition.message is limited to 32768 bytes.
_MAX_CONDITION_MESSAGE: Final = 32768
_DECISION_PREFIX: Final = "decision: "


def _moment(seconds: float) -> datetime:
    return datetime.fromtimestamp(int(seconds), UTC)


def dry_run_summary(decision: Decision) -> str:
    """What the decision would do, from its closing explanation lines."""
    lines = [
        line[len(_DECISION_PREFIX) :]
        for line in decision.explanation
        if line.startswith(_DECISION_PREFIX)
    ]
    if not decision.scales:
        return "dry run: no change (" + "; ".join(lines) + ")"
    return "dry run, not applied: would " + "; ".join(lines)


def _set(conditions: list[Condition], new: Condition, now: float) -> None:
    """Replace the condition of that type; the transition time moves only when the status does."""
    for index, old in enumerate(conditions):
        if old.type == new.type:
            moved = old.status != new.status or old.last_transition_time is None
            conditions[index] = replace(
                new, last_transition_time=_moment(now) if moved else old.last_transition_time
            )
            return
    conditions.append(replace(new, last_transition_time=_moment(now)))


def _applied_kept(status: HvpaStatus, previous: HvpaStatus) -> HvpaStatus:
    """The status with every "this was applied" field as it was before."""
    history = status.history
    if history is not None:
        before = previous.history
        history = replace(
            history,
            scale_up_events=before.scale_up_events if before else None,
            scale_down_events=before.scale_down_events if before else None,
            last_scale_times=before.last_scale_times if before else None,
            writes=before.writes if before else None,
        )
    return replace(
        status,
        history=history,
        last_scaling=previous.last_scaling,
        hpa_weight=previous.hpa_weight,
        vpa_weight=previous.vpa_weight,
        override_scale_up_stabilization=previous.override_scale_up_stabilization,
        pod_resources=previous.pod_resources,
    )


def _dry_run_conditions(conditions: Iterable[Condition], decision: Decision) -> list[Condition]:
    out: list[Condition] = []
    for condition in conditions:
        if condition.type == ABLE_TO_SCALE and condition.reason == "SucceededRescale":
            condition = replace(
                condition,
                reason=DRY_RUN,
                message=f"dry run: would update the target scale to {decision.desired_replicas}; "
                "not applied",
            )
        out.append(condition)
    return out


def status_to_write(
    *, hvpa: Hvpa, decision: Decision, target: TargetRecord | None, dry_run: bool, now: float
) -> HvpaStatus:
    """The status for /status after `decision` (applied, or in a dry run only reported)."""
    previous = hvpa.status or HvpaStatus()
    status = decision.status
    if target is not None:
        status = replace(
            status,
            replicas=decision.current_replicas if dry_run else decision.desired_replicas,
            target_selector=str(target.selector),
        )
    status = replace(
        status, target_ref=hvpa.spec.target_ref, desired_replicas=decision.desired_replicas
    )
    conditions = [
        c
        for c in status.conditions or ()
        if c.type != DRY_RUN and not (c.type == SCALING_ACTIVE and c.reason == UNREADABLE_INPUT)
    ]
    if dry_run:
        status = _applied_kept(status, previous)
        conditions = _dry_run_conditions(conditions, decision)
        previous_dry_run = [c for c in previous.conditions or () if c.type == DRY_RUN]
        conditions += previous_dry_run
        _set(
            conditions,
            Condition(
                type=DRY_RUN,
                status="True",
                reason=DRY_RUN,
                message=dry_run_summary(decision)[:_MAX_CONDITION_MESSAGE],
                observed_generation=hvpa.generation,
            ),
            now,
        )
    return replace(status, conditions=tuple(conditions) if conditions else None)


def invalid_status(
    raw: Mapping[str, Any] | None,
    problems: Iterable[str],
    generation: int,
    now: float,
    *,
    reason: str = INVALID_SPEC,
    summary: str = "the spec is invalid",
) -> dict[str, Any]:
    """The status as written, with `ScalingActive=False` (`reason`) naming every problem."""
    status = dict(raw or {})
    conditions = [dict(c) for c in status.get("conditions") or () if isinstance(c, Mapping)]
    message = (f"{summary}: " + "; ".join(problems))[:_MAX_CONDITION_MESSAGE]
    old = next((c for c in conditions if c.get("type") == SCALING_ACTIVE), None)
    kept_time = old.get("lastTransitionTime") if old and old.get("status") == "False" else None
    new = {
        "type": SCALING_ACTIVE,
        "status": "False",
        "reason": reason,
        "message": message,
        "lastTransitionTime": kept_time or format_time(now),
        "observedGeneration": generation,
    }
    if old is None:
        conditions.append(new)
    else:
        conditions[conditions.index(old)] = new
    status["conditions"] = conditions
    status["observedGeneration"] = generation
    return status
