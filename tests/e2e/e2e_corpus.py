"""The differential corpus: requests whose answers the in-repo API server must give as
kube-apiserver gives them.

Each probe is a function of an admin Api and a fresh namespace that makes a few requests and
returns what must agree, with everything that legitimately differs (names, uids, timestamps,
resourceVersions, message wording) left out: status codes, a Status's reason and details,
the shape of objects, of bookmarks, of Tables and of discovery. The probes touch what hvpa
and the simulator rely on, and the corners the real server taught us (issue 16).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from e2e_api import APPLY_PATCH, JSON_PATCH, MERGE_PATCH, STRATEGIC_PATCH, Api, Response

__all__ = ["PROBES", "Probe"]

Probe = Callable[[Api, str], Any]
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
PROBES: dict[str, Probe] = {}


def probe(function: Probe) -> Probe:
    PROBES[function.__name__] = function
    return function


def _outcome(response: Response) -> dict[str, Any]:
    """The status code, and for a Status its reason and the kind and name it names."""
    body = response.json() if response.body else None
    outcome: dict[str, Any] = {"code": response.status}
    if isinstance(body, dict) and body.get("kind") == "Status":
        details = body.get("details") or {}
        outcome |= {
            "reason": body.get("reason", ""),
            "details": {k: details[k] for k in ("kind", "group", "name") if k in details},
        }
    elif isinstance(body, dict):
        outcome["kind"] = body.get("kind")
    return outcome


def _deployment(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "app", "image": "registry.invalid/app:1"}]},
            },
            **spec,
        },
    }


def _hvpa(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "autoscaling.k8s.io/v1alpha1",
        "kind": "Hvpa",
        "metadata": {"name": name},
        "spec": {
            "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
            "hpa": {"deploy": False},
            **spec,
        },
    }


def _deployments(namespace: str, name: str = "") -> str:
    return f"/apis/apps/v1/namespaces/{namespace}/deployments" + (f"/{name}" if name else "")


def _hvpas(namespace: str, name: str = "") -> str:
    return f"/apis/autoscaling.k8s.io/v1alpha1/namespaces/{namespace}/hvpas" + (
        f"/{name}" if name else ""
    )


# -- reads and errors ----------------------------------------------------------------------


@probe
def get_missing(api: Api, namespace: str) -> Any:
    return [
        _outcome(api.request("GET", f"/api/v1/namespaces/{namespace}/pods/missing")),
        _outcome(api.request("GET", _deployments(namespace, "missing"))),
        _outcome(api.request("GET", _hvpas(namespace, "missing"))),
        _outcome(api.request("DELETE", _deployments(namespace, "missing"))),
    ]


@probe
def create_twice(api: Api, namespace: str) -> Any:
    first = api.request("POST", _deployments(namespace), _deployment("web"))
    second = api.request("POST", _deployments(namespace), _deployment("web"))
    return [_outcome(first), _outcome(second)]


@probe
def update_with_a_stale_resource_version(api: Api, namespace: str) -> Any:
    created = api.create(_deployments(namespace), _deployment("web"))
    api.patch(_deployments(namespace, "web"), {"metadata": {"labels": {"touched": "yes"}}})
    created["spec"]["replicas"] = 2
    return _outcome(api.request("PUT", _deployments(namespace, "web"), created))


@probe
def update_without_a_resource_version(api: Api, namespace: str) -> Any:
    """Built-in workloads allow an unconditional update; custom resources do not."""
    api.create(_deployments(namespace), _deployment("web"))
    api.create(_hvpas(namespace), _hvpa("web"))
    deployment = _deployment("web", replicas=2)
    hvpa = _hvpa("web")
    return [
        _outcome(api.request("PUT", _deployments(namespace, "web"), deployment)),
        _outcome(api.request("PUT", _hvpas(namespace, "web"), hvpa)),
    ]


@probe
def bad_selectors(api: Api, namespace: str) -> Any:
    pods = f"/api/v1/namespaces/{namespace}/pods"
    return [
        _outcome(api.request("GET", pods, params={"labelSelector": "app in"})),
        _outcome(api.request("GET", pods, params={"fieldSelector": "spec.bogus=x"})),
        _outcome(api.request("GET", pods, params={"fieldSelector": "spec.nodeName=x"})),
    ]


@probe
def invalid_object(api: Api, namespace: str) -> Any:
    body = _deployment("web")
    del body["spec"]["selector"]
    response = api.request("POST", _deployments(namespace), body)
    causes = (response.json().get("details") or {}).get("causes") or []
    return [_outcome(response), sorted({c.get("field") for c in causes})]


@probe
def generate_name(api: Api, namespace: str) -> Any:
    body = {"metadata": {"generateName": "cm-"}, "data": {"a": "b"}}
    created = api.create(f"/api/v1/namespaces/{namespace}/configmaps", body)
    name = created["metadata"]["name"]
    return [name.startswith("cm-"), len(name) == len("cm-") + 5]


@probe
def dry_run_persists_nothing(api: Api, namespace: str) -> Any:
    created = api.request(
        "POST", _deployments(namespace), _deployment("web"), params={"dryRun": "All"}
    )
    return [_outcome(created), _outcome(api.request("GET", _deployments(namespace, "web")))]


@probe
def list_pages(api: Api, namespace: str) -> Any:
    """Deployments, not ConfigMaps: a real cluster adds kube-root-ca.crt to every namespace."""
    for index in range(3):
        api.create(_deployments(namespace), _deployment(f"web-{index}"))
    page = api.get(_deployments(namespace), params={"limit": 2})
    rest = api.get(
        _deployments(namespace), params={"limit": 2, "continue": page["metadata"]["continue"]}
    )
    return [
        [item["metadata"]["name"] for item in page["items"]],
        page["metadata"].get("remainingItemCount"),
        [item["metadata"]["name"] for item in rest["items"]],
        "continue" in rest["metadata"],
    ]


# -- subresources --------------------------------------------------------------------------


@probe
def scale_subresource(api: Api, namespace: str) -> Any:
    api.create(_deployments(namespace), _deployment("web"))
    scale = api.get(_deployments(namespace, "web") + "/scale")
    stale = dict(scale, metadata=dict(scale["metadata"], resourceVersion="1"))
    stale["spec"] = {"replicas": 3}
    return [
        scale["kind"],
        scale["apiVersion"],
        sorted(scale["spec"]),
        sorted(scale["status"]),
        _outcome(api.request("PUT", _deployments(namespace, "web") + "/scale", stale)),
    ]


def _vpas(namespace: str, name: str = "") -> str:
    return f"/apis/autoscaling.k8s.io/v1/namespaces/{namespace}/verticalpodautoscalers" + (
        f"/{name}" if name else ""
    )


@probe
def status_and_spec_are_written_apart(api: Api, namespace: str) -> Any:
    """On a VerticalPodAutoscaler: no controller of the real cluster writes one the suite made
    by hand (a Deployment's status is the controller manager's, and races the probe)."""
    created = api.create(
        _vpas(namespace),
        {
            "apiVersion": "autoscaling.k8s.io/v1",
            "kind": "VerticalPodAutoscaler",
            "metadata": {"name": "web"},
            "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}},
        },
    )
    created["spec"]["updatePolicy"] = {"updateMode": "Off"}
    created["status"] = {"conditions": [{"type": "RecommendationProvided", "status": "True"}]}
    through_status = api.put(_vpas(namespace, "web") + "/status", created)
    through_main = api.put(
        _vpas(namespace, "web"),
        dict(
            through_status,
            spec={**through_status["spec"], "updatePolicy": {"updateMode": "Off"}},
            status={},
        ),
    )
    return [
        "updatePolicy" in through_status["spec"],
        len(through_status["status"].get("conditions", [])),
        through_main["spec"].get("updatePolicy"),
        len(through_main["status"].get("conditions", [])),
    ]


# -- patches -------------------------------------------------------------------------------


@probe
def patch_types(api: Api, namespace: str) -> Any:
    api.create(_deployments(namespace), _deployment("web"))
    api.create(_hvpas(namespace), _hvpa("web"))
    label = {"metadata": {"labels": {"a": "b"}}}
    json_patch = [{"op": "add", "path": "/metadata/labels", "value": {"a": "b"}}]
    return [
        _outcome(
            api.request("PATCH", _deployments(namespace, "web"), label, content_type=MERGE_PATCH)
        ),
        _outcome(
            api.request(
                "PATCH", _deployments(namespace, "web"), label, content_type=STRATEGIC_PATCH
            )
        ),
        _outcome(
            api.request("PATCH", _hvpas(namespace, "web"), json_patch, content_type=JSON_PATCH)
        ),
        _outcome(
            api.request("PATCH", _hvpas(namespace, "web"), label, content_type=STRATEGIC_PATCH)
        ),
        _outcome(
            api.request(
                "PATCH",
                _deployments(namespace, "web"),
                [{"op": "test", "path": "/spec/replicas", "value": 9}],
                content_type=JSON_PATCH,
            )
        ),
    ]


# -- field validation and pruning ----------------------------------------------------------


@probe
def unknown_fields(api: Api, namespace: str) -> Any:
    """fieldValidation: Strict refuses, Warn (the default) warns, Ignore says nothing; custom
    resources drop (prune) what their schema does not declare."""
    outcomes = []
    for index, mode in enumerate(("Strict", "Warn", "Ignore")):
        body = _deployment(f"web-{index}")
        body["spec"]["bogus"] = 1
        response = api.request(
            "POST", _deployments(namespace), body, params={"fieldValidation": mode}
        )
        outcomes.append([_outcome(response), "Warning" in response.headers])
    hvpa = _hvpa("web")
    hvpa["spec"]["bogus"] = 1
    response = api.request("POST", _hvpas(namespace), hvpa)
    stored = api.get(_hvpas(namespace, "web")) if response.status == 201 else {"spec": {}}
    outcomes.append([_outcome(response), "Warning" in response.headers, "bogus" in stored["spec"]])
    return outcomes


# -- watches -------------------------------------------------------------------------------


def _watch(api: Api, path: str, **params: Any) -> tuple[int, list[dict[str, Any]]]:
    response = api.request("GET", path, params={"watch": True, **params})
    if response.status != 200:
        return response.status, [response.json()]
    return 200, [json.loads(line) for line in response.body.splitlines() if line.strip()]


@probe
def watch_from_a_too_old_resource_version(api: Api, namespace: str) -> Any:
    """hvpa's reflector handles both forms of 410: an HTTP status and an ERROR event.

    Run after both servers' histories are compacted (COMPACTED_FIRST), on a resource the real
    server serves from etcd (the suite turns the watch cache off for HPAs): from its watch
    cache, resourceVersion 1 was too old or not depending on how many pod events the
    session had seen, so the probe's answer changed with the tests that ran before it."""
    code, events = _watch(
        api,
        f"/apis/autoscaling/v2/namespaces/{namespace}/horizontalpodautoscalers",
        resourceVersion="1",
        timeoutSeconds=2,
    )
    first = events[0] if events else {}
    if code != 200:
        return [code, first.get("reason")]
    return [
        code,
        first.get("type"),
        first.get("object", {}).get("code"),
        first.get("object", {}).get("reason"),
    ]


