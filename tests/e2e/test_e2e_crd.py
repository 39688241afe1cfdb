"""The Hvpa CRD as a real API server serves it: what `kubectl get hvpa` prints (the server's
Table, from additionalPrinterColumns), what `kubectl explain` says (the server's OpenAPI v3,
from the schema's descriptions), and the /scale subresource.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from e2e_cluster import MANIFESTS, Cluster
from e2e_objects import deployment, hvpa, hvpa_path, workload_path
from e2e_processes import wait_until

pytestmark = pytest.mark.e2e

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"


def _example(name: str) -> dict[str, Any]:
    return dict(yaml.safe_load(Path(MANIFESTS / "examples" / name).read_text()))


def _table_row(cluster: Cluster, namespace: str, name: str) -> dict[str, Any]:
    table = cluster.admin.get(hvpa_path(namespace), accept=TABLE)
    columns = [c["name"] for c in table["columnDefinitions"]]
    (row,) = [r for r in table["rows"] if r["object"]["metadata"]["name"] == name]
    return dict(zip(columns, row["cells"], strict=True))


def _create_three_stage_hvpa(cluster: Cluster, namespace: str) -> str:
    """The proposal's example 1 (hpaSpec.scaleTargetRef, no strategy) and its target."""
    api = cluster.admin
    manifest = _example("proposal-example-1.yaml")
    target = manifest["spec"]["hpaSpec"]["scaleTargetRef"]["name"]
    api.create(
        workload_path(namespace, "Deployment"),
        deployment(target, replicas=1, requests={"cpu": "100m"}),
    )
    api.create(hvpa_path(namespace), manifest)
    name = str(manifest["metadata"]["name"])
    wait_until(
        lambda: bool(api.get(hvpa_path(namespace, name)).get("status", {}).get("conditions")),
        timeout_seconds=60,
        what="hvpa's first status",
    )
    return name


def test_printer_columns_are_filled_for_the_three_stage_form_and_the_default_strategy(
    cluster: Cluster, namespace: str
) -> None:
    name = _create_three_stage_hvpa(cluster, namespace)
    row = _table_row(cluster, namespace, name)
    assert row["Target"] == "resource-consumer"
    assert row["Strategy"], "the default strategy shows as blank"
    assert row["Desired"] not in (None, ""), "DESIRED is blank until the first scaling"


def test_printer_columns_are_filled_for_the_default_strategy(
    cluster: Cluster, namespace: str
) -> None:
    """Issue 16: STRATEGY was blank for every Hvpa that leaves the default, and DESIRED until
    the first scaling; both are filled from hvpa's first status on."""
    api = cluster.admin
    api.create(
        workload_path(namespace, "Deployment"),
        deployment("web", replicas=1, requests={"cpu": "100m"}),
    )
    api.create(hvpa_path(namespace), hvpa("web"))
    wait_until(
        lambda: _table_row(cluster, namespace, "web")["Desired"] not in (None, ""),
        timeout_seconds=60,
        what="DESIRED filled",
    )
    row = _table_row(cluster, namespace, "web")
    assert row["Target"] == "web"
    assert row["Strategy"], "the default strategy shows as blank"


def test_kubectl_get_prints_the_columns(cluster: Cluster, namespace: str) -> None:
    """Whatever the columns hold, kubectl (the server's version) prints the server's Table."""
    api = cluster.admin
    api.create(
        workload_path(namespace, "Deployment"),
        deployment("web", replicas=1, requests={"cpu": "100m"}),
    )
    api.create(hvpa_path(namespace), hvpa("web"))
    wait_until(
        lambda: _table_row(cluster, namespace, "web")["Target"] == "web",
        timeout_seconds=60,
        what="TARGET filled (from hvpa's status)",
    )
    printed = cluster.kubectl("-n", namespace, "get", "hvpa", "web").stdout.splitlines()
    assert printed[0].split()[:3] == ["NAME", "TARGET", "STRATEGY"]
    assert printed[1].split()[:2] == ["web", "web"]


def _schema(cluster: Cluster) -> dict[str, Any]:
    document = cluster.admin.get("/openapi/v3/apis/autoscaling.k8s.io/v1alpha1")
    schemas = document["components"]["schemas"]
    (key,) = [k for k in schemas if k.endswith(".v1alpha1.Hvpa")]
    return dict(schemas[key])


def test_kubectl_explain_answers_from_the_servers_openapi(cluster: Cluster) -> None:
    explained = cluster.kubectl("explain", "hvpa.spec").stdout
    assert "KIND:       Hvpa" in explained
    assert "FIELDS:" in explained
    assert "targetRef" in explained


def test_every_spec_field_has_a_description(cluster: Cluster) -> None:
    spec = _schema(cluster)["properties"]["spec"]
    undescribed = sorted(
        name for name, field in spec["properties"].items() if not field.get("description")
    )
    assert not undescribed, f"spec fields without a description: {undescribed}"


EXAMPLES = sorted(p.name for p in (MANIFESTS / "examples").glob("*.yaml"))


@pytest.mark.parametrize("example", EXAMPLES)
def test_scale_subresource_answers_for_every_example(
    cluster: Cluster, namespace: str, example: str
) -> None:
    """GET .../hvpas/NAME/scale must not fail (`kubectl scale hvpa` and anything that reads
    /scale use it): a real server answered 500 for every example without the field the
    CRD's specReplicasPath named (issue 16). The CRD now declares no scale subresource, so
    the server answers 404; were it declared again, it must answer 200."""
    api = cluster.admin
    manifest = _example(example)
    manifest["metadata"].pop("namespace", None)
    api.create(hvpa_path(namespace), manifest)
    name = manifest["metadata"]["name"]
    crd = api.get(
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/hvpas.autoscaling.k8s.io"
    )
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1alpha1"]
    response = api.request("GET", hvpa_path(namespace, name) + "/scale")
    if "scale" not in version.get("subresources", {}):
        assert response.status == 404
        return
    assert response.status == 200, response.body[:300]
    assert response.json()["kind"] == "Scale"
