"""The cache's questions that are not a snapshot's (tests/controller/test_snapshot.py has those):
how many Hvpas of a namespace read metrics, which decides whether one namespace-wide PodMetrics
read serves them (hvpa/controller/shared_pod_metrics.py)."""

from __future__ import annotations

from dataclasses import replace

from controller_records import hvpa, pod

from hvpa.controller.cache import Cache


def test_only_hvpas_that_read_metrics_count() -> None:
    """One real reader beside a broken Hvpa and one being deleted: one reader, so its
    namespace is read by the reader's selector, not whole."""
    reader = hvpa("web", uid="uid-web")
    broken = replace(hvpa("broken", uid="uid-broken"), hvpa=None, problems=("spec.hpa: bad",))
    leaving = replace(hvpa("leaving", uid="uid-leaving"), deleting=True)
    cache = Cache.of_records(hvpas=[reader, broken, leaving])
    assert cache.metrics_readers_in("default") == 1
    assert cache.metrics_readers_in("elsewhere") == 0


def test_a_reader_counts_again_once_its_spec_is_fixed() -> None:
    """The count follows each record as the informer replaces it (the index is the store's)."""
    broken = replace(hvpa("api", uid="uid-api"), hvpa=None, problems=("spec.hpa: bad",))
    cache = Cache.of_records(hvpas=[hvpa("web", uid="uid-web"), broken])
    assert cache.metrics_readers_in("default") == 1
    store = cache.hvpas.for_namespace("default")
    assert store is not None
    store.upsert("default/api", hvpa("api", uid="uid-api"))
    assert cache.metrics_readers_in("default") == 2


def test_a_pods_name_is_the_stores_own_copy() -> None:
    """What a kept PodMetrics answer holds instead of a copy of each name per period."""
    held = pod("web-1")
    cache = Cache.of_records(pods=[held])
    asked = "".join(["web-", "1"])  # equal to the pod's name, another string
    assert asked is not held.name
    assert cache.pod_name("default", asked) is held.name
    assert cache.pod_name("elsewhere", asked) is asked
    assert cache.pod_name("default", "web-2") == "web-2"
