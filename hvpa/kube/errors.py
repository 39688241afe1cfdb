"""API errors by meaning: callers catch `Conflict` or `Expired`, never compare codes.

An error response of the API server carries a metav1.Status body with a
`reason` (NotFound, AlreadyExists, Conflict, Expired, Invalid...) and a
`code`; a watch reports the same Status as an ERROR event. Both become one
of the classes here, with the server's message kept verbatim so a log line
says what the server said. Connection failures and client-side timeouts are
`TransportError`: the request may or may not have reached the server.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import msgspec

__all__ = [
    "AlreadyExists",
    "ApiError",
    "BadRequest",
    "Conflict",
    "Expired",
    "Forbidden",
    "Gone",
    "Invalid",
    "KubeError",
    "NotFound",
    "ResponseTooLarge",
    "ServerError",
    "StatusWire",
    "TooManyRequests",
    "TransportError",
    "Unauthorized",
    "error_from_response",
    "error_from_status",
]


class StatusCause(msgspec.Struct):
    reason: str = ""
    message: str = ""
    field: str = ""


class StatusDetails(msgspec.Struct, rename="camel"):
    name: str = ""
    group: str = ""
    kind: str = ""
    causes: list[StatusCause] = []
    retry_after_seconds: int = 0


class StatusWire(msgspec.Struct):
    """metav1.Status, as an error body or the object of a watch ERROR event."""

    kind: str = ""
    status: str = ""
    message: str = ""
    reason: str = ""
    code: int = 0
    details: StatusDetails | None = None


_decode_status: Final = msgspec.json.Decoder(StatusWire).decode


class KubeError(Exception):
    """Any failure to talk to the API server."""


class TransportError(KubeError):
    """No response: connection refused or reset, TLS failure, or a client-side timeout.

    A write that fails this way may still have been applied by the server.
    """


class ResponseTooLarge(KubeError):
    """A response (or one watch event) longer than the bound the caller set for it.

    The client stops reading at the bound, so an answer of any size costs at
    most the bound in memory; the connection is closed, and the request is
    not retried (the same request would get the same answer). `limit_bytes`
    is the bound that was hit, `what` the request ("GET /api/v1/pods").
    """

    def __init__(
        self,
        what: str,
        *,
        limit_bytes: int,
        declared_bytes: int | None = None,
        part: str = "the response",
    ) -> None:
        declared = f" (it declares {declared_bytes} bytes)" if declared_bytes is not None else ""
        super().__init__(
            f"{what}: {part} is larger than {limit_bytes} bytes{declared}, "
            "the bound for it; not read further"
        )
        self.what = what
        self.limit_bytes = limit_bytes
        self.declared_bytes = declared_bytes


class ApiError(KubeError):
    """The API server answered with an error status."""

    def __init__(
        self,
        message: str,
        *,
        code: int,
        reason: str = "",
        details: StatusDetails | None = None,
        retry_after: float | None = None,
        method: str = "",
        url: str = "",
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.reason = reason
        self.details = details
        self.retry_after = retry_after
        self.method = method
        self.url = url

    def __str__(self) -> str:
        where = f" ({self.method} {self.url})" if self.method else ""
        reason = f" {self.reason}" if self.reason else ""
        return f"{self.code}{reason}: {self.message}{where}"


class BadRequest(ApiError):
    """400: the request itself is malformed."""


class Unauthorized(ApiError):
    """401: no or expired credentials."""


class Forbidden(ApiError):
    """403: RBAC does not allow this verb on this resource."""


class NotFound(ApiError):
    """404: the object (or the resource type) does not exist."""


class Conflict(ApiError):
    """409: lost an optimistic-concurrency race (a stale resourceVersion); re-read and retry."""


class AlreadyExists(Conflict):
    """409 AlreadyExists: a create of a name that is taken (another writer was first)."""


class Gone(ApiError):
    """410: the requested resourceVersion is no longer available."""


class Expired(Gone):
    """410 Expired: a watch or continue token older than the server's history; re-list."""


class Invalid(ApiError):
    """422: the object fails validation; retrying the same request cannot help."""


class TooManyRequests(ApiError):
    """429: throttled by API priority and fairness; `retry_after` says when to come back."""


class ServerError(ApiError):
    """5xx: the server failed; a read may be retried, a write only if the server says so."""


_BY_CODE: Final[Mapping[int, type[ApiError]]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    410: Gone,
    422: Invalid,
    429: TooManyRequests,
}

_BY_REASON: Final[Mapping[str, type[ApiError]]] = {
    "AlreadyExists": AlreadyExists,
    "Expired": Expired,
}


def error_from_status(
    status: StatusWire,
    *,
    code: int = 0,
    retry_after: float | None = None,
    method: str = "",
    url: str = "",
) -> ApiError:
    """The error class for a Status; `code` is the HTTP code when the body has none."""
    code = status.code or code
    cls = _BY_REASON.get(status.reason) or _BY_CODE.get(code)
    if cls is None:
        cls = ServerError if code >= 500 else ApiError
    if retry_after is None and status.details is not None and status.details.retry_after_seconds:
        retry_after = float(status.details.retry_after_seconds)
    return cls(
        status.message or status.reason or f"HTTP {code}",
        code=code,
        reason=status.reason,
        details=status.details,
        retry_after=retry_after,
        method=method,
        url=url,
    )


def _parse_retry_after(value: str | None) -> float | None:
    """Retry-After in seconds; the HTTP-date form is not used by the API server."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None
    return seconds if seconds >= 0 else None


def error_from_response(
    code: int,
    body: bytes,
    *,
    retry_after_header: str | None = None,
    method: str = "",
    url: str = "",
) -> ApiError:
    """The error for a non-2xx response; a body that is no Status still yields its text."""
    try:
        status = _decode_status(body)
    except msgspec.DecodeError:
        text = body[:512].decode("utf-8", errors="replace").strip()
        status = StatusWire(message=text or f"HTTP {code}", code=code)
    return error_from_status(
        status,
        code=code,
        retry_after=_parse_retry_after(retry_after_header),
        method=method,
        url=url,
    )
