"""The vertical axis: VPA recommendations read under their policies, weighted steps, limits.

Nothing here decides whether a step happens: the strategies pick the weight
and the gates let it through or not. This package only knows how to read a
recommendation and how to turn an accepted step into requests and limits.
"""

from .limits import ContainerResources, apply_changes, scale_limit
from .recommendation import (
    ContainerTarget,
    VerticalRecommendation,
    amounts,
    cap_to_policy,
    container_policy,
    describe,
    policies_from_spec,
    policy_target,
    read_recommendation,
)
from .requests import (
    ChangeParams,
    Direction,
    ResourceChange,
    ScaleParams,
    change_params,
    clears_min_change,
    min_change_threshold,
    propose_changes,
    round_request,
    weighted_step,
)

__all__ = [
    "ChangeParams",
    "ContainerResources",
    "ContainerTarget",
    "Direction",
    "ResourceChange",
    "ScaleParams",
    "VerticalRecommendation",
    "amounts",
    "apply_changes",
    "cap_to_policy",
    "change_params",
    "clears_min_change",
    "container_policy",
    "describe",
    "min_change_threshold",
    "policies_from_spec",
    "policy_target",
    "propose_changes",
    "read_recommendation",
    "round_request",
    "scale_limit",
    "weighted_step",
]
