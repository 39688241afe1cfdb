"""metadata.managedFields and server-side apply, as kube-apiserver records and answers them.

Covers: the manager of a write (?fieldManager=, else the User-Agent's first
segment), Update ownership (a write takes the fields it changes from every
other manager), /scale and /status entries, apply (exact ownership, conflicts
named field by field, force, pruning what the applier no longer applies),
the option errors, and clearing the entries with `managedFields: [{}]`.
The expected shapes are those of kube-apiserver 1.37 (upstream's
managedfields/internal/conflict.go prints conflicts; structured-merge-diff's
merge/update.go moves ownership).
"""

from __future__ import annotations

from typing import Any

from apiserver_http import Http
from apiserver_objects import widget

DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
APPLY = "application/apply-patch+yaml"
REPLICAS = {"f:spec": {"f:replicas": {}}}
CPU_REQUEST = {
    "f:spec": {
        "f:template": {
            "f:spec": {
                "f:containers": {'k:{"name":"app"}': {"f:resources": {"f:requests": {"f:cpu": {}}}}}
            }
        }
    }
}


def deployment(replicas: int = 3, cpu: str = "100m") -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [
                        {"name": "app", "image": "app:1", "resources": {"requests": {"cpu": cpu}}}
                    ]
                },
            },
        },
    }


def entries(body: dict[str, Any]) -> dict[tuple[str, str, str], dict[str, Any]]:
    """managedFields by (manager, operation, subresource), each entry's fieldsV1."""
    return {
        (e["manager"], e["operation"], e.get("subresource", "")): e["fieldsV1"]
        for e in body["metadata"].get("managedFields") or ()
    }


def owns(fields: dict[str, Any], *path: str) -> bool:
    node: Any = fields
    for element in path:
        if not isinstance(node, dict) or element not in node:
            return False
        node = node[element]
    return True


async def create(http: Http, manager: str = "argocd-controller") -> dict[str, Any]:
    reply = await http.call("POST", DEPLOYMENTS, deployment(), params={"fieldManager": manager})
    assert reply.status == 201, reply.body
    return dict(reply.body)


async def apply(http: Http, body: dict[str, Any], manager: str, **params: str) -> Any:
    return await http.call(
        "PATCH",
        f"{DEPLOYMENTS}/web",
        body,  # JSON, which is YAML
        content_type=APPLY,
        params={"fieldManager": manager, **params},
    )


