"""The model's pod creates through the API server's mutating admission (ClusterSettings.admission):
a create no webhook matches is made at once, as without admission; one a webhook must see waits
for `advance`, which admits it before the scheduler runs, so the pod is placed the same tick."""

from __future__ import annotations

from typing import Any

from sim_kit import model, workload

DEPLOYMENT = ("Deployment", "default", "web")


def configuration() -> dict[str, Any]:
    """A webhook for every pod, at an address nothing listens on, ignored when it fails
    (the create then goes on unchanged, after the call was tried)."""
    return {
        "metadata": {"name": "sizer"},
        "webhooks": [
            {
                "name": "size.pods.example.com",
                "admissionReviewVersions": ["v1"],
                "sideEffects": "None",
                "failurePolicy": "Ignore",
                "timeoutSeconds": 1,
                "clientConfig": {"url": "https://127.0.0.1:1/mutate"},
                "rules": [
                    {
                        "operations": ["CREATE"],
                        "apiGroups": [""],
                        "apiVersions": ["v1"],
                        "resources": ["pods"],
                    }
                ],
            }
        ],
    }


def test_a_create_no_webhook_matches_is_made_and_placed_in_the_same_step() -> None:
    m = model(nodes=1, admission=True)
    m.server.objects.create("deployments", workload("Deployment", replicas=2))
    m.step()
    pods = m.pods(DEPLOYMENT)
    assert len(pods) == 2
    assert all(p.node is not None for p in pods)


async def test_a_create_a_webhook_matches_is_admitted_before_the_scheduler_runs() -> None:
    m = model(nodes=1, admission=True)
    m.server.objects.create("mutatingwebhookconfigurations", configuration())
    m.server.objects.create("deployments", workload("Deployment", replicas=2))
    m.cluster.step()
    assert m.pods(DEPLOYMENT) == []
    assert m.cluster.pods.pending(DEPLOYMENT) == 2
    await m.cluster.advance()
    pods = m.pods(DEPLOYMENT)
    assert len(pods) == 2
    assert all(p.node is not None for p in pods)
    assert [name for name, _ in m.server.admission.calls] == ["size.pods.example.com"] * 2
