"""The store: keyed records, index maintenance on add/update/delete, selection by
label selector within a namespace and the reverse (which selectors match a pod), both
against brute-force oracles, and memory per pod."""

import random
import sys
import tracemalloc
from dataclasses import dataclass

import pytest

from hvpa.kube.store import (
    BY_NAMESPACE,
    BY_NAMESPACE_LABEL,
    BY_SELECTOR,
    Store,
    freeze_heap,
    index_by_selector,
    labelled_indexers,
    select,
    selecting,
)
from hvpa.labels import LabelSelector
from hvpa.records import ContainerSpec, PodRecord, Resources, decode_pod


def pod(namespace: str, name: str, **labels: str) -> PodRecord:
    return PodRecord(
        namespace=namespace,
        name=name,
        labels=labels,
        phase="Running",
        deleting=False,
        start_time=None,
        ready="True",
        ready_transition=None,
        containers=(),
    )


def pod_store() -> Store[PodRecord]:
    return Store(indexers=labelled_indexers())


def test_get_len_contains_and_iteration() -> None:
    store = pod_store()
    store.upsert("a/x", pod("a", "x", app="web"))
    store.upsert("a/y", pod("a", "y", app="web"))
    assert len(store) == 2
    assert "a/x" in store
    assert store.get("a/z") is None
    assert sorted(store) == ["a/x", "a/y"]
    assert store.index_names == [BY_NAMESPACE, BY_NAMESPACE_LABEL]


def test_indexes_follow_updates_and_deletes() -> None:
    store = pod_store()
    first = pod("a", "x", app="web", tier="front")
    assert store.upsert("a/x", first) is None
    assert store.index_keys(BY_NAMESPACE_LABEL, ("a", "app", "web")) == {"a/x"}

    relabelled = pod("a", "x", app="api", tier="front")
    assert store.upsert("a/x", relabelled) is first
    assert store.index_keys(BY_NAMESPACE_LABEL, ("a", "app", "web")) == set()
    assert store.index_keys(BY_NAMESPACE_LABEL, ("a", "app", "api")) == {"a/x"}
    assert store.index_keys(BY_NAMESPACE_LABEL, ("a", "tier", "front")) == {"a/x"}
    assert ("a", "app", "web") not in store.index_values(BY_NAMESPACE_LABEL), "empty sets go"

    assert store.delete("a/x") is relabelled
    assert store.delete("a/x") is None
    assert store.index_values(BY_NAMESPACE) == []
    assert store.index_values(BY_NAMESPACE_LABEL) == []


def test_a_renewed_record_replaces_the_held_one_and_an_unknown_key_is_filed() -> None:
    """`renew` is for the held record at a newer resourceVersion: the record is replaced
    and the index left as it is; a key the store does not hold is filed as by upsert."""
    store = pod_store()
    first = pod("a", "x", app="web")
    assert store.renew("a/x", first) is None
    assert store.index_keys(BY_NAMESPACE_LABEL, ("a", "app", "web")) == {"a/x"}
    renewed = pod("a", "x", app="web")
    assert store.renew("a/x", renewed) is first
    assert store.get("a/x") is renewed
    assert store.index_keys(BY_NAMESPACE, "a") == {"a/x"}
    assert store.index_keys(BY_NAMESPACE_LABEL, ("a", "app", "web")) == {"a/x"}


def test_indexes_after_random_updates_equal_indexes_built_afresh() -> None:
    """An update touches only the index values that changed: whatever the sequence of
    relabels, same-label updates and deletes, the indexes hold what filing the surviving
    records into an empty store gives."""
    rng = random.Random(5)
    store = pod_store()
    values = {"app": ["a", "b"], "tier": ["x", "y"], "track": ["s"]}
    for _ in range(3000):
        name = f"p{rng.randrange(60)}"
        namespace = rng.choice(["n1", "n2"])
        key = f"{namespace}/{name}"
        if rng.random() < 0.15:
            store.delete(key)
            continue
        labels = {k: rng.choice(v) for k, v in values.items() if rng.random() < 0.6}
        store.upsert(key, pod(namespace, name, **labels))
    fresh = pod_store()
    for key, record in store.items():
        fresh.upsert(key, record)
    for index in (BY_NAMESPACE, BY_NAMESPACE_LABEL):
        assert sorted(map(str, store.index_values(index))) == sorted(
            map(str, fresh.index_values(index))
        )
        for value in fresh.index_values(index):
            assert store.index_keys(index, value) == fresh.index_keys(index, value)


