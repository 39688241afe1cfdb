"""The workload controller: Deployments and StatefulSets scale, roll out within their bounds,
and report the status fields hvpa's rollout gate reads."""

from __future__ import annotations

import pytest
from sim_kit import container, model, resize, workload

from hvpa.sim.pods import SimPod
from hvpa.sim.replicasets import RevisionCount
from hvpa.sim.workloads import _revision_counts, resolve_rolling_bounds, template_hash

DEPLOYMENT = ("Deployment", "default", "web")
STATEFULSET = ("StatefulSet", "default", "web")


@pytest.mark.parametrize(
    ("rolling", "replicas", "expected"),
    [
        pytest.param(None, 4, (1, 1), id="defaults-25%"),
        pytest.param(
            {"maxSurge": "25%", "maxUnavailable": "25%"}, 3, (1, 0), id="surge-up-unavailable-down"
        ),
        pytest.param({"maxSurge": 0, "maxUnavailable": 0}, 5, (0, 1), id="both-zero"),
        pytest.param({"maxSurge": 2, "maxUnavailable": "50%"}, 5, (2, 2), id="mixed"),
    ],
)
def test_rolling_bounds_resolve_as_the_deployment_controller(
    rolling: dict[str, object] | None, replicas: int, expected: tuple[int, int]
) -> None:
    assert resolve_rolling_bounds(rolling, replicas) == expected


def test_template_hash_is_stable_and_changes_with_the_template() -> None:
    template = workload("Deployment", replicas=1)["spec"]["template"]
    # Equal templates whatever their key order (a decoded object need not keep the order).
    assert template_hash(template) == template_hash(dict(reversed(template.items())))
    other = workload("Deployment", replicas=1, containers=[container(cpu="600m")])["spec"][
        "template"
    ]
    assert template_hash(other) != template_hash(template)


@pytest.mark.parametrize("kind", ["Deployment", "StatefulSet"])
def test_pods_follow_every_template_change_even_back_to_an_earlier_one(kind: str) -> None:
    """The controller hashes a template again only when the object's resourceVersion moved:
    each change (and one back to the first template) must still reach the next pods."""
    resource = {"Deployment": "deployments", "StatefulSet": "statefulsets"}[kind]
    key = DEPLOYMENT if kind == "Deployment" else STATEFULSET
    m = model()
    m.server.objects.create(resource, workload(kind, replicas=1))
    m.run(30)
    for cpu in ("600m", "700m", "500m"):
        resize(m, resource, "web", cpu=cpu)
        m.run(120)
        template = m.server.objects.get(resource, "web")["spec"]["template"]
        pods = [p for p in m.pods(key) if not p.deleting]
        assert len(pods) == 1, cpu
        assert pods[0].revision.endswith(template_hash(template)), cpu
        assert pods[0].containers[0].size.request_cpu == int(cpu[:-1]), cpu


def test_revision_counts_keep_no_terminating_pod_and_count_the_ready() -> None:
    def pod(name: str, revision: str, *, ready: bool, deleting: bool = False) -> SimPod:
        return SimPod(
            "default",
            name,
            name,
            DEPLOYMENT,
            revision,
            0.0,
            [],
            ready_since=1.0 if ready else None,
            deleting_since=2.0 if deleting else None,
        )

    pods = [
        pod("a", "new", ready=True),
        pod("b", "old", ready=True),
        pod("c", "new", ready=False),
        pod("d", "old", ready=True, deleting=True),
        pod("e", "gone", ready=False, deleting=True),
    ]
    assert _revision_counts(pods) == {"new": RevisionCount(2, 1), "old": RevisionCount(1, 1)}


def test_deployment_scales_pods_and_reports_status() -> None:
    m = model()
    m.server.objects.create("deployments", workload("Deployment", replicas=3))
    m.run(30)
    pods = m.pods(DEPLOYMENT)
    assert len(pods) == 3 and all(p.ready and p.node for p in pods)
    status = m.status("deployments", "web")
    assert status["observedGeneration"] == 1
    assert (status["replicas"], status["updatedReplicas"], status["readyReplicas"]) == (3, 3, 3)
    assert status["availableReplicas"] == 3 and status["unavailableReplicas"] == 0
    conditions = {c["type"]: c for c in status["conditions"]}
    assert conditions["Available"]["status"] == "True"
    assert conditions["Progressing"]["reason"] == "NewReplicaSetAvailable"
    obj = m.server.objects.get("pods", pods[0].name)
    assert obj["metadata"]["labels"]["pod-template-hash"] == pods[0].revision
    assert obj["metadata"]["ownerReferences"][0]["kind"] == "ReplicaSet"  # replicasets.py

    m.server.objects.patch("deployments", "web", {"spec": {"replicas": 1}})
    m.step()
    status = m.status("deployments", "web")
    assert status["observedGeneration"] == 2
    assert status["replicas"] == 1
    m.run(10)
    assert len(m.pods(DEPLOYMENT)) == 1


