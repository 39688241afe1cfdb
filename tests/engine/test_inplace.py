"""In-place resizes in the engine: each pod's state against the decided size, pacing, the way out.

`plan_in_place` on its own (pods as the API would report them), then
`decide` with `spec.vpa.resizeMode`: the decided size kept in
`status.podResources` and read back, the Rollout gate not holding an
in-place resize, the fallback on a server without pods/resize, and the
condition that says how far the pods are.
"""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

import pytest
from capacity_kit import Workload, capacity_hvpa
from decide_kit import (
    NOW_SECONDS,
    at,
    blocked_of,
    condition,
    hvpa_object,
    requests_of,
    resources,
    run,
    scenario,
)

from hvpa.api.base import plain
from hvpa.engine.decide import decide
from hvpa.engine.decision import decision_to_dict
from hvpa.engine.inplace import (
    IN_PLACE,
    IN_PLACE_OR_ROLLOUT,
    InPlaceBounds,
    plan_in_place,
    size_key,
)
from hvpa.engine.vertical import ContainerResources
from hvpa.records import PodRecord, Resources, decode_pod, decode_target
from hvpa.scenario import parse_scenario

GB = 10**9 * 1000  # memory in milli-bytes, as the records hold it
DECIDED = (
    ContainerResources(
        "app", Resources(cpu=800, memory=GB), Resources(cpu=1600, memory=2 * GB), ()
    ),
)
BOUNDS = InPlaceBounds(infeasible_seconds=60, deferred_seconds=300, in_progress_seconds=3600)


def target(max_unavailable: Any = None, replicas: int = 4) -> Any:
    spec: dict[str, Any] = {
        "replicas": replicas,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {"spec": {"containers": [{"name": "app", "resources": resources()}]}},
    }
    if max_unavailable is not None:
        spec["strategy"] = {"rollingUpdate": {"maxUnavailable": max_unavailable}}
    return decode_target(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "shop"},
            "spec": spec,
        }
    )


def pod(
    name: str,
    *,
    spec: dict[str, Any] | None = None,
    actual: dict[str, Any] | None = None,
    conditions: list[dict[str, Any]] | None = None,
    ready: bool = True,
    qos: str = "Burstable",
    memory_policy: str | None = None,
    reports: bool = True,
) -> PodRecord:
    box: dict[str, Any] = {"name": "app", "resources": spec or resources()}
    if memory_policy is not None:
        box["resizePolicy"] = [{"resourceName": "memory", "restartPolicy": memory_policy}]
    running: dict[str, Any] = {"name": "app", "state": {"running": {}}}
    if reports:
        running["resources"] = actual or spec or resources()
    return decode_pod(
        {
            "metadata": {"name": name, "namespace": "shop", "labels": {"app": "web"}},
            "spec": {"containers": [box]},
            "status": {
                "phase": "Running",
                "qosClass": qos,
                "containerStatuses": [running],
                "conditions": [
                    {"type": "Ready", "status": "True" if ready else "False"},
                    *(conditions or []),
                ],
            },
        }
    )


SIZED = resources("800m", "1G", "1600m", "2G")


def states(plan: Any) -> dict[str, str]:
    return {p.name: p.state for p in plan.pods}


def test_each_pod_against_the_decided_size() -> None:
    pods = [
        pod("at-size", spec=SIZED),
        pod("old", spec=resources()),
        pod("asked", spec=SIZED, actual=resources()),
        pod(
            "progressing",
            spec=SIZED,
            actual=resources(),
            conditions=[
                {"type": "PodResizeInProgress", "status": "True", "lastTransitionTime": at(10)}
            ],
        ),
        pod(
            "deferred",
            spec=SIZED,
            actual=resources(),
            conditions=[
                {
                    "type": "PodResizePending",
                    "status": "True",
                    "reason": "Deferred",
                    "message": "Node didn't have enough resource: cpu",
                    "lastTransitionTime": at(10),
                }
            ],
        ),
    ]
    plan = plan_in_place(
        IN_PLACE_OR_ROLLOUT, DECIDED, pods, target(), now=NOW_SECONDS, bounds=BOUNDS
    )
    assert states(plan) == {
        "asked": "Resizing",
        "at-size": "AtSize",
        "deferred": "Deferred",
        "old": "Resize",
        "progressing": "Resizing",
    }
    assert plan.resize == ("old",)
    assert plan.rollout == "" and plan.held == ""
    deferred = next(p for p in plan.pods if p.name == "deferred")
    assert deferred.message == "Node didn't have enough resource: cpu"
    assert deferred.since == NOW_SECONDS - 10 and not deferred.stuck


