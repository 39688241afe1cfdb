"""The one snapshot builder: what a decision sees of the cache (the target's pods by its
selector, nodes only when cluster-proportional, the owned VPA, the other writers of the
target, the named ConfigMap) and which metric reads it asks for; and the cache split by
namespace when the controller watches only some."""

from __future__ import annotations

import gc

import pytest
from controller_records import hpa, hvpa, node, pod, target, vpa

from hvpa.controller.cache import Cache, Partitioned, pod_indexers
from hvpa.controller.snapshot import SnapshotInputs, complete, prepare
from hvpa.engine.metrics import MetricReadError, PodMetricsList, ResourceMetricsQuery
from hvpa.kube.store import Store
from hvpa.labels import LabelSelector
from hvpa.records import ConfigMapRecord, PodRecord

VPA = {
    "deploy": True,
    "selector": {"matchLabels": {"role": "web-vpa"}},
    "template": {"metadata": {"labels": {"role": "web-vpa"}}},
}
CPU = {
    "type": "Resource",
    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}},
}


def test_what_a_decision_sees() -> None:
    me = hvpa(
        vpa=VPA,
        hpa={
            "deploy": True,
            "template": {"spec": {"minReplicas": 1, "maxReplicas": 5, "metrics": [CPU]}},
        },
    )
    cache = Cache.of_records(
        hvpas=[
            me,
            hvpa("older", uid="uid-older", created="2024-01-01T00:00:00Z"),
            hvpa("api", target="api", uid="u3"),
        ],
        targets=[target("web"), target("api")],
        pods=[pod("web-1", app="web"), pod("web-2", app="web"), pod("api-1", app="api")],
        nodes=[node("n1")],
        vpas=[
            vpa(labels={"role": "web-vpa"}),
            vpa("user-vpa", owner=None, mode="Auto"),
            vpa("unselected", labels={"role": "other"}),
        ],
        hpas=[hpa()],
    )
    prepared = prepare(me, cache)
    snapshot = prepared.snapshot
    assert snapshot.target is not None and snapshot.target.name == "web"
    assert [p.name for p in snapshot.pods] == ["web-1", "web-2"]
    assert snapshot.nodes == ()
    assert prepared.vpa is not None and prepared.vpa.name == "web-vpa"
    assert snapshot.vpa is prepared.vpa.record
    assert sorted(w.describe() for w in snapshot.writers) == [
        "HorizontalPodAutoscaler default/web-hpa",
        "Hvpa default/older",
        "VerticalPodAutoscaler default/unselected",
        "VerticalPodAutoscaler default/user-vpa",
        "VerticalPodAutoscaler default/web-vpa",
    ]
    assert prepared.queries == (ResourceMetricsQuery("default", snapshot.target.selector),)


def test_the_inputs_shown_for_a_decision_are_described_from_its_snapshot() -> None:
    """/debug/state's inputs of a decision: described from the parts kept, when shown."""
    me = hvpa(vpa=VPA, clusterProportional={"configMapRef": {"name": "params"}})
    cache = Cache.of_records(
        hvpas=[me, hvpa("older", uid="uid-older")],
        targets=[target("web")],
        pods=[pod("web-1", app="web"), pod("web-2", app="web")],
        vpas=[vpa(labels={"role": "web-vpa"})],
        nodes=[node("n1"), node("n2"), node("n3")],
        config_maps=[ConfigMapRecord("default", "params", {"linear": '{"nodesPerReplica": 1}'})],
    )
    prepared = prepare(me, cache)
    assert prepared.target is not None
    query = ResourceMetricsQuery("default", prepared.target.selector)
    failed = ResourceMetricsQuery("default", LabelSelector.parse("x=y"))
    snapshot = complete(prepared, {query: PodMetricsList(()), failed: MetricReadError("no")})
    assert SnapshotInputs.of(snapshot, prepared.vpa).describe() == {
        "target": {"kind": "Deployment", "name": "web", "resourceVersion": "7", "replicas": 2},
        "pods": 2,
        "nodes": 3,
        "vpa": "web-vpa",
        "configMaps": ["default/params"],
        "writers": ["VerticalPodAutoscaler default/web-vpa", "Hvpa default/older"],
        "metrics": [
            {"query": "metrics.k8s.io pods selector app=web", "items": 0},
            {"query": "metrics.k8s.io pods selector x=y", "error": "no"},
        ],
    }


