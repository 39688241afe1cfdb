"""Reading a VPA recommendation: trust by conditions, container policies, capping, weighted steps."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from hvpa.engine.vertical import (
    ContainerTarget,
    cap_to_policy,
    container_policy,
    min_change_threshold,
    policies_from_spec,
    propose_changes,
    read_recommendation,
    round_request,
    weighted_step,
)
from hvpa.quantity import parse_milli
from hvpa.records import (
    ContainerSpec,
    Resources,
    VpaContainerPolicy,
    VpaContainerRecommendation,
    VpaRecord,
)


def res(cpu: str | None = None, memory: str | None = None) -> Resources:
    return Resources(
        cpu=parse_milli(cpu) if cpu is not None else None,
        memory=parse_milli(memory) if memory is not None else None,
    )


def vpa(
    conditions: dict[str, str] | None = None,
    recommendations: tuple[VpaContainerRecommendation, ...] | None = (
        VpaContainerRecommendation("app", target=res("1", "2G")),
    ),
    policies: tuple[VpaContainerPolicy, ...] = (),
) -> VpaRecord:
    return VpaRecord(
        namespace="shop",
        name="web-vpa",
        uid="u",
        target_kind="Deployment",
        target_name="web",
        update_mode="Off",
        container_policies=policies,
        recommendations=recommendations,
        conditions={
            kind: (status, "Reason", "")
            for kind, status in (conditions or {"RecommendationProvided": "True"}).items()
        },
    )


APP = (ContainerSpec("app", requests=res("500m", "1G"), limits=res("1", "2G")),)


@pytest.mark.parametrize(
    ("conditions", "reason"),
    [
        pytest.param({"RecommendationProvided": "True"}, "", id="provided"),
        pytest.param({}, "", id="no-conditions-is-not-false"),
        pytest.param({"RecommendationProvided": "Unknown"}, "", id="unknown-is-not-false"),
        pytest.param(
            {"RecommendationProvided": "False"}, "RecommendationNotProvided", id="not-provided"
        ),
        pytest.param(
            {"RecommendationProvided": "True", "LowConfidence": "True"},
            "LowConfidence",
            id="low-confidence-after-provided",
        ),
        pytest.param(
            {"LowConfidence": "True", "RecommendationProvided": "True"},
            "LowConfidence",
            id="low-confidence-before-provided",
        ),
        pytest.param(
            {"RecommendationProvided": "True", "ConfigUnsupported": "True"},
            "ConfigUnsupported",
            id="config-unsupported",
        ),
        pytest.param(
            {"RecommendationProvided": "True", "LowConfidence": "False"}, "", id="confident"
        ),
        pytest.param(
            {"RecommendationProvided": "True", "ConfigDeprecated": "True"},
            "",
            id="deprecated-only-warns",
        ),
    ],
)
def test_trust_follows_conditions_in_any_order(conditions: dict[str, str], reason: str) -> None:
    recommendation = read_recommendation(vpa(conditions), APP)
    assert recommendation.hold_reason == reason
    assert recommendation.usable is (not reason)
    assert bool(recommendation.containers) is (not reason)


def test_deprecated_config_warns() -> None:
    recommendation = read_recommendation(
        vpa({"RecommendationProvided": "True", "ConfigDeprecated": "True"}), APP
    )
    assert recommendation.warnings
    assert "ConfigDeprecated" in recommendation.warnings[0]


@pytest.mark.parametrize(
    ("record", "reason"),
    [
        pytest.param(None, "NoVerticalPodAutoscaler", id="no-vpa"),
        pytest.param(vpa(recommendations=None), "NoRecommendation", id="no-recommendation"),
        pytest.param(vpa(recommendations=()), "NoRecommendation", id="empty-recommendation"),
    ],
)
def test_missing_recommendation_holds(record: VpaRecord | None, reason: str) -> None:
    recommendation = read_recommendation(record, APP)
    assert recommendation.hold_reason == reason
    assert recommendation.hold_message
    assert recommendation.containers == ()


EXACT = VpaContainerPolicy("app", min_allowed=res("2"))
DEFAULT = VpaContainerPolicy("*", min_allowed=res("3"))


@pytest.mark.parametrize(
    ("policies", "name", "expected"),
    [
        pytest.param((EXACT, DEFAULT), "app", EXACT, id="exact-first"),
        pytest.param((DEFAULT, EXACT), "app", EXACT, id="exact-wins-over-earlier-star"),
        pytest.param((DEFAULT, EXACT), "sidecar", DEFAULT, id="star-for-others"),
        pytest.param((EXACT,), "sidecar", None, id="none"),
    ],
)
def test_container_policy(
    policies: tuple[VpaContainerPolicy, ...], name: str, expected: VpaContainerPolicy | None
) -> None:
    assert container_policy(name, policies) is expected


@pytest.mark.parametrize(
    ("amounts", "policy", "expected"),
    [
        pytest.param(res("50m", "100M"), VpaContainerPolicy("*", min_allowed=res("100m", "200M")), res("100m", "200M"), id="raised-to-min"),
        pytest.param(res("5", "20G"), VpaContainerPolicy("*", max_allowed=res("4", "16G")), res("4", "16G"), id="lowered-to-max"),
        pytest.param(res("1"), VpaContainerPolicy("*", min_allowed=res("2"), max_allowed=res("1500m")), res("1500m"), id="max-wins-conflict"),
        pytest.param(res("1", "1G"), VpaContainerPolicy("*", min_allowed=res("0", "0")), res("1", "1G"), id="zero-bounds-unset"),
        pytest.param(res("1"), None, res("1"), id="no-policy"),
    ],
)  # fmt: skip
def test_cap_to_policy(
    amounts: Resources, policy: VpaContainerPolicy | None, expected: Resources
) -> None:
    assert cap_to_policy(amounts, policy) == expected


def test_policies_cap_the_target_and_bounds() -> None:
    record = vpa(
        recommendations=(
            VpaContainerRecommendation(
                "app",
                target=res("5", "100M"),
                lower_bound=res("4", "50M"),
                upper_bound=res("9", "300M"),
            ),
        ),
        policies=(VpaContainerPolicy("app", min_allowed=res(memory="200M"), max_allowed=res("4")),),
    )
    (target,) = read_recommendation(record, APP).containers
    assert target.target == res("4", "200M")
    assert target.lower_bound == res("4", "200M")
    assert target.upper_bound == res("4", "300M")


def test_mode_off_and_unknown_containers_are_left_alone() -> None:
    record = vpa(
        recommendations=(
            VpaContainerRecommendation("app", target=res("1")),
            VpaContainerRecommendation("sidecar", target=res("1")),
            VpaContainerRecommendation("gone", target=res("1")),
        ),
        policies=(VpaContainerPolicy("sidecar", mode="Off"),),
    )
    containers = (*APP, ContainerSpec("sidecar"), ContainerSpec("quiet"))
    recommendation = read_recommendation(record, containers)
    assert [t.name for t in recommendation.containers] == ["app"]
    text = "\n".join(recommendation.explanation)
    assert "sidecar: container policy mode Off" in text
    assert "quiet: no recommendation" in text
    assert "unknown container gone" in text


def test_explicit_policies_replace_the_vpa_ones() -> None:
    record = vpa(policies=(VpaContainerPolicy("app", max_allowed=res("100m")),))
    (target,) = read_recommendation(record, APP, policies=()).containers
    assert target.target == res("1", "2G")


@dataclass(frozen=True)
class PolicySpec:
    container_name: str
    mode: str | None = None
    min_allowed: dict[str, str | int | float] | None = None
    max_allowed: dict[str, str | int | float] | None = None
    controlled_resources: tuple[str, ...] | None = None
    controlled_values: str | None = None


def test_policies_from_spec() -> None:
    (policy,) = policies_from_spec(
        [
            PolicySpec(
                "etcd",
                min_allowed={"cpu": "100m", "memory": "500M"},
                max_allowed={"cpu": 4},
                controlled_resources=("memory",),
                controlled_values="RequestsOnly",
            )
        ]
    )
    assert policy == VpaContainerPolicy(
        "etcd",
        mode="Auto",
        min_allowed=res("100m", "500M"),
        max_allowed=res("4"),
        controlled_resources=("memory",),
        controlled_values="RequestsOnly",
    )
    (defaulted,) = policies_from_spec([PolicySpec("*")])
    assert defaulted == VpaContainerPolicy("*")


@pytest.mark.parametrize(
    ("resource", "current", "target", "weight", "step"),
    [
        pytest.param("cpu", "500m", "1", 60, "300m", id="cpu-60"),
        pytest.param("cpu", "300m", "500m", 40, "80m", id="gardener-cpu-40"),
        pytest.param("cpu", "300m", "301m", 40, "0", id="cpu-truncates-to-nothing"),
        pytest.param("cpu", "1", "999m", 50, "0", id="cpu-negative-truncates-toward-zero"),
        pytest.param("cpu", "1", "997m", 50, "-1m", id="cpu-negative-step"),
        pytest.param("memory", "200M", "3G", 40, "1120M", id="gardener-memory-40"),
        pytest.param("memory", "1G", "2G", 60, "600M", id="memory-60"),
        pytest.param("memory", "500M", "100M", 40, "-160M", id="gardener-memory-down"),
        pytest.param("memory", "0", "1001", 50, "500", id="memory-whole-bytes"),
        pytest.param("memory", "0", "1500m", 100, "2", id="memory-sub-byte-rounds-up"),
        pytest.param("memory", "1", "0", 100, "-1", id="memory-down-full"),
    ],
)
def test_weighted_step(resource: str, current: str, target: str, weight: int, step: str) -> None:
    assert weighted_step(
        resource, parse_milli(current), parse_milli(target), weight
    ) == parse_milli(step)


@pytest.mark.parametrize(
    ("resource", "amount", "expected"),
    [
        pytest.param("memory", "1320000001", "1320001k", id="memory-up-to-kilo"),
        pytest.param("memory", "1320000k", "1320000k", id="memory-exact"),
        pytest.param("cpu", "301m", "301m", id="cpu-unchanged"),
    ],
)
def test_round_request(resource: str, amount: str, expected: str) -> None:
    assert round_request(resource, parse_milli(amount)) == parse_milli(expected)


@dataclass(frozen=True)
class Change:
    value: str | None = None
    percentage: int | None = None


@pytest.mark.parametrize(
    ("params", "resource", "current", "expected"),
    [
        pytest.param(None, "cpu", "300m", "200m", id="default-cpu"),
        pytest.param(None, "memory", "200M", "200M", id="default-memory"),
        pytest.param(Change(), "memory", "200M", "200M", id="empty-is-default"),
        pytest.param(Change(value="100m"), "cpu", "300m", "100m", id="value"),
        pytest.param(Change(percentage=80), "cpu", "300m", "240m", id="percentage"),
        pytest.param(Change("100m", 80), "cpu", "300m", "100m", id="gardener-both-value-smaller"),
        pytest.param(Change("100M", 80), "memory", "100M", "80M", id="both-percentage-smaller"),
        pytest.param(Change(percentage=80), "cpu", "0", "0", id="percentage-of-no-request"),
        pytest.param(Change(percentage=10), "cpu", "5m", "0", id="percentage-floors"),
    ],
)
def test_min_change_threshold(
    params: Change | None, resource: str, current: str, expected: str
) -> None:
    assert min_change_threshold(params, resource, parse_milli(current)) == parse_milli(expected)


def test_propose_changes_weighs_each_direction() -> None:
    containers = (ContainerSpec("app", requests=res("1", "2G")),)
    target = ContainerTarget("app", target=res("2", "1G"), controlled=("cpu", "memory"))
    changes, lines = propose_changes(containers, (target,), weight_up=100, weight_down=0)
    cpu, memory = changes
    assert (cpu.direction, cpu.proposed, cpu.moves) == ("up", parse_milli("2"), True)
    assert (memory.direction, memory.proposed, memory.moves) == ("down", parse_milli("2G"), False)
    assert len(lines) == 2


def test_propose_changes_only_controlled_and_known() -> None:
    containers = (ContainerSpec("app", requests=res("1", "2G")), ContainerSpec("other"))
    target = ContainerTarget("app", target=res("2", "1G"), controlled=("memory",))
    changes, _ = propose_changes(containers, (target,), 50, 50)
    assert [(c.container, c.resource) for c in changes] == [("app", "memory")]


def test_propose_changes_keeps_policy_bounds_and_missing_request_is_zero() -> None:
    containers = (ContainerSpec("app", requests=res(cpu="50m")),)
    target = ContainerTarget(
        "app", target=res("100m", "1G"), min_allowed=res("100m"), max_allowed=res(memory="400M")
    )
    cpu, memory = propose_changes(containers, (target,), 40, 40)[0]
    assert cpu.proposed == parse_milli("100m")
    assert (memory.current, memory.step, memory.proposed) == (
        0,
        parse_milli("400M"),
        parse_milli("400M"),
    )


def test_at_target_is_no_change() -> None:
    containers = (ContainerSpec("app", requests=res("1", "1G")),)
    changes, lines = propose_changes(containers, (ContainerTarget("app", res("1", "1G")),), 50, 50)
    assert changes == ()
    assert all("at target" in line for line in lines)
