"""The values an Hvpa means where its author wrote nothing.

A separate step from parsing, so that an object written back to the API
server (or printed by `hvpa validate`) carries only what its author wrote,
while the engine sees every value filled in. Gardener's defaults where
Gardener has one, upstream HPA's for the HPA template, hvpa's own for the
extensions (docs/engine.md, docs/strategies.md).
"""

from __future__ import annotations

from typing import Any, Final

from msgspec.structs import replace

from hvpa.api.autoscaling import MetricSpec, MetricTarget, ResourceMetricSource
from hvpa.api.resource import Hvpa
from hvpa.api.spec import (
    CapacitySpec,
    HpaSpec,
    HvpaSpec,
    LabelSelectorSpec,
    MixedSpec,
    ScaleType,
    UpdatePolicy,
    VpaSpec,
    WeightBasedScalingInterval,
)

__all__ = [
    "DEFAULT_CPU_UTILIZATION",
    "DEFAULT_MIN_REPLICAS",
    "DEFAULT_RESIZE_MODE",
    "DEFAULT_STRATEGY",
    "DEFAULT_UPDATE_MODE",
    "apply_defaults",
    "default_spec",
]

DEFAULT_STRATEGY: Final = "Weighted"
DEFAULT_UPDATE_MODE: Final = "Auto"
# Absent means what hvpa did before the in-place modes, and Gardener always did.
DEFAULT_RESIZE_MODE: Final = "Rollout"
DEFAULT_MIN_REPLICAS: Final = 1
# Upstream HPA's metric when none is given (Gardener: "80% average CPU utilization").
DEFAULT_CPU_UTILIZATION: Final = 80
CAPACITY_TOLERANCE_PERCENT: Final = 10
# Measured with hvpa sim --compare (docs/strategies.md): at 20% the ramp rolls 6 times and
# diurnal 14; 40% changes no figure by more than a point; 30% keeps pods nearer the curve.
CAPACITY_RESIZE_TOLERANCE_PERCENT: Final = 30
# The band when pods are resized in place (spec.vpa.resizeMode InPlaceOrRollout or InPlace), where a
# resize replaces no pod. Measured likewise (docs/strategies.md, In place; seed 1): mixed against
# 30% (5.5 points of CPU behind on ramp, 1.4 ahead on diurnal, even on noisy); 10% resizes 2-5
# times as often and adds half a minute of under-provisioning on noisy.
CAPACITY_IN_PLACE_RESIZE_TOLERANCE_PERCENT: Final = 20
CAPACITY_SCALE_DOWN_STABILIZATION_SECONDS: Final = 300
# Over the load, for a resource the HPA template has no target for (memory, usually). Measured with
# hvpa sim (docs/strategies.md, "Headroom"): at 15% a random walk outran the pods' memory
# (noisy, seeds 1-5: one to fourteen ticks more than the better of Weighted and HpaPreferred on
# three seeds of five; at 25%, two ticks more on one).
CAPACITY_HEADROOM_PERCENT: Final = 25
CAPACITY_DEMAND_PERCENTILE: Final = 90
CAPACITY_DEMAND_WINDOW_SECONDS: Final = 600


def apply_defaults(hvpa: Hvpa) -> Hvpa:
    """The same Hvpa with every default filled in; call it on a parsed (valid) Hvpa.

    Filled in: strategy Weighted; every update mode Auto; resize mode Rollout; minReplicas 1; an
    80% CPU Utilization metric when the HPA is deployed without metrics or a
    cluster-proportional rule; hpa/vpa selectors from their template labels
    (Gardener: "If empty, defaulted to labels on HPA template"); a weight
    interval's missing (or 0) start and last counts from minReplicas and
    maxReplicas; Mixed's thresholds 0 and preference Hpa; Capacity's
    tolerance 10%, resize tolerance 30%, demand percentile 90 and demand window 600 s (its
    scale-down stabilization stays unset: the engine reads the HPA template's then, so one
    setting is not shadowed by a default of the other's).
    """
    return replace(hvpa, spec=default_spec(hvpa.spec))


