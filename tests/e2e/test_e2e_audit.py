"""The audit log's reading of hvpa's refusals, offline (runs in `make test`): which 403s count
as gaps in hvpa's RBAC and which say nothing about it."""

from __future__ import annotations

from e2e_audit import PROVOKING_AGENT, AuditEvent, refusals

HVPA = "system:serviceaccount:hvpa-system:hvpa"


def _event(
    *, user: str = HVPA, code: int = 403, agent: str = "kubernetes-asyncio", message: str = ""
) -> AuditEvent:
    return AuditEvent.parse(
        {
            "user": {"username": user},
            "verb": "patch",
            "objectRef": {"resource": "deployments", "namespace": "shop", "name": "web"},
            "responseStatus": {"code": code, "message": message},
            "requestURI": "/apis/apps/v1/namespaces/shop/deployments/web",
            "requestReceivedTimestamp": "2026-11-26T10:00:00Z",
            "userAgent": agent,
        }
    )


def test_a_refusal_of_hvpa_counts() -> None:
    refused = _event()
    assert refusals([refused, _event(code=200), _event(user="alice")], user=HVPA) == [refused]


def test_refusals_a_test_provoked_with_hvpas_token_do_not_count() -> None:
    """The admission cases send hvpa's token on purpose to be refused by the policies."""
    assert refusals([_event(agent=PROVOKING_AGENT)], user=HVPA) == []


def test_refusals_in_a_terminating_namespace_do_not_count() -> None:
    terminating = _event(message="namespace shop is forbidden: because it is being terminated")
    assert refusals([terminating], user=HVPA) == []
