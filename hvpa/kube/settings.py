"""Every timeout, backoff and limit of the kube layer, named and defaulted in one place.

The defaults follow client-go and controller-runtime, so hvpa behaves towards
an API server the way the controllers next to it do; tests shrink them where
a scenario needs it (most tests run in virtual time and keep the defaults).
All durations are seconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import aiohttp

__all__ = [
    "BackoffSettings",
    "ClientSettings",
    "LeaderElectionSettings",
    "QueueSettings",
    "WatchSettings",
    "field_manager_problem",
]


@dataclass(frozen=True, slots=True)
class BackoffSettings:
    """Exponential backoff with jitter, as client-go's backoff manager.

    A delay starts at `initial_seconds`, grows by `factor` per failure up to
    `max_seconds`, and gets up to `jitter` times itself added at random. It
    resets to the start after `reset_after_seconds` without a failure.
    """

    initial_seconds: float = 0.8
    max_seconds: float = 30.0
    factor: float = 2.0
    jitter: float = 1.0
    reset_after_seconds: float = 120.0


@dataclass(frozen=True, slots=True)
class WatchSettings:
    """How a reflector lists and watches one resource.

    `page_size` bounds each list response (limit/continue), so a 100k-pod
    list never sits in memory as one body. The server ends every watch after
    a random `timeoutSeconds` in [min, max) so that all clients do not
    reconnect at once; the client gives up on a watch that sends no bytes for
    `inactivity_timeout_seconds` (a half-open connection sends nothing,
    forever) - bookmarks keep a healthy quiet watch above that. A watch that
    ends cleanly sooner than `short_watch_seconds` with no events counts as a
    failure, so a server that closes at once is not hammered.

    Bounds on what one read may hold: `max_event_bytes` for one watch event
    (one line; 16 MiB, above any single object an API server stores, see
    `ClientSettings.max_response_bytes`), `max_list_page_bytes` for one list
    page (64 MiB: 500 objects of 130 KiB each; a page past it is asked for
    again with half the limit, so only one object larger than that fails).
    """

    page_size: int = 500
    min_watch_timeout_seconds: int = 300
    max_watch_timeout_seconds: int = 600
    inactivity_timeout_seconds: float = 120.0
    short_watch_seconds: float = 1.0
    allow_bookmarks: bool = True
    # Lists as a watch-list stream (sendInitialEvents) where the server does it.
    watch_list: bool = True
    request_timeout_seconds: float = 60.0
    # An optional resource the server does not serve (its CRD is not installed)
    # is looked for again this often.
    unserved_recheck_seconds: float = 300.0
    max_event_bytes: int = 16 * 1024 * 1024
    max_list_page_bytes: int = 64 * 1024 * 1024
    backoff: BackoffSettings = field(default_factory=BackoffSettings)

    def __post_init__(self) -> None:
        if self.max_event_bytes < 1 or self.max_list_page_bytes < 1:
            raise ValueError("the watch event and list page bounds must be at least one byte")


@dataclass(frozen=True, slots=True)
class QueueSettings:
    """The default controller rate limiter of client-go.

    Per key: `base_delay_seconds` doubling per requeue up to
    `max_delay_seconds`; overall: a token bucket of `qps` with `burst`. A
    rate-limited add waits the longer of the two.
    """

    base_delay_seconds: float = 0.005
    max_delay_seconds: float = 1000.0
    qps: float = 10.0
    burst: int = 100


@dataclass(frozen=True, slots=True)
class LeaderElectionSettings:
    """client-go's leader election timings, and where the Lease lives.

    The lease must outlast the renew deadline: a leader that cannot renew
    within `renew_deadline_seconds` steps down, and the others wait
    `lease_duration_seconds` from their last sight of a renewal before they
    take over, so the gap between the two is when no one writes.
    """

    lease_name: str = "hvpa"
    lease_namespace: str = "kube-system"
    lease_duration_seconds: int = 15
    renew_deadline_seconds: float = 10.0
    retry_period_seconds: float = 2.0
    # client-go's JitterFactor for the acquire loop: waits retry * (1 + rand * 1.2).
    retry_jitter: float = 1.2
    release_on_cancel: bool = True
    # Bounds the release request on shutdown, so a dead API server cannot hold the exit.
    release_timeout_seconds: float = 5.0

    def __post_init__(self) -> None:
        if not 0 < self.retry_period_seconds < self.renew_deadline_seconds:
            raise ValueError("retry period must be positive and shorter than the renew deadline")
        if not self.renew_deadline_seconds < self.lease_duration_seconds:
            raise ValueError("the renew deadline must be shorter than the lease duration")


@dataclass(frozen=True, slots=True)
class ClientSettings:
    """Per-request limits and the retry policy of the API client.

    Reads (GET, list) are retried on connection errors, timeouts, 429 and 5xx;
    writes only where the server says it did nothing (429, or a 5xx with
    Retry-After), as client-go's rest client does. `max_retry_after_seconds`
    caps what a server may ask us to wait.

    `max_response_bytes` bounds one response body unless a request names its
    own bound (a list page, a metrics read): the client stops reading there
    (ResponseTooLarge). 16 MiB holds any single object an API server stores
    (etcd takes 1.5 MiB a value; JSON's escapes can grow that several times)
    and is a small part of the controller's 512Mi memory limit.
    """

    request_timeout_seconds: float = 30.0
    connect_timeout_seconds: float = 10.0
    max_retries: int = 5
    max_retry_after_seconds: float = 60.0
    backoff: BackoffSettings = field(
        default_factory=lambda: BackoffSettings(initial_seconds=0.2, max_seconds=5.0)
    )
    # Concurrent connections per host; informers' watches hold one each.
    connection_limit: int = 100
    user_agent: str = "hvpa"
    # The name every write (POST, PUT, PATCH) carries as `fieldManager`, so the API server
    # records what hvpa set under this name in managedFields (docs/gitops.md).
    field_manager: str = "hvpa"
    max_response_bytes: int = 16 * 1024 * 1024
    # aiohttp's request tracing, handed to the client's session as it is: the benchmarks
    # time when a request has left the client with it (bench/controller_process.py).
    trace_configs: tuple[aiohttp.TraceConfig, ...] = ()

    def __post_init__(self) -> None:
        if self.max_response_bytes < 1:
            raise ValueError("the response bound must be at least one byte")
        problem = field_manager_problem(self.field_manager)
        if problem:
            raise ValueError(f"field manager {self.field_manager!r}: {problem}")


# The API server refuses a fieldManager longer than this, or with unprintable characters.
MAX_FIELD_MANAGER_LENGTH = 128


def field_manager_problem(name: str) -> str:
    """Why the API server would refuse `name` as a fieldManager, or ''."""
    if not name:
        return "must not be empty"
    if len(name) > MAX_FIELD_MANAGER_LENGTH:
        return f"must be at most {MAX_FIELD_MANAGER_LENGTH} characters"
    if not name.isprintable():
        return "must hold printable characters only"
    return ""
