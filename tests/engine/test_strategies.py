"""Strategies and the combined pipeline: Gardener's Weighted numbers, the other modes, and invariants."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from decide_kit import written_memory
from hypothesis import given, settings
from hypothesis import strategies as st

from hvpa.engine.gates import GateSettings
from hvpa.engine.strategies import STRATEGIES, HorizontalInput, Plan, plan_scaling
from hvpa.engine.strategies.combine import combine
from hvpa.engine.strategies.plan import Hold
from hvpa.engine.strategies.weighted import weighted_replicas
from hvpa.engine.vertical import ContainerTarget, VerticalRecommendation
from hvpa.quantity import parse_milli
from hvpa.records import ContainerSpec, OomKill, PodRecord, Resources


def res(cpu: str | None = None, memory: str | None = None) -> Resources:
    return Resources(
        cpu=parse_milli(cpu) if cpu is not None else None,
        memory=parse_milli(memory) if memory is not None else None,
    )


@dataclass(frozen=True)
class Interval:
    vpa_weight: int
    start_replica_count: int | None = None
    last_replica_count: int | None = None


@dataclass(frozen=True)
class Change:
    value: str | None = None
    percentage: int | None = None


@dataclass(frozen=True)
class Params:
    cpu: Change | None = None
    memory: Change | None = None


@dataclass(frozen=True)
class Mixed:
    replica_threshold: int | None = None
    cpu_threshold: str | None = None
    memory_threshold: str | None = None
    prefer: str | None = None


def horizontal(
    current: int, desired: int | None, low: int = 1, high: int = 10, unclamped: int | None = None
) -> HorizontalInput:
    return HorizontalInput(
        current, low, high, desired, unclamped if unclamped is not None else desired
    )


def shifts(plan: Plan) -> list[tuple[str, str, int]]:
    return [(c.container, c.resource, c.proposed) for c in plan.changes]


def reasons(plan: Plan) -> list[tuple[str, str, str]]:
    return [(b.axis, b.direction, b.reason) for b in plan.blocked]


@pytest.mark.parametrize(
    ("current", "desired", "hpa_weight", "expected"),
    [
        pytest.param(2, 3, 60, 3, id="grow-ceil"),
        pytest.param(2, 3, 10, 3, id="grow-small-weight-still-one"),
        pytest.param(1, 10, 50, 6, id="grow-half"),
        pytest.param(10, 4, 50, 7, id="shrink-half"),
        pytest.param(3, 2, 40, 2, id="shrink-floor"),
        pytest.param(5, 1, 100, 1, id="shrink-full"),
        pytest.param(4, 9, 0, 4, id="weight-0-holds"),
    ],
)
def test_weighted_replicas(current: int, desired: int, hpa_weight: int, expected: int) -> None:
    assert weighted_replicas(current, desired, hpa_weight)[0] == expected


# Gardener's hvpa_controller_test.go fixtures: the "unscaled" deployment, 2 replicas.
UNSCALED = ContainerSpec("deployment", requests=res("300m", "200M"), limits=res("2", "5G"))
GARDENER_MIN_CHANGE = Params(Change("100m", 80), Change("100M", 80))
GARDENER_GAP = Params(Change("1", 80), Change("1G", 80))


def recommendation(cpu: str, memory: str, name: str = "deployment") -> VerticalRecommendation:
    return VerticalRecommendation((ContainerTarget(name, res(cpu, memory)),))


def gardener_case(
    container: ContainerSpec, cpu: str, memory: str, weight: int, gap: Params | None
) -> tuple[int, Resources, Resources, list[tuple[str, str, str]]]:
    outcome = combine(
        "Weighted",
        horizontal(2, 3),
        [container],
        recommendation(cpu, memory),
        GateSettings(min_change_up=GARDENER_MIN_CHANGE, min_change_down=GARDENER_MIN_CHANGE),
        now=0.0,
        intervals=[Interval(weight)],
        limits_gap=gap,
    )
    (result,) = outcome.containers
    return (
        outcome.replicas,
        result.requests,
        result.limits,
        [(b.axis, b.direction, b.reason) for b in outcome.blocked],
    )


def test_blocked_items_keep_each_container_resource() -> None:
    other = ContainerSpec("sidecar", requests=res("300m", "200M"), limits=res("2", "5G"))
    outcome = combine(
        "Weighted",
        horizontal(2, 2),
        [UNSCALED, other],
        VerticalRecommendation(
            (
                ContainerTarget("deployment", res("350m", "250M")),
                ContainerTarget("sidecar", res("350m", "250M")),
            )
        ),
        GateSettings(),
        now=0.0,
        intervals=[Interval(90)],
    )
    assert [(b.axis, b.reason) for b in outcome.blocked] == [("vertical", "MinChange")]
    assert [(b.container, b.resource) for b in outcome.blocked_items] == [
        ("deployment", "cpu"),
        ("deployment", "memory"),
        ("sidecar", "cpu"),
        ("sidecar", "memory"),
    ]


def test_gardener_should_scale_only_memory() -> None:
    assert gardener_case(UNSCALED, "500m", "3G", 40, GARDENER_GAP) == (
        3,
        res("300m", written_memory("1320000k")),
        res("2", written_memory("2376000k")),
        [("vertical", "up", "MinChange")],
    )


def test_gardener_proportional_scaling() -> None:
    replicas, requests, limits, _ = gardener_case(UNSCALED, "500m", "3G", 40, None)
    assert (replicas, requests, limits) == (
        3,
        res("300m", written_memory("1320000k")),
        res("2", written_memory("33000000k")),
    )


def test_gardener_blocked_scaling() -> None:
    assert gardener_case(UNSCALED, "350m", "250M", 90, None) == (
        3,
        UNSCALED.requests,
        UNSCALED.limits,
        [("vertical", "up", "MinChange")],
    )


def test_gardener_requests_set_equal_to_limits() -> None:
    equal = ContainerSpec("deployment", requests=res(memory="500M"), limits=res(memory="500M"))
    assert gardener_case(equal, "500m", "100M", 40, None) == (
        3,
        res("200m", written_memory("340000k")),
        res(memory=written_memory("340000k")),
        [],
    )


def test_weighted_vertical_example() -> None:
    etcd = ContainerSpec("etcd", requests=res("500m", "1G"), limits=res("1", "2G"))
    outcome = combine(
        "Weighted",
        HorizontalInput(1, 1, 1, enabled=False),
        [etcd],
        recommendation("1", "2G", "etcd"),
        GateSettings(),
        now=0.0,
        intervals=[Interval(60)],
    )
    (result,) = outcome.containers
    assert (result.requests, result.limits) == (
        res("800m", written_memory("1600M")),
        res("1600m", written_memory("3200M")),
    )
    assert (outcome.replicas, outcome.vpa_weight, outcome.blocked) == (1, 60, ())
    assert outcome.scale_times == {"verticalUp": 0.0}


APP = ContainerSpec("app", requests=res("1", "1G"), limits=res("2", "2G"))
UP = (ContainerTarget("app", res("2", "2G")),)
DOWN = (ContainerTarget("app", res("500m", "500M")),)


@pytest.mark.parametrize(
    ("h", "targets", "weight", "replicas", "moves", "blocked"),
    [
        pytest.param(horizontal(4, 6), UP, 0, 6, [], [("vertical", "up", "Weight")] * 2, id="weight-0-horizontal-only"),
        pytest.param(horizontal(4, 6), UP, 100, 4, [("app", "cpu", "2"), ("app", "memory", "2G")], [("horizontal", "up", "Weight")], id="weight-100-holds-replicas"),
        pytest.param(horizontal(4, 6), UP, 50, 5, [("app", "cpu", "1500m"), ("app", "memory", "1500M")], [], id="weight-50-both"),
        pytest.param(horizontal(10, 10, unclamped=14), UP, 0, 10, [("app", "cpu", "2"), ("app", "memory", "2G")], [], id="at-max-wanting-more-grows-pods"),
        pytest.param(horizontal(10, 10, unclamped=14), DOWN, 0, 10, [], [("vertical", "down", "Weight")] * 2, id="at-max-no-shrink-by-mitigation"),
        pytest.param(horizontal(1, 1, unclamped=0), DOWN, 0, 1, [("app", "cpu", "500m"), ("app", "memory", "500M")], [], id="at-min-wanting-fewer-shrinks-pods"),
        pytest.param(horizontal(10, 10), UP, 0, 10, [], [("vertical", "up", "Weight")] * 2, id="at-max-content-no-mitigation"),
        pytest.param(horizontal(4, None), UP, 0, 4, [], [("vertical", "up", "Weight")] * 2, id="horizontal-held-keeps-count"),
        pytest.param(HorizontalInput(12, 1, 10, 10, 10), None, 0, 10, [], [], id="over-max-brought-in"),
    ],
)  # fmt: skip
def test_weighted(
    h: HorizontalInput,
    targets: tuple[ContainerTarget, ...] | None,
    weight: int,
    replicas: int,
    moves: list[tuple[str, str, str]],
    blocked: list[tuple[str, str, str]],
) -> None:
    plan = plan_scaling("Weighted", h, [APP], targets, intervals=[Interval(weight)])
    assert plan.replicas == replicas
    assert shifts(plan) == [(c, r, parse_milli(p)) for c, r, p in moves]
    assert reasons(plan) == blocked


def test_weighted_horizontal_off_keeps_count() -> None:
    plan = plan_scaling(
        "Weighted",
        HorizontalInput(12, 1, 10, 20, 20, enabled=False),
        [APP],
        UP,
        intervals=[Interval(0, 12, 12)],
    )
    assert plan.replicas == 12
    assert plan.blocked and not plan.changes


@pytest.mark.parametrize(
    ("h", "targets", "replicas", "moving", "blocked"),
    [
        pytest.param(horizontal(4, 6), UP, 6, 0, [("vertical", "up", "Weight")] * 2, id="below-max-horizontal-first"),
        pytest.param(horizontal(10, 10), UP, 10, 2, [], id="at-max-grows-pods"),
        pytest.param(horizontal(4, 3), DOWN, 3, 0, [("vertical", "down", "Weight")] * 2, id="above-min-no-shrink"),
        pytest.param(horizontal(1, 1), DOWN, 1, 2, [], id="at-min-shrinks-pods"),
        pytest.param(HorizontalInput(4, 1, 10, enabled=False), UP, 4, 2, [], id="horizontal-off-vertical-alone"),
    ],
)  # fmt: skip
def test_hpa_preferred(
    h: HorizontalInput,
    targets: tuple[ContainerTarget, ...],
    replicas: int,
    moving: int,
    blocked: list[tuple[str, str, str]],
) -> None:
    plan = plan_scaling("HpaPreferred", h, [APP], targets)
    assert (plan.replicas, len(plan.changes), reasons(plan)) == (replicas, moving, blocked)


@pytest.mark.parametrize(
    ("h", "replicas", "moving", "blocked"),
    [
        pytest.param(
            horizontal(4, 6), 6, 0, [("vertical", "up", "Weight")] * 2, id="horizontal-change-first"
        ),
        pytest.param(horizontal(4, 4), 4, 2, [], id="no-horizontal-change-vertical"),
        pytest.param(horizontal(4, None), 4, 2, [], id="held-horizontal-vertical"),
    ],
)
def test_hpa_biased(
    h: HorizontalInput, replicas: int, moving: int, blocked: list[tuple[str, str, str]]
) -> None:
    plan = plan_scaling("HpaBiased", h, [APP], UP)
    assert (plan.replicas, len(plan.changes), reasons(plan)) == (replicas, moving, blocked)


@pytest.mark.parametrize(
    ("targets", "replicas", "moving", "blocked"),
    [
        pytest.param(UP, 4, 2, [("horizontal", "up", "Weight")], id="vertical-change-first"),
        pytest.param((ContainerTarget("app", res("1100m", "1G")),), 6, 1, [], id="below-min-change-horizontal"),
        pytest.param((ContainerTarget("app", res("1", "1G")),), 6, 0, [], id="no-vertical-change"),
        pytest.param(None, 6, 0, [], id="no-recommendation"),
    ],
)  # fmt: skip
def test_vpa_biased(
    targets: tuple[ContainerTarget, ...] | None,
    replicas: int,
    moving: int,
    blocked: list[tuple[str, str, str]],
) -> None:
    plan = plan_scaling("VpaBiased", horizontal(4, 6), [APP], targets)
    assert (plan.replicas, len(plan.changes), reasons(plan)) == (replicas, moving, blocked)


@pytest.mark.parametrize(
    ("h", "targets", "mixed", "replicas", "moving", "blocked"),
    [
        pytest.param(horizontal(4, 6), (ContainerTarget("app", res("1", "1G")),), None, 6, 0, [], id="only-horizontal-new"),
        pytest.param(horizontal(4, 4), UP, None, 4, 2, [], id="only-vertical-new"),
        pytest.param(horizontal(4, 6), UP, Mixed(1, "500m", "500M"), 6, 0, [("vertical", "up", "Weight")] * 2, id="both-qualify-prefer-hpa-default"),
        pytest.param(horizontal(4, 6), UP, Mixed(1, "500m", "500M", "Vpa"), 4, 2, [("horizontal", "up", "Weight")], id="both-qualify-prefer-vpa"),
        pytest.param(horizontal(4, 6), UP, Mixed(2, "500m", "500M"), 4, 2, [("horizontal", "up", "Weight")], id="replicas-at-threshold-vertical"),
        pytest.param(horizontal(4, 6), UP, Mixed(1, "2", "2G"), 6, 0, [("vertical", "up", "Weight")] * 2, id="vertical-below-threshold"),
        pytest.param(horizontal(4, 6), UP, Mixed(2, "2", "2G"), 4, 0, [("horizontal", "up", "Weight"), ("vertical", "up", "Weight"), ("vertical", "up", "Weight")], id="neither-qualifies"),
        pytest.param(horizontal(4, 6), (ContainerTarget("app", res("3", "1G")),), Mixed(2, "5", "5G"), 4, 1, [("horizontal", "up", "Weight")], id="target-above-limit-qualifies"),
    ],
)  # fmt: skip
def test_mixed(
    h: HorizontalInput,
    targets: tuple[ContainerTarget, ...],
    mixed: Mixed | None,
    replicas: int,
    moving: int,
    blocked: list[tuple[str, str, str]],
) -> None:
    plan = plan_scaling("Mixed", h, [APP], targets, mixed=mixed)
    assert (plan.replicas, len(plan.changes), reasons(plan)) == (replicas, moving, blocked)


def test_plan_scaling_default_and_unknown() -> None:
    assert plan_scaling("", horizontal(2, 2), [APP], None).strategy == "Weighted"
    with pytest.raises(ValueError, match="Capacity"):
        plan_scaling("Capacity", horizontal(2, 2), [APP], None)


def test_held_vertical_axis_lets_the_horizontal_one_move() -> None:
    outcome = combine(
        "Weighted",
        horizontal(2, 4),
        [APP],
        VerticalRecommendation((), "LowConfidence", "too little history"),
        GateSettings(),
        now=0.0,
        intervals=[Interval(50)],
    )
    assert outcome.replicas == 3
    assert outcome.containers[0].requests == APP.requests
    assert outcome.applied == ()


def test_conflicting_writer_blocks_its_axis_only() -> None:
    hold = Hold("horizontal", "ConflictingAutoscaler", "HorizontalPodAutoscaler shop/web-hpa")
    outcome = combine(
        "Weighted",
        horizontal(2, 4),
        [APP],
        VerticalRecommendation(UP),
        GateSettings(),
        now=0.0,
        intervals=[Interval(50)],
        holds=[hold],
    )
    assert outcome.replicas == 2
    assert [(b.axis, b.reason) for b in outcome.blocked] == [
        ("horizontal", "ConflictingAutoscaler")
    ]
    assert outcome.containers[0].requests == res("1500m", written_memory("1500M"))
    assert outcome.scale_times == {"verticalUp": 0.0}
    assert any("ConflictingAutoscaler" in line for line in outcome.explanation)


def test_oom_grows_memory_through_the_pipeline() -> None:
    pod = PodRecord(
        namespace="shop",
        name="web-1",
        labels={},
        phase="Running",
        deleting=False,
        start_time=0.0,
        ready="True",
        ready_transition=0.0,
        containers=(APP,),
        oom_kills=(OomKill("app", 50.0),),
    )
    outcome = combine(
        "Weighted",
        horizontal(2, 2),
        [APP],
        VerticalRecommendation((ContainerTarget("app", res("1", "1G")),)),
        GateSettings(stabilization_seconds={"verticalUp": 600}),
        now=100.0,
        intervals=[Interval(0)],
        scale_times={"verticalUp": 10.0},
        pods=[pod],
    )
    (result,) = outcome.containers
    assert result.requests == res("1", written_memory("1400M"))
    assert result.limits == res("2", written_memory("2800M"))
    assert outcome.blocked == ()
    lines = outcome.explanation
    order = [
        next(i for i, line in enumerate(lines) if marker in line)
        for marker in ("OOMKilled in pod web-1", "strategy Weighted", "after an OOMKill", "passes")
    ]
    assert order == sorted(order)


def test_vertical_off_touches_no_container() -> None:
    outcome = combine(
        "HpaBiased", horizontal(2, 2), [APP], None, GateSettings(), now=0.0, override_oom=True
    )
    assert (outcome.replicas, outcome.applied, outcome.scaled) == (2, (), False)


quantities = st.integers(min_value=1, max_value=10**13)


@st.composite
def containers_and_targets(
    draw: st.DrawFn,
) -> tuple[ContainerSpec, ContainerTarget]:
    request = draw(st.one_of(st.none(), quantities))
    limit = draw(st.one_of(st.none(), quantities))
    if request is not None and limit is not None and limit < request:
        request, limit = limit, request
    low = draw(st.one_of(st.none(), quantities))
    high = draw(st.one_of(st.none(), quantities))
    if low is not None and high is not None and low > high:
        low, high = high, low
    wanted = draw(quantities)
    if low is not None:
        wanted = max(wanted, low)
    if high is not None:
        wanted = min(wanted, high)
    container = ContainerSpec(
        "app", requests=Resources(request, request), limits=Resources(limit, limit)
    )
    target = ContainerTarget(
        "app",
        Resources(wanted, wanted),
        min_allowed=Resources(low, low),
        max_allowed=Resources(high, high),
        controlled_values=draw(st.sampled_from(["RequestsAndLimits", "RequestsOnly"])),
    )
    return container, target


@st.composite
def horizontals(draw: st.DrawFn) -> HorizontalInput:
    low = draw(st.integers(0, 20))
    high = draw(st.integers(max(low, 1), 30))
    current = draw(st.integers(0, 40))
    unclamped = draw(st.integers(0, 60))
    return HorizontalInput(current, low, high, max(low, min(high, unclamped)), unclamped)


intervals = st.lists(
    st.builds(
        Interval,
        vpa_weight=st.integers(0, 100),
        start_replica_count=st.one_of(st.none(), st.integers(0, 30)),
        last_replica_count=st.one_of(st.none(), st.integers(0, 30)),
    ),
    max_size=4,
)


@settings(max_examples=300)
@given(
    strategy=st.sampled_from(STRATEGIES),
    h=horizontals(),
    pair=containers_and_targets(),
    weights=intervals,
    oom=st.booleans(),
)
def test_results_stay_within_replica_bounds_limits_and_policy(
    strategy: str,
    h: HorizontalInput,
    pair: tuple[ContainerSpec, ContainerTarget],
    weights: list[Interval],
    oom: bool,
) -> None:
    container, target = pair
    outcome = combine(
        strategy,
        h,
        [container],
        VerticalRecommendation((target,)),
        GateSettings(min_change_up=Params(Change("0"), Change("0"))),
        now=0.0,
        intervals=weights,
        mixed=Mixed(1, "1", "1"),
        override_oom=oom,
    )
    assert h.min_replicas <= outcome.replicas <= h.max_replicas
    (result,) = outcome.containers
    for change in result.applied:
        request = result.requests.get(change.resource)
        limit = result.limits.get(change.resource)
        assert request is not None
        assert limit is None or request <= limit
        low = target.min_allowed.get(change.resource)
        high = target.max_allowed.get(change.resource)
        assert low is None or request >= low
        assert high is None or request <= high


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_missing_data_never_falls_to_a_bound(strategy: str) -> None:
    held = HorizontalInput(7, 1, 5, desired=None, unclamped=None)
    plan = plan_scaling(strategy, held, [APP], None)
    assert (plan.replicas, plan.changes) == (7, ())
    outcome = combine(
        strategy,
        held,
        [APP],
        VerticalRecommendation((), "NoRecommendation", "no recommendation yet"),
        GateSettings(),
        now=0.0,
    )
    assert (outcome.replicas, outcome.applied, outcome.blocked) == (7, (), ())
    assert outcome.containers[0].requests == APP.requests
