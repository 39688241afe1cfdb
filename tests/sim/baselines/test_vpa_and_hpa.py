"""The VPAAndHPA baseline: built from an Hvpa's policy, and run as two controllers in `hvpa sim`."""

from __future__ import annotations

import functools
from typing import Any

from hvpa.api import apply_defaults, parse_hvpa
from hvpa.sim.baselines.vpa_and_hpa import vpa_and_hpa_objects
from hvpa.sim.runner import RunOptions, simulate
from hvpa.sim.scenarios import builtin_scenario
from hvpa.sim.traces import parse_trace


def test_the_hvpa_keeps_its_horizontal_spec_and_the_vpa_gets_its_policies() -> None:
    hvpa = builtin_scenario("gardener-kube-apiserver").hvpa
    as_hpa, vpa = vpa_and_hpa_objects(hvpa)
    spec = apply_defaults(parse_hvpa(as_hpa)).spec
    assert spec.strategy == "HpaPreferred" and not spec.vpa.deploy and spec.hpa.deploy
    assert "capacity" not in as_hpa["spec"]
    assert as_hpa["spec"]["hpa"] == hvpa["spec"]["hpa"]
    assert vpa["spec"]["updatePolicy"] == {"updateMode": "Auto"}
    assert vpa["spec"]["targetRef"] == hvpa["spec"]["targetRef"]
    policy = vpa["spec"]["resourcePolicy"]["containerPolicies"][0]
    assert policy["maxAllowed"] == {"cpu": "7", "memory": "28G"}
    assert hvpa["spec"]["vpa"]["deploy"] is True  # the scenario's own Hvpa is left as it was


def test_the_scenario_names_the_baseline() -> None:
    scenario = builtin_scenario("gardener-kube-apiserver").with_strategy("VPAAndHPA")
    assert scenario.strategy == "VPAAndHPA"
    # Gardener's PodDisruptionBudget is the scenario's, whatever the strategy; the VPA the pair's.
    assert [o["kind"] for o in scenario.extra_objects] == [
        "PodDisruptionBudget",
        "VerticalPodAutoscaler",
    ]


@functools.cache
def steady_run() -> dict[str, Any]:
    """Gardener's kube-apiserver at its peak (20 CPU) for 45 minutes, as VPAAndHPA."""
    scenario = builtin_scenario("gardener-kube-apiserver").with_strategy("VPAAndHPA")
    duration = 45 * 60
    return simulate(
        RunOptions(
            scenario=scenario,
            trace=parse_trace("steady", duration_seconds=duration, peak=scenario.peak, seed=1),
            duration_seconds=duration,
        )
    )


def test_the_vpa_resizes_by_eviction_and_the_hpa_adds_pods() -> None:
    """The pods start at 250m: the VPA evicts them (one of two at a time) and the admission
    controller gives their replacements up to maxAllowed; 20 CPU over 2 pods is above the
    HPA's 6-CPU average, so it scales out. The template never changes: no rollout."""
    summary = steady_run()["summary"]
    assert summary["rollouts"] == 0
    assert summary["evictions"] >= 2
    assert summary["podsReplaced"] == summary["evictions"]
    assert summary["replicas"]["max"] >= 4  # ceil(20 CPU / 6 CPU)
    assert summary["allocated"]["cpu"]["average"] > 2 * 0.25 * 4  # far above the 250m pods
    assert summary["podRequests"]["max"]["cpu"] == 0.25  # the template's, never written


def test_in_place_the_vpa_resizes_in_place_and_the_hpa_leaves_pod_sizes_alone() -> None:
    """With an in-place resize mode (the --resize-mode flag, or the Hvpa's own) the VPA's
    updateMode is InPlaceOrRecreate, and the Hvpa acting as the HPA keeps no resizeMode:
    hvpa resizing pods in place to its template would undo every resize of the VPA."""
    scenario = builtin_scenario("gardener-kube-apiserver")
    for built in (
        scenario.with_strategy("VPAAndHPA").with_resize_mode("InPlaceOrRollout"),
        scenario.with_resize_mode("InPlace").with_strategy("VPAAndHPA"),
    ):
        (vpa,) = [o for o in built.extra_objects if o["kind"] == "VerticalPodAutoscaler"]
        assert vpa["spec"]["updatePolicy"] == {"updateMode": "InPlaceOrRecreate"}
        assert "resizeMode" not in built.hvpa["spec"]["vpa"]
        assert built.label == "VPAAndHPA+InPlaceOrRecreate"
    rollout = scenario.with_strategy("VPAAndHPA").with_resize_mode("Rollout")
    assert rollout.extra_objects[-1]["spec"]["updatePolicy"] == {"updateMode": "Auto"}
    assert rollout.label == "VPAAndHPA"
