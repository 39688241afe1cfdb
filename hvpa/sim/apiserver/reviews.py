"""TokenReview and SubjectAccessReview, answered from tables a test or the simulator sets.

The real API server asks its authenticators and authorizers; here a token
table says whose each token is, and an allow list says who may do what to a
non-resource URL (`/metrics`, `/debug/state`), which is what a controller's
secure metrics serving asks. A user is allowed when the list holds its name
or one of its groups with the verb and path (`*` matches every verb).
Resource attributes are never allowed here: nothing in hvpa asks for them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Reviews"]


@dataclass(frozen=True, slots=True)
class _User:
    username: str
    uid: str
    groups: tuple[str, ...]


class Reviews:
    def __init__(self) -> None:
        self._users: dict[str, _User] = {}
        self._allowed: set[tuple[str, str, str]] = set()

    def add_token(
        self, token: str, username: str, *, uid: str = "", groups: Iterable[str] = ()
    ) -> None:
        """TokenReviews of `token` authenticate it as `username` with `groups`."""
        self._users[token] = _User(username, uid, tuple(groups))

    def allow(self, subject: str, verb: str, path: str) -> None:
        """`subject` (a user name or a group) may `verb` (or `*`) the non-resource URL `path`."""
        self._allowed.add((subject, verb, path))

    def clear(self) -> None:
        self._users.clear()
        self._allowed.clear()

    def token_review(self, body: Mapping[str, Any]) -> dict[str, Any]:
        token = str((body.get("spec") or {}).get("token") or "")
        user = self._users.get(token)
        status: dict[str, Any] = {"authenticated": user is not None}
        if user is None:
            status["error"] = "invalid bearer token"
        else:
            status["user"] = {
                "username": user.username,
                "uid": user.uid,
                "groups": list(user.groups),
            }
        return {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenReview",
            "metadata": {},
            "spec": body.get("spec") or {},
            "status": status,
        }

    def access_review(self, body: Mapping[str, Any]) -> dict[str, Any]:
        spec = body.get("spec") or {}
        attributes = spec.get("nonResourceAttributes") or {}
        verb, path = str(attributes.get("verb", "")), str(attributes.get("path", ""))
        subjects = [str(spec.get("user", "")), *(str(g) for g in spec.get("groups") or ())]
        allowed = bool(attributes) and any(
            (subject, wanted, path) in self._allowed
            for subject in subjects
            for wanted in (verb, "*")
        )
        return {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "metadata": {},
            "spec": spec,
            "status": {"allowed": allowed},
        }
