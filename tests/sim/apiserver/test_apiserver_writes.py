"""Create, get, update and delete as the real API documents them: codes, reasons, Status
bodies, server-set metadata, preconditions, status/spec separation, generations, defaults."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from apiserver_http import FAKE_NOW, Http
from apiserver_objects import deployment, pod

from hvpa.records import format_time
from hvpa.sim.apiserver import ApiServer, Conflict, Invalid, NotFound
from hvpa.sim.apiserver.defaults import apply_defaults, has_defaults

DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
PODS = "/api/v1/namespaces/default/pods"
LEASES = "/apis/coordination.k8s.io/v1/namespaces/default/leases"
HVPAS = "/apis/autoscaling.k8s.io/v1alpha1/namespaces/default/hvpas"


def hvpa(name: str = "web") -> dict[str, Any]:
    return {
        "apiVersion": "autoscaling.k8s.io/v1alpha1",
        "kind": "Hvpa",
        "metadata": {"name": name},
        "spec": {"replicas": 2, "targetRef": {"kind": "Deployment", "name": name}},
    }


def assert_status(body: dict[str, Any], code: int, reason: str) -> None:
    assert body["kind"] == "Status"
    assert body["apiVersion"] == "v1"
    assert body["status"] == "Failure"
    assert body["code"] == code
    assert body["reason"] == reason
    assert body["message"]


async def test_create_sets_server_fields(http: Http) -> None:
    reply = await http.post(DEPLOYMENTS, deployment())
    assert reply.status == 201
    metadata = reply.body["metadata"]
    assert metadata["namespace"] == "default"
    assert len(metadata["uid"]) == 36
    assert metadata["creationTimestamp"] == format_time(FAKE_NOW)
    assert metadata["generation"] == 1
    assert int(metadata["resourceVersion"]) > 0
    assert reply.body["status"] == {}


async def test_create_ignores_client_set_system_fields(http: Http) -> None:
    body = deployment()
    body["metadata"].update(uid="mine", generation=9, creationTimestamp="2001-01-01T00:00:00Z")
    body["status"] = {"replicas": 5}
    reply = await http.post(DEPLOYMENTS, body)
    assert reply.status == 201
    assert reply.body["metadata"]["uid"] != "mine"
    assert reply.body["metadata"]["generation"] == 1
    assert reply.body["status"] == {}


@pytest.mark.parametrize(
    ("change", "code", "reason"),
    [
        pytest.param(lambda b: b["metadata"].pop("name"), 422, "Invalid", id="missing-name"),
        pytest.param(lambda b: b["metadata"].update(name="Web"), 422, "Invalid", id="bad-name"),
        pytest.param(
            lambda b: b["metadata"].update(namespace="other"),
            400,
            "BadRequest",
            id="namespace-mismatch",
        ),
        pytest.param(
            lambda b: b["metadata"].update(resourceVersion="5"), 500, "InternalError", id="rv-set"
        ),
        pytest.param(lambda b: b.update(kind="StatefulSet"), 400, "BadRequest", id="wrong-kind"),
        pytest.param(
            lambda b: b["spec"]["template"]["metadata"].update(labels={"app": "other"}),
            422,
            "Invalid",
            id="selector-mismatch",
        ),
        pytest.param(
            lambda b: b["spec"].update(replicas=-1), 422, "Invalid", id="negative-replicas"
        ),
    ],
)
async def test_create_rejections(http: Http, change: Any, code: int, reason: str) -> None:
    body = deployment()
    change(body)
    reply = await http.post(DEPLOYMENTS, body)
    assert reply.status == code, reply.body
    assert_status(reply.body, code, reason)


async def test_a_missing_selector_also_fails_to_match_the_template(http: Http) -> None:
    """kube-apiserver v1.37 names both causes (tests/e2e/e2e_corpus.py, invalid_object)."""
    body = deployment()
    del body["spec"]["selector"]
    reply = await http.post(DEPLOYMENTS, body)
    assert reply.status == 422, reply.body
    fields = [cause["field"] for cause in reply.body["details"]["causes"]]
    assert fields == ["spec.selector", "spec.template.metadata.labels"]


async def test_invalid_carries_causes(http: Http) -> None:
    body = deployment()
    del body["metadata"]["name"]
    reply = await http.post(DEPLOYMENTS, body)
    details = reply.body["details"]
    assert details["kind"] == "Deployment"
    assert details["group"] == "apps"
    assert details["causes"] == [
        {
            "reason": "FieldValueRequired",
            "message": "Required value: name or generateName is required",
            "field": "metadata.name",
        }
    ]


async def test_create_conflict_and_generate_name(http: Http) -> None:
    assert (await http.post(DEPLOYMENTS, deployment())).status == 201
    again = await http.post(DEPLOYMENTS, deployment())
    assert again.status == 409
    assert_status(again.body, 409, "AlreadyExists")
    assert again.body["message"] == 'deployments.apps "web" already exists'
    assert again.body["details"] == {"name": "web", "group": "apps", "kind": "deployments"}
    generated = deployment()
    generated["metadata"] = {"generateName": "web-"}
    first = await http.post(DEPLOYMENTS, generated)
    second = await http.post(DEPLOYMENTS, generated)
    names = {first.body["metadata"]["name"], second.body["metadata"]["name"]}
    assert len(names) == 2
    assert all(name.startswith("web-") and len(name) == 9 for name in names)


async def test_create_in_missing_namespace_is_not_found(http: Http) -> None:
    reply = await http.post("/api/v1/namespaces/nowhere/configmaps", {"metadata": {"name": "a"}})
    assert reply.status == 404
    assert reply.body["message"] == 'namespaces "nowhere" not found'


async def test_get_not_found(http: Http) -> None:
    reply = await http.get(f"{DEPLOYMENTS}/missing")
    assert reply.status == 404
    assert_status(reply.body, 404, "NotFound")
    assert reply.body["message"] == 'deployments.apps "missing" not found'
    unknown = await http.get("/apis/apps/v1/namespaces/default/gadgets")
    assert unknown.status == 404


async def test_deployment_defaults(http: Http) -> None:
    reply = await http.post(DEPLOYMENTS, deployment())
    spec = reply.body["spec"]
    assert spec["replicas"] == 1
    assert spec["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"},
    }
    assert spec["revisionHistoryLimit"] == 10
    container = spec["template"]["spec"]["containers"][0]
    assert container["imagePullPolicy"] == "IfNotPresent"
    assert container["terminationMessagePolicy"] == "File"


async def test_pod_create_status_defaults_and_quantities(http: Http) -> None:
    body = pod("p")
    body["spec"]["containers"][0]["resources"] = {"limits": {"cpu": 0.5, "memory": "1024Mi"}}
    body["status"] = {"phase": "Running"}
    reply = await http.post(PODS, body)
    assert reply.status == 201
    resources = reply.body["spec"]["containers"][0]["resources"]
    assert resources == {
        "limits": {"cpu": "500m", "memory": "1Gi"},
        "requests": {"cpu": "500m", "memory": "1Gi"},
    }
    assert reply.body["status"] == {"phase": "Pending", "qosClass": "Guaranteed"}


@pytest.mark.parametrize("bad", ["lots", True])
async def test_bad_quantity_is_bad_request(http: Http, bad: Any) -> None:
    # A number equal to the bad value first: its canonical form must not answer for it.
    good = pod("good")
    good["spec"]["containers"][0]["resources"] = {"requests": {"cpu": 1.0}}
    assert (await http.post(PODS, good)).status == 201
    body = pod("p")
    body["spec"]["containers"][0]["resources"] = {"requests": {"cpu": bad}}
    reply = await http.post(PODS, body)
    assert reply.status == 400


async def test_requests_above_limits_are_invalid(http: Http) -> None:
    body = deployment()
    body["spec"]["template"]["spec"]["containers"][0]["resources"] = {
        "requests": {"cpu": "2"},
        "limits": {"cpu": "1"},
    }
    reply = await http.post(DEPLOYMENTS, body)
    assert reply.status == 422
    assert "must be less than or equal to cpu limit of 1" in reply.body["message"]


async def test_update_with_stale_resource_version_conflicts(http: Http) -> None:
    created = (await http.post(DEPLOYMENTS, deployment())).body
    created["spec"]["replicas"] = 2
    first = await http.put(f"{DEPLOYMENTS}/web", created)
    assert first.status == 200
    assert int(first.body["metadata"]["resourceVersion"]) > int(
        created["metadata"]["resourceVersion"]
    )
    created["spec"]["replicas"] = 3
    stale = await http.put(f"{DEPLOYMENTS}/web", created)
    assert stale.status == 409
    assert_status(stale.body, 409, "Conflict")
    assert stale.body["message"] == (
        'Operation cannot be fulfilled on deployments.apps "web": the object has been modified; '
        "please apply your changes to the latest version and try again"
    )


async def test_update_without_resource_version_is_unconditional(http: Http) -> None:
    created = (await http.post(DEPLOYMENTS, deployment())).body
    del created["metadata"]["resourceVersion"]
    created["spec"]["replicas"] = 4
    reply = await http.put(f"{DEPLOYMENTS}/web", created)
    assert reply.status == 200
    assert reply.body["spec"]["replicas"] == 4


async def test_update_of_missing_object_and_name_mismatch(http: Http) -> None:
    assert (await http.put(f"{DEPLOYMENTS}/web", deployment())).status == 404
    await http.post(DEPLOYMENTS, deployment())
    reply = await http.put(f"{DEPLOYMENTS}/other", deployment())
    assert reply.status == 400


async def test_leases_create_on_update_but_need_resource_version(http: Http) -> None:
    lease = {"metadata": {"name": "hvpa"}, "spec": {"holderIdentity": "a"}}
    created = await http.put(f"{LEASES}/hvpa", lease)
    assert created.status == 201
    unconditional = await http.put(f"{LEASES}/hvpa", lease)
    assert unconditional.status == 422
    lease["metadata"]["resourceVersion"] = created.body["metadata"]["resourceVersion"]
    lease["spec"]["holderIdentity"] = "b"
    assert (await http.put(f"{LEASES}/hvpa", lease)).status == 200


async def test_custom_resources_need_a_resource_version_to_update(http: Http) -> None:
    created = (await http.post(HVPAS, hvpa())).body
    del created["metadata"]["resourceVersion"]
    created["spec"]["replicas"] = 3
    unconditional = await http.put(f"{HVPAS}/web", created)
    assert unconditional.status == 422, unconditional.body
    assert unconditional.body["details"]["causes"][0]["field"] == "metadata.resourceVersion"
    # Qualified by the resource, not the kind, as kube-apiserver v1.37 answers (issue 16's
    # differential tests: tests/e2e/e2e_corpus.py, update_without_a_resource_version).
    assert unconditional.body["details"]["kind"] == "hvpas"
    assert unconditional.body["message"].startswith('hvpas.autoscaling.k8s.io "web" is invalid')
    status = await http.put(f"{HVPAS}/web/status", {**created, "status": {"replicas": 3}})
    assert status.status == 422, status.body


async def test_noop_update_keeps_resource_version(http: Http, server: ApiServer) -> None:
    created = (await http.post(DEPLOYMENTS, deployment())).body
    before = server.resource_version
    reply = await http.put(f"{DEPLOYMENTS}/web", created)
    assert reply.status == 200
    assert reply.body["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
    assert server.resource_version == before


async def test_main_resource_ignores_status_and_status_ignores_spec(http: Http) -> None:
    created = (await http.post(DEPLOYMENTS, deployment())).body
    created["status"] = {"replicas": 3}
    created["spec"]["replicas"] = 2
    updated = (await http.put(f"{DEPLOYMENTS}/web", created)).body
    assert updated["status"] == {}
    assert updated["spec"]["replicas"] == 2
    updated["status"] = {"replicas": 2, "observedGeneration": 2}
    updated["spec"]["replicas"] = 9
    updated["metadata"]["labels"] = {"changed": "yes"}
    status = (await http.put(f"{DEPLOYMENTS}/web/status", updated)).body
    assert status["status"] == {"replicas": 2, "observedGeneration": 2}
    assert status["spec"]["replicas"] == 2
    assert "labels" not in status["metadata"]
    assert status["metadata"]["generation"] == 2


async def test_generation_counts_spec_changes_only(http: Http) -> None:
    created = (await http.post(DEPLOYMENTS, deployment())).body
    created["metadata"]["labels"] = {"tier": "front"}
    labelled = (await http.put(f"{DEPLOYMENTS}/web", created)).body
    assert labelled["metadata"]["generation"] == 1
    patched = await http.patch(f"{DEPLOYMENTS}/web", {"spec": {"replicas": 5}})
    assert patched.body["metadata"]["generation"] == 2
    status = await http.patch(f"{DEPLOYMENTS}/web/status", {"status": {"replicas": 5}})
    assert status.body["metadata"]["generation"] == 2


async def test_custom_resource_generation_and_status(http: Http) -> None:
    created = await http.post(HVPAS, {**hvpa(), "status": {"replicas": 1}})
    assert created.status == 201
    assert "status" not in created.body
    assert created.body["metadata"]["generation"] == 1
    status = await http.patch(
        f"{HVPAS}/web/status", {"status": {"replicas": 2}, "spec": {"replicas": 7}}
    )
    assert status.body["status"] == {"replicas": 2}
    assert status.body["spec"]["replicas"] == 2
    assert status.body["metadata"]["generation"] == 1
    spec = await http.patch(f"{HVPAS}/web", {"spec": {"replicas": 3}, "status": {"replicas": 9}})
    assert spec.body["metadata"]["generation"] == 2
    assert spec.body["status"] == {"replicas": 2}


async def test_delete_answers_status_or_object(http: Http) -> None:
    created = (await http.post(DEPLOYMENTS, deployment())).body
    reply = await http.delete(f"{DEPLOYMENTS}/web")
    assert reply.status == 200
    assert reply.body == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": {
            "name": "web",
            "group": "apps",
            "kind": "deployments",
            "uid": created["metadata"]["uid"],
        },
    }
    assert (await http.get(f"{DEPLOYMENTS}/web")).status == 404
    assert (await http.delete(f"{DEPLOYMENTS}/web")).status == 404
    await http.post(PODS, pod("p"))
    deleted_pod = await http.delete(f"{PODS}/p")
    assert deleted_pod.body["kind"] == "Pod"


async def test_delete_preconditions(http: Http) -> None:
    await http.post(DEPLOYMENTS, deployment())
    reply = await http.delete(f"{DEPLOYMENTS}/web", {"preconditions": {"uid": "not-it"}})
    assert reply.status == 409
    assert "Precondition failed: UID in precondition: not-it" in reply.body["message"]


async def test_finalizers_hold_deletion_until_removed(http: Http) -> None:
    body = {"metadata": {"name": "c", "finalizers": ["example.com/hold"]}}
    await http.post("/api/v1/namespaces/default/configmaps", body)
    held = await http.delete("/api/v1/namespaces/default/configmaps/c")
    assert held.status == 200
    assert held.body["metadata"]["deletionTimestamp"] == format_time(FAKE_NOW)
    current = (await http.get("/api/v1/namespaces/default/configmaps/c")).body
    current["metadata"]["finalizers"] = []
    await http.put("/api/v1/namespaces/default/configmaps/c", current)
    assert (await http.get("/api/v1/namespaces/default/configmaps/c")).status == 404


async def test_scheduled_pods_are_deleted_gracefully(http: Http) -> None:
    await http.post(PODS, pod("p", node="node-1"))
    marked = await http.delete(f"{PODS}/p")
    assert marked.body["metadata"]["deletionGracePeriodSeconds"] == 30
    assert marked.body["metadata"]["deletionTimestamp"] == format_time(FAKE_NOW + 30)
    assert (await http.get(f"{PODS}/p")).status == 200
    gone = await http.delete(f"{PODS}/p", {"gracePeriodSeconds": 0})
    assert gone.status == 200
    assert (await http.get(f"{PODS}/p")).status == 404


async def test_pod_spec_is_immutable_but_image_is_not(http: Http) -> None:
    await http.post(PODS, pod("p"))
    resources = {"spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": "1"}}}]}}
    refused = await http.patch(f"{PODS}/p", resources, kind="strategic")
    assert refused.status == 422
    assert "pod updates may not change fields" in refused.body["message"]
    image = {"spec": {"containers": [{"name": "app", "image": "nginx:1.26"}]}}
    assert (await http.patch(f"{PODS}/p", image, kind="strategic")).status == 200


async def test_binding_schedules_a_pod(http: Http) -> None:
    await http.post(PODS, pod("p"))
    binding = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "p"},
        "target": {"kind": "Node", "name": "n1"},
    }
    reply = await http.post(f"{PODS}/p/binding", binding)
    assert reply.status == 201
    bound = (await http.get(f"{PODS}/p")).body
    assert bound["spec"]["nodeName"] == "n1"
    assert bound["status"]["conditions"][0]["type"] == "PodScheduled"
    assert (await http.post(f"{PODS}/p/binding", binding)).status == 409


async def test_namespace_deletion_removes_its_objects(http: Http) -> None:
    await http.post("/api/v1/namespaces", {"metadata": {"name": "team"}})
    await http.post("/api/v1/namespaces/team/configmaps", {"metadata": {"name": "c"}})
    assert (await http.delete("/api/v1/namespaces/team")).status == 200
    assert (await http.get("/api/v1/namespaces/team/configmaps/c")).status == 404


async def test_namespaces_cannot_be_deleted_as_a_collection(http: Http) -> None:
    reply = await http.delete("/api/v1/namespaces")
    assert reply.status == 405
    assert_status(reply.body, 405, "MethodNotAllowed")
    assert (await http.get("/api/v1/namespaces/default")).status == 200


async def test_delete_collection_by_label(http: Http) -> None:
    for name, app in (("a", "web"), ("b", "web"), ("c", "db")):
        await http.post(PODS, pod(name, app=app))
    reply = await http.delete(PODS, labelSelector="app=web")
    assert reply.status == 200
    assert reply.body["kind"] == "PodList"
    assert [p["metadata"]["name"] for p in reply.body["items"]] == ["a", "b"]
    remaining = (await http.get(PODS)).body["items"]
    assert [p["metadata"]["name"] for p in remaining] == ["c"]


async def test_dry_run_writes_nothing(http: Http, server: ApiServer) -> None:
    before = server.resource_version
    reply = await http.call("POST", DEPLOYMENTS, deployment(), params={"dryRun": "All"})
    assert reply.status == 201
    assert server.resource_version == before
    assert (await http.get(f"{DEPLOYMENTS}/web")).status == 404


def test_objects_facade_uses_the_same_rules() -> None:
    server = ApiServer(seed=1, clock=lambda: FAKE_NOW)
    objects = server.objects
    created = objects.create("deployments.apps", deployment())
    assert created["spec"]["replicas"] == 1
    with pytest.raises(Conflict):
        objects.update(
            "deploy", {**created, "metadata": {**created["metadata"], "resourceVersion": "1"}}
        )
    with pytest.raises(Invalid):
        objects.create("deployments", deployment("Bad"))
    scaled = objects.patch("deployments", "web", {"spec": {"replicas": 3}}, subresource="scale")
    assert scaled["spec"]["replicas"] == 3
    assert objects.get("deployments", "web")["metadata"]["generation"] == 2
    running = objects.create("pods", {**pod("p"), "status": {"phase": "Running"}}, keep_status=True)
    assert running["status"] == {"phase": "Running"}
    assert objects.bind_pod("p", "n1")["spec"]["nodeName"] == "n1"
    assert [
        p["metadata"]["name"] for p in objects.list("pods", field_selector="spec.nodeName=n1")
    ] == ["p"]
    objects.delete("deployments", "web")
    with pytest.raises(NotFound):
        objects.get("deployments", "web")
    with pytest.raises(LookupError):
        objects.get("gadgets", "x")


def test_a_shared_list_decodes_a_version_once_and_follows_every_write() -> None:
    """Objects.list_shared gives every caller the one decoded copy of each stored version:
    the same dict while the object is not written, a new one carrying the change once it
    is (spec, status or deletion); `list` stays a private copy each time."""
    server = ApiServer(seed=1, clock=lambda: FAKE_NOW)
    objects = server.objects
    objects.create("deployments", deployment("a"))
    objects.create("deployments", deployment("b"))
    first = objects.list_shared("deployments")
    again = objects.list_shared("deployments")
    assert [x is y for x, y in zip(first, again, strict=True)] == [True, True]
    assert first == objects.list("deployments")
    assert objects.list("deployments")[0] is not first[0]

    objects.patch("deployments", "b", {"spec": {"replicas": 3}})
    scaled = objects.list_shared("deployments")
    assert scaled[0] is first[0]
    assert (first[1]["spec"]["replicas"], scaled[1]["spec"]["replicas"]) == (1, 3)
    objects.patch("deployments", "b", {"status": {"replicas": 3}}, subresource="status")
    status = objects.list_shared("deployments")
    assert status[1]["status"] == {"replicas": 3}
    assert status == objects.list("deployments")
    objects.delete("deployments", "a")
    assert [d["metadata"]["name"] for d in objects.list_shared("deployments")] == ["b"]


@pytest.mark.parametrize(
    ("resource", "defaulted"),
    [
        pytest.param(resource, defaulted, id=resource)
        for resource, defaulted in (
            ("pods", True),
            ("deployments", True),
            ("statefulsets", True),
            ("replicasets", True),
            ("namespaces", True),
            ("horizontalpodautoscalers", True),
            ("configmaps", False),
            ("leases", False),
            ("hvpas", False),
            ("verticalpodautoscalers", False),
        )
    ],
)
def test_has_defaults_says_which_kinds_defaulting_changes(resource: str, defaulted: bool) -> None:
    """A /status write of a kind without defaults shares the stored object's parts instead of
    decoding it again (registry.py): has_defaults must be False only where apply_defaults
    changes nothing, and True where it does (an object of the kind with an empty spec and
    one bare container, or none: what each defaulter fills in)."""
    rtype = ApiServer(seed=1, clock=lambda: FAKE_NOW).objects.resource(resource)
    obj: dict[str, Any] = {
        "metadata": {"name": "x"},
        "spec": {"containers": [{"name": "app"}], "template": {"spec": {"containers": []}}},
    }
    before = copy.deepcopy(obj)
    apply_defaults(rtype, obj)
    assert has_defaults(rtype) is defaulted
    assert (obj != before) is defaulted
