"""Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection.

Every candidate runs `LeaderElector.run()`. The rules:

- Acquire: get the Lease (create it if missing). It may be taken when it is
  ours, unheld (released), or expired - where "expired" is judged, as in
  client-go, by the candidate's own clock: the lease duration counted from
  when *we* last saw the Lease change, never from the renewTime written by
  another machine's clock. The write is an update with the resourceVersion
  read, so of two candidates racing for it one gets 409 and keeps waiting.
  Candidates retry every retry period (jittered).
- Renew: the leader renews every retry period. All attempts since the last
  success share one deadline, `renew_deadline_seconds` after that success
  began, and each request is cut off at it - a hung request cannot keep us
  leader. Past the deadline (or on seeing another holder) leadership is
  lost: `leading` clears and `on_stopped_leading` runs at once (the place to
  cancel whatever writes: controller-runtime cancels the manager's context
  there), then `run` raises LeadershipLost with the reason, so the process
  can exit non-zero and start over. The elector logs the loss at info only:
  the one line a person needs is the owner's, from the exception.
- `is_leader()` is the check before every write: it turns false the moment
  the deadline passes, even if the renew loop has not run yet.
- On cancellation the leader steps down first, then (ReleaseOnCancel)
  writes the Lease with no holder and a 1 s duration, so another candidate
  takes over at its next retry instead of waiting out the lease.

Timestamps written to the Lease (acquireTime, renewTime, MicroTime) come
from the injected wall `clock`; deadlines and observation times use the
running loop's monotonic clock; so both follow the simulator's virtual time.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Final

import msgspec

from hvpa.kube.client import KubeClient
from hvpa.kube.errors import AlreadyExists, KubeError, NotFound
from hvpa.kube.metrics import KubeMetrics
from hvpa.kube.resources import api_path
from hvpa.kube.settings import LeaderElectionSettings
from hvpa.logs import fields

__all__ = ["LeaderElector", "LeadershipLost", "Lease", "LeaseSpec", "format_micro_time"]

_logger = logging.getLogger(__name__)

_GROUP: Final = "coordination.k8s.io"
_VERSION: Final = "v1"


class LeadershipLost(Exception):
    """The lease could not be renewed in time, or another candidate holds it.

    The message names the lease, this candidate and the reason; `reason` is
    the reason alone.
    """

    def __init__(self, message: str, *, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


class LeaseSpec(msgspec.Struct, rename="camel", omit_defaults=True):
    holder_identity: str | None = None
    lease_duration_seconds: int | None = None
    acquire_time: str | None = None
    renew_time: str | None = None
    lease_transitions: int | None = None
    preferred_holder: str | None = None
    strategy: str | None = None


class Lease(msgspec.Struct, rename="camel", omit_defaults=True):
    api_version: str = f"{_GROUP}/{_VERSION}"
    kind: str = "Lease"
    # Kept whole (labels, annotations, owner references...) so an update
    # writes back what it read; only resourceVersion is read from it.
    metadata: dict[str, Any] = msgspec.field(default_factory=dict)
    spec: LeaseSpec = msgspec.field(default_factory=LeaseSpec)

    @property
    def resource_version(self) -> str:
        return str(self.metadata.get("resourceVersion", ""))


def format_micro_time(seconds: float) -> str:
    """metav1.MicroTime: RFC 3339 in UTC with microseconds ("2006-01-02T15:04:05.000000Z")."""
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


_decode_lease: Final = msgspec.json.Decoder(Lease).decode


class LeaderElector:
    """One candidate for one Lease."""

    def __init__(
        self,
        *,
        client: KubeClient,
        identity: str,
        metrics: KubeMetrics,
        settings: LeaderElectionSettings | None = None,
        clock: Callable[[], float] = time.time,
        on_started_leading: Callable[[], None] | None = None,
        on_stopped_leading: Callable[[], None] | None = None,
        on_new_leader: Callable[[str], None] | None = None,
        rng: random.Random | None = None,
    ) -> None:
        """Callbacks run in the elector's task and must not block."""
        if not identity:
            raise ValueError("a leader election candidate needs an identity")
        self.identity = identity
        self._client = client
        self._settings = settings = settings or LeaderElectionSettings()
        self._clock = clock
        self._on_started_leading = on_started_leading
        self._on_stopped_leading = on_stopped_leading
        self._on_new_leader = on_new_leader
        self._rng = rng or random.Random()
        self._gauge = metrics.leader.labels(settings.lease_name)
        self._gauge.set(0)
        self._object_path = api_path(
            group=_GROUP,
            version=_VERSION,
            plural="leases",
            namespace=settings.lease_namespace,
            name=settings.lease_name,
        )
        self._collection_path = api_path(
            group=_GROUP, version=_VERSION, plural="leases", namespace=settings.lease_namespace
        )
        # Set while this candidate leads; writers may wait on it.
        self.leading = asyncio.Event()
        self._lease: Lease | None = None  # as last read or written
        self._observed_at = 0.0  # loop time when the Lease was last seen to change
        self._renewed_at = 0.0  # loop time when the last successful write began
        self._reported_leader: str | None = None
        self._last_failure = ""  # why the last acquire or renew attempt failed

    # -- reading -------------------------------------------------------------

    @property
    def leader(self) -> str:
        """The holder as last observed ('' when none)."""
        if self._lease is None:
            return ""
        return self._lease.spec.holder_identity or ""

    def is_leader(self) -> bool:
        """True while we hold the Lease and the renew deadline has not passed."""
        if not self.leading.is_set() or self.leader != self.identity:
            return False
        now = asyncio.get_running_loop().time()
        return now < self._renewed_at + self._settings.renew_deadline_seconds

    def state(self) -> dict[str, Any]:
        """What /debug/state shows; `isLeader` as `is_leader()`, the check before every write."""
        settings = self._settings
        spec = self._lease.spec if self._lease is not None else LeaseSpec()
        return {
            "lease": f"{settings.lease_namespace}/{settings.lease_name}",
            "identity": self.identity,
            "leader": self.leader,
            "isLeader": self.is_leader(),
            "renewTime": spec.renew_time,
            "leaseTransitions": spec.lease_transitions,
            "leaseDurationSeconds": settings.lease_duration_seconds,
            "renewDeadlineSeconds": settings.renew_deadline_seconds,
            "retryPeriodSeconds": settings.retry_period_seconds,
        }

    # -- the loop ------------------------------------------------------------

    async def run(self) -> None:
        """Acquire, then renew until lost (raise LeadershipLost) or cancelled (release)."""
        try:
            await self._acquire()
            self._start_leading()
            reason = await self._renew()
        except asyncio.CancelledError:
            if self.leading.is_set():
                self._stop_leading("cancelled")
                if self._settings.release_on_cancel:
                    await self._release()
            raise
        self._stop_leading(reason)
        settings = self._settings
        raise LeadershipLost(
            f"lease {settings.lease_namespace}/{settings.lease_name} lost by {self.identity}: "
            f"{reason}",
            reason=reason,
        )

    async def _acquire(self) -> None:
        settings = self._settings
        loop = asyncio.get_running_loop()
        _logger.info("acquiring leader lease", extra=fields(lease=self._object_path))
        while True:
            deadline = loop.time() + settings.renew_deadline_seconds
            if await self._attempt(deadline):
                return
            await asyncio.sleep(
                settings.retry_period_seconds * (1 + self._rng.random() * settings.retry_jitter)
            )

    async def _renew(self) -> str:
        """Returns, with the reason, when leadership is lost."""
        settings = self._settings
        loop = asyncio.get_running_loop()
        while True:
            deadline = self._renewed_at + settings.renew_deadline_seconds
            await asyncio.sleep(
                max(0.0, min(settings.retry_period_seconds, deadline - loop.time()))
            )
            while True:
                if loop.time() >= deadline:
                    return (
                        f"not renewed within the {settings.renew_deadline_seconds:g} s "
                        f"renew deadline ({self._last_failure or 'no answer in time'})"
                    )
                if await self._attempt(deadline):
                    break
                if self.leader != self.identity and self.leader:
                    return f"the lease is held by {self.leader}"
                await asyncio.sleep(
                    max(0.0, min(settings.retry_period_seconds, deadline - loop.time()))
                )

    async def _attempt(self, deadline: float) -> bool:
        """One try to acquire or renew, abandoned at `deadline` (loop time)."""
        try:
            async with asyncio.timeout_at(deadline):
                acquired = await self._try_acquire_or_renew()
        except TimeoutError:
            self._last_failure = "the last request was abandoned at the deadline"
            _logger.info(
                "leader lease request abandoned at the deadline",
                extra=fields(lease=self._object_path),
            )
            acquired = False
        if acquired:
            self._last_failure = ""
        self._report_transition()
        return acquired

    async def _try_acquire_or_renew(self) -> bool:
        settings = self._settings
        loop = asyncio.get_running_loop()
        began = loop.time()
        now = format_micro_time(self._clock())
        wanted = LeaseSpec(
            holder_identity=self.identity,
            lease_duration_seconds=settings.lease_duration_seconds,
            acquire_time=now,
            renew_time=now,
            lease_transitions=0,
        )

        # Fast path: we lead and the Lease we last wrote is still current.
        current = self._lease
        if current is not None and self.leader == self.identity and self._valid(began):
            wanted.acquire_time = current.spec.acquire_time
            wanted.lease_transitions = current.spec.lease_transitions
            if await self._write(current, wanted, began):
                return True

        try:
            current = _decode_lease(
                await self._client.request("GET", self._object_path, retry=False)
            )
        except NotFound:
            lease = Lease(
                metadata={"name": settings.lease_name, "namespace": settings.lease_namespace},
                spec=wanted,
            )
            try:
                body = await self._client.request(
                    "POST", self._collection_path, body=lease, retry=False
                )
            except AlreadyExists:
                return False
            except KubeError as error:
                self._log_failure("create", error)
                return False
            self._observe(_decode_lease(body), began)
            self._renewed_at = began
            return True
        except (KubeError, msgspec.DecodeError) as error:
            self._log_failure("get", error)
            return False

        if self._lease is None or current.spec != self._lease.spec:
            self._observe(current, loop.time())
        else:
            self._lease = current
        holder = current.spec.holder_identity or ""
        if holder and holder != self.identity and self._valid(began):
            return False
        if holder == self.identity:
            wanted.acquire_time = current.spec.acquire_time
            wanted.lease_transitions = current.spec.lease_transitions
        else:
            wanted.lease_transitions = (current.spec.lease_transitions or 0) + 1
        return await self._write(current, wanted, began)

    def _valid(self, now: float) -> bool:
        """The observed Lease has not expired, by our own clock since we saw it change."""
        if self._lease is None:
            return False
        duration = self._lease.spec.lease_duration_seconds or 0
        return self._observed_at + duration > now

    async def _write(self, current: Lease, spec: LeaseSpec, began: float) -> bool:
        lease = Lease(metadata=current.metadata, spec=spec)
        try:
            body = await self._client.request("PUT", self._object_path, body=lease, retry=False)
            written = _decode_lease(body)
        except (KubeError, msgspec.DecodeError) as error:
            self._log_failure("update", error)
            return False
        self._observe(written, began)
        self._renewed_at = began
        return True

    def _observe(self, lease: Lease, at: float) -> None:
        self._lease = lease
        self._observed_at = at

    def _log_failure(self, verb: str, error: Exception) -> None:
        self._last_failure = f"last {verb}: {error}"
        _logger.info(
            "leader lease request failed",
            extra=fields(lease=self._object_path, verb=verb, error=str(error)),
        )

    def _report_transition(self) -> None:
        leader = self.leader
        if leader == self._reported_leader:
            return
        self._reported_leader = leader
        _logger.info("new leader observed", extra=fields(lease=self._object_path, leader=leader))
        if self._on_new_leader is not None:
            self._call(self._on_new_leader, leader)

    # -- transitions -----------------------------------------------------------

    def _start_leading(self) -> None:
        _logger.info(
            "started leading", extra=fields(lease=self._object_path, identity=self.identity)
        )
        self._gauge.set(1)
        self.leading.set()
        if self._on_started_leading is not None:
            self._call(self._on_started_leading)

    def _stop_leading(self, why: str) -> None:
        self.leading.clear()
        self._gauge.set(0)
        _logger.info(
            "stopped leading",
            extra=fields(lease=self._object_path, identity=self.identity, why=why),
        )
        if self._on_stopped_leading is not None:
            self._call(self._on_stopped_leading)

    def _call(self, callback: Callable[..., None], *args: Any) -> None:
        try:
            callback(*args)
        except Exception:
            _logger.exception(
                "leader election callback failed",
                extra=fields(callback=getattr(callback, "__qualname__", "?")),
            )

    async def _release(self) -> None:
        """Hand the Lease over: no holder, a 1 s duration (client-go's ReleaseOnCancel)."""
        current = self._lease
        if current is None or current.spec.holder_identity != self.identity:
            return
        now = format_micro_time(self._clock())
        spec = LeaseSpec(
            holder_identity=None,
            lease_duration_seconds=1,
            acquire_time=now,
            renew_time=now,
            lease_transitions=current.spec.lease_transitions,
        )
        lease = Lease(metadata=current.metadata, spec=spec)
        try:
            async with asyncio.timeout(self._settings.release_timeout_seconds):
                body = await self._client.request("PUT", self._object_path, body=lease, retry=False)
        except (KubeError, TimeoutError) as error:
            _logger.error(
                "failed to release the leader lease",
                extra=fields(lease=self._object_path, error=str(error)),
            )
            return
        self._lease = _decode_lease(body)
        _logger.info("released the leader lease", extra=fields(lease=self._object_path))
