"""Fault injection for tests: what a real cluster does to a client on a bad day.

- `fail(...)`: the next N requests matching a method and path pattern answer
  500 (or 429 with Retry-After, or 503/504), with a proper Status body;
- `delay(...)`: added latency for matching requests, until removed;
- `conflict(...)`: the next N writes to one object answer 409 Conflict, as
  if another writer got there first;
- `close_watches()`: every open watch ends now (an API server restart);
- `compact(...)`: history is compacted, so watches and continue tokens from
  before answer 410 Expired.
Each rule counts its hits, so a test can assert the client met the fault.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from hvpa.sim.apiserver.errors import (
    ApiError,
    Conflict,
    InternalError,
    NotFound,
    Timeout,
    TooManyRequests,
)
from hvpa.sim.apiserver.resources import ResourceType
from hvpa.sim.apiserver.storage import Storage
from hvpa.sim.apiserver.watching import Watches

__all__ = ["Delay", "Failure", "Faults"]


class ServiceUnavailable(ApiError):
    code, reason = 503, "ServiceUnavailable"


_MESSAGES: Final = {
    404: "the server could not find the requested resource",
    429: "Too many requests, please try again later.",
    500: "Internal error occurred: injected fault",
    503: "The server is currently unable to handle the request",
    504: "The server was unable to return a response in the time allotted, but may still be processing the request",
}
_ERRORS: Final[dict[int, type[ApiError]]] = {
    # 404 as for a resource the server does not serve (a CRD that is not installed).
    404: NotFound,
    429: TooManyRequests,
    500: InternalError,
    503: ServiceUnavailable,
    504: Timeout,
}


@dataclass(slots=True)
class _Match:
    method: str | None
    path: re.Pattern[str] | None

    def matches(self, method: str, path: str) -> bool:
        if self.method is not None and self.method != method:
            return False
        return self.path is None or self.path.search(path) is not None


@dataclass(slots=True)
class Failure:
    """Answer the next `remaining` matching requests with `status`."""

    match: _Match
    status: int
    remaining: int
    retry_after_seconds: int
    hits: int = 0

    def error(self) -> ApiError:
        details = {"retryAfterSeconds": self.retry_after_seconds} if self.status == 429 else None
        return _ERRORS[self.status](_MESSAGES[self.status], details=details)


@dataclass(slots=True)
class Delay:
    """Hold matching requests for `seconds` (of the loop's clock) before answering."""

    match: _Match
    seconds: float
    hits: int = 0
    _faults: Faults | None = field(default=None, repr=False)

    def remove(self) -> None:
        if self._faults is not None:
            self._faults.remove_delay(self)


class Faults:
    def __init__(
        self,
        storage: Storage,
        watches: Watches,
        resolve: Callable[[str | ResourceType], ResourceType],
    ) -> None:
        self._storage = storage
        self._resolve = resolve
        self._watches = watches
        self._failures: list[Failure] = []
        self._delays: list[Delay] = []
        self._conflicts: dict[tuple[str, str | None, str], int] = {}

    def fail(
        self,
        *,
        status: int = 500,
        times: int = 1,
        method: str | None = None,
        path: str | None = None,
        retry_after_seconds: int = 1,
    ) -> Failure:
        """`path` is a regular expression searched in the URL path (e.g. r"/pods$")."""
        if status not in _ERRORS:
            raise ValueError(f"status must be one of {sorted(_ERRORS)}")
        failure = Failure(_match(method, path), status, times, retry_after_seconds)
        self._failures.append(failure)
        return failure

    def delay(self, seconds: float, *, method: str | None = None, path: str | None = None) -> Delay:
        delay = Delay(_match(method, path), seconds, _faults=self)
        self._delays.append(delay)
        return delay

    def remove_delay(self, delay: Delay) -> None:
        if delay in self._delays:
            self._delays.remove(delay)

    def conflict(
        self,
        resource: str | ResourceType,
        name: str,
        *,
        namespace: str | None = "default",
        times: int = 1,
    ) -> None:
        """The next `times` PUTs or PATCHes of the object (or its /status or /scale) get 409."""
        rtype = self._resolve(resource)
        key = (rtype.group_resource, namespace if rtype.namespaced else None, name)
        self._conflicts[key] = self._conflicts.get(key, 0) + times

    def close_watches(self) -> int:
        """End every open watch; returns how many were open."""
        return self._watches.close_all()

    def compact(self, resource_version: int | None = None) -> int:
        """Compact all history through `resource_version` (default: the current one)."""
        return self._storage.compact(resource_version)

    def clear(self) -> None:
        self._failures.clear()
        self._delays.clear()
        self._conflicts.clear()

    # ------------------------------------------------------------- used by the handlers

    def latency_for(self, method: str, path: str) -> float:
        total = 0.0
        for delay in self._delays:
            if delay.match.matches(method, path):
                delay.hits += 1
                total += delay.seconds
        return total

    def failure_for(self, method: str, path: str) -> ApiError | None:
        for failure in self._failures:
            if failure.remaining > 0 and failure.match.matches(method, path):
                failure.remaining -= 1
                failure.hits += 1
                if failure.remaining == 0:
                    self._failures.remove(failure)
                return failure.error()
        return None

    def conflict_for(
        self, rtype: ResourceType, namespace: str | None, name: str
    ) -> ApiError | None:
        key = (rtype.group_resource, namespace if rtype.namespaced else None, name)
        remaining = self._conflicts.get(key, 0)
        if remaining <= 0:
            return None
        if remaining == 1:
            del self._conflicts[key]
        else:
            self._conflicts[key] = remaining - 1
        return Conflict.modified(rtype, name)


def _match(method: str | None, path: str | None) -> _Match:
    return _Match(method.upper() if method else None, re.compile(path) if path else None)