@probe
def bookmark_shape(api: Api, namespace: str) -> Any:
    """The object of a BOOKMARK: its keys and the type's zero value (issue 16). Asked for
    with sendInitialEvents, whose closing bookmark comes at once and has the shape of the
    periodic ones (those a real server sends only 2 s before a watch's deadline, and only
    once its cache has seen the resource change since)."""
    api.create(_deployments(namespace), _deployment("web"))
    api.create(_hvpas(namespace), _hvpa("web"))
    shapes = []
    for path in (
        _deployments(namespace),
        f"/api/v1/namespaces/{namespace}/pods",
        _hvpas(namespace),
    ):
        _, events = _watch(
            api,
            path,
            sendInitialEvents=True,
            resourceVersionMatch="NotOlderThan",
            allowWatchBookmarks=True,
            timeoutSeconds=2,
        )
        bookmarks = [e["object"] for e in events if e["type"] == "BOOKMARK"]
        shapes.append(
            {
                key: (value if key != "metadata" else sorted(value))
                for key, value in bookmarks[0].items()
            }
            if bookmarks
            else None
        )
    return shapes


# -- Tables --------------------------------------------------------------------------------


def _columns(api: Api, path: str) -> list[str]:
    table = api.get(path, accept=TABLE)
    return [column["name"] for column in table["columnDefinitions"] if column["priority"] == 0]