@pytest.mark.parametrize(
    ("reason", "seconds_ago", "stuck"),
    [
        # Infeasible past its bound (60 s here); the VPA gives up at once, the issue after a bound.
        pytest.param("Infeasible", 59, False, id="infeasible-within-bound"),
        pytest.param("Infeasible", 60, True, id="infeasible-past-bound"),
        pytest.param("Deferred", 299, False, id="deferred-within-bound"),
        pytest.param("Deferred", 300, True, id="deferred-past-bound"),
    ],
)
def test_stuck_past_the_bound(reason: str, seconds_ago: int, stuck: bool) -> None:
    pending = {
        "type": "PodResizePending",
        "status": "True",
        "reason": reason,
        "message": "Node didn't have enough capacity: cpu, requested: 8000, capacity: 4000",
        "lastTransitionTime": at(seconds_ago),
    }
    pods = [pod("web-0", spec=SIZED, actual=resources(), conditions=[pending])]
    for mode in (IN_PLACE_OR_ROLLOUT, IN_PLACE):
        plan = plan_in_place(mode, DECIDED, pods, target(), now=NOW_SECONDS, bounds=BOUNDS)
        assert plan.pods[0].stuck is stuck
        expected = (
            f"pod web-0: resize {reason} for {seconds_ago}s: Node didn't have enough capacity: "
            "cpu, requested: 8000, capacity: 4000"
            if stuck
            else ""
        )
        assert plan.rollout == (expected if mode == IN_PLACE_OR_ROLLOUT else "")
        assert plan.held == (expected if mode == IN_PLACE else "")


def test_a_resize_in_progress_for_an_hour_is_stuck() -> None:
    progress = {
        "type": "PodResizeInProgress",
        "status": "True",
        "reason": "Error",
        "message": "attempting to set pod memory limit below current usage",
        "lastTransitionTime": at(3600),
    }
    pods = [pod("web-0", spec=SIZED, actual=resources(), conditions=[progress])]
    plan = plan_in_place(IN_PLACE, DECIDED, pods, target(), now=NOW_SECONDS, bounds=BOUNDS)
    assert plan.held == (
        "pod web-0: resize in progress for 3600s: "
        "attempting to set pod memory limit below current usage"
    )


@pytest.mark.parametrize(
    ("given", "why"),
    [
        pytest.param(
            {"qos": "Guaranteed"},
            "its QoS class would change from Guaranteed to Burstable",
            id="qos-class",
        ),
        pytest.param(
            {"reports": False},
            "its node runs a kubelet without in-place resize "
            "(a running container reports no resources)",
            id="old-kubelet",
        ),
    ],
)
def test_what_cannot_be_resized_in_place(given: dict[str, Any], why: str) -> None:
    pods = [pod("web-0", spec=resources(), **given)]
    plan = plan_in_place(
        IN_PLACE_OR_ROLLOUT, DECIDED, pods, target(), now=NOW_SECONDS, bounds=BOUNDS
    )
    assert states(plan) == {"web-0": "NotInPlace"}
    assert plan.resize == ()
    assert plan.rollout == f"pod web-0 cannot be resized in place: {why}"


def test_a_refusal_counts_for_the_size_it_refused_only() -> None:
    pods = [pod("web-0", spec=resources())]
    refused = {"web-0": (size_key(DECIDED), "Pod QOS Class may not change as a result of resizing")}
    plan = plan_in_place(
        IN_PLACE, DECIDED, pods, target(), now=NOW_SECONDS, bounds=BOUNDS, refused=refused
    )
    assert states(plan) == {"web-0": "NotInPlace"}
    assert "Pod QOS Class may not change" in plan.held
    other = {"web-0": ("app:cpu=1/", "an older refusal")}
    plan = plan_in_place(
        IN_PLACE, DECIDED, pods, target(), now=NOW_SECONDS, bounds=BOUNDS, refused=other
    )
    assert states(plan) == {"web-0": "Resize"}