def test_by_index_and_added_indexers_file_existing_records() -> None:
    store: Store[PodRecord] = Store()
    store.upsert("b/y", pod("b", "y", app="web"))
    store.upsert("a/x", pod("a", "x", app="web"))
    store.add_indexers({"app": lambda p: [p.labels["app"]] if "app" in p.labels else []})
    assert [p.name for p in store.by_index("app", "web")] == ["x", "y"]
    with pytest.raises(ValueError, match="already exists"):
        store.add_indexers({"app": lambda p: []})
    with pytest.raises(KeyError):
        store.index_keys("missing", "x")


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        pytest.param("app=web", ["w1", "w2", "w3"], id="equality"),
        pytest.param("app=web,track=canary", ["w3"], id="intersection"),
        pytest.param("app in (web,api)", ["a1", "w1", "w2", "w3"], id="set"),
        pytest.param("app=web,track!=canary", ["w1", "w2"], id="equality-and-inequality"),
        pytest.param("track", ["w3"], id="exists-scans-namespace"),
        pytest.param("!track", ["a1", "n1", "w1", "w2"], id="does-not-exist"),
        pytest.param("", ["a1", "n1", "w1", "w2", "w3"], id="empty-selects-all"),
        pytest.param("app=nothing", [], id="no-match"),
    ],
)
def test_select(selector: str, expected: list[str]) -> None:
    store = pod_store()
    for record in [
        pod("shop", "w1", app="web"),
        pod("shop", "w2", app="web"),
        pod("shop", "w3", app="web", track="canary"),
        pod("shop", "a1", app="api"),
        pod("shop", "n1"),
        pod("other", "w9", app="web"),
    ]:
        store.upsert(f"{record.namespace}/{record.name}", record)
    found = select(store, namespace="shop", selector=LabelSelector.parse(selector))
    assert [p.name for p in found] == expected


def test_select_nothing_selector() -> None:
    store = pod_store()
    store.upsert("shop/w1", pod("shop", "w1", app="web"))
    assert select(store, namespace="shop", selector=LabelSelector(nothing=True)) == []


def test_select_agrees_with_brute_force() -> None:
    rng = random.Random(3)
    store = pod_store()
    values = {"app": ["a", "b", "c"], "tier": ["x", "y"], "track": ["s", "c"]}
    for index in range(2000):
        labels = {k: rng.choice(v) for k, v in values.items() if rng.random() < 0.7}
        record = pod(rng.choice(["n1", "n2"]), f"p{index}", **labels)
        store.upsert(f"{record.namespace}/{record.name}", record)
        if rng.random() < 0.2:  # churn: relabel or delete an earlier pod
            key = f"{rng.choice(['n1', 'n2'])}/p{rng.randrange(index + 1)}"
            if key in store and rng.random() < 0.5:
                store.delete(key)
            elif key in store:
                old = store.get(key)
                assert old is not None
                store.upsert(key, pod(old.namespace, old.name, app=rng.choice(values["app"])))
    for text in ["app=a", "app=a,tier=x", "app in (a,b),track=s", "tier notin (x)", "app"]:
        selector = LabelSelector.parse(text)
        expected = sorted(
            key
            for key, record in store.items()
            if record.namespace == "n1" and selector.matches(record.labels)
        )
        found = select(store, namespace="n1", selector=selector)
        assert [f"{p.namespace}/{p.name}" for p in found] == expected, text


