"""The API server's audit log, read by the suite: who was refused (403), who met a conflict (409).

The log is one JSON event per line at Metadata level (user, verb, resource, response code;
the request's body too for writes of /scale, whose resourceVersion precondition is read);
the suite reads it from a byte offset taken when a test started, so each test sees only the
requests made while it ran.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

__all__ = ["PROVOKING_AGENT", "AuditEvent", "AuditLog", "logged_refusal", "refusals"]

# NamespaceLifecycle refuses new objects in a namespace being deleted with a 403 too: hvpa
# writing an Event about an Hvpa whose namespace a finished test is deleting is no RBAC gap.
_TERMINATING = "because it is being terminated"
# The user agent of requests a test makes with hvpa's own token in order to be refused (the
# admission policies' cases): their 403s are the policies at work, not a gap in the RBAC.
PROVOKING_AGENT = "hvpa-e2e-provoking-a-refusal"


@dataclass(frozen=True)
class AuditEvent:
    user: str
    verb: str
    resource: str
    subresource: str
    namespace: str
    name: str
    code: int
    uri: str
    message: str
    received: float  # seconds since the epoch
    user_agent: str = ""
    # The resourceVersion the request's body carried (a precondition), where the body is logged.
    request_version: str = ""

    @classmethod
    def parse(cls, entry: dict[str, Any]) -> AuditEvent:
        target = entry.get("objectRef") or {}
        status = entry.get("responseStatus") or {}
        received = entry.get("requestReceivedTimestamp") or "1970-01-01T00:00:00Z"
        return cls(
            user=str(entry.get("user", {}).get("username", "")),
            verb=str(entry.get("verb", "")),
            resource=str(target.get("resource", "")),
            subresource=str(target.get("subresource", "")),
            namespace=str(target.get("namespace", "")),
            name=str(target.get("name", "")),
            code=int(status.get("code", 0)),
            uri=str(entry.get("requestURI", "")),
            message=str(status.get("message", "")),
            received=datetime.fromisoformat(received).timestamp(),
            user_agent=str(entry.get("userAgent", "")),
            request_version=str(
                ((entry.get("requestObject") or {}).get("metadata") or {}).get(
                    "resourceVersion", ""
                )
            ),
        )

    def __str__(self) -> str:
        where = "/".join(
            p for p in (self.namespace, self.resource, self.name, self.subresource) if p
        )
        return f"{self.user} {self.verb} {where} -> {self.code}"


class AuditLog:
    def __init__(self, path: Path) -> None:
        self.path = path

    def offset(self) -> int:
        try:
            return self.path.stat().st_size
        except FileNotFoundError:
            return 0

    def events(self, since: int = 0) -> list[AuditEvent]:
        """Every complete event written at or after byte `since`."""
        try:
            with self.path.open("rb") as log:
                log.seek(since)
                data = log.read()
        except FileNotFoundError:
            return []
        events = []
        for line in data.split(b"\n"):
            if not line.strip():
                continue
            try:
                events.append(AuditEvent.parse(json.loads(line)))
            except ValueError:
                continue  # the last line, still being written
        return events


def refusals(
    events: Iterable[AuditEvent], *, user: str, excused: Iterable[tuple[float, float]] = ()
) -> list[AuditEvent]:
    """The 403s `user` got, less those that say nothing about its permissions: refusals in a
    namespace being deleted, any while the API server was starting (`excused` windows:
    until its authorizer has synced its caches, a starting server refuses everyone), and
    those a test provoked on purpose (PROVOKING_AGENT)."""
    windows = list(excused)
    return [
        event
        for event in events
        if event.user == user
        and event.code == 403
        and _TERMINATING not in event.message
        and event.user_agent != PROVOKING_AGENT
        and not any(start <= event.received <= end for start, end in windows)
    ]


def logged_refusal(record: dict[str, Any], *, excused: Iterable[tuple[float, float]] = ()) -> bool:
    """Whether one of hvpa's JSON log records reports a 403 (its errors read "403 Forbidden:
    ..."), with the same exceptions as `refusals`."""
    text = " ".join(str(record.get(key, "")) for key in ("error", "msg", "text"))
    if "403 Forbidden" not in text or _TERMINATING in text:
        return False
    stamp = record.get("ts")
    if not stamp:
        return True
    logged = datetime.fromisoformat(str(stamp)).timestamp()
    return not any(start <= logged <= end for start, end in excused)
