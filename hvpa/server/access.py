"""Who may read the metrics listener: the API server authenticates and authorizes, hvpa asks it.

The same check as controller-runtime's `filters.WithAuthenticationAndAuthorization`:

1. The request must carry `Authorization: Bearer TOKEN`; else 401.
2. A TokenReview (authentication.k8s.io/v1) asks the API server whose token
   it is; a token it does not accept is 401.
3. A SubjectAccessReview (authorization.k8s.io/v1) asks whether that user,
   with its groups and extra attributes, may `get` the request's path as a
   non-resource URL (`/metrics`, `/debug/state`: RBAC's `nonResourceURLs`);
   a refusal is 403 naming the user.
4. When the API server cannot answer either review, the request gets 500
   and nothing is served: an outage never opens the door.

Answers are kept briefly (`AccessSettings`: 1 min for a token, 5 min for an
allowed request, 30 s for a denied one, controller-runtime's TTLs), so a
scrape every 30 s costs the API server a review now and then, not two per
scrape. Tokens are kept only as their SHA-256 digest. Both caches are
bounded (`cache_entries`): a stream of bogus tokens costs a TokenReview each
but cannot grow memory. A failed review is not kept.

The caches are a few lines here rather than a dependency: entries need a TTL
each (an allow and a deny live for different times) and the loop's clock
(so they expire in the simulator's virtual time too).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from typing import Final, Generic, TypeVar

import msgspec
from aiohttp import web

from hvpa.kube.client import KubeClient
from hvpa.kube.errors import KubeError
from hvpa.logs import fields
from hvpa.settings import AccessSettings

__all__ = ["AccessReviews", "ReviewError", "User", "access_middleware"]

_logger = logging.getLogger(__name__)

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

TOKEN_REVIEWS: Final = "/apis/authentication.k8s.io/v1/tokenreviews"
SUBJECT_ACCESS_REVIEWS: Final = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
_BEARER: Final = "bearer "


@dataclass(frozen=True, slots=True)
class User:
    """An authenticated user, as a TokenReview names it and a SubjectAccessReview takes it."""

    username: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()


class ReviewError(Exception):
    """The API server could not answer a review; the request is refused with 500."""


class _UserWire(msgspec.Struct):
    username: str = ""
    uid: str = ""
    groups: list[str] = []
    extra: dict[str, list[str]] = {}


class _TokenReviewStatus(msgspec.Struct):
    authenticated: bool = False
    user: _UserWire = msgspec.field(default_factory=_UserWire)


class _TokenReviewWire(msgspec.Struct):
    status: _TokenReviewStatus = msgspec.field(default_factory=_TokenReviewStatus)


class _AccessStatus(msgspec.Struct):
    allowed: bool = False


class _AccessReviewWire(msgspec.Struct):
    status: _AccessStatus = msgspec.field(default_factory=_AccessStatus)


class _Expiring(Generic[K, V]):
    """A map of at most `max_entries` entries, each forgotten after its own TTL (oldest first)."""

    def __init__(self, max_entries: int, clock: Callable[[], float]) -> None:
        self._entries: OrderedDict[K, tuple[float, V]] = OrderedDict()
        self._max_entries = max_entries
        self._clock = clock

    def get(self, key: K) -> V | None:
        found = self._entries.get(key)
        if found is None:
            return None
        expires, value = found
        if self._clock() >= expires:
            del self._entries[key]
            return None
        return value

    def put(self, key: K, value: V, ttl_seconds: float) -> None:
        self._entries.pop(key, None)
        self._entries[key] = (self._clock() + ttl_seconds, value)
        while len(self._entries) > self._max_entries:
            self._entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)


# What a token review found: the user, or None for a token the API server refused.
_Authenticated = tuple[User | None]
_AccessKey = tuple[User, str, str]


class AccessReviews:
    """TokenReviews and SubjectAccessReviews against one API server, with their answers kept briefly."""

    def __init__(
        self,
        *,
        client: KubeClient,
        settings: AccessSettings,
        clock: Callable[[], float] | None = None,
    ) -> None:
        """`clock`: seconds, the running loop's time by default (virtual in the simulator)."""
        self._client = client
        self._settings = settings
        now = clock or (lambda: asyncio.get_running_loop().time())
        self._tokens: _Expiring[bytes, _Authenticated] = _Expiring(settings.cache_entries, now)
        self._decisions: _Expiring[_AccessKey, bool] = _Expiring(settings.cache_entries, now)

    async def _post(self, path: str, body: object) -> bytes:
        try:
            return await self._client.request(
                "POST", path, body=body, timeout_seconds=self._settings.review_timeout_seconds
            )
        except KubeError as error:
            raise ReviewError(str(error)) from error

    async def authenticate(self, token: str) -> User | None:
        """The user the token belongs to, or None when the API server does not accept it."""
        key = hashlib.sha256(token.encode()).digest()
        cached = self._tokens.get(key)
        if cached is not None:
            return cached[0]
        body = {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenReview",
            "spec": {"token": token},
        }
        try:
            review = msgspec.json.decode(
                await self._post(TOKEN_REVIEWS, body), type=_TokenReviewWire
            )
        except msgspec.DecodeError as error:
            raise ReviewError(f"cannot read the TokenReview: {error}") from error
        status = review.status
        user = None
        if status.authenticated and status.user.username:
            wire = status.user
            extra = tuple(sorted((k, tuple(v)) for k, v in wire.extra.items()))
            user = User(wire.username, wire.uid, tuple(wire.groups), extra)
        self._tokens.put(key, (user,), self._settings.token_review_ttl_seconds)
        return user

    async def authorize(self, user: User, verb: str, path: str) -> bool:
        """Whether `user` may `verb` the non-resource URL `path`."""
        key = (user, verb, path)
        cached = self._decisions.get(key)
        if cached is not None:
            return cached
        body = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "spec": {
                "user": user.username,
                "uid": user.uid,
                "groups": list(user.groups),
                "extra": {name: list(values) for name, values in user.extra},
                "nonResourceAttributes": {"path": path, "verb": verb},
            },
        }
        try:
            review = msgspec.json.decode(
                await self._post(SUBJECT_ACCESS_REVIEWS, body), type=_AccessReviewWire
            )
        except msgspec.DecodeError as error:
            raise ReviewError(f"cannot read the SubjectAccessReview: {error}") from error
        allowed = review.status.allowed
        ttl = self._settings.allow_ttl_seconds if allowed else self._settings.deny_ttl_seconds
        self._decisions.put(key, allowed, ttl)
        return allowed


