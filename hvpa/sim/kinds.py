"""The resource the API server stores each kind of object as, for the model's own writes.

The model writes objects it knows by kind (a scenario's workload and a
baseline's VPA; a workload named by `WorkloadKey`), and the in-process API
server's object API takes the resource, as a REST mapper would give it. The
names are the controller's own (`hvpa.kube.resources`), so the two cannot
spell a resource differently.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from hvpa.kube.resources import TARGETS, VPAS

__all__ = ["RESOURCE_OF_KIND"]

# Deployment, StatefulSet, ReplicaSet (what an Hvpa may target) and VerticalPodAutoscaler;
# and PodDisruptionBudget, which the controller never reads: a scenario's, for the VPA
# baseline's evictions (baselines/disruption_budgets.py).
RESOURCE_OF_KIND: Final[Mapping[str, str]] = {
    **{kind: resource.plural for kind, resource in TARGETS.items()},
    VPAS.kind: VPAS.plural,
    "PodDisruptionBudget": "poddisruptionbudgets",
}
