"""The ReplicaSets of the model's Deployments, as `kubectl get rs` shows a cluster's: one per
pod template, owned by the Deployment and owning its pods, scaled down as a rollout moves on,
kept up to revisionHistoryLimit, and gone with their Deployment."""

from __future__ import annotations

import copy
from typing import Any

from sim_kit import container, model, resize, workload

from hvpa.sim.replicasets import DESIRED, REVISION, TEMPLATE_HASH_LABEL
from hvpa.sim.workloads import template_hash

DEPLOYMENT = ("Deployment", "default", "web")


def replica_sets(m: object) -> dict[str, dict[str, object]]:
    server = m.server  # type: ignore[attr-defined]
    return {rs["metadata"]["name"]: rs for rs in server.objects.list("replicasets")}


def test_a_deployment_keeps_its_pods_in_a_replica_set() -> None:
    m = model()
    deployment = m.server.objects.create("deployments", workload("Deployment", replicas=3))
    m.run(30)
    revision = template_hash(deployment["spec"]["template"])
    (rs,) = replica_sets(m).values()
    metadata = rs["metadata"]
    assert metadata["name"] == f"web-{revision}"
    assert metadata["labels"][TEMPLATE_HASH_LABEL] == revision
    assert metadata["annotations"][REVISION] == "1"
    assert metadata["annotations"][DESIRED] == "3"
    (owner,) = metadata["ownerReferences"]
    assert (owner["kind"], owner["uid"], owner["controller"]) == (
        "Deployment",
        deployment["metadata"]["uid"],
        True,
    )
    assert rs["spec"]["replicas"] == 3
    assert rs["spec"]["selector"]["matchLabels"][TEMPLATE_HASH_LABEL] == revision
    assert rs["status"]["replicas"] == rs["status"]["readyReplicas"] == 3
    for pod in m.pods(DEPLOYMENT):
        obj = m.server.objects.get("pods", pod.name)
        assert obj["metadata"]["name"].startswith(f"web-{revision}-")
        (pod_owner,) = obj["metadata"]["ownerReferences"]
        assert (pod_owner["kind"], pod_owner["uid"]) == ("ReplicaSet", metadata["uid"])


def test_a_rollout_moves_pods_to_the_new_replica_set() -> None:
    m = model()
    m.server.objects.create("deployments", workload("Deployment", replicas=2))
    m.run(30)
    (old_name,) = replica_sets(m)
    resize(m, "deployments", "web", cpu="300m")
    m.run(120)
    sets = replica_sets(m)
    assert len(sets) == 2
    old, new = sets[old_name], next(rs for name, rs in sets.items() if name != old_name)
    assert (old["spec"]["replicas"], old["status"]["replicas"]) == (0, 0)
    assert (new["spec"]["replicas"], new["status"]["readyReplicas"]) == (2, 2)
    assert new["metadata"]["annotations"][REVISION] == "2"
    # Back to the first template: its ReplicaSet scales up again as the newest revision.
    resize(m, "deployments", "web", cpu="500m")
    m.run(120)
    again = replica_sets(m)[old_name]
    assert again["metadata"]["annotations"][REVISION] == "3"
    assert again["spec"]["replicas"] == 2


def test_old_replica_sets_beyond_the_history_limit_go() -> None:
    m = model()
    manifest = workload("Deployment", replicas=1)
    manifest["spec"]["revisionHistoryLimit"] = 1
    m.server.objects.create("deployments", manifest)
    m.run(30)
    for cpu in ("300m", "350m", "400m"):
        resize(m, "deployments", "web", cpu=cpu)
        m.run(90)
    assert len(replica_sets(m)) == 2  # the current one and one old one


def test_replica_sets_go_with_their_deployment() -> None:
    m = model()
    m.server.objects.create(
        "deployments", workload("Deployment", replicas=1, containers=[container()])
    )
    m.run(30)
    assert replica_sets(m)
    m.server.objects.delete("deployments", "web")
    m.step()
    assert replica_sets(m) == {}


def test_the_model_never_changes_the_shared_copies_it_reads() -> None:
    """Deployments, StatefulSets and ReplicaSets are read through Objects.list_shared: one
    decoded copy per stored version, which other readers get too. A rollout, a rollback
    (the old ReplicaSet's revision annotation patched) and the scaling and status writes
    in between must leave every copy handed out as it was handed out."""
    m = model()
    objects = m.server.objects
    handed_out: list[tuple[dict[str, Any], dict[str, Any]]] = []
    list_shared = objects.list_shared

    def recording(resource: str, **options: Any) -> list[dict[str, Any]]:
        shared = list_shared(resource, **options)
        handed_out.extend((obj, copy.deepcopy(obj)) for obj in shared)
        return shared

    objects.list_shared = recording  # type: ignore[method-assign]
    objects.create("deployments", workload("Deployment", replicas=2))
    objects.create("statefulsets", workload("StatefulSet", name="db", replicas=2))
    m.run(30)
    for cpu in ("300m", "500m"):  # 500m: back to the first template
        resize(m, "deployments", "web", cpu=cpu)
        resize(m, "statefulsets", "db", cpu=cpu)
        m.run(120)
    assert {obj["kind"] for obj, _ in handed_out} == {"Deployment", "StatefulSet", "ReplicaSet"}
    # The rollback made the first ReplicaSet the newest revision again (a patch of it).
    assert sorted(rs["metadata"]["annotations"][REVISION] for rs in replica_sets(m).values()) == [
        "2",
        "3",
    ]
    changed = [obj["metadata"]["name"] for obj, then in handed_out if obj != then]
    assert changed == []
