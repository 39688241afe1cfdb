"""New limits for new requests (Gardener's getScaledResourceLimit), and requests never above limits."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from decide_kit import written_memory
from hypothesis import given
from hypothesis import strategies as st

from hvpa.engine.vertical import ContainerTarget, ResourceChange, apply_changes, scale_limit
from hvpa.engine.vertical.requests import propose
from hvpa.quantity import parse_milli
from hvpa.records import ContainerSpec, Resources


def res(cpu: str | None = None, memory: str | None = None) -> Resources:
    return Resources(
        cpu=parse_milli(cpu) if cpu is not None else None,
        memory=parse_milli(memory) if memory is not None else None,
    )


def milli(text: str | None) -> int | None:
    return parse_milli(text) if text is not None else None


@dataclass(frozen=True)
class Change:
    value: str | None = None
    percentage: int | None = None


@dataclass(frozen=True)
class Gap:
    cpu: Change | None = None
    memory: Change | None = None


# Gardener's hvpa_controller_test.go: limitScale is {cpu: 1 / 80%, memory: 1G / 80%}.
GARDENER_GAP = Gap(Change("1", 80), Change("1G", 80))


@pytest.mark.parametrize(
    ("resource", "old_limit", "old_request", "new_request", "gap", "expected"),
    [
        pytest.param("memory", "5G", "200M", "1320000k", Change("1G", 80), "2376000k", id="gardener-scaledByWeight40"),
        pytest.param("memory", "5G", "200M", "1320000k", None, "33000000k", id="gardener-proportionalScaled"),
        pytest.param("memory", "500M", "500M", "340000k", None, "340000k", id="gardener-limitEquallyScaled"),
        pytest.param("memory", "5G", "200M", "3G", None, "75G", id="gardener-scaledByWeight100-memory"),
        pytest.param("cpu", "2", "300m", "500m", None, "3333m", id="gardener-scaledByWeight100-cpu"),
        pytest.param("cpu", "1", "500m", "800m", None, "1600m", id="ratio-kept"),
        pytest.param("cpu", "1", "300m", "500m", None, "1666m", id="ratio-floors-to-millicores"),
        pytest.param("memory", "3", "2", "1000001", None, "1501000", id="memory-limit-up-to-kilo"),
        pytest.param("cpu", None, "300m", "500m", None, None, id="no-limit-stays-none"),
        pytest.param("cpu", "0", "300m", "500m", None, None, id="zero-limit-is-none"),
        pytest.param("cpu", "1", None, "500m", None, "500m", id="no-request-follows"),
        pytest.param("cpu", "1", "300m", "500m", Change(), "1666m", id="empty-gap-is-ratio"),
        pytest.param("cpu", "1", "300m", "500m", Change(percentage=0), "1666m", id="zero-percent-is-ratio"),
        pytest.param("cpu", "1", "300m", "500m", Change(percentage=50), "750m", id="percentage"),
        pytest.param("cpu", "1", "300m", "500m", Change(value="200m"), "700m", id="value"),
        pytest.param("cpu", "1", "300m", "500m", Change("200m", 50), "750m", id="larger-of-both"),
        pytest.param("cpu", "1", "300m", "500m", Change("1", 50), "1500m", id="larger-of-both-value"),
    ],
)  # fmt: skip
def test_scale_limit(
    resource: str,
    old_limit: str | None,
    old_request: str | None,
    new_request: str,
    gap: Change | None,
    expected: str | None,
) -> None:
    limit, rule = scale_limit(
        resource, milli(old_limit), milli(old_request), parse_milli(new_request), gap
    )
    assert limit == milli(expected)
    assert rule


def change(container: str, resource: str, current: str, proposed: str) -> ResourceChange:
    now, then = parse_milli(current), parse_milli(proposed)
    return ResourceChange(container, resource, now, then, then, then - now, 100)


def test_gardener_scaled_by_weight_40() -> None:
    container = ContainerSpec("deployment", requests=res("300m", "200M"), limits=res("2", "5G"))
    result = apply_changes(
        container,
        [change("deployment", "memory", "200M", "1320000k")],
        ContainerTarget("deployment", res("500m", "3G")),
        GARDENER_GAP,
    )
    # Gardener's 1320000k and 2376000k, as written (each rounded up to a whole MiB)
    assert result.requests == res("300m", written_memory("1320000k"))
    assert result.limits == res("2", written_memory("2376000k"))
    assert result.changed


def test_gardener_requests_capped_to_fixed_limit() -> None:
    container = ContainerSpec("deployment", requests=res(memory="500M"), limits=res(memory="600M"))
    result = apply_changes(
        container,
        [change("deployment", "memory", "500M", "800M"), change("deployment", "cpu", "0", "500m")],
        ContainerTarget("deployment", res("500m", "800M"), controlled_values="RequestsOnly"),
        None,
    )
    assert result.requests == res("500m", "600M")
    assert result.limits == res(memory="600M")


def test_request_capped_to_limit_pushing_below_min_allowed_is_dropped() -> None:
    container = ContainerSpec("app", requests=res(memory="100M"), limits=res(memory="150M"))
    proposed = change("app", "memory", "100M", "300M")
    result = apply_changes(
        container,
        [proposed],
        ContainerTarget(
            "app",
            res(memory="300M"),
            min_allowed=res(memory="200M"),
            controlled_values="RequestsOnly",
        ),
        None,
    )
    assert result.requests == container.requests
    assert result.limits == container.limits
    assert result.dropped == (proposed,)
    assert not result.changed


def test_unchanged_resources_keep_their_limits() -> None:
    container = ContainerSpec("app", requests=res("1", "1G"), limits=res("2", "3G"))
    result = apply_changes(
        container, [change("app", "cpu", "1", "2")], ContainerTarget("app", res("2", "1G")), None
    )
    assert result.requests == res("2", "1G")
    assert result.limits == res("4", "3G")


amounts = st.integers(min_value=1, max_value=10**15)


@given(
    resource=st.sampled_from(["cpu", "memory"]),
    old_request=st.one_of(st.none(), amounts),
    old_limit=st.one_of(st.none(), amounts),
    proposed=amounts,
    low=st.one_of(st.none(), amounts),
    high=st.one_of(st.none(), amounts),
    requests_only=st.booleans(),
    gap=st.one_of(
        st.none(),
        st.builds(
            Change,
            value=st.one_of(st.none(), st.integers(0, 10**6).map(str)),
            percentage=st.one_of(st.none(), st.integers(0, 300)),
        ),
    ),
)
def test_no_request_above_its_limit_or_outside_the_policy(
    resource: str,
    old_request: int | None,
    old_limit: int | None,
    proposed: int,
    low: int | None,
    high: int | None,
    requests_only: bool,
    gap: Change | None,
) -> None:
    if old_request is not None and old_limit is not None and old_request > old_limit:
        old_request, old_limit = old_limit, old_request
    if low is not None and high is not None and low > high:
        low, high = high, low
    target = ContainerTarget(
        "app",
        Resources(cpu=proposed) if resource == "cpu" else Resources(memory=proposed),
        min_allowed=Resources(cpu=low, memory=low),
        max_allowed=Resources(cpu=high, memory=high),
        controlled_values="RequestsOnly" if requests_only else "RequestsAndLimits",
    )
    bounded = target.clamp(resource, proposed)
    request_before = Resources(cpu=old_request, memory=old_request)
    container = ContainerSpec(
        "app", requests=request_before, limits=Resources(cpu=old_limit, memory=old_limit)
    )
    current = old_request or 0
    step = ResourceChange("app", resource, current, bounded, bounded, bounded - current, 100)
    result = apply_changes(container, [step], target, Gap(gap, gap))
    request, limit = result.requests.get(resource), result.limits.get(resource)
    if result.changed:
        assert request is not None
        assert limit is None or request <= limit
        assert low is None or request >= low
        assert high is None or request <= high
    else:
        assert result.requests == request_before


# -- what is written: memory in whole MiB ------------------------------------------------------

MEBIBYTE = 1 << 20


def test_written_memory_is_a_whole_mebibyte_and_its_limit_scales_from_the_arithmetic() -> None:
    """Gardener's 672,138,000 bytes would read `672138k` in the Deployment; hvpa writes
    642Mi (641.0009 MiB rounded up). The limit keeps the old 2:1 ratio to the request
    the arithmetic gave (1,344,276,000 bytes), then is rounded on its own: 1283Mi
    (1282.002 MiB)."""
    container = ContainerSpec("app", requests=res(memory="500M"), limits=res(memory="1G"))
    result = apply_changes(
        container,
        [change("app", "memory", "500M", "672138k")],
        ContainerTarget("app", res(memory="700M")),
        None,
    )
    assert result.requests == res(memory="642Mi")
    assert result.limits == res(memory="1283Mi")
    assert "vertical: app memory: 672.138M rounded up to a whole MiB: 642Mi" in result.explanation


def test_a_request_rounded_past_max_allowed_is_max_allowed() -> None:
    container = ContainerSpec("app", requests=res(memory="500M"))
    result = apply_changes(
        container,
        [change("app", "memory", "500M", "1G")],
        ContainerTarget("app", res(memory="2G"), max_allowed=res(memory="1G")),
        None,
    )
    # 1G is 953.67 MiB: rounded up it would pass maxAllowed, so it stays the bound
    assert result.requests == res(memory="1G")


def test_cpu_is_written_as_computed() -> None:
    container = ContainerSpec("app", requests=res(cpu="500m"))
    result = apply_changes(
        container, [change("app", "cpu", "500m", "667m")], ContainerTarget("app", res("1")), None
    )
    assert result.requests == res(cpu="667m")


@given(st.integers(min_value=1, max_value=10**12).map(lambda kilobytes: kilobytes * 1000))
def test_every_computed_memory_request_is_whole_mebibytes(proposed_bytes: int) -> None:
    container = ContainerSpec("app", requests=res(memory="1"))
    proposed = ResourceChange(
        "app", "memory", 1000, proposed_bytes * 1000, proposed_bytes * 1000, 0, 100
    )
    result = apply_changes(container, [proposed], ContainerTarget("app", res(memory="1")), None)
    written = result.requests.memory
    assert written is not None
    assert written % (MEBIBYTE * 1000) == 0
    assert proposed_bytes * 1000 <= written < (proposed_bytes + MEBIBYTE) * 1000


def test_a_target_of_whole_mebibytes_is_written_as_it_is() -> None:
    """Weight 100 to a VPA target of 256Mi: Gardener's rounding gives 268436k, and rounding
    that up once more would write 257Mi; the exact 256Mi is written instead."""
    container = ContainerSpec("app", requests=res(memory="64Mi"))
    target = ContainerTarget("app", res(memory="256Mi"))
    proposed, _ = propose(target, "memory", parse_milli("64Mi"), 100)
    assert proposed is not None
    assert proposed.proposed == parse_milli("268436k")
    result = apply_changes(container, [proposed], target, None)
    assert result.requests == res(memory="256Mi")
    assert any("in place of 1000 bytes: 268.436M" in line for line in result.explanation)
