"""How the VPA updater's admission controller reads a VPA: through the controller's own decoder
(records.decode_vpa), its milli-units turned into the rules' bytes in one step, and a
container's own policy chosen over the `*` one."""

from __future__ import annotations

from typing import Any

from sim_kit import MIB, container, model, workload

from hvpa.sim.baselines.vpa_updater import VpaUpdater
from hvpa.sim.recommender import RecommenderSettings

DEPLOYMENT = ("Deployment", "default", "web")
NEVER = 10**9


def sized_vpa() -> dict[str, Any]:
    """A VPA in Initial mode (size new pods, never evict).

    The `*` policy would cap memory at 200Mi; the container's own raises it to at least
    400Mi, and wins: the 300Mi target becomes 400Mi. A wrong unit (memory in milli-bytes)
    would give 1000 times too much or too little, and the `*` policy 200Mi."""
    return {
        "apiVersion": "autoscaling.k8s.io/v1",
        "kind": "VerticalPodAutoscaler",
        "metadata": {"name": "web-vpa", "namespace": "default"},
        "spec": {
            "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "updatePolicy": {"updateMode": "Initial"},
            "resourcePolicy": {
                "containerPolicies": [
                    {"containerName": "*", "maxAllowed": {"memory": "200Mi"}},
                    {"containerName": "app", "minAllowed": {"memory": "400Mi"}},
                ]
            },
        },
    }


def recommendation() -> dict[str, Any]:
    """The recommender's status: a memory target between the two policies' bounds."""
    return {
        "status": {
            "recommendation": {
                "containerRecommendations": [
                    {
                        "containerName": "app",
                        "target": {"cpu": "300m", "memory": "300Mi"},
                        "lowerBound": {"cpu": "200m", "memory": "200Mi"},
                        "upperBound": {"cpu": "1", "memory": "1Gi"},
                    }
                ]
            }
        },
    }


def test_new_pods_get_the_target_in_bytes_under_their_own_policy() -> None:
    m = model(recommender=RecommenderSettings(interval_seconds=NEVER))
    m.server.objects.create("verticalpodautoscalers", sized_vpa())
    m.server.objects.patch(
        "verticalpodautoscalers",
        "web-vpa",
        recommendation(),
        namespace="default",
        subresource="status",
    )
    updater = VpaUpdater(m.server.objects, m.cluster.pods, clock=m.clock)
    m.cluster.pods.mutators.append(updater.admit)
    m.server.objects.create(
        "deployments", workload("Deployment", replicas=2, containers=[container()])
    )
    m.run(30)

    sizes = [p.containers[0].size for p in m.pods(DEPLOYMENT)]
    assert [(s.request_cpu, s.request_memory) for s in sizes] == [(300, 400 * MIB)] * 2
    # The template's 256Mi request and 512Mi limit: the limit keeps its ratio (2x).
    assert [s.limit_memory for s in sizes] == [800 * MIB] * 2
