"""What the recorded run (recorded_run.py) says about manifests/ and the README.

- The scenario reaches what it claims: every kind of write, both target kinds,
  the metrics APIs, leader election, an invalid Hvpa, Events.
- RBAC: every request of the run is allowed by the ClusterRole and Role bound
  to the Deployment's ServiceAccount; every rule they grant was used by the
  run, except the few commented in UNUSED_GRANTS; Leases only in the
  controller's own namespace.
- The README's metrics reference lists exactly the metric families the
  controller exposes, with their types and labels.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import replace
from typing import Any, Final

import pytest
from manifest_kit import ROOT, Grant, Request, allowed, find, grants_for, install_objects
from prometheus_client.parser import text_string_to_metric_families
from recorded_run import CONTROLLER_NAMESPACE, WORKLOAD_NAMESPACE, RecordedRun, record_run

# Granted, though the run cannot reach it. Keep this short: each entry says why it is needed.
UNUSED_GRANTS: Final = {
    # Resizing a ReplicaSet target: the cluster model runs no pods for a bare ReplicaSet,
    # so no VPA recommendation resizes one (its /scale is used: the `batch` Hvpa).
    ("apps", "replicasets", "patch"): "resize of a ReplicaSet target",
    # Checked by admission, never requested: blockOwnerDeletion on the child VPA's
    # ownerReference (tests/e2e/test_e2e_manifests.py proves it on a real API server).
    ("autoscaling.k8s.io", "hvpas/finalizers", "update"): "blockOwnerDeletion on child VPAs",
}


@pytest.fixture(scope="module")
def run() -> RecordedRun:
    return record_run()


@pytest.fixture(scope="module")
def grants() -> list[Grant]:
    objects = install_objects()
    deployment = find(objects, "Deployment", "hvpa")
    assert deployment["metadata"]["namespace"] == CONTROLLER_NAMESPACE
    account = deployment["spec"]["template"]["spec"]["serviceAccountName"]
    return grants_for(objects, service_account=account, namespace=CONTROLLER_NAMESPACE)


def requests_of(run: RecordedRun) -> list[Request]:
    """Each request; a watch-list (sendInitialEvents) also as the list it stands for: on a
    server without watch-list the reflector lists instead (hvpa/kube/reflector.py), so
    list stays granted."""
    found = []
    for r in run.requests:
        if not r.resource_request:
            continue
        found.append(Request(r.verb, r.api_group, r.resource, r.subresource, r.namespace, r.name))
        if _watch_list(r):
            found.append(Request("list", r.api_group, r.resource, "", r.namespace, r.name))
    return found


# (verb, group, resource, subresource) the scenario must make, each at least once.
EXPECTED: Final = [
    pytest.param("list", "autoscaling.k8s.io", "hvpas", "", id="list-hvpas"),
    pytest.param("watch", "autoscaling.k8s.io", "hvpas", "", id="watch-hvpas"),
    pytest.param("update", "autoscaling.k8s.io", "hvpas", "status", id="hvpa-status"),
    pytest.param("create", "autoscaling.k8s.io", "verticalpodautoscalers", "", id="vpa-create"),
    pytest.param("patch", "autoscaling.k8s.io", "verticalpodautoscalers", "", id="vpa-patch"),
    pytest.param("delete", "autoscaling.k8s.io", "verticalpodautoscalers", "", id="vpa-delete"),
    pytest.param("watch", "autoscaling", "horizontalpodautoscalers", "", id="watch-hpas"),
    pytest.param("update", "apps", "deployments", "scale", id="deployment-scale"),
    pytest.param("update", "apps", "statefulsets", "scale", id="statefulset-scale"),
    pytest.param("update", "apps", "replicasets", "scale", id="replicaset-scale"),
    pytest.param("patch", "apps", "deployments", "", id="deployment-resize"),
    pytest.param("patch", "apps", "statefulsets", "", id="statefulset-resize"),
    pytest.param("watch", "", "configmaps", "", id="watch-configmap"),
    pytest.param("watch", "", "nodes", "", id="watch-nodes"),
    pytest.param("create", "", "events", "", id="event-create"),
    pytest.param("patch", "", "events", "", id="event-patch"),
    pytest.param("list", "metrics.k8s.io", "pods", "", id="pod-metrics"),
    pytest.param("get", "custom.metrics.k8s.io", "pods", "requests_per_second", id="pods-metric"),
    pytest.param(
        "get", "custom.metrics.k8s.io", "services", "requests_per_second", id="object-metric"
    ),
    pytest.param("list", "external.metrics.k8s.io", "queue_length", "", id="external-metric"),
    pytest.param("create", "authentication.k8s.io", "tokenreviews", "", id="token-review"),
    pytest.param("create", "authorization.k8s.io", "subjectaccessreviews", "", id="access-review"),
    pytest.param("patch", "", "pods", "resize", id="pod-resize"),
    pytest.param("get", "", "secrets", "", id="webhook-secret-get"),
    pytest.param("patch", "", "secrets", "", id="webhook-secret-patch"),
    pytest.param(
        "get", "admissionregistration.k8s.io", "mutatingwebhookconfigurations", "", id="mwc-get"
    ),
    pytest.param(
        "patch", "admissionregistration.k8s.io", "mutatingwebhookconfigurations", "", id="mwc-patch"
    ),
    pytest.param("create", "coordination.k8s.io", "leases", "", id="lease-create"),
    pytest.param("update", "coordination.k8s.io", "leases", "", id="lease-update"),
]


def _watch_list(r: Any) -> bool:
    """A watch that streams the initial state: the list of hvpa/kube/reflector.py's 1."""
    return bool(r.verb == "watch" and r.query.get("sendInitialEvents") == "true")


