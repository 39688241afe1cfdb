"""The status the controller writes on top of the engine's: the Hvpa's own scale fields, a
dry run that reports without claiming anything was applied, a stale InvalidSpec dropped,
and an invalid Hvpa's condition edited into its status as written."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from controller_records import hvpa, node, target
from msgspec.structs import replace

from hvpa.api.base import plain
from hvpa.api.resource import Hvpa
from hvpa.api.status import Condition, History, HvpaStatus, ScaleEvent
from hvpa.controller.status import invalid_status, status_to_write
from hvpa.engine.decide import decide
from hvpa.engine.decision import Decision, Snapshot
from hvpa.labels import LabelSelector

NOW = 1_750_000_000.0
EARLIER = datetime.fromtimestamp(NOW - 600, UTC)


def proportional(status: HvpaStatus | None = None) -> tuple[Hvpa, Decision]:
    """An Hvpa whose cluster-proportional rule wants 4 replicas of a target at 2."""
    record = hvpa(clusterProportional={"linear": {"nodesPerReplica": 1}})
    assert record.hvpa is not None
    spec = record.hvpa
    if status is not None:
        spec = replace(spec, status=status)
    snapshot = Snapshot(target=target(), nodes=tuple(node(f"n{i}") for i in range(4)))
    return spec, decide(spec, snapshot, NOW)


def test_applied_status_carries_the_scale_fields() -> None:
    spec, decision = proportional()
    assert (decision.current_replicas, decision.desired_replicas) == (2, 4)
    status = status_to_write(hvpa=spec, decision=decision, target=target(), dry_run=False, now=NOW)
    assert status.replicas == 4
    assert status.target_selector == "app=web"
    assert (status.desired_replicas, status.target_ref) == (4, spec.spec.target_ref)
    assert status.last_scaling is not None
    assert not [c for c in status.conditions or () if c.type == "DryRun"]


def test_dry_run_reports_without_claiming() -> None:
    before = HvpaStatus(
        history=History(scale_up_events=(ScaleEvent(time=EARLIER, replica_change=1),)),
        conditions=(
            Condition(
                type="DryRun",
                status="True",
                reason="DryRun",
                message="old",
                last_transition_time=EARLIER,
            ),
        ),
    )
    spec, decision = proportional(before)
    status = status_to_write(hvpa=spec, decision=decision, target=target(), dry_run=True, now=NOW)
    assert status.replicas == 2
    assert status.desired_replicas == 4  # the DESIRED column shows the plan of a dry run
    assert status.target_ref == spec.spec.target_ref
    assert status.last_scaling is None
    assert status.history is not None
    assert status.history.scale_up_events == before.history.scale_up_events  # type: ignore[union-attr]
    conditions = {c.type: c for c in status.conditions or ()}
    dry_run = conditions["DryRun"]
    assert dry_run.status == "True"
    assert dry_run.message.startswith("dry run, not applied: would ")
    assert "2 -> 4 replicas" in dry_run.message
    assert dry_run.last_transition_time == EARLIER  # still True: the time stays
    able = conditions.get("AbleToScale")
    assert able is None or able.reason != "SucceededRescale"


def test_a_stale_invalid_spec_condition_goes() -> None:
    """With the horizontal axis off the engine sets no ScalingActive of its own, so the
    condition written while the spec was invalid would otherwise stay."""
    stale = Condition(type="ScalingActive", status="False", reason="InvalidSpec", message="was bad")
    record = hvpa(hpa={"deploy": False})
    assert record.hvpa is not None
    spec = replace(record.hvpa, status=HvpaStatus(conditions=(stale,)))
    decision = decide(spec, Snapshot(target=target()), NOW)
    status = status_to_write(hvpa=spec, decision=decision, target=target(), dry_run=False, now=NOW)
    assert all(c.reason != "InvalidSpec" for c in status.conditions or ())


@pytest.mark.parametrize(
    ("raw", "kept_time"),
    [
        pytest.param(None, False, id="no-status"),
        pytest.param(
            {
                "conditions": [
                    {
                        "type": "ScalingActive",
                        "status": "True",
                        "reason": "X",
                        "lastTransitionTime": "2020-01-01T00:00:00Z",
                    }
                ]
            },
            False,
            id="was-true",
        ),
        pytest.param(
            {
                "conditions": [
                    {
                        "type": "ScalingActive",
                        "status": "False",
                        "reason": "InvalidSpec",
                        "lastTransitionTime": "2020-01-01T00:00:00Z",
                    }
                ]
            },
            True,
            id="was-false",
        ),
    ],
)
def test_invalid_status(raw: dict[str, Any] | None, kept_time: bool) -> None:
    status = invalid_status(raw, ["spec.a: bad", "spec.b: worse"], 3, NOW)
    (condition,) = [c for c in status["conditions"] if c["type"] == "ScalingActive"]
    assert condition["status"] == "False"
    assert condition["reason"] == "InvalidSpec"
    assert condition["message"] == "the spec is invalid: spec.a: bad; spec.b: worse"
    assert condition["observedGeneration"] == 3
    assert status["observedGeneration"] == 3
    expected = "2020-01-01T00:00:00Z" if kept_time else "2025-06-15T15:06:40Z"
    assert condition["lastTransitionTime"] == expected
    # Idempotent: the same problems write the same status.
    assert invalid_status(status, ["spec.a: bad", "spec.b: worse"], 3, NOW + 60) == status


@pytest.mark.parametrize(
    ("selector", "text"),
    [
        pytest.param({"matchLabels": {"b": "2", "a": "1"}}, "a=1,b=2", id="labels"),
        pytest.param(
            {
                "matchLabels": {"tier": "front"},
                "matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["dev"]}],
            },
            "env notin (dev),tier=front",
            id="mixed-sorted-by-key",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "a", "operator": "In", "values": ["x"]}]},
            "a in (x)",
            id="in-stays-in",
        ),
    ],
)
def test_target_selector_string(selector: dict[str, Any], text: str) -> None:
    """status.targetSelector carries the target's selector as its /scale reports it."""
    assert str(LabelSelector.from_dict(selector)) == text


def test_the_status_is_plain_json() -> None:
    spec, decision = proportional()
    status = status_to_write(hvpa=spec, decision=decision, target=target(), dry_run=True, now=NOW)
    assert plain(status)["conditions"][-1]["type"] == "DryRun"