@probe
def table_columns(api: Api, namespace: str) -> Any:
    api.create(_deployments(namespace), _deployment("web"))
    api.create(_hvpas(namespace), _hvpa("web"))
    return {
        "pods": _columns(api, f"/api/v1/namespaces/{namespace}/pods"),
        "deployments": _columns(api, _deployments(namespace)),
        "events": _columns(api, f"/api/v1/namespaces/{namespace}/events"),
        "hvpas": _columns(api, _hvpas(namespace)),
    }


# -- discovery -----------------------------------------------------------------------------

# The resources hvpa and the simulator use, and the subresources of theirs they use.
DISCOVERED = {
    "/api/v1": (
        "pods",
        "pods/status",
        "pods/binding",
        "nodes",
        "nodes/status",
        "configmaps",
        "events",
        "namespaces",
    ),
    "/apis/apps/v1": (
        "deployments",
        "deployments/scale",
        "deployments/status",
        "statefulsets",
        "statefulsets/scale",
        "statefulsets/status",
        "replicasets",
        "replicasets/scale",
        "replicasets/status",
    ),
    "/apis/autoscaling/v2": ("horizontalpodautoscalers", "horizontalpodautoscalers/status"),
    "/apis/coordination.k8s.io/v1": ("leases",),
    "/apis/autoscaling.k8s.io/v1": ("verticalpodautoscalers", "verticalpodautoscalers/status"),
    "/apis/autoscaling.k8s.io/v1alpha1": ("hvpas", "hvpas/status", "hvpas/scale"),
}


