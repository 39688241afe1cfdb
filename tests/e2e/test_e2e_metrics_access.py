"""hvpa's /metrics and /debug/state, served over HTTPS as the Deployment runs them, with the
real API server answering hvpa's TokenReviews and SubjectAccessReviews.
"""

from __future__ import annotations

import urllib.error

import pytest
from e2e_cluster import Cluster

pytestmark = pytest.mark.e2e


def test_only_authenticated_and_authorized_callers_read_debug_state(
    cluster: Cluster, namespace: str
) -> None:
    controller = cluster.running_controllers()[0]
    # The suite's reader, bound to the shipped reader ClusterRoles.
    assert "informers" in controller.state()
    assert "hvpa_" in controller.metrics_text()

    cluster.admin.create(
        f"/api/v1/namespaces/{namespace}/serviceaccounts", {"metadata": {"name": "nobody"}}
    )
    unbound = cluster.token(namespace, "nobody")
    for path in ("/debug/state", "/metrics"):
        with pytest.raises(urllib.error.HTTPError) as refused:
            controller.secure_get(path, token=unbound)
        assert refused.value.code == 403, path
    with pytest.raises(urllib.error.HTTPError) as unknown:
        controller.secure_get("/debug/state", token="not-a-token-the-api-server-issued")
    assert unknown.value.code == 401