def default_spec(spec: HvpaSpec) -> HvpaSpec:
    """The spec with its defaults (all apply_defaults reads of an Hvpa)."""
    hpa = _hpa(spec.hpa, with_default_metric=spec.cluster_proportional is None)
    template_spec = hpa.template.spec
    low = template_spec.min_replicas if template_spec is not None else None
    high = template_spec.max_replicas if template_spec is not None else None
    return replace(
        spec,
        strategy=spec.strategy or DEFAULT_STRATEGY,
        hpa=hpa,
        vpa=_vpa(spec.vpa),
        weight_based_scaling_intervals=tuple(
            _interval(interval, low, high) for interval in spec.weight_based_scaling_intervals
        ),
        mixed=_mixed(spec.mixed) if spec.mixed is not None else None,
        capacity=_capacity(spec.capacity) if spec.capacity is not None else None,
    )


def _hpa(hpa: HpaSpec, *, with_default_metric: bool) -> HpaSpec:
    template = hpa.template
    if template.spec is not None:
        metrics = template.spec.metrics
        if not metrics and hpa.deploy and with_default_metric:
            target = MetricTarget(type="Utilization", average_utilization=DEFAULT_CPU_UTILIZATION)
            metrics = (
                MetricSpec(
                    type="Resource", resource=ResourceMetricSource(name="cpu", target=target)
                ),
            )
        spec = replace(
            template.spec,
            min_replicas=DEFAULT_MIN_REPLICAS
            if template.spec.min_replicas is None
            else template.spec.min_replicas,
            metrics=metrics,
        )
        template = replace(template, spec=spec)
    return replace(
        hpa,
        selector=_selector(hpa.selector, template.metadata),
        scale_up=_scale_type(hpa.scale_up),
        scale_down=_scale_type(hpa.scale_down),
        template=template,
    )


def _vpa(vpa: VpaSpec) -> VpaSpec:
    return replace(
        vpa,
        selector=_selector(vpa.selector, vpa.template.metadata),
        scale_up=_scale_type(vpa.scale_up),
        scale_down=_scale_type(vpa.scale_down),
        resize_mode=vpa.resize_mode or DEFAULT_RESIZE_MODE,
    )


def _selector(
    selector: LabelSelectorSpec | None, metadata: dict[str, Any] | None
) -> LabelSelectorSpec | None:
    labels = (metadata or {}).get("labels")
    if selector is not None or not isinstance(labels, dict) or not labels:
        return selector
    return LabelSelectorSpec(match_labels={str(k): str(v) for k, v in labels.items()})


def _scale_type(scale: ScaleType | None) -> ScaleType:
    scale = scale or ScaleType()
    mode = scale.update_policy.update_mode if scale.update_policy else None
    if mode is not None:
        return scale
    return replace(scale, update_policy=UpdatePolicy(update_mode=DEFAULT_UPDATE_MODE))


def _interval(
    interval: WeightBasedScalingInterval, low: int | None, high: int | None
) -> WeightBasedScalingInterval:
    return replace(
        interval,
        start_replica_count=interval.start_replica_count or low,
        last_replica_count=interval.last_replica_count or high,
    )


def _mixed(mixed: MixedSpec) -> MixedSpec:
    return replace(
        mixed,
        replica_threshold=0 if mixed.replica_threshold is None else mixed.replica_threshold,
        cpu_threshold="0" if mixed.cpu_threshold is None else mixed.cpu_threshold,
        memory_threshold="0" if mixed.memory_threshold is None else mixed.memory_threshold,
        prefer=mixed.prefer or "Hpa",
    )


def _capacity(capacity: CapacitySpec) -> CapacitySpec:
    demand_window = capacity.demand_window_seconds
    return replace(
        capacity,
        tolerance=CAPACITY_TOLERANCE_PERCENT if capacity.tolerance is None else capacity.tolerance,
        resize_tolerance=CAPACITY_RESIZE_TOLERANCE_PERCENT
        if capacity.resize_tolerance is None
        else capacity.resize_tolerance,
        headroom=CAPACITY_HEADROOM_PERCENT if capacity.headroom is None else capacity.headroom,
        demand_percentile=CAPACITY_DEMAND_PERCENTILE
        if capacity.demand_percentile is None
        else capacity.demand_percentile,
        demand_window_seconds=CAPACITY_DEMAND_WINDOW_SECONDS
        if demand_window is None
        else demand_window,
    )
