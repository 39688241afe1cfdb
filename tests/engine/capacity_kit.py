"""Scenario objects for the Capacity strategy's tests, on top of decide_kit's Deployment `web`.

A Capacity Hvpa whose HPA template holds min/max and a 50% CPU utilization
target (so CPU demand is usage x 2 and memory demand usage x 1.15), and a
workload whose pods all use the same amounts. `Workload.after` applies a
Decision and moves the clock, so a test can run decide over a load ramp as
a controller would.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from decide_kit import NOW_SECONDS, hvpa_object, run, scenario

from hvpa.api.base import plain
from hvpa.engine.decision import Decision
from hvpa.quantity import format_milli

FLAT_CURVE = [
    {"replicas": 1, "cpu": "1", "memory": "2G"},
    {"replicas": 10, "cpu": "1", "memory": "2G"},
]
RISING_CURVE = [
    {"replicas": 1, "cpu": "1", "memory": "4G"},
    {"replicas": 10, "cpu": "10", "memory": "4G"},
]


def capacity_hvpa(
    curve: list[dict[str, Any]] | None = None,
    *,
    base: dict[str, str] | None = None,
    tolerance: float | None = None,
    down_seconds: int | None = None,
    status: dict[str, Any] | None = None,
    **options: Any,
) -> dict[str, Any]:
    capacity: dict[str, Any] = {"curve": curve or FLAT_CURVE}
    if base is not None:
        capacity["baseResourcesPerReplica"] = base
    if tolerance is not None:
        capacity["tolerance"] = tolerance
    if down_seconds is not None:
        capacity["scaleDownStabilizationSeconds"] = down_seconds
    hvpa = hvpa_object(strategy="Capacity", status=status or {}, **options)
    hvpa["spec"]["capacity"] = capacity
    return hvpa


def time_at(seconds: float) -> str:
    return datetime.fromtimestamp(int(seconds), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class Workload:
    """The target as it stands: replicas, per-pod requests (milli-units), per-pod usage and the time."""

    replicas: int = 2
    cpu: int = 500
    memory: int = 1_000_000_000_000
    cpu_usage: int = 250
    memory_usage: int = 500_000_000_000
    now: float = NOW_SECONDS
    status: dict[str, Any] | None = None

    def raw(self, hvpa: dict[str, Any], **options: Any) -> dict[str, Any]:
        """The scenario; usage is reported for every pod at `now`."""
        hvpa = {**hvpa, "status": self.status if self.status is not None else hvpa["status"]}
        requests = {"cpu": format_milli(self.cpu), "memory": format_milli(self.memory)}
        raw = scenario(
            hvpa,
            replicas=self.replicas,
            container={"requests": requests, "limits": {}},
            now=time_at(self.now),
            **options,
        )
        for item in raw["podMetrics"]:
            item["timestamp"] = time_at(self.now)
            item["containers"][0]["usage"] = {
                "cpu": format_milli(self.cpu_usage),
                "memory": format_milli(self.memory_usage),
            }
        return raw

    def decide(self, hvpa: dict[str, Any], **options: Any) -> Decision:
        return run(self.raw(hvpa, **options))

    def after(self, decision: Decision, seconds: float) -> Workload:
        """The workload once the decision is applied, `seconds` later, total usage unchanged."""
        requests = decision.containers[0].requests
        total_cpu = self.cpu_usage * self.replicas
        total_memory = self.memory_usage * self.replicas
        replicas = decision.desired_replicas
        return replace(
            self,
            replicas=replicas,
            cpu=requests.cpu or 0,
            memory=requests.memory or 0,
            cpu_usage=total_cpu // replicas,
            memory_usage=total_memory // replicas,
            now=self.now + seconds,
            status=plain(decision.status),
        )
