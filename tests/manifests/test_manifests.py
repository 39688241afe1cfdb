"""manifests/, offline: every object against the Kubernetes API schemas (kubernetes-validate,
strict, pinned versions), the ServiceMonitor against the Prometheus Operator's, the example
Hvpas against the CRD's; the kustomizations list every file and build (with kubectl, when
installed); and the Deployment runs `hvpa run` the way the rest of the manifests assume.

`hvpa validate -f manifests/examples/` passing is tested with the command
(tests/commands/test_validate.py); the example Hvpas as parsed by hvpa are
checked there and in tests/api (fixtures copied from the examples).
"""

from __future__ import annotations

import argparse
import copy
import subprocess
from pathlib import Path
from typing import Any, Final

import jsonschema
import kubernetes_validate
import pytest
import yaml
from manifest_kit import (
    EXAMPLES,
    KUSTOMIZATIONS,
    MANIFESTS,
    documents,
    find,
    install_objects,
    kustomization,
    resource_files,
)

import hvpa
from hvpa.cli import build_parser
from hvpa.settings import settings_from_args

# The oldest Kubernetes the manifests support (admissionregistration.k8s.io/v1's
# ValidatingAdmissionPolicy is GA in 1.30), and the one whose HPA hvpa follows.
KUBERNETES_VERSIONS: Final = ("1.30.0", "1.35.0")
OPERATOR_KINDS: Final = {
    ("monitoring.coreos.com/v1", "ServiceMonitor"),
    ("monitoring.coreos.com/v1", "PrometheusRule"),
}

OBJECTS: Final = install_objects()


def object_id(obj: dict[str, Any]) -> str:
    return f"{obj['kind']}/{obj['metadata']['name']}"


# -- the kustomizations -------------------------------------------------------------------


def test_kustomizations_list_every_manifest_once() -> None:
    listed = [f for directory in KUSTOMIZATIONS for f in resource_files(directory)]
    assert all(f.is_file() for f in listed)
    on_disk = [
        f
        for directory in KUSTOMIZATIONS
        for f in sorted(directory.glob("*.yaml"))
        if f.name != "kustomization.yaml"
    ]
    assert sorted(listed) == sorted(on_disk)
    for directory in KUSTOMIZATIONS:
        assert kustomization(directory)["namespace"] == "hvpa-system"


@pytest.mark.parametrize("directory", KUSTOMIZATIONS, ids=lambda d: d.name)
def test_kubectl_kustomize_builds(kubectl: str, directory: Path) -> None:
    built = subprocess.run(
        [kubectl, "kustomize", str(directory)], capture_output=True, text=True, check=True
    ).stdout
    objects = [d for d in yaml.safe_load_all(built) if d]
    expected = [doc for f in resource_files(directory) for doc in documents(f)]
    assert sorted(map(object_id, objects)) == sorted(map(object_id, expected))
    cluster_scoped = (
        "Namespace",
        "CustomResourceDefinition",
        "ClusterRole",
        "ClusterRoleBinding",
        "MutatingWebhookConfiguration",
    )
    for obj in objects:
        if obj["kind"] not in cluster_scoped:
            assert obj["metadata"]["namespace"] == "hvpa-system", object_id(obj)
    if directory == MANIFESTS:
        image = find(objects, "Deployment")["spec"]["template"]["spec"]["containers"][0]["image"]
        assert image == f"hvpa:{hvpa.__version__}"


# -- schemas ------------------------------------------------------------------------------


KUBERNETES_OBJECTS: Final = [
    o for o in OBJECTS if (o["apiVersion"], o["kind"]) not in OPERATOR_KINDS
]


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
@pytest.mark.parametrize("obj", KUBERNETES_OBJECTS, ids=object_id)
def test_valid_for_kubernetes(obj: dict[str, Any], version: str) -> None:
    kubernetes_validate.validate(obj, version, strict=True)


