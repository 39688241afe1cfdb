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
from typing import Any, Final

from decide_kit import NOW_SECONDS, hvpa_object, run, scenario

from hvpa.api.base import plain
from hvpa.engine.decision import Decision
from hvpa.quantity import format_milli

MB = 10**9  # milli-units of one MB

FLAT_CURVE = [
    {"replicas": 1, "cpu": "1", "memory": "2G"},
    {"replicas": 10, "cpu": "1", "memory": "2G"},
]
RISING_CURVE = [
    {"replicas": 1, "cpu": "1", "memory": "4G"},
    {"replicas": 10, "cpu": "10", "memory": "4G"},
]


# The cases of the Capacity tests were worked out with a 15% headroom (the default until the
# headroom became spec.capacity.headroom): they test other rules and keep it; headroom=None tests
# the default.
CASES_HEADROOM: Final = 15


def capacity_hvpa(
    curve: list[dict[str, Any]] | None = None,
    *,
    base: dict[str, str] | None = None,
    tolerance: float | None = None,
    headroom: float | None = CASES_HEADROOM,
    down_seconds: int | None = None,
    status: dict[str, Any] | None = None,
    **options: Any,
) -> dict[str, Any]:
    capacity: dict[str, Any] = {"curve": curve or FLAT_CURVE}
    if base is not None:
        capacity["baseResourcesPerReplica"] = base
    if tolerance is not None:
        capacity["tolerance"] = tolerance
    if headroom is not None:
        capacity["headroom"] = headroom
    if down_seconds is not None:
        capacity["scaleDownStabilizationSeconds"] = down_seconds
    hvpa = hvpa_object(strategy="Capacity", status=status or {}, **options)
    hvpa["spec"]["capacity"] = capacity
    return hvpa


def shape(decision: Decision) -> tuple[int, int | None, int | None]:
    """Replicas, CPU millicores and memory MB of the first container."""
    requests = decision.containers[0].requests
    memory = requests.memory
    return decision.desired_replicas, requests.cpu, None if memory is None else memory // MB


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
    # What is left of the total when it does not split evenly: one more millicore (CPU) or
    # byte (memory) on as many of the first pods.
    cpu_remainder: int = 0
    memory_remainder: int = 0

    @property
    def total_cpu_usage(self) -> int:
        return self.cpu_usage * self.replicas + self.cpu_remainder

    def with_total_cpu_usage(self, total: int) -> Workload:
        """The same pods sharing `total` millicores of usage (exactly, with the remainder)."""
        return replace(self, cpu_usage=total // self.replicas, cpu_remainder=total % self.replicas)

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
        for index, item in enumerate(raw["podMetrics"]):
            item["timestamp"] = time_at(self.now)
            cpu = self.cpu_usage + (1 if index < self.cpu_remainder else 0)
            memory = self.memory_usage + (1000 if index < self.memory_remainder else 0)
            item["containers"][0]["usage"] = {
                "cpu": format_milli(cpu),
                "memory": format_milli(memory),
            }
        return raw

    def decide(self, hvpa: dict[str, Any], **options: Any) -> Decision:
        return run(self.raw(hvpa, **options))

    def after(self, decision: Decision, seconds: float) -> Workload:
        """The workload once the decision is applied, `seconds` later, total usage unchanged
        (to the millicore and the byte: what does not split evenly goes to the first pods)."""
        requests = decision.containers[0].requests
        total_cpu = self.total_cpu_usage
        total_bytes = (self.memory_usage // 1000) * self.replicas + self.memory_remainder
        replicas = decision.desired_replicas
        return replace(
            self,
            replicas=replicas,
            cpu=requests.cpu or 0,
            memory=requests.memory or 0,
            cpu_usage=total_cpu // replicas,
            cpu_remainder=total_cpu % replicas,
            memory_usage=total_bytes // replicas * 1000,
            memory_remainder=total_bytes % replicas,
            now=self.now + seconds,
            status=plain(decision.status),
        )
