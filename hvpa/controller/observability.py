"""What the controller tells about itself: controller-runtime's metrics, hvpa_* per Hvpa, and the debug view.

controller-runtime's names and labels are kept (`controller_runtime_reconcile_total{controller,result}`
and friends), so the dashboards and alerts written for Go controllers work.
The per-Hvpa series (`hvpa_*`) are produced at scrape time from the last
observation of each Hvpa (a custom collector), so deleting an Hvpa removes
its series by construction, and a container that leaves the target takes its
series with it. They carry `namespace` and `name` (and `container`,
`resource`, `axis`, `direction`, `reason` where they apply), never a pod
name: the series count grows with Hvpas, not with pods.

Some series exist for the alerts in manifests/monitoring/ (docs/monitoring.md):
what holds a change now (`hvpa_scaling_blocked`: the counter of newly blocked
changes cannot say how long a block lasts), the conditions as the last
decision set them, memory scale-ups that answered an OOMKill, whether the
last decision was only a dry run (a dry run never closes the gap between
desired and current replicas), and whether each informer has synced
(`InformerStates`).

The same observations feed `/debug/state` (`Observations.state`), bounded
in size: at most `max_hvpas` Hvpas and `max_lines` explanation lines each,
with a note when something was cut.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from hvpa.engine.decision import Decision, decision_to_dict
from hvpa.kube.informer import Informer
from hvpa.records import CPU, MEMORY, Resources, format_time

__all__ = ["RESULTS", "ControllerMetrics", "InformerStates", "Observation", "Observations"]

# controller-runtime's reconcile results.
RESULTS: Final = ("success", "error", "requeue", "requeue_after")
# controller-runtime's reconcile time buckets.
_RECONCILE_BUCKETS: Final = (
    *(0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5),
    *(0.6, 0.7, 0.8, 0.9, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0),
    *(6.0, 7.0, 8.0, 9.0, 10.0, 15.0, 20.0, 25.0, 30.0, 40.0, 50.0, 60.0),
)
# Prometheus base units: CPU in cores, memory in bytes.
_UNITS: Final = {CPU: "core", MEMORY: "byte"}


class ControllerMetrics:
    """controller-runtime's controller metrics, for one controller name, on one registry."""

    def __init__(
        self, registry: CollectorRegistry | None, *, controller: str, max_workers: int
    ) -> None:
        self.controller = controller
        self.reconcile_total = Counter(
            "controller_runtime_reconcile_total",
            "Total number of reconciliations per controller",
            ["controller", "result"],
            registry=registry,
        )
        self.reconcile_errors = Counter(
            "controller_runtime_reconcile_errors_total",
            "Total number of reconciliation errors per controller",
            ["controller"],
            registry=registry,
        )
        self.reconcile_time = Histogram(
            "controller_runtime_reconcile_time_seconds",
            "Length of time per reconciliation per controller",
            ["controller"],
            buckets=_RECONCILE_BUCKETS,
            registry=registry,
        )
        self.active_workers = Gauge(
            "controller_runtime_active_workers",
            "Number of currently used workers per controller",
            ["controller"],
            registry=registry,
        )
        self.max_concurrent = Gauge(
            "controller_runtime_max_concurrent_reconciles",
            "Maximum number of concurrent reconciles per controller",
            ["controller"],
            registry=registry,
        )
        # The children each reconcile updates, looked up once: `labels()` takes a lock and
        # builds a key at every call, three to four times a reconcile.
        self._totals = {
            result: self.reconcile_total.labels(controller, result) for result in RESULTS
        }
        self._errors = self.reconcile_errors.labels(controller)
        self._time = self.reconcile_time.labels(controller)
        self._active = self.active_workers.labels(controller)
        self._active.set(0)
        self.max_concurrent.labels(controller).set(max_workers)

    def reconciled(self, result: str, seconds: float) -> None:
        self._totals[result].inc()
        self._time.observe(seconds)
        if result == "error":
            self._errors.inc()

    def worker_started(self) -> None:
        self._active.inc()

    def worker_finished(self) -> None:
        self._active.dec()


class Described(Protocol):
    """Inputs kept as they were and spelled out only for /debug/state (SnapshotInputs)."""

    def describe(self) -> dict[str, Any]: ...


@dataclass(slots=True)
class Observation:
    """The last thing that happened to one Hvpa, and its running counts."""

    namespace: str
    name: str
    time: float = 0.0
    result: str = ""
    error: str = ""
    invalid: tuple[str, ...] = ()
    dry_run: bool = False
    decision: Decision | None = None
    inputs: dict[str, Any] | Described = field(default_factory=dict)
    # (axis, direction) -> count; (axis, direction, reason) -> count
    scalings: dict[tuple[str, str], int] = field(default_factory=dict)
    blocks: dict[tuple[str, str, str], int] = field(default_factory=dict)
    # container -> memory scale-ups that answered an OOMKill
    oomkill_scale_ups: dict[str, int] = field(default_factory=dict)