@pytest.mark.parametrize(
    ("rolling", "replicas"),
    [
        pytest.param({"maxSurge": 1, "maxUnavailable": 0}, 4, id="surge-only"),
        pytest.param({"maxSurge": 0, "maxUnavailable": 2}, 4, id="unavailable-only"),
        pytest.param({"maxSurge": "50%", "maxUnavailable": "25%"}, 4, id="percentages"),
    ],
)
def test_rolling_update_stays_within_max_surge_and_max_unavailable(
    rolling: dict[str, object], replicas: int
) -> None:
    m = model()
    m.server.objects.create(
        "deployments",
        workload(
            "Deployment",
            replicas=replicas,
            strategy={"type": "RollingUpdate", "rollingUpdate": rolling},
        ),
    )
    m.run(30)
    surge, unavailable = resolve_rolling_bounds(rolling, replicas)
    old = {p.revision for p in m.pods(DEPLOYMENT)}
    resize(m, "deployments", "web", cpu="600m")
    saw_rollout = False
    for _ in range(60):
        m.step()
        live = [p for p in m.pods(DEPLOYMENT) if not p.deleting]
        assert len(live) <= replicas + surge
        assert sum(p.ready for p in live) >= replicas - unavailable
        status = m.status("deployments", "web")
        saw_rollout |= status["updatedReplicas"] < replicas
    assert saw_rollout
    pods = m.pods(DEPLOYMENT)
    assert len(pods) == replicas and not {p.revision for p in pods} & old
    assert all(p.containers[0].size.request_cpu == 600 for p in pods)
    status = m.status("deployments", "web")
    assert status["updatedReplicas"] == status["availableReplicas"] == replicas
    assert status["observedGeneration"] == 2


def test_recreate_deletes_every_old_pod_before_creating_new_ones() -> None:
    m = model()
    m.server.objects.create(
        "deployments", workload("Deployment", replicas=2, strategy={"type": "Recreate"})
    )
    m.run(30)
    old = m.pods(DEPLOYMENT)[0].revision
    resize(m, "deployments", "web", cpu="600m")
    for _ in range(20):
        m.step()
        revisions = {p.revision for p in m.pods(DEPLOYMENT)}
        assert len(revisions) <= 1
    assert [p.revision != old for p in m.pods(DEPLOYMENT)] == [True, True]


def test_statefulset_creates_in_order_and_updates_highest_ordinal_first() -> None:
    m = model()
    m.server.objects.create("statefulsets", workload("StatefulSet", replicas=3, serviceName="web"))
    created = []
    for _ in range(30):
        m.step()
        names = [p.name for p in m.pods(STATEFULSET)]
        if names and names[-1] not in created:
            created.append(names[-1])
    assert created == ["web-0", "web-1", "web-2"]
    status = m.status("statefulsets", "web")
    assert status["currentRevision"] == status["updateRevision"]
    first = status["updateRevision"]
    assert (status["replicas"], status["readyReplicas"], status["updatedReplicas"]) == (3, 3, 3)

    resize(m, "statefulsets", "web", cpu="600m")
    deleted: list[str] = []
    for _ in range(60):
        m.step()
        deleting = [p.name for p in m.pods(STATEFULSET) if p.deleting]
        assert len(deleting) <= 1
        if deleting and deleting[0] not in deleted:
            deleted.append(deleting[0])
        status = m.status("statefulsets", "web")
        if status["updatedReplicas"] < 3:
            assert status["currentRevision"] == first
    assert deleted == ["web-2", "web-1", "web-0"]
    status = m.status("statefulsets", "web")
    assert status["currentRevision"] == status["updateRevision"] != first
    assert status["currentReplicas"] == 3


def test_statefulset_scales_down_from_the_highest_ordinal() -> None:
    m = model()
    m.server.objects.create("statefulsets", workload("StatefulSet", replicas=3, serviceName="web"))
    m.run(120)
    m.server.objects.patch("statefulsets", "web", {"spec": {"replicas": 1}})
    m.run(60)
    assert [p.name for p in m.pods(STATEFULSET)] == ["web-0"]


def test_scale_down_deletes_unready_and_newest_pods_first() -> None:
    m = model()
    m.server.objects.create("deployments", workload("Deployment", replicas=2))
    m.run(30)
    ready = {p.name for p in m.pods(DEPLOYMENT)}
    m.server.objects.patch("deployments", "web", {"spec": {"replicas": 3}})
    m.step()
    m.step()
    m.server.objects.patch("deployments", "web", {"spec": {"replicas": 2}})
    m.run(20)
    assert {p.name for p in m.pods(DEPLOYMENT)} == ready


def test_pods_of_a_deleted_workload_are_deleted() -> None:
    m = model()
    m.server.objects.create("deployments", workload("Deployment", replicas=2))
    m.run(30)
    m.server.objects.delete("deployments", "web")
    m.run(30)
    assert m.pods(DEPLOYMENT) == []
    assert m.server.objects.list("pods") == []
