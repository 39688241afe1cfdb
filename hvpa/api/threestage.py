"""The HVPA proposal's three-stage form, converted to Gardener's weight intervals when an Hvpa is read.

The proposal writes `stageTwoStartReplicaCount` (x1), `stageTwoStopReplicaCount`
(x2), three VPA weights as fractions, an autoscaling/v1 `hpaSpec` and a VPA
`vpaSpec`. It becomes, in this order (Gardener takes the first interval that
matches, so a boundary count belongs to the earlier stage):

    stage 1  [minReplicas, x1]          firstStageVpaWeight * 100   (only with x1)
    stage 2  [x1 or min, x2 or max]     secondStageVpaWeight * 100
    stage 3  [x2, maxReplicas]          thirdStageVpaWeight * 100   (only with x2)

Weights are kept to whole percent (Gardener's unit), rounding half up. Without
x2 the third weight has no stage and is not used: past maxReplicas the engine
scales vertically anyway (docs/strategies.md).

`hpaSpec` becomes `hpa{deploy: true, template.spec{minReplicas, maxReplicas,
metrics}}` with `targetCPUUtilizationPercentage` as a CPU Utilization metric,
and `targetRef` comes from its `scaleTargetRef`; `vpaSpec` becomes `vpa{deploy:
true, template.spec.resourcePolicy}`. Inside `hpaSpec` and `vpaSpec` keys match
case-insensitively (`MinAllowed`), because the proposal embedded Go API types
there and Go's JSON decoder matches field names that way; everywhere else keys
are exact. The VPA hvpa creates always runs with updateMode Off, so `vpaSpec`
may only say Off.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from typing import Annotated, Any, Final, Literal

import msgspec

from hvpa.api.autoscaling import CrossVersionObjectReference
from hvpa.api.base import Model, NonNegative, Positive, plain
from hvpa.api.spec import PodResourcePolicy
from hvpa.api.structure import Walk

__all__ = [
    "THREE_STAGE_FIELDS",
    "HorizontalPodAutoscalerSpecV1",
    "ThreeStageSpec",
    "VerticalPodAutoscalerSpecV1",
    "normalise_spec",
    "stage_weight_percent",
]

StageWeight = Annotated[float, msgspec.Meta(ge=0, le=1)]


class HorizontalPodAutoscalerSpecV1(Model, frozen=True, kw_only=True):
    min_replicas: NonNegative | None = None
    """The fewest replicas; default 1."""
    max_replicas: Positive
    """The most replicas."""
    scale_target_ref: CrossVersionObjectReference
    """The workload to scale (becomes spec.targetRef)."""
    target_cpu_utilization_percentage: Positive | None = msgspec.field(
        default=None, name="targetCPUUtilizationPercentage"
    )
    """Target average CPU utilization, percent of requests."""


class VpaUpdatePolicy(Model, frozen=True, kw_only=True):
    update_mode: Literal["Off", "Initial", "Recreate", "Auto", "InPlaceOrRecreate"] | None = None
    """Must be Off: hvpa applies the recommendations itself."""


class VerticalPodAutoscalerSpecV1(Model, frozen=True, kw_only=True):
    resource_policy: PodResourcePolicy | None = None
    """Container policies."""
    update_policy: VpaUpdatePolicy | None = None
    """Must say Off, or be left out."""


class ThreeStageSpec(Model, frozen=True, kw_only=True):
    """The proposal's fields; they sit in `spec` next to hvpa's extensions."""

    stage_two_start_replica_count: Positive | None = None
    """The proposal's three-stage form: where stage two begins (stage one runs from minReplicas
    to here).
    """
    stage_two_stop_replica_count: Positive | None = None
    """The proposal's three-stage form: where stage two ends (stage three runs from here to
    maxReplicas).
    """
    first_stage_vpa_weight: StageWeight | None = None
    """The proposal's three-stage form: the VPA weight in stage one, a fraction 0 to 1."""
    second_stage_vpa_weight: StageWeight | None = None
    """The proposal's three-stage form: the VPA weight in stage two, a fraction 0 to 1."""
    third_stage_vpa_weight: StageWeight | None = None
    """The proposal's three-stage form: the VPA weight in stage three, a fraction 0 to 1."""
    hpa_spec: HorizontalPodAutoscalerSpecV1 | None = None
    """The proposal's three-stage form: an autoscaling/v1 HorizontalPodAutoscaler spec (keys
    match in any case).
    """
    vpa_spec: VerticalPodAutoscalerSpecV1 | None = None
    """The proposal's three-stage form: a VerticalPodAutoscaler spec (keys match in any case)."""


THREE_STAGE_FIELDS: Final = (
    "stageTwoStartReplicaCount",
    "stageTwoStopReplicaCount",
    "firstStageVpaWeight",
    "secondStageVpaWeight",
    "thirdStageVpaWeight",
    "hpaSpec",
    "vpaSpec",
)
# Gardener fields the three-stage form writes itself.
_REPLACED: Final = ("hpa", "vpa", "weightBasedScalingIntervals", "targetRef")