@probe
def discovery(api: Api, namespace: str) -> Any:
    found: dict[str, Any] = {}
    for path, names in DISCOVERED.items():
        resources = {r["name"]: r for r in api.get(path)["resources"]}
        for name in names:
            resource = resources.get(name)
            found[f"{path} {name}"] = (
                None
                if resource is None
                else {
                    "namespaced": resource["namespaced"],
                    "kind": resource["kind"],
                    "verbs": sorted(resource["verbs"]),
                    "shortNames": sorted(resource.get("shortNames", [])),
                }
            )
    return found


# -- managedFields -------------------------------------------------------------------------
# Who owns which field after Updates (POST, PUT of the object, of /scale and of /status, with
# ?fieldManager=) and server-side applies: what hvpa's rewrite rule reads (docs/gitops.md).
# Only the probe's own managers are compared: the real cluster's controllers (the
# controller manager's status and revision annotation) write the same objects meanwhile.


def _managed(obj: dict[str, Any], managers: tuple[str, ...]) -> list[dict[str, Any]]:
    """The entries of `managers` without their time (but whether there is one), by manager:
    the server orders entries by time to the second, and two servers' writes can fall on
    either side of a second."""
    found = [
        {key: value for key, value in entry.items() if key != "time"} | {"time": "time" in entry}
        for entry in obj["metadata"].get("managedFields") or []
        if entry.get("manager") in managers
    ]
    return sorted(found, key=lambda e: (e["manager"], e["operation"], e.get("subresource", "")))


