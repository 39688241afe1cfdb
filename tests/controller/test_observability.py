"""The series the alerts of manifests/monitoring/ need, as observability.py exposes them:
what the last decision blocked and the conditions it set (one series each, gone with the
decision), memory scale-ups that answered an OOMKill (0 for each container until one,
counted only for a memory scale-up the starvation guard marked), the dry-run flag, and
each informer's sync state (informers of one name together)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from hvpa.api.status import HvpaStatus
from hvpa.controller.observability import InformerStates, Observations
from hvpa.engine.conditions import Condition
from hvpa.engine.decision import Decision, HorizontalDecision, VerticalDecision
from hvpa.engine.strategies.plan import Blocked
from hvpa.engine.vertical import ContainerResources
from hvpa.engine.vertical.requests import ResourceChange
from hvpa.records import Resources

KEY = "shop/web"
WEB = {"namespace": "shop", "name": "web"}
MIB = 2**20 * 1000  # memory in milli-units, as the engine keeps it


def change(resource: str, current: int, target: int, starving: str = "") -> ResourceChange:
    return ResourceChange(
        container="app",
        resource=resource,
        current=current,
        target=target,
        proposed=target,
        step=target - current,
        weight=100,
        starving=starving,
    )


def decision(
    *,
    applied: tuple[ResourceChange, ...] = (),
    blocked: tuple[Blocked, ...] = (),
    conditions: tuple[Condition, ...] = (),
    containers: tuple[str, ...] = ("app",),
) -> Decision:
    return Decision(
        current_replicas=2,
        desired_replicas=2,
        containers=tuple(
            ContainerResources(
                name=name,
                requests=Resources(cpu=100, memory=64 * MIB),
                limits=Resources(),
                applied=applied if name == "app" else (),
            )
            for name in containers
        ),
        horizontal=HorizontalDecision(enabled=True, desired_replicas=2),
        vertical=VerticalDecision(),
        blocked=blocked,
        conditions=conditions,
        status=HvpaStatus(),
        explanation=(),
    )


def registry_of(observations: Observations) -> CollectorRegistry:
    registry = CollectorRegistry()
    registry.register(observations)
    return registry


def samples(registry: CollectorRegistry, name: str) -> dict[tuple[tuple[str, str], ...], float]:
    """Labels (sorted, without namespace and name when they are shop/web) -> value; a
    series exposed twice (an invalid exposition) fails here."""
    found: dict[tuple[tuple[str, str], ...], float] = {}
    for family in registry.collect():
        for sample in family.samples:
            if sample.name != name:
                continue
            labels = dict(sample.labels)
            if {k: labels.get(k) for k in WEB} == WEB:
                labels = {k: v for k, v in labels.items() if k not in WEB}
            key = tuple(sorted(labels.items()))
            assert key not in found, f"{name}{dict(key)} exposed twice"
            found[key] = sample.value
    return found


def observed(observations: Observations, made: Decision, *, dry_run: bool = False) -> None:
    observation = observations.get(KEY)
    observation.time = 1.0
    observation.decision = made
    observation.dry_run = dry_run


def test_each_block_of_the_last_decision_once() -> None:
    observations = Observations()
    registry = registry_of(observations)
    stabilization = Blocked("vertical", "up", "StabilizationWindow", "cpu: within 3m")
    observed(
        observations,
        decision(
            blocked=(
                Blocked("horizontal", "down", "Weight", "2 -> 1 replicas"),
                stabilization,
                # A second container held by the same gate is the same series.
                Blocked("vertical", "up", "StabilizationWindow", "memory: within 3m"),
            )
        ),
    )
    assert samples(registry, "hvpa_scaling_blocked") == {
        (("axis", "horizontal"), ("direction", "down"), ("reason", "Weight")): 1.0,
        (("axis", "vertical"), ("direction", "up"), ("reason", "StabilizationWindow")): 1.0,
    }
    observed(observations, decision(blocked=(stabilization,)))
    assert list(samples(registry, "hvpa_scaling_blocked")) == [
        (("axis", "vertical"), ("direction", "up"), ("reason", "StabilizationWindow"))
    ], "a block the last decision no longer has is gone"


def test_conditions_of_the_last_decision() -> None:
    observations = Observations()
    registry = registry_of(observations)
    observed(
        observations,
        decision(
            conditions=(
                Condition("ScalingLimited", "True", "TooManyReplicas", "more than max"),
                Condition("AbleToScale", "True", "ReadyForNewScale", "ok"),
            )
        ),
    )
    assert samples(registry, "hvpa_status_condition") == {
        (("condition", "ScalingLimited"), ("reason", "TooManyReplicas"), ("status", "True")): 1.0,
        (("condition", "AbleToScale"), ("reason", "ReadyForNewScale"), ("status", "True")): 1.0,
    }


def test_an_invalid_hvpa_has_no_decision_series_but_its_dry_run_flag() -> None:
    observations = Observations()
    registry = registry_of(observations)
    observations.get(KEY).invalid = ("spec.hpa: bad",)
    for name in ("hvpa_scaling_blocked", "hvpa_status_condition", "hvpa_oomkill_scale_ups_total"):
        assert samples(registry, name) == {}, name
    assert samples(registry, "hvpa_dry_run") == {(): 0.0}


def test_dry_run_flag() -> None:
    observations = Observations()
    registry = registry_of(observations)
    observed(observations, decision(), dry_run=True)
    assert samples(registry, "hvpa_dry_run") == {(): 1.0}


OOMKILLED = "OOMKilled in pod web-1: memory at least 64Mi + 20% of 64Mi = 77Mi"


@pytest.mark.parametrize(
    ("applied", "counted"),
    [
        pytest.param((change("memory", 64 * MIB, 77 * MIB, OOMKILLED),), 1, id="oomkill-answered"),
        pytest.param((change("memory", 64 * MIB, 96 * MIB),), 0, id="memory-up-unmarked"),
        pytest.param(
            (change("cpu", 100, 200, "CPU usage 100m at its request"),), 0, id="cpu-starving"
        ),
        pytest.param((), 0, id="nothing-applied"),
    ],
)
def test_oomkill_scale_ups_count_only_answers_to_an_oomkill(
    applied: tuple[ResourceChange, ...], counted: int
) -> None:
    observations = Observations()
    registry = registry_of(observations)
    made = decision(applied=applied, containers=("app", "sidecar"))
    observed(observations, made)
    observations.count_oomkill_scale_ups(KEY, made)
    assert samples(registry, "hvpa_oomkill_scale_ups_total") == {
        (("container", "app"),): counted,
        (("container", "sidecar"),): 0,
    }


def test_oomkill_scale_ups_add_up_across_decisions() -> None:
    observations = Observations()
    registry = registry_of(observations)
    made = decision(applied=(change("memory", 64 * MIB, 77 * MIB, OOMKILLED),))
    observed(observations, made)
    for _ in range(3):
        observations.count_oomkill_scale_ups(KEY, made)
    assert samples(registry, "hvpa_oomkill_scale_ups_total") == {(("container", "app"),): 3}


@dataclass
class FakeInformer:
    """What InformerStates reads of an informer."""

    name: str
    has_synced: bool


def test_informer_states_one_series_per_name() -> None:
    informers: list[Any] = [
        FakeInformer("pods", True),
        # The one not synced first: a last-one-wins merge would report 1.
        FakeInformer("configmaps/shop", False),
        FakeInformer("configmaps/shop", True),
        FakeInformer("nodes", False),
    ]
    registry = CollectorRegistry()
    registry.register(InformerStates(lambda: informers))

    def synced() -> dict[str, float | None]:
        names = ("pods", "configmaps/shop", "nodes", "gone")
        return {
            name: registry.get_sample_value("hvpa_informer_synced", {"informer": name})
            for name in names
        }

    assert synced() == {"pods": 1.0, "configmaps/shop": 0.0, "nodes": 0.0, "gone": None}
    informers[1:] = [FakeInformer("configmaps/shop", True)]
    assert synced() == {"pods": 1.0, "configmaps/shop": 1.0, "nodes": None, "gone": None}


class _KeptInputs:
    """Inputs a reconcile keeps (as SnapshotInputs), counting their descriptions."""

    def __init__(self) -> None:
        self.described = 0

    def describe(self) -> dict[str, Any]:
        self.described += 1
        return {"pods": 3}


def test_debug_state_describes_the_kept_inputs_only_when_shown() -> None:
    observations = Observations()
    kept = _KeptInputs()
    observations.get(KEY).inputs = kept
    assert kept.described == 0
    state = observations.state(max_hvpas=10, max_lines=10)
    assert state["items"][KEY]["inputs"] == {"pods": 3}
    assert kept.described == 1
    observations.get(KEY).inputs = {}
    assert "inputs" not in observations.state(max_hvpas=10, max_lines=10)["items"][KEY]