def stage_weight_percent(weight: float | None) -> int:
    """A 0..1 fraction as Gardener's whole percent (0.4 -> 40, never 40.000000000000004)."""
    if weight is None:
        return 0
    return int((Decimal(str(weight)) * 100).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def normalise_spec(raw: dict[str, Any], path: str, walk: Walk) -> dict[str, Any] | None:
    """`spec` in Gardener's form: unchanged when it has no three-stage field."""
    if not any(key in raw for key in THREE_STAGE_FIELDS):
        return raw
    findings = walk.findings
    out = {key: value for key, value in raw.items() if key not in THREE_STAGE_FIELDS}
    for key in _REPLACED:
        if key in out:
            findings.structural(
                f"{path}.{key}",
                "cannot be combined with the three-stage form (hpaSpec, stageTwoStartReplicaCount, ...), "
                "which sets it itself",
            )
            del out[key]
    numbers = {key: raw[key] for key in THREE_STAGE_FIELDS[:5] if key in raw}
    stages: ThreeStageSpec = walk.read(numbers, ThreeStageSpec, path)
    if raw.get("hpaSpec") is None:
        findings.structural(f"{path}.hpaSpec", "required by the three-stage form")
        return None
    hpa: HorizontalPodAutoscalerSpecV1 = walk.read(
        raw["hpaSpec"], HorizontalPodAutoscalerSpecV1, f"{path}.hpaSpec", fold_case=True
    )
    vpa: VerticalPodAutoscalerSpecV1 = walk.read(
        raw.get("vpaSpec") or {}, VerticalPodAutoscalerSpecV1, f"{path}.vpaSpec", fold_case=True
    )
    mode = vpa.update_policy.update_mode if vpa.update_policy else None
    if mode not in (None, "Off"):
        findings.add(
            f"{path}.vpaSpec.updatePolicy.updateMode",
            "must be Off: hvpa applies the VPA's recommendations itself, and a VPA updater would fight it",
        )

    out["targetRef"] = plain(hpa.scale_target_ref)
    out["hpa"] = {"deploy": True, "template": {"spec": _hpa_template_spec(hpa)}}
    out["vpa"] = {"deploy": True}
    if vpa.resource_policy is not None:
        out["vpa"]["template"] = {"spec": {"resourcePolicy": plain(vpa.resource_policy)}}
    intervals = _intervals(stages, hpa, path, walk) if findings.clean(f"{path}.hpaSpec") else []
    if intervals:
        out["weightBasedScalingIntervals"] = intervals

    for model_path, written_path, whole in (
        ("targetRef", "hpaSpec.scaleTargetRef", False),
        ("hpa", "hpaSpec", True),
        ("hpa.template.spec", "hpaSpec", False),
        ("hpa.template.spec.metrics", "hpaSpec.targetCPUUtilizationPercentage", True),
        ("vpa", "vpaSpec", True),
        ("vpa.template.spec", "vpaSpec", False),
        ("weightBasedScalingIntervals", "stageTwoStartReplicaCount", True),
    ):
        findings.alias(f"{path}.{model_path}", f"{path}.{written_path}", whole=whole)
    return out


def _hpa_template_spec(hpa: HorizontalPodAutoscalerSpecV1) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if hpa.min_replicas is not None:
        spec["minReplicas"] = hpa.min_replicas
    spec["maxReplicas"] = hpa.max_replicas
    if hpa.target_cpu_utilization_percentage is not None:
        target = {
            "type": "Utilization",
            "averageUtilization": hpa.target_cpu_utilization_percentage,
        }
        spec["metrics"] = [{"type": "Resource", "resource": {"name": "cpu", "target": target}}]
    return spec


def _intervals(
    stages: ThreeStageSpec, hpa: HorizontalPodAutoscalerSpecV1, path: str, walk: Walk
) -> list[dict[str, int]]:
    """The weight intervals; none when the stage bounds are wrong (their problems are reported)."""
    low = 1 if hpa.min_replicas is None else hpa.min_replicas
    high = hpa.max_replicas
    start, stop = stages.stage_two_start_replica_count, stages.stage_two_stop_replica_count
    ok = True
    for key, count in (("stageTwoStartReplicaCount", start), ("stageTwoStopReplicaCount", stop)):
        if count is None:
            continue
        if count < low:
            walk.findings.add(f"{path}.{key}", f"must be >= hpaSpec.minReplicas ({low})")
            ok = False
        if count > high:
            walk.findings.add(f"{path}.{key}", f"must be <= hpaSpec.maxReplicas ({high})")
            ok = False
    if start is not None and stop is not None and stop < start:
        walk.findings.add(
            f"{path}.stageTwoStopReplicaCount", f"must be >= stageTwoStartReplicaCount ({start})"
        )
        ok = False
    if not ok:
        return []
    intervals: list[dict[str, int]] = []
    if start is not None:
        intervals.append(_interval(stages.first_stage_vpa_weight, low, start))
    intervals.append(
        _interval(
            stages.second_stage_vpa_weight,
            low if start is None else start,
            high if stop is None else stop,
        )
    )
    if stop is not None:
        intervals.append(_interval(stages.third_stage_vpa_weight, stop, high))
    return intervals


def _interval(weight: float | None, start: int, last: int) -> dict[str, int]:
    return {
        "vpaWeight": stage_weight_percent(weight),
        "startReplicaCount": start,
        "lastReplicaCount": last,
    }
