"""API errors as the real server reports them: a metav1.Status body, an HTTP code and a reason.

Clients (client-go, kubernetes_asyncio, kubectl, hvpa.kube) branch on
`reason` and `code`, and some read `details` (the retry hint of a 429, the
causes of a 422, the fresh continue token of a 410), so each error carries
exactly what the real server puts there. The same exceptions reach in-process
callers of `server.objects`, who catch them by class.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Final

from hvpa.sim.apiserver.gotext import go_json, go_quote, go_value

if TYPE_CHECKING:
    from hvpa.sim.apiserver.resources import ResourceType

__all__ = [
    "OMIT",
    "AlreadyExists",
    "ApiError",
    "BadRequest",
    "Conflict",
    "Expired",
    "FieldError",
    "Forbidden",
    "InternalError",
    "Invalid",
    "MethodNotAllowed",
    "NotAcceptable",
    "NotFound",
    "Timeout",
    "TooManyRequests",
    "UnsupportedMediaType",
]


class ApiError(Exception):
    code: ClassVar[int] = 500
    reason: ClassVar[str] = "InternalError"

    def __init__(
        self,
        message: str,
        *,
        details: dict[str, Any] | None = None,
        continue_token: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.details = details
        self.continue_token = continue_token

    @property
    def retry_after_seconds(self) -> int | None:
        value = (self.details or {}).get("retryAfterSeconds")
        return int(value) if value is not None else None

    def status(self) -> dict[str, Any]:
        """The metav1.Status body, field for field as the real server writes it."""
        metadata: dict[str, Any] = {}
        if self.continue_token is not None:
            metadata["continue"] = self.continue_token
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": metadata,
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
        }
        if self.details is not None:
            body["details"] = self.details
        body["code"] = self.code
        return body


class BadRequest(ApiError):
    code, reason = 400, "BadRequest"


class Forbidden(ApiError):
    code, reason = 403, "Forbidden"


class NotFound(ApiError):
    code, reason = 404, "NotFound"

    @classmethod
    def of(cls, rtype: ResourceType, name: str) -> NotFound:
        return cls(f'{rtype.group_resource} "{name}" not found', details=_details(rtype, name))


class MethodNotAllowed(ApiError):
    code, reason = 405, "MethodNotAllowed"


class NotAcceptable(ApiError):
    code, reason = 406, "NotAcceptable"


class AlreadyExists(ApiError):
    code, reason = 409, "AlreadyExists"

    @classmethod
    def of(cls, rtype: ResourceType, name: str) -> AlreadyExists:
        return cls(f'{rtype.group_resource} "{name}" already exists', details=_details(rtype, name))


class Conflict(ApiError):
    code, reason = 409, "Conflict"

    @classmethod
    def modified(cls, rtype: ResourceType, name: str) -> Conflict:
        """The optimistic-concurrency failure every controller must retry on."""
        return cls.of(
            rtype,
            name,
            "the object has been modified; please apply your changes to the latest version and try again",
        )

    @classmethod
    def of(cls, rtype: ResourceType, name: str, why: str) -> Conflict:
        return cls(
            f'Operation cannot be fulfilled on {rtype.group_resource} "{name}": {why}',
            details=_details(rtype, name),
        )


class Expired(ApiError):
    code, reason = 410, "Expired"


class UnsupportedMediaType(ApiError):
    code, reason = 415, "UnsupportedMediaType"


class _Omit:
    def __repr__(self) -> str:
        return "<omitted>"


# A bad value left out of a message, as apimachinery's field.OmitValueType marks it.
OMIT: Final = _Omit()


@dataclass(frozen=True, slots=True)
class FieldError:
    """One validation failure, worded like apimachinery's field.Error (ErrorBody).

    `field` is the path as the real server prints it; the schema validator's
    errors that name no field carry `<nil>`, as the real server's do."""

    field: str
    type: str  # one of _WORDS' keys
    detail: str
    value: Any = None

    _WORDS: ClassVar[dict[str, str]] = {
        "FieldValueRequired": "Required value",
        "FieldValueInvalid": "Invalid value",
        "FieldValueTypeInvalid": "Invalid value",
        "FieldValueForbidden": "Forbidden",
        "FieldValueNotSupported": "Unsupported value",
        "FieldValueDuplicate": "Duplicate value",
        "FieldValueTooLong": "Too long",
        "FieldValueTooMany": "Too many",
    }
    # Types whose message shows the bad value (the others never do).
    _SHOWN: ClassVar[frozenset[str]] = frozenset(
        {
            "FieldValueInvalid",
            "FieldValueTypeInvalid",
            "FieldValueNotSupported",
            "FieldValueDuplicate",
            "FieldValueTooMany",
        }
    )

    @classmethod
    def required(cls, field: str, detail: str = "") -> FieldError:
        return cls(field, "FieldValueRequired", detail)

    @classmethod
    def invalid(cls, field: str, value: Any, detail: str) -> FieldError:
        return cls(field, "FieldValueInvalid", detail, value)

    @classmethod
    def forbidden(cls, field: str, detail: str) -> FieldError:
        return cls(field, "FieldValueForbidden", detail)

    @classmethod
    def type_invalid(cls, field: str, value: Any, detail: str) -> FieldError:
        return cls(field, "FieldValueTypeInvalid", detail, value)

    @classmethod
    def not_supported(cls, field: str, value: Any, supported: list[str]) -> FieldError:
        detail = "supported values: " + ", ".join(go_quote(v) for v in supported)
        return cls(field, "FieldValueNotSupported", detail if supported else "", value)

    @classmethod
    def duplicate(cls, field: str, value: Any) -> FieldError:
        return cls(field, "FieldValueDuplicate", "", value)

    @classmethod
    def too_long(cls, field: str, limit: int) -> FieldError:
        unit = "byte" if limit == 1 else "bytes"
        return cls(field, "FieldValueTooLong", f"may not be more than {limit} {unit}", OMIT)

    @classmethod
    def too_many(cls, field: str, count: int, limit: int) -> FieldError:
        unit = "item" if limit == 1 else "items"
        return cls(field, "FieldValueTooMany", f"must have at most {limit} {unit}", count)

    def body(self) -> str:
        """The message without the field path, as `causes[].message` carries it."""
        words = self._WORDS[self.type]
        if self.type in self._SHOWN and self.value is not OMIT:
            words = f"{words}: {_shown(self.value)}"
        return f"{words}: {self.detail}" if self.detail else words

    def __str__(self) -> str:
        return f"{self.field}: {self.body()}"

    def cause(self) -> dict[str, str]:
        """The StatusCause an Invalid carries for this error."""
        return {"reason": self.type, "message": self.body(), "field": self.field}