def _conflict(response: Response) -> dict[str, Any]:
    """A refused apply: its outcome, its message and every cause as the server names it."""
    body = response.json() or {}
    causes = (body.get("details") or {}).get("causes") or []
    return _outcome(response) | {
        "message": body.get("message"),
        "causes": sorted(
            (c.get("reason", ""), c.get("message", ""), c.get("field", "")) for c in causes
        ),
    }


def _apply(
    api: Api, path: str, body: dict[str, Any], manager: str, *, force: bool = False
) -> Response:
    params: dict[str, str | int | bool] = {"fieldManager": manager}
    if force:
        params["force"] = True
    return api.request("PATCH", path, body, params=params, content_type=APPLY_PATCH)


@probe
def managed_fields_of_updates(api: Api, namespace: str) -> Any:
    """POST, PUT of the object and of /scale, a merge patch, each named by ?fieldManager=."""
    managers = ("creator", "putter", "scaler", "patcher")
    path = _deployments(namespace, "web")
    created = api.ok(
        "POST", _deployments(namespace), _deployment("web"), params={"fieldManager": "creator"}
    )
    seen = [_managed(created, managers)]
    # Unconditional writes (no resourceVersion, which built-in kinds allow): the controller
    # manager's writes of the real Deployment's status would make a precondition fail.
    del created["metadata"]["resourceVersion"]
    created["metadata"]["labels"] = {"tier": "web"}
    created["spec"]["minReadySeconds"] = 5
    put = api.ok("PUT", path, created, params={"fieldManager": "putter"})
    seen.append(_managed(put, managers))
    scale = api.get(path + "/scale")
    del scale["metadata"]["resourceVersion"]
    scale["spec"]["replicas"] = 3
    api.ok("PUT", path + "/scale", scale, params={"fieldManager": "scaler"})
    seen.append(_managed(api.get(path), managers))
    patched = api.ok(
        "PATCH",
        path,
        {
            "spec": {
                "template": {
                    "spec": {
                        "containers": [{"name": "app", "resources": {"requests": {"cpu": "200m"}}}]
                    }
                }
            }
        },
        params={"fieldManager": "patcher"},
        content_type=STRATEGIC_PATCH,
    )
    seen.append(_managed(patched, managers))
    return seen


@probe
def managed_fields_of_status_writes(api: Api, namespace: str) -> Any:
    """PUT of /status and of the object of a custom resource with a status subresource."""
    managers = ("creator", "recommender", "editor")
    created = api.ok(
        "POST",
        _vpas(namespace),
        {
            "apiVersion": "autoscaling.k8s.io/v1",
            "kind": "VerticalPodAutoscaler",
            "metadata": {"name": "web"},
            "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}},
        },
        params={"fieldManager": "creator"},
    )
    created["status"] = {"conditions": [{"type": "RecommendationProvided", "status": "True"}]}
    status = api.ok(
        "PUT", _vpas(namespace, "web") + "/status", created, params={"fieldManager": "recommender"}
    )
    seen = [_managed(status, managers)]
    status["spec"]["updatePolicy"] = {"updateMode": "Off"}
    edited = api.ok("PUT", _vpas(namespace, "web"), status, params={"fieldManager": "editor"})
    seen.append(_managed(edited, managers))
    return seen


def _applied_deployment(name: str, *, replicas: int, labels: dict[str, str]) -> dict[str, Any]:
    body = _deployment(name, replicas=replicas)
    if labels:
        body["metadata"]["labels"] = labels
    return body