@pytest.mark.parametrize(("verb", "group", "resource", "subresource"), EXPECTED)
def test_the_scenario_makes(
    run: RecordedRun, verb: str, group: str, resource: str, subresource: str
) -> None:
    made = [
        r
        for r in run.requests
        if (r.verb, r.api_group, r.resource, r.subresource) == (verb, group, resource, subresource)
        or (verb == "list" and _watch_list(r) and (r.api_group, r.resource) == (group, resource))
    ]
    made = [r for r in made if r.status is not None and r.status < 300]
    assert made, f"the recorded run never made a successful {verb} {group}/{resource}"


def test_the_scenario_covers_its_cases(run: RecordedRun) -> None:
    reasons = {e["reason"] for e in run.events}
    assert {"SuccessfulRescale", "SuccessfulResize", "InvalidSpec"} <= reasons
    conditions = {
        c["type"]: c["reason"] for c in run.hvpas["broken"]["status"].get("conditions", [])
    }
    assert conditions["ScalingActive"] == "InvalidSpec"
    # The in-place Hvpa sized its three pods (two resized, the scale-up's one at admission).
    sized = run.hvpas["cart"]["status"]["podResources"]
    assert (sized["pods"], sized["atSize"]) == (3, 3)
    # Only the ConfigMap a configMapRef names is listed and watched.
    selectors = {r.query.get("fieldSelector") for r in run.requests if r.resource == "configmaps"}
    assert selectors == {"metadata.name=cache-params"}
    # One Lease, named by --leader-election-id (record_run waits for each instance to lead).
    leases = {r.name for r in run.requests if r.resource == "leases" and r.verb != "create"}
    assert leases == {"hvpa"}


def test_every_request_is_allowed(run: RecordedRun, grants: list[Grant]) -> None:
    denied = sorted({str(r) for r in requests_of(run) if not allowed(grants, r)})
    assert denied == []
    # No non-resource URL is needed but the core API's discovery document, where pods/resize
    # is looked up (for the in-place Hvpa): every authenticated user may read it (the
    # system:discovery ClusterRole), so no grant of hvpa's covers it.
    assert {r.path for r in run.requests if not r.resource_request} == {"/api/v1"}


def test_nothing_granted_goes_unused(run: RecordedRun, grants: list[Grant]) -> None:
    requests = requests_of(run)
    used: dict[tuple[str, str, str], bool] = defaultdict(bool)
    for grant in grants:
        for group, resource, verb in grant.triples():
            narrowed = Grant(
                grant.role,
                (group,),
                (resource,),
                (verb,),
                grant.resource_names,
                grant.namespace,
            )
            used[(group, resource, verb)] |= any(narrowed.allows(r) for r in requests)
    unused = sorted(triple for triple, hit in used.items() if not hit)
    assert unused == sorted(UNUSED_GRANTS)


def test_leases_only_in_the_controllers_namespace(grants: list[Grant]) -> None:
    for verb in ("get", "create", "update"):
        name = "" if verb == "create" else "hvpa"
        here = Request(verb, "coordination.k8s.io", "leases", "", CONTROLLER_NAMESPACE, name)
        assert allowed(grants, here)
        assert not allowed(grants, replace(here, namespace="kube-system"))
        if name:
            assert not allowed(grants, replace(here, name="someone-elses"))