def test_strict_validation_refuses_a_misspelt_field() -> None:
    deployment = copy.deepcopy(find(OBJECTS, "Deployment"))
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    container["securityContext"]["readOnlyRootFileSystem"] = True
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, KUBERNETES_VERSIONS[-1], strict=True)


def test_service_monitor_valid_for_the_prometheus_operator() -> None:
    """Against models generated from the operator's CRDs; they ignore unknown fields, so a
    round trip that loses nothing shows there were none."""
    from cloudcoil.models.prometheus_operator.v1 import ServiceMonitor

    manifest = find(OBJECTS, "ServiceMonitor")
    model = ServiceMonitor.model_validate(manifest)
    assert model.model_dump(by_alias=True, exclude_unset=True, mode="json") == manifest


def _closed(schema: Any) -> Any:
    """The CRD schema with every object closed (kubectl's strict field validation)."""
    if isinstance(schema, list):
        return [_closed(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: _closed(value) for key, value in schema.items()}
    if "properties" in schema and not schema.get("x-kubernetes-preserve-unknown-fields"):
        out["additionalProperties"] = False
    return out


CRD: Final = find(documents(MANIFESTS / "crd.yaml"), "CustomResourceDefinition")
HVPA_SCHEMA: Final = _closed(CRD["spec"]["versions"][0]["schema"]["openAPIV3Schema"])
EXAMPLE_DOCUMENTS: Final = [
    pytest.param(doc, id=f"{path.name}:{doc['kind']}/{doc['metadata']['name']}")
    for path in sorted(EXAMPLES.glob("*.yaml"))
    for doc in documents(path)
]


@pytest.mark.parametrize("doc", EXAMPLE_DOCUMENTS)
def test_example_valid_for_its_schema(doc: dict[str, Any]) -> None:
    if doc["kind"] == "Hvpa":
        version = CRD["spec"]["group"] + "/" + CRD["spec"]["versions"][0]["name"]
        assert doc["apiVersion"] == version
        errors = jsonschema.Draft4Validator(HVPA_SCHEMA).iter_errors(doc)
        assert [f"{list(e.absolute_path)}: {e.message}" for e in errors] == []
    else:
        kubernetes_validate.validate(doc, KUBERNETES_VERSIONS[-1], strict=True)


# -- the Deployment and what points at it -------------------------------------------------

DEPLOYMENT: Final = find(OBJECTS, "Deployment", "hvpa")
POD: Final = DEPLOYMENT["spec"]["template"]
CONTAINER: Final = POD["spec"]["containers"][0]
PORTS: Final = {p["name"]: p["containerPort"] for p in CONTAINER["ports"]}


def _expanded_args() -> list[str]:
    """The container's args with $(VAR) expanded from the downward API, as the kubelet does."""
    values = {"metadata.namespace": DEPLOYMENT["metadata"]["namespace"]}
    env = {e["name"]: values[e["valueFrom"]["fieldRef"]["fieldPath"]] for e in CONTAINER["env"]}
    args: list[str] = []
    for arg in CONTAINER["args"]:
        for name, value in env.items():
            arg = arg.replace(f"$({name})", value)
        args.append(arg)
    return args


def _run_flags() -> set[str]:
    (subparsers,) = [
        a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)
    ]
    return {o for action in subparsers.choices["run"]._actions for o in action.option_strings}