@probe
def server_side_apply(api: Api, namespace: str) -> Any:
    """Owned fields, a shared value, conflicts (with an applier and with /scale's Update)
    refused with their causes, force, and a field the applier no longer applies."""
    managers = ("git", "other", "scaler")
    path = _deployments(namespace, "web")
    seen: list[Any] = []
    first = _apply(api, path, _applied_deployment("web", replicas=2, labels={"a": "1"}), "git")
    seen.append([first.status, _managed(first.json(), managers)])
    # The same value applied by another manager: shared, no conflict.
    same = _apply(api, path, _applied_deployment("web", replicas=2, labels={}), "other")
    seen.append([same.status, _managed(same.json(), managers)])
    # Another value of a field git owns (and other shares): a conflict with each owner.
    seen.append(
        _conflict(_apply(api, path, _applied_deployment("web", replicas=5, labels={}), "other"))
    )
    scale = api.get(path + "/scale")
    del scale["metadata"]["resourceVersion"]
    scale["spec"]["replicas"] = 4
    api.ok("PUT", path + "/scale", scale, params={"fieldManager": "scaler"})
    seen.append(_managed(api.get(path), managers))
    # git re-applies its 2: a conflict with the /scale Update, then forced, as GitOps tools do.
    seen.append(
        _conflict(
            _apply(api, path, _applied_deployment("web", replicas=2, labels={"a": "1"}), "git")
        )
    )
    forced = _apply(
        api, path, _applied_deployment("web", replicas=2, labels={"a": "1"}), "git", force=True
    )
    seen.append(
        [forced.status, forced.json()["spec"]["replicas"], _managed(forced.json(), managers)]
    )
    # git leaves its label out: removed, being git's alone.
    dropped = _apply(api, path, _applied_deployment("web", replicas=2, labels={}), "git")
    seen.append(
        [
            dropped.status,
            dropped.json()["metadata"].get("labels"),
            _managed(dropped.json(), managers),
        ]
    )
    return seen


@probe
def field_manager_options(api: Api, namespace: str) -> Any:
    """The manager of a write that names none (the User-Agent's first segment), and the
    options refused: apply without fieldManager, force with another patch type, a
    fieldManager longer than 128 characters."""
    path = _deployments(namespace, "web")
    agent = api.with_user_agent("kubectl/v1.37.2 (linux/amd64) kubernetes/abcdef")
    created = api.ok("POST", _deployments(namespace), _deployment("web"))
    named = agent.request(
        "PATCH", path, {"metadata": {"labels": {"a": "b"}}}, content_type=MERGE_PATCH
    )
    # The client's managers only: the controller manager writes the real Deployment too.
    managers = ("hvpa-e2e", "kubectl")
    return [
        [e["manager"] for e in _managed(created, managers)],
        [e["manager"] for e in _managed(named.json(), managers)],
        _outcome(api.request("PATCH", path, _deployment("web"), content_type=APPLY_PATCH)),
        _outcome(
            api.request(
                "PATCH",
                path,
                {"metadata": {"labels": {"a": "c"}}},
                params={"force": True},
                content_type=MERGE_PATCH,
            )
        ),
        _outcome(
            api.request(
                "PATCH",
                path,
                {"metadata": {"labels": {"a": "d"}}},
                params={"fieldManager": "x" * 129},
                content_type=MERGE_PATCH,
            )
        ),
    ]


@probe
def apply_conflicts_with_several_managers(api: Api, namespace: str) -> Any:
    """One apply that conflicts with two managers over three fields: the message lists them
    by manager, a cause for each field."""
    path = _deployments(namespace, "web")
    api.ok("POST", _deployments(namespace), _deployment("web"), params={"fieldManager": "creator"})
    scale = api.get(path + "/scale")
    del scale["metadata"]["resourceVersion"]
    scale["spec"]["replicas"] = 3
    api.ok("PUT", path + "/scale", scale, params={"fieldManager": "scaler"})
    body = _deployment("web", replicas=5, minReadySeconds=7)
    body["spec"]["template"]["spec"]["containers"][0]["image"] = "registry.invalid/app:2"
    return _conflict(_apply(api, path, body, "git"))
