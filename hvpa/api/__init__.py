"""The Hvpa resource (`autoscaling.k8s.io/v1alpha1`): typed spec and status, defaults, validation.

How to read one::

    from hvpa.api import InvalidHvpa, apply_defaults, parse_hvpa, to_dict

    try:
        hvpa = parse_hvpa(obj)          # obj: the decoded manifest or API object (a dict)
    except InvalidHvpa as error:
        error.problems                  # every Problem; str(p) == "spec.hpa...maxReplicas: must be >= ..."
    effective = apply_defaults(hvpa)    # minReplicas 1, update modes Auto, strategy Weighted, ...
    to_dict(hvpa)                       # back to JSON form, as written (no defaults added)

`parse_hvpa` accepts Gardener's hvpa-controller manifests (autoscaling/v2beta1
metrics included), the HVPA proposal's three-stage form and hvpa's
extensions, and returns the model as written; `apply_defaults` is a separate
step so that writing an object back never adds what its author left out.
The model is frozen msgspec Structs (`Hvpa`, `HvpaSpec`, `HvpaStatus`,
`History`...); change one with `msgspec.structs.replace`.
"""

from hvpa.api.codec import parse_hvpa, to_dict
from hvpa.api.defaults import apply_defaults
from hvpa.api.problems import InvalidHvpa, Problem
from hvpa.api.resource import API_VERSION, GROUP, KIND, PLURAL, VERSION, Hvpa
from hvpa.api.spec import (
    CapacitySpec,
    ClusterProportional,
    HpaSpec,
    HpaTemplateSpec,
    HvpaSpec,
    MixedSpec,
    ScaleType,
    VpaSpec,
    WeightBasedScalingInterval,
)
from hvpa.api.status import (
    BlockedScaling,
    Condition,
    History,
    HvpaStatus,
    LastScaleTimes,
    ReplicaRecommendation,
    ResourceSample,
    ScaleEvent,
)

__all__ = [
    "API_VERSION",
    "GROUP",
    "KIND",
    "PLURAL",
    "VERSION",
    "BlockedScaling",
    "CapacitySpec",
    "ClusterProportional",
    "Condition",
    "History",
    "HpaSpec",
    "HpaTemplateSpec",
    "Hvpa",
    "HvpaSpec",
    "HvpaStatus",
    "InvalidHvpa",
    "LastScaleTimes",
    "MixedSpec",
    "Problem",
    "ReplicaRecommendation",
    "ResourceSample",
    "ScaleEvent",
    "ScaleType",
    "VpaSpec",
    "WeightBasedScalingInterval",
    "apply_defaults",
    "parse_hvpa",
    "to_dict",
]