def test_deployment_runs_the_controller_with_leader_election() -> None:
    assert DEPLOYMENT["spec"]["replicas"] == 2
    assert "command" not in CONTAINER  # the image's ENTRYPOINT, hvpa
    args = build_parser().parse_args(_expanded_args())
    assert args.command == "run"
    # Each flag as `hvpa run --help` spells it: argparse would also take a prefix.
    assert {a.split("=", 1)[0] for a in CONTAINER["args"][1:]} <= _run_flags()
    settings = settings_from_args(args)
    assert settings.leader_elect
    assert settings.leader_election.lease_namespace == DEPLOYMENT["metadata"]["namespace"]
    role = find(OBJECTS, "Role", "hvpa-leader-election")
    named = [rule for rule in role["rules"] if rule.get("resourceNames")]
    assert [rule["resourceNames"] for rule in named] == [[settings.leader_election.lease_name]]
    assert settings.server.metrics_bind_address == f":{PORTS['metrics']}"
    assert settings.server.health_probe_bind_address == f":{PORTS['health']}"
    # Metrics and /debug/state served securely (HTTPS, TokenReview, SubjectAccessReview).
    assert settings.server.metrics_secure is True
    assert PORTS["metrics"] == 8443


def test_the_webhook_objects_meet() -> None:
    """The admission webhook's Service, Secret, configuration and RBAC agree with the flags."""
    settings = settings_from_args(build_parser().parse_args(_expanded_args())).server.webhook
    assert settings.bind_address == f":{PORTS['webhook']}"
    service = find(OBJECTS, "Service", settings.service)
    assert service["metadata"]["namespace"] == settings.namespace
    assert _selects(service["spec"]["selector"], POD["metadata"]["labels"])
    (port,) = service["spec"]["ports"]
    assert (port["port"], port["targetPort"]) == (settings.service_port, "webhook")
    secret = find(OBJECTS, "Secret", settings.secret_name)
    assert secret["metadata"]["namespace"] == settings.namespace and "data" not in secret
    configuration = find(OBJECTS, "MutatingWebhookConfiguration", settings.configuration_name)
    assert configuration["webhooks"] == []  # the leader fills it
    secrets = find(OBJECTS, "Role", "hvpa-webhook")["rules"]
    assert secrets == [
        {
            "apiGroups": [""],
            "resources": ["secrets"],
            "resourceNames": [settings.secret_name],
            "verbs": ["get", "patch"],
        }
    ]
    cluster = find(OBJECTS, "ClusterRole", "hvpa")["rules"]
    (own,) = [r for r in cluster if "mutatingwebhookconfigurations" in r["resources"]]
    assert own["resourceNames"] == [settings.configuration_name]
    (webhook_ingress,) = [
        rule
        for rule in find(OBJECTS, "NetworkPolicy")["spec"]["ingress"]
        if rule["ports"][0]["port"] == "webhook"
    ]
    assert "from" not in webhook_ingress  # the API server is no pod: from anywhere