def test_the_inputs_kept_for_a_decision_hold_no_reading() -> None:
    """Every Hvpa keeps its last inputs until its next reconcile: holding its metric
    readings kept the previous period's PodMetrics of every pod alive (at 10,000 Hvpas,
    100 MiB more). Only the item count or the error is kept."""
    me = hvpa(vpa=VPA)
    prepared = prepare(me, Cache.of_records(hvpas=[me], targets=[target("web")]))
    assert prepared.target is not None
    query = ResourceMetricsQuery("default", prepared.target.selector)
    reading = PodMetricsList(())
    kept = SnapshotInputs.of(complete(prepared, {query: reading}), prepared.vpa)
    reachable = [
        referent
        for part in gc.get_referents(kept)
        for inner in (part, *gc.get_referents(part))
        for referent in (inner, *gc.get_referents(inner))
    ]
    assert not any(referent is reading for referent in reachable)


def test_pod_usage_is_read_for_the_vertical_axis_alone() -> None:
    me = hvpa(vpa=VPA, hpa={"deploy": False})
    prepared = prepare(me, Cache.of_records(hvpas=[me], targets=[target()]))
    assert [type(q).__name__ for q in prepared.queries] == ["ResourceMetricsQuery"]
    off = hvpa(hpa={"deploy": False})
    assert prepare(off, Cache.of_records(hvpas=[off], targets=[target()])).queries == ()
    capacity = hvpa(strategy="Capacity", capacity={"curve": [{"replicas": 1, "cpu": "1"}]})
    assert capacity.hvpa is not None, capacity.problems
    prepared = prepare(capacity, Cache.of_records(hvpas=[capacity], targets=[target()]))
    assert [type(q).__name__ for q in prepared.queries] == ["ResourceMetricsQuery"]


def test_cluster_proportional_sees_nodes_and_its_config_map() -> None:
    me = hvpa(clusterProportional={"configMapRef": {"name": "params"}})
    params = ConfigMapRecord("default", "params", {"linear": '{"nodesPerReplica": 1}'})
    cache = Cache.of_records(
        hvpas=[me], targets=[target()], nodes=[node("n2"), node("n1")], config_maps=[params]
    )
    snapshot = prepare(me, cache).snapshot
    assert [n.name for n in snapshot.nodes] == ["n1", "n2"]
    assert snapshot.config_maps == (params,)


def test_a_missing_target_sees_nothing() -> None:
    me = hvpa(target="gone")
    prepared = prepare(me, Cache.of_records(hvpas=[me], pods=[pod("gone-1", app="gone")]))
    assert prepared.snapshot.target is None
    assert prepared.snapshot.pods == ()
    assert prepared.queries == ()


def test_a_cache_split_by_namespace() -> None:
    stores: dict[str | None, Store[PodRecord]] = {}
    for namespace in ("a", "b"):
        store: Store[PodRecord] = Store(indexers=pod_indexers())
        stores[namespace] = store
    stores["a"].upsert("a/p1", pod("p1", app="web"))
    pods = Partitioned(stores)
    assert pods.get("a/p1") is not None
    assert pods.get("b/p1") is None and pods.get("c/p1") is None
    assert len(pods) == 1 and "a/p1" in pods and list(pods) == ["a/p1"]
    assert pods.for_namespace("c") is None
    assert pods.index_keys("namespace", "default") == ["a/p1"]


@pytest.mark.parametrize(
    ("owner", "taken"),
    [
        pytest.param(("web", "uid-web"), "", id="its-own"),
        pytest.param(None, "VerticalPodAutoscaler default/web-vpa (no controller owns it)", id="nobody's"),
        pytest.param(
            ("web", "uid-before"),
            "VerticalPodAutoscaler default/web-vpa (controlled by an earlier Hvpa web, uid uid-before)",
            id="an-earlier-hvpa-of-its-name",
        ),
        pytest.param(
            ("other", "uid-other"),
            "VerticalPodAutoscaler default/web-vpa (controlled by Hvpa other)",
            id="another-hvpa",
        ),
    ],
)  # fmt: skip
def test_a_vpa_holding_its_name_is_named(owner: tuple[str, str] | None, taken: str) -> None:
    """hvpa creates `<hvpa>-vpa` and never takes over one it does not own; the snapshot says
    whose it is, for the condition that tells the user what to do."""
    me = hvpa(vpa=VPA)
    cache = Cache.of_records(
        hvpas=[me], targets=[target()], vpas=[vpa(owner=owner, labels={"role": "web-vpa"})]
    )
    assert prepare(me, cache).snapshot.vpa_name_taken == taken
