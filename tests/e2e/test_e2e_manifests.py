"""manifests/ on a real API server: applied with `kubectl apply -k` (the session's set-up),
every example accepted by a server-side dry run, and the shipped RBAC enough on a cluster that
enforces owner-reference permissions.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from e2e_api import Api
from e2e_cluster import HVPA_USER, MANIFESTS, Cluster
from e2e_objects import deployment, hvpa, hvpa_path, vpa_path, workload_path

pytestmark = pytest.mark.e2e

EXAMPLES = sorted((MANIFESTS / "examples").glob("*.yaml"))


def test_apply_k_installed_every_object(cluster: Cluster) -> None:
    api = cluster.admin
    assert api.exists(
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/hvpas.autoscaling.k8s.io"
    )
    assert api.exists("/api/v1/namespaces/hvpa-system/serviceaccounts/hvpa")
    assert api.exists("/apis/rbac.authorization.k8s.io/v1/clusterroles/hvpa")
    assert api.exists("/apis/apps/v1/namespaces/hvpa-system/deployments/hvpa")
    assert api.exists("/apis/policy/v1/namespaces/hvpa-system/poddisruptionbudgets/hvpa")


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_passes_a_server_side_dry_run(cluster: Cluster, example: Path) -> None:
    manifest = yaml.safe_load(example.read_text())
    namespace = manifest["metadata"].get("namespace", "default")
    if not cluster.admin.exists(f"/api/v1/namespaces/{namespace}"):
        cluster.admin.create("/api/v1/namespaces", {"metadata": {"name": namespace}})
    result = cluster.kubectl("apply", "--dry-run=server", "-f", str(example))
    assert "(server dry run)" in result.stdout
    # A dry run persists nothing.
    name = manifest["metadata"]["name"]
    assert not cluster.admin.exists(hvpa_path(namespace, name))


def test_hvpa_may_block_its_hvpas_deletion_from_a_child(cluster: Cluster, namespace: str) -> None:
    """OwnerReferencesPermissionEnforcement: an ownerReference with blockOwnerDeletion needs
    `update` on the owner's finalizers; without it a real cluster answers 403 to every child
    VPA hvpa creates (issue 16). Here as the hvpa ServiceAccount itself, not the admin."""
    admin = cluster.admin
    admin.create(
        workload_path(namespace, "Deployment"),
        deployment("web", replicas=1, requests={"cpu": "10m"}),
    )
    # hvpa=False: the controller leaves this Hvpa's VPA alone, the test creates one itself.
    owner = admin.create(hvpa_path(namespace), hvpa("web", hpa=False, vpa=False))
    as_hvpa = Api(
        cluster.control_plane.server, ca_file=cluster.pki.ca.cert, token=cluster.hvpa_token()
    )
    response = as_hvpa.request(
        "POST",
        vpa_path(namespace),
        {
            "apiVersion": "autoscaling.k8s.io/v1",
            "kind": "VerticalPodAutoscaler",
            "metadata": {
                "name": "by-hand",
                "ownerReferences": [
                    {
                        "apiVersion": "autoscaling.k8s.io/v1alpha1",
                        "kind": "Hvpa",
                        "name": "web",
                        "uid": owner["metadata"]["uid"],
                        "controller": True,
                        "blockOwnerDeletion": True,
                    }
                ],
            },
            "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}},
        },
    )
    assert response.status == 201, (
        f"{HVPA_USER}: {response.status} {response.json().get('message')}"
    )