def test_probes_on_the_health_port() -> None:
    assert CONTAINER["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "health"}
    assert CONTAINER["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "health"}


def test_restricted_security_context() -> None:
    pod = POD["spec"]["securityContext"]
    assert pod["runAsNonRoot"] is True
    assert pod["runAsUser"] == pod["runAsGroup"] != 0
    assert pod["seccompProfile"] == {"type": "RuntimeDefault"}
    container = CONTAINER["securityContext"]
    assert container == {
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "capabilities": {"drop": ["ALL"]},
    }
    resources = CONTAINER["resources"]
    assert set(resources["requests"]) == {"cpu", "memory"}
    assert set(resources["limits"]) == {"memory"}  # no CPU limit: throttling only hurts


def test_image_tag_is_the_version() -> None:
    (image,) = kustomization(MANIFESTS)["images"]
    assert image["name"] == CONTAINER["image"]
    assert image["newTag"] == hvpa.__version__


def test_service_account_exists() -> None:
    account = find(OBJECTS, "ServiceAccount", POD["spec"]["serviceAccountName"])
    assert account["metadata"]["namespace"] == DEPLOYMENT["metadata"]["namespace"]


def _selects(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(key) == value for key, value in selector.items())


def test_selectors_meet() -> None:
    pod_labels = POD["metadata"]["labels"]
    assert DEPLOYMENT["spec"]["selector"]["matchLabels"] == pod_labels
    pdb = find(OBJECTS, "PodDisruptionBudget")
    assert pdb["spec"]["minAvailable"] == 1
    assert _selects(pdb["spec"]["selector"]["matchLabels"], pod_labels)
    service = find(OBJECTS, "Service", "hvpa-metrics")
    assert _selects(service["spec"]["selector"], pod_labels)
    (port,) = service["spec"]["ports"]
    assert port["targetPort"] == "metrics" and port["port"] == PORTS["metrics"]
    monitor = find(OBJECTS, "ServiceMonitor")
    assert _selects(monitor["spec"]["selector"]["matchLabels"], service["metadata"]["labels"])
    assert monitor["spec"]["namespaceSelector"]["matchNames"] == [service["metadata"]["namespace"]]
    (endpoint,) = monitor["spec"]["endpoints"]
    assert endpoint["port"] == port["name"] and endpoint["path"] == "/metrics"


# -- labels ---------------------------------------------------------------------------


# The CRD is generated (hvpa.api.crd), with no labels.
LABELLED: Final = [o for o in OBJECTS if o["kind"] != "CustomResourceDefinition"]


@pytest.mark.parametrize("obj", LABELLED, ids=object_id)
def test_labelled_as_hvpa(obj: dict[str, Any]) -> None:
    labels = obj["metadata"].get("labels", {})
    assert labels.get("app.kubernetes.io/name") == "hvpa"
    # What exists for the controller's pods carries their labels, as the pods do.
    if obj["kind"] in ("Deployment", "PodDisruptionBudget", "Service"):
        assert _selects(POD["metadata"]["labels"], labels)


# -- secure metrics and the network ---------------------------------------------------


def test_service_monitor_scrapes_securely() -> None:
    """As kubebuilder's scaffold scrapes a controller whose metrics are served securely."""
    (endpoint,) = find(OBJECTS, "ServiceMonitor")["spec"]["endpoints"]
    assert endpoint["scheme"] == "https"
    assert endpoint["bearerTokenFile"] == "/var/run/secrets/kubernetes.io/serviceaccount/token"
    assert endpoint["tlsConfig"] == {"insecureSkipVerify": True}


@pytest.mark.parametrize(
    ("role", "path"),
    [("hvpa-metrics-reader", "/metrics"), ("hvpa-debug-state-reader", "/debug/state")],
)
def test_a_reader_role_per_path(role: str, path: str) -> None:
    rules = find(OBJECTS, "ClusterRole", role)["rules"]
    assert rules == [{"nonResourceURLs": [path], "verbs": ["get"]}]
    bindings = [o for o in OBJECTS if o["kind"] in ("RoleBinding", "ClusterRoleBinding")]
    bound = [o for o in bindings if o["roleRef"]["name"] == role]
    assert bound == []  # the user binds it to Prometheus, or to whoever debugs


NETWORK_POLICY: Final = find(OBJECTS, "NetworkPolicy", "hvpa")


def test_network_policy_selects_the_controller() -> None:
    spec = NETWORK_POLICY["spec"]
    assert spec["podSelector"]["matchLabels"] == POD["metadata"]["labels"]
    assert sorted(spec["policyTypes"]) == ["Egress", "Ingress"]


def test_network_policy_opens_probes_to_all_and_metrics_to_monitoring() -> None:
    rules = {
        rule["ports"][0]["port"]: rule.get("from") for rule in NETWORK_POLICY["spec"]["ingress"]
    }
    assert set(rules) == {"health", "metrics", "webhook"} <= set(PORTS)
    assert rules["health"] is None  # the kubelet probes from the node, not from a pod
    assert rules["webhook"] is None  # the API server calls it, from no pod
    (peer,) = rules["metrics"]
    assert peer == {
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}
    }


def test_network_policy_lets_out_only_the_api_server_ports() -> None:
    (rule,) = NETWORK_POLICY["spec"]["egress"]
    assert "to" not in rule  # the API server is no pod: see the manifest's comment
    assert sorted(p["port"] for p in rule["ports"]) == [443, 6443]
