"""The engine's controller-wide settings, in one typed object.

Each setting is one of kube-controller-manager's HPA flags (or the HPA
controller's fixed scale-up limit), with upstream's default, so that an Hvpa
behaves like an HPA on a cluster with default flags. `hvpa run` exposes them
as flags and a scenario's `settings` overrides them; both build this object.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from hvpa.engine.inplace import InPlaceBounds

__all__ = ["SETTING_KEYS", "Settings"]


@dataclass(frozen=True, slots=True)
class Settings:
    # --horizontal-pod-autoscaler-cpu-initialization-period: CPU samples taken
    # while a pod may still be starting are not trusted for a scale-up.
    cpu_initialization_period_seconds: float = 300.0
    # --horizontal-pod-autoscaler-initial-readiness-delay: a pod that turned
    # unready this soon after starting is taken as never having been ready.
    initial_readiness_delay_seconds: float = 30.0
    # --horizontal-pod-autoscaler-tolerance: usage ratios within 1 ± tolerance
    # do not change the replica count (per direction, behavior may override).
    tolerance: float = 0.1
    # --horizontal-pod-autoscaler-downscale-stabilization: the scale-down
    # window when behavior does not set one.
    downscale_stabilization_seconds: float = 300.0
    # Without behavior, one decision may not grow the target beyond
    # max(scaleUpLimitFactor x current, scaleUpLimitMinimum).
    scale_up_limit_factor: float = 2.0
    scale_up_limit_minimum: int = 4
    # hvpa's field manager (`hvpa run --field-manager`): a field another manager owns after
    # hvpa set it was rewritten by that manager (rewrites.py, docs/gitops.md).
    field_manager: str = "hvpa"
    # `--rewrite-window`: a second rewrite of what hvpa set within this long of the first
    # holds that axis for this long; an hour covers the sync intervals GitOps tools use
    # (Argo CD 3 minutes, Flux's usual 1 to 10 minutes, a CI apply per merge).
    rewrite_window_seconds: float = 3600.0
    # The longest hold: each further rewrite in a row doubles the hold up to this, so a
    # writer that never stops costs one write a day.
    max_write_hold_seconds: float = 86400.0
    # hvpa's own: how long an in-place resize may stay Infeasible, Deferred or in progress
    # before InPlaceOrRollout rolls the size out instead (InPlace reports it).
    in_place: InPlaceBounds = field(default_factory=InPlaceBounds)

    def __post_init__(self) -> None:
        """Refuse values no flag could sensibly carry, so `hvpa run` and scenarios fail alike and early.

        A negative duration or tolerance would silently disable a rule, and a
        factor below 1 would turn the scale-up limit into a scale-down.
        """
        for key, name in SETTING_KEYS.items():
            value = getattr(self, name)
            if value < 0:
                raise ValueError(f"{key}: must not be negative (got {value:g})")
        if self.rewrite_window_seconds <= 0 or self.max_write_hold_seconds <= 0:
            raise ValueError("the rewrite window and the longest hold must be positive")
        if self.scale_up_limit_factor < 1:
            raise ValueError(
                f"scaleUpLimitFactor: must be at least 1 (got {self.scale_up_limit_factor:g})"
            )


# Scenario/flag spelling -> field name.
SETTING_KEYS: Final = {
    "cpuInitializationPeriod": "cpu_initialization_period_seconds",
    "initialReadinessDelay": "initial_readiness_delay_seconds",
    "tolerance": "tolerance",
    "downscaleStabilization": "downscale_stabilization_seconds",
    "scaleUpLimitFactor": "scale_up_limit_factor",
    "scaleUpLimitMinimum": "scale_up_limit_minimum",
}