async def test_create_records_the_creator_as_an_update_of_every_field_it_set(http: Http) -> None:
    body = await create(http)
    (entry,) = body["metadata"]["managedFields"]
    assert (entry["manager"], entry["operation"], entry["apiVersion"]) == (
        "argocd-controller",
        "Update",
        "apps/v1",
    )
    assert entry["fieldsType"] == "FieldsV1" and entry["time"]
    fields = entry["fieldsV1"]
    assert owns(fields, "f:spec", "f:replicas")
    container = fields["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"app"}']
    assert "." in container and owns(container, "f:resources", "f:requests", "f:cpu")
    # Defaults the server filled in belong to the creator too, as upstream records them.
    assert owns(fields, "f:spec", "f:progressDeadlineSeconds")
    # What the server sets itself is nobody's.
    assert not owns(fields, "f:metadata", "f:name")


async def test_a_write_without_field_manager_is_named_after_the_user_agent(http: Http) -> None:
    reply = await http.call(
        "POST", DEPLOYMENTS, deployment(), headers={"User-Agent": "kubectl/v1.37.2 (linux/amd64)"}
    )
    assert [e["manager"] for e in reply.body["metadata"]["managedFields"]] == ["kubectl"]


async def test_scale_and_strategic_patch_take_over_exactly_the_fields_they_change(
    http: Http,
) -> None:
    await create(http)
    scale = {
        "apiVersion": "autoscaling/v1",
        "kind": "Scale",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"replicas": 5},
    }
    reply = await http.call(
        "PUT", f"{DEPLOYMENTS}/web/scale", scale, params={"fieldManager": "hvpa"}
    )
    assert reply.status == 200
    patch = {
        "spec": {
            "template": {
                "spec": {
                    "containers": [{"name": "app", "resources": {"requests": {"cpu": "200m"}}}]
                }
            }
        }
    }
    reply = await http.call(
        "PATCH",
        f"{DEPLOYMENTS}/web",
        patch,
        content_type="application/strategic-merge-patch+json",
        params={"fieldManager": "hvpa"},
    )
    managed = entries(reply.body)
    assert managed[("hvpa", "Update", "scale")] == REPLICAS
    assert managed[("hvpa", "Update", "")] == CPU_REQUEST
    creator = managed[("argocd-controller", "Update", "")]
    assert not owns(creator, "f:spec", "f:replicas")
    requests = creator["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"app"}']
    assert not owns(requests, "f:resources", "f:requests", "f:cpu")
    assert owns(requests, "f:image")


async def test_a_write_that_changes_nothing_takes_nothing(http: Http) -> None:
    await create(http)
    reply = await http.call(
        "PATCH",
        f"{DEPLOYMENTS}/web",
        {"spec": {"replicas": 3}},
        content_type="application/merge-patch+json",
        params={"fieldManager": "someone"},
    )
    assert [e["manager"] for e in reply.body["metadata"]["managedFields"]] == ["argocd-controller"]


async def test_status_writes_are_recorded_with_their_subresource(http: Http) -> None:
    body = await create(http)
    body["status"] = {"replicas": 3}
    reply = await http.call(
        "PUT", f"{DEPLOYMENTS}/web/status", body, params={"fieldManager": "kube-controller-manager"}
    )
    managed = entries(reply.body)
    assert managed[("kube-controller-manager", "Update", "status")] == {
        "f:status": {"f:replicas": {}}
    }


async def test_apply_conflicts_name_every_other_managers_field(http: Http) -> None:
    await create(http)
    await http.call(
        "PATCH",
        f"{DEPLOYMENTS}/web/scale",
        {"spec": {"replicas": 5}},
        content_type="application/merge-patch+json",
        params={"fieldManager": "hvpa"},
    )
    reply = await apply(http, deployment(replicas=3), "flux")
    assert reply.status == 409
    assert reply.body["reason"] == "Conflict"
    assert reply.body["message"] == (
        'Apply failed with 1 conflict: conflict with "hvpa" with subresource "scale" '
        "using apps/v1: .spec.replicas"
    )
    assert reply.body["details"]["causes"] == [
        {
            "reason": "FieldManagerConflict",
            "message": 'conflict with "hvpa" with subresource "scale" using apps/v1',
            "field": ".spec.replicas",
        }
    ]
    unchanged = await http.get(f"{DEPLOYMENTS}/web")
    assert unchanged.body["spec"]["replicas"] == 5


async def test_forced_apply_takes_the_fields_over(http: Http) -> None:
    await create(http)
    await http.call(
        "PATCH",
        f"{DEPLOYMENTS}/web/scale",
        {"spec": {"replicas": 5}},
        content_type="application/merge-patch+json",
        params={"fieldManager": "hvpa"},
    )
    reply = await apply(http, deployment(replicas=3), "flux", force="true")
    assert reply.status == 200
    assert reply.body["spec"]["replicas"] == 3
    managed = entries(reply.body)
    assert ("hvpa", "Update", "scale") not in managed
    flux = managed[("flux", "Apply", "")]
    assert owns(flux, "f:spec", "f:replicas")
    # Exactly what the configuration sets: no defaults.
    assert not owns(flux, "f:spec", "f:progressDeadlineSeconds")


async def test_applying_the_live_value_shares_the_field_without_conflict(http: Http) -> None:
    await create(http)
    reply = await apply(http, deployment(replicas=3), "flux")
    assert reply.status == 200
    managed = entries(reply.body)
    assert owns(managed[("flux", "Apply", "")], "f:spec", "f:replicas")
    assert owns(managed[("argocd-controller", "Update", "")], "f:spec", "f:replicas")


async def test_a_field_the_applier_no_longer_applies_is_removed_when_only_it_owned_it(
    http: Http,
) -> None:
    first = deployment()
    first["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"] = {"cpu": "1"}
    reply = await apply(http, first, "flux")
    assert reply.status == 201
    reply = await apply(http, deployment(), "flux")
    container = reply.body["spec"]["template"]["spec"]["containers"][0]
    assert container["resources"] == {"requests": {"cpu": "100m"}}


async def test_apply_needs_a_field_manager_and_force_only_goes_with_apply(http: Http) -> None:
    await create(http)
    reply = await http.call("PATCH", f"{DEPLOYMENTS}/web", deployment(), content_type=APPLY)
    assert reply.status == 422
    assert reply.body["message"] == (
        'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: '
        "is required for apply patch"
    )
    # The options have no name, and StatusDetails leave an empty one out (as kube-apiserver
    # v1.37.2 answered the corpus' field_manager_options probe).
    assert "name" not in reply.body["details"]
    assert reply.body["details"]["kind"] == "PatchOptions"
    reply = await http.call(
        "PATCH",
        f"{DEPLOYMENTS}/web",
        {"spec": {"replicas": 4}},
        content_type="application/merge-patch+json",
        params={"force": "true"},
    )
    assert reply.status == 422
    assert "force: Forbidden: may not be specified for non-apply patch" in reply.body["message"]
    reply = await http.call("POST", DEPLOYMENTS, deployment(), params={"fieldManager": "x" * 129})
    assert reply.status == 422


async def test_managed_fields_of_one_empty_entry_clear_them_all(http: Http) -> None:
    await create(http)
    reply = await http.call(
        "PATCH",
        f"{DEPLOYMENTS}/web",
        {"metadata": {"managedFields": [{}]}},
        content_type="application/merge-patch+json",
    )
    assert "managedFields" not in reply.body["metadata"]
    # An empty list keeps them, so a client unaware of the field cannot strip it.
    await http.call(
        "PATCH",
        f"{DEPLOYMENTS}/web",
        {"spec": {"replicas": 4}},
        content_type="application/merge-patch+json",
        params={"fieldManager": "me"},
    )
    reply = await http.call(
        "PATCH",
        f"{DEPLOYMENTS}/web",
        {"metadata": {"managedFields": []}},
        content_type="application/merge-patch+json",
    )
    assert [e["manager"] for e in reply.body["metadata"]["managedFields"]] == ["me"]


# What the differential tests (tests/e2e/e2e_corpus.py, the managed_fields_* and
# server_side_apply probes) found kube-apiserver v1.37.2 to do.


async def test_a_scale_writers_entry_has_no_time(http: Http) -> None:
    """The server converts the Scale's entries into the object's keeping the object entry's
    time (upstream's ScaleHandler.ToParent), and a /scale writer's entry never had one."""
    await create(http)
    reply = await http.call(
        "PUT",
        f"{DEPLOYMENTS}/web/scale",
        {"spec": {"replicas": 5}},
        params={"fieldManager": "hvpa"},
    )
    assert reply.status == 200, reply.body
    body = (await http.get(f"{DEPLOYMENTS}/web")).body
    (scaler,) = [e for e in body["metadata"]["managedFields"] if e["manager"] == "hvpa"]
    assert scaler["fieldsV1"] == REPLICAS
    assert "time" not in scaler


async def test_an_apply_that_changes_nothing_has_no_time(http: Http) -> None:
    await create(http)
    reply = await apply(http, deployment(replicas=3), "flux")
    (applier,) = [e for e in reply.body["metadata"]["managedFields"] if e["manager"] == "flux"]
    assert "time" not in applier
    changed = await apply(http, deployment(replicas=4), "flux", force="true")
    (applier,) = [e for e in changed.body["metadata"]["managedFields"] if e["manager"] == "flux"]
    assert applier["time"]


async def test_a_custom_resources_lists_are_owned_whole(http: Http) -> None:
    """A CRD schema that declares no x-kubernetes-list-type makes every list atomic: a status
    writer owns `conditions`, not each condition by its type as in a built-in kind."""
    vpas = "/apis/autoscaling.k8s.io/v1/namespaces/default/verticalpodautoscalers"
    vpa = {
        "apiVersion": "autoscaling.k8s.io/v1",
        "kind": "VerticalPodAutoscaler",
        "metadata": {"name": "web"},
        "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}},
    }
    created = await http.call("POST", vpas, vpa)
    assert created.status == 201, created.body
    body = dict(created.body)
    body["status"] = {"conditions": [{"type": "RecommendationProvided", "status": "True"}]}
    reply = await http.call(
        "PUT", f"{vpas}/web/status", body, params={"fieldManager": "recommender"}
    )
    assert entries(reply.body)[("recommender", "Update", "status")] == {
        "f:status": {".": {}, "f:conditions": {}}
    }


async def test_a_status_write_that_only_clears_the_entries_is_a_write(
    http: Http, widgets: str
) -> None:
    """A custom resource's /status write starts from the stored object's own parts (no second
    decode); the metadata it changes must still be its own, so a write whose one change is
    the entries cleared (`[{}]`, the status as it was) is stored, not taken for a no-op."""
    created = await http.call("POST", widgets, widget(), params={"fieldManager": "maker"})
    assert created.status == 201, created.body
    body = dict(created.body)
    body["status"] = {"replicas": 2}
    written = await http.call(
        "PUT", f"{widgets}/w/status", body, params={"fieldManager": "status-writer"}
    )
    assert [e["manager"] for e in written.body["metadata"]["managedFields"]] == [
        "maker",
        "status-writer",
    ]
    cleared_request = {**written.body, "metadata": {**written.body["metadata"]}}
    cleared_request["metadata"]["managedFields"] = [{}]
    cleared = await http.call("PUT", f"{widgets}/w/status", cleared_request)
    assert cleared.status == 200, cleared.body
    assert "managedFields" not in cleared.body["metadata"]
    stored = (await http.get(f"{widgets}/w")).body
    assert "managedFields" not in stored["metadata"]
    assert stored["status"] == {"replicas": 2}
    assert int(stored["metadata"]["resourceVersion"]) > int(
        written.body["metadata"]["resourceVersion"]
    )
