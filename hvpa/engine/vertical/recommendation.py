"""The vertical recommendation: what a VPA object's status says each container should request.

hvpa never runs a recommender of its own for the vertical axis: it reads the
`status.recommendation` of a VerticalPodAutoscaler in updateMode `Off` and
re-applies that VPA's container policies, as upstream's capping does
(vertical-pod-autoscaler pkg/utils/vpa/capping.go), so a recommendation
computed before the policy last changed still lands inside the allowed range.

A recommendation is trusted only when it exists, `RecommendationProvided` is
not False and neither `ConfigUnsupported` nor `LowConfidence` is True. The
conditions are read as a set: Gardener's loop stopped at the first
`RecommendationProvided=True` and so missed a `LowConfidence=True` listed
after it. `ConfigDeprecated` only warns (Gardener refused the recommendation).
Anything else holds the vertical axis with a reason: no data never means
"scale to minAllowed".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Final, Protocol

from hvpa.quantity import format_human_resource, parse_milli
from hvpa.records import (
    CPU,
    MEMORY,
    NO_RESOURCES,
    ContainerSpec,
    Resources,
    VpaContainerPolicy,
    VpaContainerRecommendation,
    VpaRecord,
)

__all__ = [
    "DEFAULT_CONTAINER_POLICY",
    "REQUESTS_AND_LIMITS",
    "REQUESTS_ONLY",
    "RESOURCES",
    "ContainerTarget",
    "VerticalRecommendation",
    "amounts",
    "cap_to_policy",
    "container_policy",
    "describe",
    "policies_from_spec",
    "policy_target",
    "read_recommendation",
]

RESOURCES: Final = (CPU, MEMORY)
DEFAULT_CONTAINER_POLICY: Final = "*"
REQUESTS_AND_LIMITS: Final = "RequestsAndLimits"
REQUESTS_ONLY: Final = "RequestsOnly"
MODE_OFF: Final = "Off"

# Hold reasons, also used as condition reasons.
NO_VPA: Final = "NoVerticalPodAutoscaler"
NOT_OWNED: Final = "VerticalPodAutoscalerNotOwned"
NO_RECOMMENDATION: Final = "NoRecommendation"
NOT_PROVIDED: Final = "RecommendationNotProvided"
CONFIG_UNSUPPORTED: Final = "ConfigUnsupported"
LOW_CONFIDENCE: Final = "LowConfidence"


@dataclass(frozen=True, slots=True)
class ContainerTarget:
    """One container's recommendation after its policy, in milli-units.

    `target` is what the strategies move towards; `lower_bound` and
    `upper_bound` are kept for rules that need a band. Only the resources in
    `controlled` may change, and with `controlled_values == "RequestsOnly"`
    the limits stay as they are.
    """

    name: str
    target: Resources
    lower_bound: Resources = NO_RESOURCES
    upper_bound: Resources = NO_RESOURCES
    min_allowed: Resources = NO_RESOURCES
    max_allowed: Resources = NO_RESOURCES
    controlled: tuple[str, ...] = RESOURCES
    controlled_values: str = REQUESTS_AND_LIMITS

    def controls(self, resource: str) -> bool:
        return resource in self.controlled

    def clamp(self, resource: str, milli: int) -> int:
        """Into [minAllowed, maxAllowed]; max wins when the two conflict, as upstream."""
        return _clamp(milli, self.min_allowed.get(resource), self.max_allowed.get(resource))


def _clamp(milli: int, low: int | None, high: int | None) -> int:
    """Raised to `low`, then lowered to `high`; a zero or missing bound is unset."""
    if low:
        milli = max(milli, low)
    if high:
        milli = min(milli, high)
    return milli


@dataclass(frozen=True, slots=True)
class VerticalRecommendation:
    """What the vertical axis may use this decision.

    `hold_reason` is set when the whole axis must hold for lack of a
    trustworthy recommendation; `containers` is then empty.
    """

    containers: tuple[ContainerTarget, ...]
    hold_reason: str = ""
    hold_message: str = ""
    warnings: tuple[str, ...] = ()
    explanation: tuple[str, ...] = ()

    @property
    def usable(self) -> bool:
        return not self.hold_reason


class ContainerPolicySpec(Protocol):
    """A container policy as `vpa.template.spec.resourcePolicy` writes it (quantities as strings)."""

    @property
    def container_name(self) -> str: ...

    @property
    def mode(self) -> str | None: ...

    @property
    def min_allowed(self) -> Mapping[str, str | int | float] | None: ...

    @property
    def max_allowed(self) -> Mapping[str, str | int | float] | None: ...

    @property
    def controlled_resources(self) -> Sequence[str] | None: ...

    @property
    def controlled_values(self) -> str | None: ...


def amounts(cpu: str | int | float | None, memory: str | int | float | None) -> Resources:
    """CPU and memory quantities as written (either may be missing) in milli-units."""
    return Resources(
        cpu=None if cpu is None else parse_milli(cpu),
        memory=None if memory is None else parse_milli(memory),
    )


def _amounts(written: Mapping[str, str | int | float] | None) -> Resources:
    if not written:
        return NO_RESOURCES
    return amounts(written.get(CPU), written.get(MEMORY))


def policies_from_spec(policies: Sequence[ContainerPolicySpec]) -> tuple[VpaContainerPolicy, ...]:
    """The Hvpa's VPA template policies in the form read_recommendation takes.

    hvpa owns the VPA it creates from `vpa.template`, so the template is the
    policy to honour even before the VPA object has caught up with an edit.
    """
    return tuple(
        VpaContainerPolicy(
            container_name=policy.container_name,
            mode=policy.mode or "Auto",
            min_allowed=_amounts(policy.min_allowed),
            max_allowed=_amounts(policy.max_allowed),
            controlled_resources=tuple(policy.controlled_resources)
            if policy.controlled_resources is not None
            else RESOURCES,
            controlled_values=policy.controlled_values or REQUESTS_AND_LIMITS,
        )
        for policy in policies
    )


def describe(resources: Resources) -> str:
    """`cpu 500m, memory 641Mi` for explanation lines; `none` when nothing is set."""
    parts = [
        f"{resource} {format_human_resource(resource, amount)}"
        for resource in RESOURCES
        if (amount := resources.get(resource)) is not None
    ]
    return ", ".join(parts) or "none"


def container_policy(
    name: str, policies: Sequence[VpaContainerPolicy]
) -> VpaContainerPolicy | None:
    """The policy for a container: its own name wins over `*`, wherever each is listed.

    Same as upstream GetContainerResourcePolicy (the last `*` when several);
    Gardener took whichever of the two came first in the list.
    """
    default = None
    for policy in policies:
        if policy.container_name == name:
            return policy
        if policy.container_name == DEFAULT_CONTAINER_POLICY:
            default = policy
    return default


def cap_to_policy(resources: Resources, policy: VpaContainerPolicy | None) -> Resources:
    """Each amount raised to minAllowed, then lowered to maxAllowed; zero bounds mean unset."""
    if policy is None:
        return resources
    amounts: dict[str, int | None] = {}
    for resource in RESOURCES:
        amount = resources.get(resource)
        if amount is not None:
            amount = _clamp(
                amount, policy.min_allowed.get(resource), policy.max_allowed.get(resource)
            )
        amounts[resource] = amount
    return Resources(cpu=amounts[CPU], memory=amounts[MEMORY])


def policy_target(name: str, policy: VpaContainerPolicy | None) -> ContainerTarget | None:
    """A container under its policy: its bounds and what it controls, no amounts yet.

    None when the policy's mode is Off (the container is left as it is);
    without a policy the container is unbounded and controls both resources.
    """
    if policy is None:
        return ContainerTarget(name, NO_RESOURCES)
    if policy.mode == MODE_OFF:
        return None
    return ContainerTarget(
        name,
        NO_RESOURCES,
        min_allowed=policy.min_allowed,
        max_allowed=policy.max_allowed,
        controlled=tuple(r for r in RESOURCES if r in policy.controlled_resources),
        controlled_values=policy.controlled_values,
    )


def _condition(conditions: Mapping[str, tuple[str, str, str]], kind: str) -> str:
    status = conditions.get(kind)
    return status[0] if status else ""


def _untrusted(vpa: VpaRecord) -> tuple[str, str] | None:
    conditions = vpa.conditions
    where = f"VerticalPodAutoscaler {vpa.namespace}/{vpa.name}"
    if _condition(conditions, "ConfigUnsupported") == "True":
        detail = conditions["ConfigUnsupported"][2]
        return CONFIG_UNSUPPORTED, f"{where} reports ConfigUnsupported=True {detail}".rstrip()
    if _condition(conditions, "LowConfidence") == "True":
        return LOW_CONFIDENCE, f"{where} reports LowConfidence=True: too little history yet"
    if _condition(conditions, "RecommendationProvided") == "False":
        reason = conditions["RecommendationProvided"][1]
        return NOT_PROVIDED, f"{where} reports RecommendationProvided=False {reason}".rstrip()
    if not vpa.recommendations:
        return NO_RECOMMENDATION, f"{where} has no recommendation yet"
    return None


def read_recommendation(
    vpa: VpaRecord | None,
    containers: Sequence[ContainerSpec],
    policies: Sequence[VpaContainerPolicy] | None = None,
    name_taken: str = "",
) -> VerticalRecommendation:
    """The per-container targets hvpa may move the target's containers towards.

    `policies` defaults to the VPA's own `spec.resourcePolicy`; pass the Hvpa's
    `vpa.template.spec.resourcePolicy` when the VPA object may lag behind it.
    Containers the VPA says nothing about, or whose policy mode is Off, are
    left as they are. Without a VPA, `name_taken` (`Snapshot.vpa_name_taken`)
    says the one hvpa would create cannot be, and why.
    """
    if vpa is None and name_taken:
        message = (
            f"{name_taken} holds the name of the VPA hvpa creates for this Hvpa, and hvpa "
            "does not take over a VPA it does not own: delete or rename that VPA and hvpa "
            "creates its own"
        )
        return VerticalRecommendation((), NOT_OWNED, message, explanation=(f"vertical: {message}",))
    if vpa is None:
        message = "no VerticalPodAutoscaler for the target yet"
        return VerticalRecommendation((), NO_VPA, message, explanation=(f"vertical: {message}",))
    where = f"VerticalPodAutoscaler {vpa.namespace}/{vpa.name}"
    conditions = ", ".join(f"{kind}={status[0]}" for kind, status in sorted(vpa.conditions.items()))
    lines = [
        f"vertical: {where} (updateMode {vpa.update_mode}), conditions: {conditions or 'none'}"
    ]
    warnings: list[str] = []
    if _condition(vpa.conditions, "ConfigDeprecated") == "True":
        warning = f"{where} reports ConfigDeprecated=True; its recommendation is still used"
        warnings.append(warning)
        lines.append(f"vertical: warning: {warning}")
    untrusted = _untrusted(vpa)
    if untrusted is not None:
        reason, message = untrusted
        lines.append(f"vertical: hold ({reason}): {message}")
        return VerticalRecommendation((), reason, message, tuple(warnings), tuple(lines))

    recommendations = {r.container_name: r for r in vpa.recommendations or ()}
    policy_list = vpa.container_policies if policies is None else tuple(policies)
    targets = []
    for container in containers:
        recommendation = recommendations.get(container.name)
        if recommendation is None:
            lines.append(f"vertical: {container.name}: no recommendation, left as is")
            continue
        target, explanation = _container_target(container.name, recommendation, policy_list)
        lines.extend(explanation)
        if target is not None:
            targets.append(target)
    known = {c.name for c in containers}
    lines.extend(
        f"vertical: recommendation for unknown container {name} ignored"
        for name in recommendations
        if name not in known
    )
    return VerticalRecommendation(
        tuple(targets), warnings=tuple(warnings), explanation=tuple(lines)
    )


def _container_target(
    name: str,
    recommendation: VpaContainerRecommendation,
    policies: Sequence[VpaContainerPolicy],
) -> tuple[ContainerTarget | None, list[str]]:
    policy = container_policy(name, policies)
    lines = [
        f"vertical: {name}: VPA target {describe(recommendation.target)} "
        f"(lowerBound {describe(recommendation.lower_bound)}; "
        f"upperBound {describe(recommendation.upper_bound)})"
    ]
    if policy is None:
        lines.append(f"vertical: {name}: no container policy")
    else:
        lines.append(
            f"vertical: {name}: policy {policy.container_name!r}: mode {policy.mode}, "
            f"minAllowed {describe(policy.min_allowed)}, maxAllowed {describe(policy.max_allowed)}, "
            f"controlledResources {list(policy.controlled_resources)}, "
            f"controlledValues {policy.controlled_values}"
        )
    bounded = policy_target(name, policy)
    if bounded is None:
        lines.append(f"vertical: {name}: container policy mode Off, left as is")
        return None, lines
    target = cap_to_policy(recommendation.target, policy)
    if target != recommendation.target:
        lines.append(f"vertical: {name}: target capped to the policy: {describe(target)}")
    return replace(
        bounded,
        target=target,
        lower_bound=cap_to_policy(recommendation.lower_bound, policy),
        upper_bound=cap_to_policy(recommendation.upper_bound, policy),
    ), lines
