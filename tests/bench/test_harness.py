"""bench.harness's helpers that compute a figure: a wrong sum is a wrong row."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter

from bench.harness import counter_total


def test_counter_total_sums_the_totals_of_the_label_sets_asked_for() -> None:
    registry = CollectorRegistry()
    reconciles = Counter("reconcile", "", ["result"], registry=registry)
    reconciles.labels(result="success").inc(3)
    reconciles.labels(result="requeue_after").inc(2)
    other = Counter("adds", "", registry=registry)
    other.inc(7)
    families = list(registry.collect())

    # Each family also has a `_created` sample (a Unix time): summed, it would swamp the count.
    assert counter_total(families, "reconcile") == 5
    assert counter_total(families, "reconcile", result="success") == 3
    assert counter_total(families, "adds") == 7
    assert counter_total(families, "missing") == 0