def test_no_secrets_and_no_escalation(grants: list[Grant]) -> None:
    for resource in ("secrets", "roles", "clusterroles", "rolebindings"):
        for verb in ("get", "list", "create", "bind", "escalate"):
            group = "" if resource == "secrets" else "rbac.authorization.k8s.io"
            assert not allowed(grants, Request(verb, group, resource, namespace="default"))
    # The webhook's own Secret only: by name, in the controller's namespace, get and patch.
    own = Request("get", "", "secrets", "", CONTROLLER_NAMESPACE, "hvpa-webhook-tls")
    assert allowed(grants, own) and allowed(grants, replace(own, verb="patch"))
    for other in (
        replace(own, name="another"),
        replace(own, name=""),
        replace(own, verb="list"),
        replace(own, verb="delete"),
        replace(own, namespace="default"),
    ):
        assert not allowed(grants, other), other


def test_pods_only_resized_and_the_webhook_configuration_only_by_name(grants: list[Grant]) -> None:
    resize = Request("patch", "", "pods", "resize", WORKLOAD_NAMESPACE, "web-0")
    assert allowed(grants, resize)
    for verb in ("create", "update", "patch", "delete"):
        assert not allowed(grants, Request(verb, "", "pods", "", WORKLOAD_NAMESPACE, "web-0"))
    assert not allowed(grants, Request("create", "", "pods", "eviction", WORKLOAD_NAMESPACE, "x"))
    own = Request(
        "patch", "admissionregistration.k8s.io", "mutatingwebhookconfigurations", "", "", "hvpa"
    )
    assert allowed(grants, own)
    assert not allowed(grants, replace(own, name="someone-elses"))
    assert not allowed(grants, replace(own, verb="create", name=""))
    assert not allowed(
        grants, replace(own, resource="validatingwebhookconfigurations", name="hvpa")
    )


# -- the README's metrics reference ---------------------------------------------------

README: Final = ROOT / "README.md"
# prometheus_client adds one beside every counter and histogram; the README says so once.
CREATED_SUFFIX: Final = "_created"


def exposed_families(run: RecordedRun) -> dict[str, tuple[str, frozenset[str]]]:
    """name -> (type, label names), as a scrape of the controller's /metrics sees them."""
    families: dict[str, tuple[str, frozenset[str]]] = {}
    for family in text_string_to_metric_families(run.exposition):
        if family.name.endswith(CREATED_SUFFIX):
            continue
        labels = frozenset(k for s in family.samples for k in s.labels if k != "le")
        assert family.samples, f"the run left {family.name} without a sample: labels unknown"
        name = f"{family.name}_total" if family.type == "counter" else family.name
        families[name] = (family.type, labels)
    return families


def readme_metrics() -> dict[str, tuple[str, frozenset[str]]]:
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## Metrics\n", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, tuple[str, frozenset[str]]] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 4 or not cells[0].startswith("`"):
            continue
        name = cells[0].strip("`")
        labels = frozenset(re.findall(r"`([a-z_]+)`", cells[2]))
        rows[name] = (cells[1], labels)
    return rows


def test_readme_lists_exactly_the_exposed_metrics(run: RecordedRun) -> None:
    assert readme_metrics() == exposed_families(run)


def test_readme_explains_the_created_series() -> None:
    section = README.read_text(encoding="utf-8").split("\n## Metrics\n", 1)[1]
    assert "`_created`" in section.split("\n## ", 1)[0]


# -- the README's /debug/state example --------------------------------------------------


def _unknown_keys(example: Any, real: Any, path: str = "") -> list[str]:
    """Keys of the example that the real state does not have at the same place."""
    if isinstance(example, dict) and isinstance(real, dict):
        found: list[str] = []
        for key, value in example.items():
            if key not in real:
                found.append(f"{path}.{key}")
            else:
                found += _unknown_keys(value, real[key], f"{path}.{key}")
        return found
    if isinstance(example, list) and isinstance(real, list) and example and real:
        return _unknown_keys(example[0], real[0], f"{path}[0]")
    return []


def test_readme_debug_state_example_has_the_real_shape(run: RecordedRun) -> None:
    section = README.read_text(encoding="utf-8").split("\n## /debug/state\n", 1)[1]
    (example_text,) = re.findall(r"```json\n(.*?)```", section.split("\n## ", 1)[0], re.DOTALL)
    example = json.loads(example_text)
    state = run.debug_state
    assert list(example) == list(state)
    assert list(example["leader"]) == list(state["leader"])
    assert list(example["informers"][0]) == list(state["informers"][0])
    item = state["hvpas"]["items"]["shop/web"]
    assert list(example["hvpas"]["items"]["shop/web"]) == list(item)
    assert _unknown_keys(example, state) == []