def _shown(value: Any) -> str:
    """ErrorBody's rendering: scalars with %v, strings with %q, the rest as JSON."""
    if isinstance(value, bool | int | float) and not isinstance(value, _Omit):
        return go_value(value)
    if isinstance(value, str):
        return go_quote(value)
    return go_json(value)


class Invalid(ApiError):
    code, reason = 422, "Invalid"

    @classmethod
    def of(
        cls, rtype: ResourceType, name: str, errors: list[FieldError], *, by_resource: bool = False
    ) -> Invalid:
        """The 422 apimachinery's NewInvalid builds: Kind.group "name" is invalid: causes.

        `by_resource`: qualified by the resource (plural) where upstream passes that in place
        of the kind."""
        if len(errors) == 1:
            summary = str(errors[0])
        else:
            summary = "[" + ", ".join(str(error) for error in errors) + "]"
        kind = rtype.plural if by_resource else rtype.kind
        group_kind = f"{kind}.{rtype.group}" if rtype.group else kind
        # StatusDetails.name is omitempty: a request's options (PatchOptions) have none.
        details: dict[str, Any] = {"name": name} if name else {}
        if rtype.group:
            details["group"] = rtype.group
        details["kind"] = kind
        details["causes"] = [error.cause() for error in errors]
        return cls(f'{group_kind} "{name}" is invalid: {summary}', details=details)


class TooManyRequests(ApiError):
    code, reason = 429, "TooManyRequests"


class InternalError(ApiError):
    code, reason = 500, "InternalError"


class Timeout(ApiError):
    code, reason = 504, "Timeout"


def _details(rtype: ResourceType, name: str) -> dict[str, Any]:
    """StatusDetails for a named object; `kind` holds the resource, as upstream does."""
    details: dict[str, Any] = {"name": name}
    if rtype.group:
        details["group"] = rtype.group
    details["kind"] = rtype.plural
    return details