@pytest.mark.parametrize(
    ("max_unavailable", "unready", "admitted"),
    [
        # 25% of 4 replicas, rounded down as the deployment controller rounds maxUnavailable.
        pytest.param("25%", 0, 1, id="a-quarter-of-four"),
        pytest.param("50%", 0, 2, id="half-of-four"),
        pytest.param(3, 1, 2, id="one-already-down"),
        pytest.param(1, 1, 0, id="none-left"),
        # 10% of 4 is 0.4, down to 0; never 0, or the resizes would never start.
        pytest.param("10%", 0, 1, id="at-least-one"),
        pytest.param(None, 0, 1, id="statefulset-default"),
    ],
)
def test_resizes_that_restart_a_container_are_paced(
    max_unavailable: Any, unready: int, admitted: int
) -> None:
    pods = [
        pod(f"web-{i}", spec=resources(), memory_policy="RestartContainer", ready=i >= unready)
        for i in range(4)
    ]
    more_memory = (
        ContainerResources(
            "app", Resources(cpu=500, memory=GB * 3 // 2), Resources(cpu=1000, memory=3 * GB), ()
        ),
    )
    plan = plan_in_place(
        IN_PLACE_OR_ROLLOUT,
        more_memory,
        pods,
        target(max_unavailable),
        now=NOW_SECONDS,
        bounds=BOUNDS,
    )
    assert len(plan.resize) == admitted
    assert plan.count("Paced") == 4 - admitted
    assert all(p.restarts == ("app",) for p in plan.pods)
    # A CPU-only change restarts nothing: every pod at once.
    cpu_plan = plan_in_place(
        IN_PLACE_OR_ROLLOUT, DECIDED, pods, target(max_unavailable), now=NOW_SECONDS, bounds=BOUNDS
    )
    assert len(cpu_plan.resize) == 4


# ---------------------------------------------------------------------------------- decide


def in_place(mode: str = IN_PLACE_OR_ROLLOUT, **changes: Any) -> dict[str, Any]:
    hvpa = hvpa_object(intervals=[{"vpaWeight": 100}], **changes)
    hvpa["spec"]["vpa"]["resizeMode"] = mode
    return hvpa


# What hvpa writes for the VPA's 2G and 1150M: memory rounded up to a whole MiB
# (docs/gardener-compatibility.md point 20): 2e9 / 2^20 = 1907.35 -> 1908Mi, and the limit
# (twice the request) scaled from the same amount: 4e9 / 2^20 = 3814.7 -> 3815Mi.
WRITTEN_2G = 1908 * 2**20
WRITTEN_1150M = 1097 * 2**20  # 1150e6 / 2^20 = 1096.7


def test_the_decided_size_goes_to_the_status_and_the_pods_not_the_template() -> None:
    decision = run(scenario(in_place()))
    assert requests_of(decision) == (1000, WRITTEN_2G)
    assert decision.containers[0].changed
    plan = decision.in_place
    assert plan is not None and plan.mode == IN_PLACE_OR_ROLLOUT
    assert plan.resize == ("web-0", "web-1")
    sized = decision.status.pod_resources
    assert sized is not None
    assert [(c.name, c.requests, c.limits) for c in sized.containers] == [
        ("app", {"cpu": "1", "memory": "1908Mi"}, {"cpu": "2", "memory": "3815Mi"})
    ]
    assert (sized.pods, sized.at_size, sized.waiting) == (2, 0, 2)
    assert condition(decision, "ResizingInPlace") == ("True", "Resizing")
    as_json = decision_to_dict(decision)["inPlace"]
    assert as_json["resize"] == ["web-0", "web-1"]
    assert as_json["pods"][0]["spec"] == [
        {
            "name": "app",
            "requests": {"cpu": "500m", "memory": "1G"},
            "limits": {"cpu": "1", "memory": "2G"},
        }
    ]
    assert "decision: resize in place pods web-0, web-1" in decision.explanation


def test_the_next_decision_starts_from_the_in_place_size() -> None:
    first = run(scenario(in_place()))
    status = copy.deepcopy(first.status)
    hvpa = in_place(status=_plain(status))
    again = run(scenario(hvpa))
    # The VPA still asks for 1 CPU and 2G, which the pods already have: nothing changes.
    assert not again.containers[0].changed
    assert requests_of(again) == (1000, WRITTEN_2G)


def test_a_rollout_in_progress_does_not_hold_an_in_place_resize() -> None:
    rolled = run(scenario(hvpa_object(intervals=[{"vpaWeight": 100}]), rolling=True))
    assert ("vertical", "up", "Rollout") in blocked_of(rolled)
    resized = run(scenario(in_place(), rolling=True))
    assert ("vertical", "up", "Rollout") not in blocked_of(resized)
    assert resized.containers[0].changed


def test_without_pods_resize_the_in_place_modes_roll_out() -> None:
    loaded = parse_scenario(scenario(in_place(IN_PLACE)))
    decision = decide(
        loaded.hvpa, replace(loaded.snapshot, resize_served=False), loaded.now, loaded.settings
    )
    assert decision.in_place is None
    assert decision.status.pod_resources is None
    assert condition(decision, "ResizingInPlace") == ("False", "ResizeNotServed")
    assert decision.containers[0].changed


def test_back_to_rollout_drops_the_in_place_size_and_its_condition() -> None:
    first = run(scenario(in_place()))
    hvpa = hvpa_object(intervals=[{"vpaWeight": 100}], status=_plain(first.status))
    back = run(scenario(hvpa))
    assert back.in_place is None
    assert back.status.pod_resources is None
    assert condition(back, "ResizingInPlace") is None
    # Decided from the pods' size (status.podResources), which the controller writes into the
    # template (the template still says 500m).
    assert requests_of(back) == (1000, WRITTEN_2G)


def test_in_place_holds_what_cannot_be_done_and_says_so() -> None:
    raw = scenario(in_place(IN_PLACE))
    for item in raw["pods"]:
        item["status"]["qosClass"] = "Guaranteed"
    decision = run(raw)
    assert condition(decision, "ResizingInPlace") == ("False", "NotResizableInPlace")
    assert decision.in_place is not None and decision.in_place.resize == ()
    assert decision.status.pod_resources is not None
    assert decision.status.pod_resources.infeasible == 2


def _plain(status: Any) -> dict[str, Any]:
    result: dict[str, Any] = plain(status)
    return result


def test_a_restarting_resize_under_way_counts_as_down_before_the_pod_turns_unready() -> None:
    """The resize was asked (the spec has the size), the kubelet has not restarted the
    container yet (Ready, running at the old size): it takes the only slot of maxUnavailable 1."""
    bigger = resources("500m", "1500M", "1", "3G")
    more_memory = (
        ContainerResources(
            "app", Resources(cpu=500, memory=GB * 3 // 2), Resources(cpu=1000, memory=3 * GB), ()
        ),
    )
    pods = [
        pod("web-0", spec=bigger, actual=resources(), memory_policy="RestartContainer"),
        pod("web-1", spec=resources(), memory_policy="RestartContainer"),
    ]
    plan = plan_in_place(
        IN_PLACE_OR_ROLLOUT, more_memory, pods, target(1), now=NOW_SECONDS, bounds=BOUNDS
    )
    assert states(plan) == {"web-0": "Resizing", "web-1": "Paced"}
    assert plan.resize == ()


# ------------------------------------------------------------------ what the gates assume


def restarting(raw: dict[str, Any], resource: str) -> dict[str, Any]:
    """The template's container restarts to resize `resource` (resizePolicy RestartContainer)."""
    box = raw["target"]["spec"]["template"]["spec"]["containers"][0]
    box["resizePolicy"] = [{"resourceName": resource, "restartPolicy": "RestartContainer"}]
    return raw


@pytest.mark.parametrize(
    ("mode", "vpa_cpu", "applied"),
    [
        # Rollout: Gardener's 200m, the smallest step worth replacing every pod.
        ("Rollout", "620m", False),
        # In place: a tenth of the 500m request, 50m.
        (IN_PLACE_OR_ROLLOUT, "620m", True),
        (IN_PLACE_OR_ROLLOUT, "540m", False),
        (IN_PLACE, "560m", True),
    ],
)
def test_an_unset_min_change_is_a_tenth_of_the_request_in_place(
    mode: str, vpa_cpu: str, applied: bool
) -> None:
    hvpa = in_place(mode) if mode != "Rollout" else hvpa_object(intervals=[{"vpaWeight": 100}])
    decision = run(scenario(hvpa, vpa_target={"cpu": vpa_cpu, "memory": "1G"}))
    assert (requests_of(decision)[0] > 500) == applied
    assert (("vertical", "up", "MinChange") in blocked_of(decision)) == (not applied)


def test_a_resource_a_resize_restarts_for_keeps_the_rollout_min_change() -> None:
    """The container restarts for a CPU resize: that costs what a rollout does, so CPU keeps
    the 200m default; memory, which restarts nothing, has the tenth (100M of 1G)."""
    raw = restarting(scenario(in_place(), vpa_target={"cpu": "620m", "memory": "1150M"}), "cpu")
    decision = run(raw)
    assert requests_of(decision) == (500, WRITTEN_1150M)
    assert ("vertical", "up", "MinChange") in blocked_of(decision)


# As tests/engine/test_capacity_decide.py's: memory at 575M x 1.1 (the band's slack), and a
# flat curve of 1 CPU and 2G per pod from 2 replicas, so a resize can keep the count.
SETTLED = Workload(memory=632_500_000_000)
FROM_TWO = [
    {"replicas": 2, "cpu": "1", "memory": "2G"},
    {"replicas": 10, "cpu": "1", "memory": "2G"},
]


@pytest.mark.parametrize(
    ("mode", "band", "cpu"),
    [
        # Two pods of 500m use 190m each: at the 50% target a demand of 380m per pod, 24% under
        # the request. The demand is settled (one reading), and a settled demand keeps today's
        # pods only within `tolerance` (10%) of the curve's total (docs/strategies.md, the
        # resize band; issue 23), so every mode resizes here: the resize band, narrower in
        # place, is read only while the demand moves.
        ("Rollout", None, 380),
        (IN_PLACE_OR_ROLLOUT, None, 380),
        (IN_PLACE_OR_ROLLOUT, 30, 380),
    ],
)
def test_capacitys_unset_resize_band_is_narrower_in_place(
    mode: str, band: float | None, cpu: int
) -> None:
    hvpa = capacity_hvpa(FROM_TWO, minimum=2)
    hvpa["spec"]["vpa"]["resizeMode"] = mode
    if band is not None:
        hvpa["spec"]["capacity"]["resizeTolerance"] = band
    decision = replace(SETTLED, cpu_usage=190).decide(hvpa)
    assert (decision.desired_replicas, requests_of(decision)[0]) == (2, cpu)


def test_a_min_change_in_the_spec_is_kept_in_place() -> None:
    hvpa = in_place(vpa_scale_up={"minChange": {"cpu": {"value": "300m"}}})
    decision = run(scenario(hvpa, vpa_target={"cpu": "620m", "memory": "1G"}))
    assert requests_of(decision)[0] == 500
    assert ("vertical", "up", "MinChange") in blocked_of(decision)


# ------------------------------------------------------------------ other writers (rewrites.py)


def _vertical_writes(decision: Any) -> list[Any]:
    history = decision.status.history
    return [w for w in (history.writes or ()) if w.axis == "vertical"] if history else []


def test_a_resize_in_place_is_no_template_write_for_the_rewrite_guard() -> None:
    """The template keeps its size in place; a write recorded for it would read, on the
    next pass, as a value put back by someone else (rewrites.py) and hold the axis."""
    first = run(scenario(in_place()))
    assert first.containers[0].changed and _vertical_writes(first) == []
    again = run(scenario(in_place(status=_plain(first.status))))
    history = again.status.history
    assert history is None or not history.rewrites
    assert condition(again, "AbleToScale") != ("False", "ConflictingFieldManager")
    # Rollout mode writes the template: that write is recorded.
    rolled = run(scenario(hvpa_object(intervals=[{"vpaWeight": 100}])))
    assert [f.value for f in _vertical_writes(rolled)[0].fields][:1] == ["1"]