def _amounts(resources: Resources) -> Iterator[tuple[str, float]]:
    for resource in (CPU, MEMORY):
        milli = resources.get(resource)
        if milli is not None:
            yield resource, milli / 1000


class Observations(Collector):
    """Per-Hvpa observations; a Prometheus collector of the `hvpa_*` series."""

    def __init__(self) -> None:
        self._items: dict[str, Observation] = {}

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: str) -> Observation:
        found = self._items.get(key)
        if found is None:
            namespace, _, name = key.partition("/")
            found = self._items[key] = Observation(namespace, name)
        return found

    def forget(self, key: str) -> None:
        """The Hvpa is gone: its series and its debug entry go with it."""
        self._items.pop(key, None)

    def count_scaling(self, key: str, axis: str, direction: str) -> None:
        scalings = self.get(key).scalings
        scalings[(axis, direction)] = scalings.get((axis, direction), 0) + 1

    def count_block(self, key: str, axis: str, direction: str, reason: str) -> None:
        blocks = self.get(key).blocks
        blocks[(axis, direction, reason)] = blocks.get((axis, direction, reason), 0) + 1

    def count_oomkill_scale_ups(self, key: str, decision: Decision) -> None:
        """Count each container whose memory the decision raised to answer an OOMKill.

        The starvation guard marks only such memory changes (`starving`): CPU
        starvation marks CPU changes. Called once per applied (or, in a dry
        run, reported) decision, so a container counts once per answer."""
        counts = self.get(key).oomkill_scale_ups
        for container in decision.containers:
            if any(
                change.resource == MEMORY and change.direction == "up" and change.starving
                for change in container.applied
            ):
                counts[container.name] = counts.get(container.name, 0) + 1

    # -- Prometheus ------------------------------------------------------------

    def describe(self) -> list[Metric]:
        """Nothing to check at registration: the series are known only at scrape time."""
        return []

    def collect(self) -> Iterator[Metric]:
        base = ["namespace", "name"]
        per_resource = [*base, "container", "resource", "unit"]
        current = GaugeMetricFamily(
            "hvpa_current_replicas", "Replicas of the target when last decided", labels=base
        )
        desired = GaugeMetricFamily(
            "hvpa_desired_replicas", "Replicas the last decision wants", labels=base
        )
        requests = GaugeMetricFamily(
            "hvpa_container_resource_requests",
            "Requests of each container after the last decision",
            labels=per_resource,
        )
        limits = GaugeMetricFamily(
            "hvpa_container_resource_limits",
            "Limits of each container after the last decision",
            labels=per_resource,
        )
        recommendation = GaugeMetricFamily(
            "hvpa_container_recommendation",
            "The VPA target of each container, as the last decision read it",
            labels=per_resource,
        )
        invalid = GaugeMetricFamily(
            "hvpa_invalid_spec",
            "1 while the Hvpa's spec is invalid (nothing is scaled)",
            labels=base,
        )
        decided = GaugeMetricFamily(
            "hvpa_last_decision_timestamp_seconds",
            "When the Hvpa was last decided (POSIX seconds)",
            labels=base,
        )
        scalings = CounterMetricFamily(
            "hvpa_scalings",
            "Changes applied (or, in a dry run, reported) by axis and direction",
            labels=[*base, "axis", "direction"],
        )
        blocks = CounterMetricFamily(
            "hvpa_blocked_scalings",
            "Newly blocked changes by axis, direction and reason",
            labels=[*base, "axis", "direction", "reason"],
        )
        for key in sorted(self._items):
            item = self._items[key]
            labels = [item.namespace, item.name]
            invalid.add_metric(labels, 1.0 if item.invalid else 0.0)
            if item.time:
                decided.add_metric(labels, item.time)
            for (axis, direction), count in sorted(item.scalings.items()):
                scalings.add_metric([*labels, axis, direction], count)
            for (axis, direction, reason), count in sorted(item.blocks.items()):
                blocks.add_metric([*labels, axis, direction, reason], count)
            decision = item.decision
            if decision is None:
                continue
            current.add_metric(labels, decision.current_replicas)
            desired.add_metric(labels, decision.desired_replicas)
            for container in decision.containers:
                for resource, value in _amounts(container.requests):
                    requests.add_metric(
                        [*labels, container.name, resource, _UNITS[resource]], value
                    )
                for resource, value in _amounts(container.limits):
                    limits.add_metric([*labels, container.name, resource, _UNITS[resource]], value)
            for target in decision.vertical.containers:
                for resource, value in _amounts(target.target):
                    recommendation.add_metric(
                        [*labels, target.name, resource, _UNITS[resource]], value
                    )
        yield from (
            current,
            desired,
            requests,
            limits,
            recommendation,
            invalid,
            decided,
            scalings,
            blocks,
        )
        yield from _alerting_families([self._items[key] for key in sorted(self._items)])

    # -- /debug/state ------------------------------------------------------------

    def state(self, *, max_hvpas: int, max_lines: int) -> dict[str, Any]:
        keys = sorted(self._items)
        shown: dict[str, Any] = {}
        for key in keys[:max_hvpas]:
            shown[key] = _entry(self._items[key], max_lines)
        return {
            "count": len(keys),
            "shown": len(shown),
            "truncated": len(keys) > max_hvpas,
            "items": shown,
        }