def _bearer_token(header: str) -> str | None:
    if header[: len(_BEARER)].lower() != _BEARER:
        return None
    token = header[len(_BEARER) :].strip()
    return token or None


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def access_middleware(
    reviews: AccessReviews,
) -> Callable[[web.Request, Handler], Awaitable[web.StreamResponse]]:
    """An aiohttp middleware that serves a request only to a user the API server allows."""

    @web.middleware
    async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
        token = _bearer_token(request.headers.get("Authorization", ""))
        if token is None:
            return web.Response(status=401, text="Unauthorized")
        try:
            user = await reviews.authenticate(token)
        except ReviewError as error:
            _logger.warning("authentication failed", extra=fields(error=str(error)))
            return web.Response(status=500, text="Authentication failed")
        if user is None:
            _logger.debug("token refused", extra=fields(path=request.path))
            return web.Response(status=401, text="Unauthorized")
        verb = request.method.lower()
        try:
            allowed = await reviews.authorize(user, verb, request.path)
        except ReviewError as error:
            _logger.warning(
                "authorization failed", extra=fields(user=user.username, error=str(error))
            )
            return web.Response(status=500, text=f"Authorization for user {user.username} failed")
        if not allowed:
            _logger.debug(
                "access denied", extra=fields(user=user.username, verb=verb, path=request.path)
            )
            return web.Response(status=403, text=f"Authorization denied for user {user.username}")
        return await handler(request)

    return guard
