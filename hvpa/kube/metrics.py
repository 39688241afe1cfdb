"""Every Prometheus metric of the kube layer, registered in one place.

Names and labels follow client-go and controller-runtime (`workqueue_*`,
`rest_client_requests_total`, `leader_election_master_status`), so the
dashboards and alerts written for Go controllers work for hvpa unchanged.

One `KubeMetrics` per process, built on the registry the `/metrics`
endpoint serves; tests build their own on a fresh `CollectorRegistry` so two
tests never register the same name twice.
"""

from __future__ import annotations

from typing import Final

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram

__all__ = ["KubeMetrics"]

# controller-runtime's buckets for queue and work durations: 10 ns to 1000 s.
_DURATION_BUCKETS: Final = tuple(1e-8 * 10**power for power in range(12))
# client-go's buckets for API request latency (k8s.io/component-base restclient metrics).
_REQUEST_BUCKETS: Final = (0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0)


class KubeMetrics:
    """The metric families; components take the labelled children they need."""

    def __init__(self, registry: CollectorRegistry | None = REGISTRY) -> None:
        self.registry = registry
        self.queue_depth = Gauge(
            "workqueue_depth", "Current depth of workqueue", ["name"], registry=registry
        )
        self.queue_adds = Counter(
            "workqueue_adds_total",
            "Total number of adds handled by workqueue",
            ["name"],
            registry=registry,
        )
        self.queue_latency = Histogram(
            "workqueue_queue_duration_seconds",
            "How long in seconds an item stays in workqueue before being requested",
            ["name"],
            buckets=_DURATION_BUCKETS,
            registry=registry,
        )
        self.work_duration = Histogram(
            "workqueue_work_duration_seconds",
            "How long in seconds processing an item from workqueue takes",
            ["name"],
            buckets=_DURATION_BUCKETS,
            registry=registry,
        )
        self.unfinished_work = Gauge(
            "workqueue_unfinished_work_seconds",
            "How many seconds of work has been done that is in progress and hasn't "
            "been observed by work_duration. Large values indicate stuck threads.",
            ["name"],
            registry=registry,
        )
        self.longest_running = Gauge(
            "workqueue_longest_running_processor_seconds",
            "How many seconds has the longest running processor for workqueue been running.",
            ["name"],
            registry=registry,
        )
        self.queue_retries = Counter(
            "workqueue_retries_total",
            "Total number of retries handled by workqueue",
            ["name"],
            registry=registry,
        )
        self.rest_requests = Counter(
            "rest_client_requests_total",
            "Number of HTTP requests, partitioned by status code, method, and host.",
            ["code", "method", "host"],
            registry=registry,
        )
        self.request_latency = Histogram(
            "rest_client_request_duration_seconds",
            "Request latency in seconds. Broken down by verb, and host.",
            ["verb", "host"],
            buckets=_REQUEST_BUCKETS,
            registry=registry,
        )
        self.leader = Gauge(
            "leader_election_master_status",
            "Gauge of if the reporting system is master of the relevant lease, "
            "0 indicates backup, 1 indicates master. 'name' is the string used to "
            "identify the lease.",
            ["name"],
            registry=registry,
        )