def _alerting_families(items: Iterable[Observation]) -> Iterator[Metric]:
    """The per-Hvpa series the alerts need beside the ones above.

    `hvpa_oomkill_scale_ups_total` is 0 for every container of the last
    decision that never needed one: a counter that appears at 1 would hide
    its first increase from `increase()`."""
    base = ["namespace", "name"]
    dry_run = GaugeMetricFamily(
        "hvpa_dry_run",
        "1 while the last decision was only reported (--dry-run), not applied",
        labels=base,
    )
    blocked = GaugeMetricFamily(
        "hvpa_scaling_blocked",
        "1 for each change the last decision blocked, by axis, direction and reason (the gate)",
        labels=[*base, "axis", "direction", "reason"],
    )
    conditions = GaugeMetricFamily(
        "hvpa_status_condition",
        "1 for each condition the last decision set, with its status and reason",
        labels=[*base, "condition", "status", "reason"],
    )
    oomkills = CounterMetricFamily(
        "hvpa_oomkill_scale_ups",
        "Memory scale-ups applied (or, in a dry run, reported) to answer an OOMKill",
        labels=[*base, "container"],
    )
    for item in items:
        labels = [item.namespace, item.name]
        dry_run.add_metric(labels, 1.0 if item.dry_run else 0.0)
        decision = item.decision
        if decision is None:
            continue
        for axis, direction, reason in sorted(
            {(b.axis, b.direction, b.reason) for b in decision.blocked}
        ):
            blocked.add_metric([*labels, axis, direction, reason], 1.0)
        for condition in decision.conditions:
            conditions.add_metric(
                [*labels, condition.type, condition.status, condition.reason], 1.0
            )
        for container in decision.containers:
            count = item.oomkill_scale_ups.get(container.name, 0)
            oomkills.add_metric([*labels, container.name], count)
    yield from (dry_run, blocked, conditions, oomkills)


class InformerStates(Collector):
    """`hvpa_informer_synced`: 1 once an informer has listed, 0 until then.

    A controller whose caches never sync decides nothing and never turns
    ready; /readyz says only that, this says which informer. `informers`
    is called at every scrape, since the ConfigMap informers come and go
    with the configMapRefs. Informers of one name (several ConfigMaps of
    one namespace) report together: 0 while any of them has not synced."""

    def __init__(self, informers: Callable[[], Iterable[Informer[Any, Any]]]) -> None:
        self._informers = informers

    def describe(self) -> list[Metric]:
        return []

    def collect(self) -> Iterator[Metric]:
        synced: dict[str, bool] = {}
        for informer in self._informers():
            synced[informer.name] = synced.get(informer.name, True) and informer.has_synced
        family = GaugeMetricFamily(
            "hvpa_informer_synced",
            "1 once the informer has listed its resource, 0 until then",
            labels=["informer"],
        )
        for name in sorted(synced):
            family.add_metric([name], 1.0 if synced[name] else 0.0)
        yield family


def _entry(item: Observation, max_lines: int) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "lastReconcile": format_time(item.time) if item.time else None,
        "result": item.result,
        "dryRun": item.dry_run,
    }
    if item.error:
        entry["error"] = item.error
    if item.invalid:
        entry["invalidSpec"] = list(item.invalid)
    inputs = item.inputs if isinstance(item.inputs, dict) else item.inputs.describe()
    if inputs:
        entry["inputs"] = inputs
    if item.decision is not None:
        decision = decision_to_dict(item.decision)
        # The status (history included) is on the Hvpa itself; here, what was decided and why.
        decision.pop("status", None)
        lines: list[str] = decision.pop("explanation")
        decision["explanation"] = lines[:max_lines]
        if len(lines) > max_lines:
            decision["explanationTruncated"] = f"{len(lines) - max_lines} more lines not shown"
        entry["decision"] = decision
    return entry