def test_freeze_heap_freezes() -> None:
    import gc

    try:
        freeze_heap()
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def realistic_pod(index: int) -> dict[str, object]:
    deployment = f"service-{index % 500}"
    return {
        "metadata": {
            "name": f"{deployment}-7d9f8b6c5d-{index:06x}",
            "namespace": f"team-{index % 50}",
            "resourceVersion": str(1_000_000 + index),
            "labels": {
                "app": deployment,
                "pod-template-hash": "7d9f8b6c5d",
                "tier": "backend",
            },
            "ownerReferences": [
                {"uid": f"0f4c2d1e-{index % 500:04x}-4c5d-9e8f-1a2b3c4d5e6f", "controller": True}
            ],
        },
        "spec": {
            "nodeName": f"node-{index % 2000}",
            "containers": [
                {
                    "name": "app",
                    "resources": {
                        "requests": {"cpu": "250m", "memory": "512Mi"},
                        "limits": {"memory": "1Gi"},
                    },
                },
                {"name": "proxy", "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}}},
            ],
        },
        "status": {
            "phase": "Running",
            "startTime": "2026-01-01T00:00:00Z",
            "conditions": [
                {"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-01T00:01:00Z"}
            ],
        },
    }


def test_memory_per_cached_pod_is_under_one_kib() -> None:
    """5,000 realistic pods in an indexed store: records, keys, dict and index entries."""
    count = 5_000
    raw = [realistic_pod(index) for index in range(count)]
    decode_pod(raw[0])  # warm the interning tables outside the measurement
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        store = pod_store()
        for obj in raw:
            record = decode_pod(obj)
            store.upsert(f"{record.namespace}/{record.name}", record)
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    per_pod = (after - before) / count
    assert len(store) == count
    assert per_pod <= 1024, f"{per_pod:.0f} bytes per pod"
    sys.stdout.write(f"{per_pod:.0f} bytes per cached pod\n")


def test_container_specs_are_shared_between_pods_of_a_template() -> None:
    first, second = decode_pod(realistic_pod(0)), decode_pod(realistic_pod(500))
    assert first.containers is second.containers
    assert first.containers[0] == ContainerSpec(
        name="app",
        requests=Resources(cpu=250, memory=512 * 2**20 * 1000),
        limits=Resources(memory=2**30 * 1000),
    )


@dataclass(frozen=True)
class Target:
    namespace: str
    name: str
    selector: LabelSelector


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        pytest.param({"app": "web"}, ["web", "web-or-api"], id="equality"),
        pytest.param({"app": "web", "track": "canary"}, ["canary", "web", "web-or-api"], id="more"),
        pytest.param({"app": "api"}, ["web-or-api"], id="set"),
        pytest.param({"tier": "x"}, ["has-tier"], id="unanchored"),
        pytest.param({}, [], id="no-labels"),
    ],
)
def test_selecting_finds_the_selectors_that_match(
    labels: dict[str, str], expected: list[str]
) -> None:
    store: Store[Target] = Store(indexers={BY_SELECTOR: index_by_selector})
    for name, text in [
        ("web", "app=web"),
        ("canary", "app=web,track=canary"),
        ("web-or-api", "app in (web,api)"),
        ("has-tier", "tier,app!=web"),
    ]:
        store.upsert(f"shop/{name}", Target("shop", name, LabelSelector.parse(text)))
    store.upsert("shop/none", Target("shop", "none", LabelSelector(nothing=True)))
    store.upsert("other/web", Target("other", "web", LabelSelector.parse("app=web")))
    found = selecting(store, namespace="shop", labels=labels)
    assert [t.name for t in found] == expected


def test_selecting_agrees_with_brute_force() -> None:
    rng = random.Random(9)
    values = {"app": ["a", "b", "c"], "tier": ["x", "y"]}
    store: Store[Target] = Store(indexers={BY_SELECTOR: index_by_selector})
    texts = ["app=a", "app=b,tier=x", "app in (a,c)", "tier", "!app", "app notin (a)", "tier=y"]
    for index in range(300):
        text = rng.choice(texts)
        store.upsert(f"n/t{index}", Target("n", f"t{index}", LabelSelector.parse(text)))
    for _ in range(50):
        labels = {k: rng.choice(v) for k, v in values.items() if rng.random() < 0.7}
        expected = sorted(k for k, t in store.items() if t.selector.matches(labels))
        assert [f"n/{t.name}" for t in selecting(store, namespace="n", labels=labels)] == expected
