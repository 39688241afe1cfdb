"""The request log: every request with the attributes RBAC authorizes on.

Tests assert on what a client did (which verbs, how many retries, whether it
paginated); the RBAC check compares the verbs, groups and resources used
against the controller's ClusterRole. The attributes are derived from the
URL by the same rules as the real server's RequestInfo, so they are what an
authorizer would have seen.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Final

__all__ = ["TRUE_WORDS", "RequestLog", "RequestRecord", "request_attributes"]

_NAMESPACE_SUBRESOURCES = frozenset({"status", "finalize"})
# Go's strconv.ParseBool spellings of true, which query parameters are parsed with.
TRUE_WORDS: Final = frozenset({"1", "t", "T", "TRUE", "true", "True"})


@dataclass(slots=True)
class RequestRecord:
    method: str
    path: str
    query: dict[str, str] = field(default_factory=dict)
    # The path as sent, still percent-encoded (`path` is decoded): what a test of a
    # client's escaping asserts on.
    raw_path: str = ""
    # Kubernetes request attributes; all empty for non-resource URLs such as /version.
    verb: str = ""
    api_group: str = ""
    api_version: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""
    resource_request: bool = False
    # None until answered; a watch is answered when its stream starts.
    status: int | None = None
    # When the request arrived: time.monotonic(), real time even under a virtual
    # clock, so a benchmark can time a client's answer to a change it made.
    received_at: float = field(default_factory=time.monotonic)


def request_attributes(method: str, path: str, query: Mapping[str, str]) -> RequestRecord:
    """Parse a URL the way k8s.io/apiserver's RequestInfoFactory does."""
    record = RequestRecord(method, path, dict(query), verb=method.lower())
    parts = [p for p in path.split("/") if p]
    if len(parts) >= 2 and parts[0] == "api":
        record.api_version, rest = parts[1], parts[2:]
    elif len(parts) >= 3 and parts[0] == "apis":
        record.api_group, record.api_version, rest = parts[1], parts[2], parts[3:]
    else:
        return record
    if not rest:
        return record
    record.resource_request = True
    watch = False
    if rest[0] == "watch":
        watch, rest = True, rest[1:]
    if rest and rest[0] == "namespaces" and len(rest) > 1:
        record.namespace = rest[1]
        if len(rest) > 2 and rest[2] not in _NAMESPACE_SUBRESOURCES:
            rest = rest[2:]
    if rest:
        record.resource = rest[0]
    if len(rest) > 1:
        record.name = rest[1]
    if len(rest) > 2:
        record.subresource = rest[2]
    verbs = {"POST": "create", "PUT": "update", "PATCH": "patch"}
    if method in verbs:
        record.verb = verbs[method]
    elif method == "DELETE":
        record.verb = "delete" if record.name else "deletecollection"
    elif method in ("GET", "HEAD"):
        record.verb = "get" if record.name else "list"
        if watch or (query.get("watch") in TRUE_WORDS and record.verb == "list"):
            record.verb = "watch"
    return record


class RequestLog:
    """The most recent requests, oldest first."""

    def __init__(self, limit: int) -> None:
        self._records: deque[RequestRecord] = deque(maxlen=limit)

    def add(self, record: RequestRecord) -> None:
        self._records.append(record)

    def clear(self) -> None:
        self._records.clear()

    def __iter__(self) -> Iterator[RequestRecord]:
        return iter(list(self._records))

    def __len__(self) -> int:
        return len(self._records)
