"""`hvpa run`'s settings: one typed object built from the flags, every default named once.

The object is what the controller, the server and the leader elector are
built from; `hvpa sim` and the integration tests build it directly (or its
`ControllerSettings` part) instead of parsing flags. Defaults follow
kubebuilder's scaffold (`:8443` for metrics served securely, `:8081` for
probes), client-go (leader-election timings, in `hvpa.kube.settings`) and
kube-controller-manager
(five concurrent HPA syncs, the six HPA settings in `hvpa.engine.settings`),
so hvpa sits beside Go controllers without surprises.

What can go wrong: a flag value that cannot be read (a bad duration, a
negative count) is an `argparse` error naming the flag, raised while parsing,
before anything connects to a cluster.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Final, TypeVar

from hvpa.durations import DurationError, parse_duration
from hvpa.engine.inplace import InPlaceBounds
from hvpa.engine.settings import Settings as EngineSettings
from hvpa.kube.settings import (
    ClientSettings,
    LeaderElectionSettings,
    QueueSettings,
    WatchSettings,
    field_manager_problem,
)

__all__ = [
    "DEFAULT_METRICS_MAX_RESPONSE_BYTES",
    "AccessSettings",
    "ControllerSettings",
    "RunSettings",
    "ServerSettings",
    "WebhookSettings",
    "add_engine_flags",
    "add_flags",
    "describe",
    "engine_settings_from_args",
    "settings_from_args",
]

DEFAULT_SYNC_PERIOD_SECONDS: Final = 15.0
# Four times kube-controller-manager's --concurrent-horizontal-pod-autoscaler-syncs (5): a
# worker here is a coroutine held across each API round trip, so the workers, not the CPU,
# bound the decisions per period when answers are slow (docs/benchmarks.md, the envelope).
DEFAULT_CONCURRENCY: Final = 20
# Secure metrics serving, as kubebuilder's scaffold serves it (HTTPS on 8443).
DEFAULT_METRICS_BIND_ADDRESS: Final = ":8443"
DEFAULT_HEALTH_PROBE_BIND_ADDRESS: Final = ":8081"
# controller-runtime's webhook server port.
DEFAULT_WEBHOOK_BIND_ADDRESS: Final = ":9443"
DEFAULT_LEADER_ELECTION_ID: Final = "hvpa"
# One metrics API answer: a PodMetrics of one container is about 350 bytes of JSON, so
# 4 MiB holds some 12,000 pods of one target; more is not a metric but an attack or a bug.
DEFAULT_METRICS_MAX_RESPONSE_BYTES: Final = 4 * 1024 * 1024
# Used when the namespace of the pod cannot be read (outside a cluster).
DEFAULT_LEADER_ELECTION_NAMESPACE: Final = "kube-system"
SERVICE_ACCOUNT_NAMESPACE_FILE: Final = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"
LOG_FORMATS: Final = ("text", "json")
LOG_LEVELS: Final = ("debug", "info", "warning", "error")

_N = TypeVar("_N", int, float)


@dataclass(frozen=True, slots=True)
class ControllerSettings:
    """How the controller watches, queues, reconciles and reports.

    `namespaces` empty means every namespace. `sync_period_seconds` re-queues
    every Hvpa that often: metrics change without events, so this is how
    often a quiet Hvpa is decided again. `dry_run` decides and reports but
    never writes to targets or VPAs (see `hvpa.controller.applier`).
    """

    namespaces: tuple[str, ...] = ()
    sync_period_seconds: float = DEFAULT_SYNC_PERIOD_SECONDS
    concurrency: int = DEFAULT_CONCURRENCY
    dry_run: bool = False
    # Each metrics API read is cut off after this long, or this many bytes, and becomes a
    # read error (a condition on the Hvpa), never an unbounded read.
    metrics_timeout_seconds: float = 10.0
    metrics_max_response_bytes: int = DEFAULT_METRICS_MAX_RESPONSE_BYTES
    # PodMetrics read once per namespace (or selector) per sync period and shared between
    # the Hvpas that need them, a namespace's answer read again in the background
    # (controller/shared_pod_metrics.py); False: one read per query.
    share_pod_metrics: bool = True
    # On shutdown, in-flight reconciles get this long to finish before they are cancelled.
    shutdown_grace_seconds: float = 30.0
    # After a write, a reconcile that still sees the superseded object in the cache
    # waits this long for the watch to catch up, instead of deciding on stale data.
    stale_cache_retry_seconds: float = 1.0
    # How long such an expectation is kept before the cache is trusted again.
    expectation_timeout_seconds: float = 60.0
    # A ConfigMap informer started for a new configMapRef gets this long to sync
    # before the reconcile that needs it is retried.
    config_map_sync_retry_seconds: float = 1.0
    # A status whose only change is `history` (the recommendation recorded at every
    # resync) is kept in memory and written at most this often, so a quiet Hvpa
    # costs no write per resync; any other change is written at once.
    history_flush_seconds: float = 60.0
    # Bounds of /debug/state, so a cluster with thousands of Hvpas cannot make it huge.
    debug_max_hvpas: int = 100
    debug_max_explanation_lines: int = 200
    debug_max_queue_keys: int = 100
    # Name of the controller in metrics and logs (controller-runtime's `controller` label).
    name: str = "hvpa"
    watch: WatchSettings = field(default_factory=WatchSettings)
    queue: QueueSettings = field(default_factory=QueueSettings)

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        if self.sync_period_seconds <= 0:
            raise ValueError("the sync period must be positive")
        if self.metrics_timeout_seconds <= 0:
            raise ValueError("the metrics timeout must be positive")
        if self.metrics_max_response_bytes < 1:
            raise ValueError("the metrics response bound must be at least one byte")
        if self.history_flush_seconds < 0:
            raise ValueError("the history flush interval must not be negative")


@dataclass(frozen=True, slots=True)
class AccessSettings:
    """Who may read /metrics and /debug/state: the API server decides, hvpa remembers briefly.

    The TTLs are controller-runtime's secure metrics filter's
    (pkg/metrics/filters: TokenReview answers kept 1 min, allowed
    SubjectAccessReviews 5 min, denied ones 30 s), so a scrape every 30 s
    costs the API server about one review of each kind per few minutes.
    `cache_entries` bounds each cache, so bogus tokens cannot grow memory.
    """

    token_review_ttl_seconds: float = 60.0
    allow_ttl_seconds: float = 300.0
    deny_ttl_seconds: float = 30.0
    review_timeout_seconds: float = 10.0
    cache_entries: int = 1024


@dataclass(frozen=True, slots=True)
class WebhookSettings:
    """The pod admission webhook that sizes new pods for the in-place resize modes.

    It listens on `bind_address` (`0` turns it off: the default in process, where
    the simulator and the tests turn it on; `hvpa run` listens on `:9443`) over HTTPS. Its
    certificate comes from `cert_path` (a directory with `tls.crt` and
    `tls.key`, e.g. cert-manager's) or is made and rotated by hvpa in the
    Secret `secret_name` of `namespace` (hvpa.server.webhook_tls). The
    leader keeps the MutatingWebhookConfiguration `configuration_name` in
    line (hvpa.controller.webhooks), registering the Service `service` of
    `namespace` on `service_port`, or `url` instead when it is set (a
    controller run outside the cluster).
    """

    bind_address: str = "0"
    cert_path: str | None = None
    namespace: str = DEFAULT_LEADER_ELECTION_NAMESPACE
    secret_name: str = "hvpa-webhook-tls"
    configuration_name: str = "hvpa"
    service: str = "hvpa-webhook"
    service_port: int = 443
    url: str | None = None
    # How often every replica reads the certificate, and the leader rotates it and keeps the
    # configuration in line.
    refresh_seconds: float = 30.0
    # An AdmissionReview carries the pod once (creates have no old object); a pod is at most
    # the 1.5 MiB etcd takes, so this bounds a request with room to spare.
    max_request_bytes: int = 3 * 1024 * 1024

    def __post_init__(self) -> None:
        if self.refresh_seconds <= 0:
            raise ValueError("the webhook refresh period must be positive")
        if not 0 < self.service_port < 65536:
            raise ValueError("the webhook service port must be a port number")


@dataclass(frozen=True, slots=True)
class ServerSettings:
    """The two listeners, as controller-runtime splits them: metrics, and health probes.

    An address is `host:port`, `:port` (every interface), or `0` to turn
    the listener off. `/debug/state` is served on the metrics listener.
    With `metrics_secure` (the default of `hvpa run`) that listener speaks
    HTTPS and answers only requests whose bearer token the API server
    accepts (TokenReview) for a user allowed `get` on the path
    (SubjectAccessReview); `metrics_cert_path` names a directory holding
    `tls.crt` and `tls.key`, else a self-signed certificate is made at start.
    The probes stay plain HTTP: the kubelet does not authenticate.
    In-process runs (the simulator, tests) turn `metrics_secure` off.
    """

    metrics_bind_address: str = DEFAULT_METRICS_BIND_ADDRESS
    health_probe_bind_address: str = DEFAULT_HEALTH_PROBE_BIND_ADDRESS
    debug_state: bool = True
    metrics_secure: bool = True
    metrics_cert_path: str | None = None
    # How often the pair in `metrics_cert_path` is checked for a renewal
    # (controller-runtime's certwatcher polls every 10 s).
    certificate_refresh_seconds: float = 10.0
    access: AccessSettings = field(default_factory=AccessSettings)
    # Both listeners: a request's headers must arrive within this long of the
    # connection opening or of the previous answer (controller-runtime's
    # ReadHeaderTimeout); an idle kept-alive connection is closed after it too.
    header_timeout_seconds: float = 32.0
    # Nothing served takes a body: one that comes anyway is refused, and the
    # server spends at most this long reading it off the connection before closing.
    body_timeout_seconds: float = 5.0
    # Open connections per listener; more are closed as soon as they are accepted.
    max_connections: int = 64
    # /debug/state: at most this many bytes for one Hvpa's entry, and for the whole answer.
    debug_state_max_entry_bytes: int = 64 * 1024
    debug_state_max_bytes: int = 1024 * 1024
    webhook: WebhookSettings = field(default_factory=WebhookSettings)

    def __post_init__(self) -> None:
        if self.max_connections < 1:
            raise ValueError("the connection limit must be at least 1")
        if self.header_timeout_seconds <= 0 or self.body_timeout_seconds <= 0:
            raise ValueError("the header and body timeouts must be positive")
        if self.certificate_refresh_seconds <= 0:
            raise ValueError("the certificate refresh period must be positive")


@dataclass(frozen=True, slots=True)
class RunSettings:
    """Everything `hvpa run` is configured with."""

    kubeconfig: str | None = None
    context: str | None = None
    leader_elect: bool = False
    leader_election: LeaderElectionSettings = field(
        default_factory=lambda: LeaderElectionSettings(lease_name=DEFAULT_LEADER_ELECTION_ID)
    )
    controller: ControllerSettings = field(default_factory=ControllerSettings)
    server: ServerSettings = field(
        default_factory=lambda: ServerSettings(
            webhook=WebhookSettings(bind_address=DEFAULT_WEBHOOK_BIND_ADDRESS)
        )
    )
    engine: EngineSettings = field(default_factory=EngineSettings)
    log_format: str = "text"
    log_level: str = "info"

    @property
    def client(self) -> ClientSettings:
        """The API client's settings, writing under the engine's field manager.

        The engine tells hvpa's own writes from another writer's by that name
        (engine/rewrites.py); a client writing under another name would make hvpa
        count itself as a second writer, so the name is kept once, in the engine's
        settings, and the client's is made from it."""
        return replace(ClientSettings(), field_manager=self.engine.field_manager)


# ---------------------------------------------------------------------------
# Flags


def _seconds(text: str) -> float:
    """A Go duration (`15s`, `5m`) or a number of seconds."""
    try:
        value = float(text)
    except ValueError:
        try:
            value = parse_duration(text)
        except DurationError as error:
            raise argparse.ArgumentTypeError(str(error)) from error
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is negative")
    return value


def _number(text: str, convert: Callable[[str], _N], what: str, minimum: _N) -> _N:
    """`text` read by `convert` (`int`, `float`), at least `minimum`; else an argparse error."""
    try:
        value = convert(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from error
    if value < minimum:
        bound = f"must be at least {minimum}" if minimum else "must not be negative"
        raise argparse.ArgumentTypeError(f"{text!r} {bound}")
    return value


def _positive_int(text: str) -> int:
    return _number(text, int, "an integer", 1)


def _non_negative_int(text: str) -> int:
    return _number(text, int, "an integer", 0)


def _fraction(text: str) -> float:
    return _number(text, float, "a number", 0.0)


def _field_manager(text: str) -> str:
    problem = field_manager_problem(text)
    if problem:
        raise argparse.ArgumentTypeError(f"{text!r} {problem}")
    return text


def _boolean(text: str) -> bool:
    """Go's flag package spellings, so `--debug-state=false` reads as in controller-runtime."""
    lowered = text.lower()
    if lowered in ("1", "t", "true", "yes"):
        return True
    if lowered in ("0", "f", "false", "no"):
        return False
    raise argparse.ArgumentTypeError(f"{text!r} is not a boolean")


def _bool_flag(parser: argparse.ArgumentParser, name: str, default: bool, help_text: str) -> None:
    """`--flag` alone means true; `--flag=false` turns it off. The help says the default."""
    parser.add_argument(
        name,
        type=_boolean,
        nargs="?",
        const=True,
        default=default,
        metavar="BOOL",
        help=f"{help_text} (default {str(default).lower()})",
    )


def add_engine_flags(parser: argparse.ArgumentParser) -> None:
    """The six HPA controller settings, and hvpa's field manager and rewrite window (`hvpa run`
    and `hvpa explain` take them alike)."""
    engine = EngineSettings()
    # As kube-controller-manager's --horizontal-pod-autoscaler-<name> flags mean them.
    durations = (
        (
            "--cpu-initialization-period",
            engine.cpu_initialization_period_seconds,
            "after a pod starts, its CPU sample counts only if taken after it turned Ready",
        ),
        (
            "--initial-readiness-delay",
            engine.initial_readiness_delay_seconds,
            "after a pod starts, a change of its readiness still means it is starting",
        ),
        (
            "--downscale-stabilization",
            engine.downscale_stabilization_seconds,
            "a scale-down takes the highest recommendation of this long (behavior overrides it)",
        ),
    )
    for name, default, meaning in durations:
        parser.add_argument(
            name,
            type=_seconds,
            default=default,
            metavar="DURATION",
            help=f"{meaning} (default {default:g}s)",
        )
    parser.add_argument(
        "--tolerance",
        type=_fraction,
        default=engine.tolerance,
        metavar="FRACTION",
        help=f"HPA usage-ratio tolerance (default {engine.tolerance:g})",
    )
    parser.add_argument(
        "--scale-up-limit-factor",
        type=_fraction,
        default=engine.scale_up_limit_factor,
        metavar="FACTOR",
        help=f"without behavior, grow at most FACTOR x current (default {engine.scale_up_limit_factor:g})",
    )
    parser.add_argument(
        "--scale-up-limit-minimum",
        type=_non_negative_int,
        default=engine.scale_up_limit_minimum,
        metavar="N",
        help=f"... or to N replicas, whichever is more (default {engine.scale_up_limit_minimum})",
    )
    parser.add_argument(
        "--field-manager",
        type=_field_manager,
        default=engine.field_manager,
        metavar="NAME",
        help="the field manager every write names, as managedFields show it and GitOps tools "
        f"ignore it (default {engine.field_manager}; docs/gitops.md)",
    )
    parser.add_argument(
        "--rewrite-window",
        type=_seconds,
        default=engine.rewrite_window_seconds,
        metavar="DURATION",
        help="another writer rewriting what hvpa set twice within this long holds that axis, "
        f"for this long and doubling (default {engine.rewrite_window_seconds:g}s)",
    )


def add_flags(parser: argparse.ArgumentParser) -> None:
    """The flags of `hvpa run`; defaults come from the settings dataclasses."""
    defaults = RunSettings()
    controller, server = defaults.controller, defaults.server
    parser.add_argument(
        "--kubeconfig",
        metavar="PATH",
        help="kubeconfig file (default: in-cluster service account, else $KUBECONFIG or ~/.kube/config)",
    )
    parser.add_argument(
        "--context",
        metavar="NAME",
        help="the kubeconfig context to use (default: its current-context)",
    )
    parser.add_argument(
        "--namespace",
        action="append",
        default=[],
        metavar="NAMESPACE",
        help="watch this namespace; repeatable (default: all namespaces)",
    )
    _bool_flag(
        parser,
        "--leader-elect",
        defaults.leader_elect,
        "elect a leader through a Lease; only it writes",
    )
    parser.add_argument(
        "--leader-election-namespace",
        metavar="NAMESPACE",
        help="namespace of the Lease (default: the pod's namespace, else "
        f"{DEFAULT_LEADER_ELECTION_NAMESPACE})",
    )
    parser.add_argument(
        "--leader-election-id",
        default=defaults.leader_election.lease_name,
        metavar="NAME",
        help=f"name of the Lease (default {defaults.leader_election.lease_name})",
    )
    parser.add_argument(
        "--metrics-bind-address",
        default=server.metrics_bind_address,
        metavar="ADDRESS",
        help=f"/metrics and /debug/state listen here; 0 turns it off (default {server.metrics_bind_address})",
    )
    _bool_flag(
        parser,
        "--metrics-secure",
        server.metrics_secure,
        "serve /metrics and /debug/state over HTTPS to callers the API server authenticates and "
        "authorizes (TokenReview, SubjectAccessReview); false: plain HTTP to anyone",
    )
    parser.add_argument(
        "--metrics-cert-path",
        metavar="DIR",
        help="directory with tls.crt and tls.key for the metrics listener "
        "(default: a self-signed certificate made at start)",
    )
    parser.add_argument(
        "--health-probe-bind-address",
        default=server.health_probe_bind_address,
        metavar="ADDRESS",
        help=f"/healthz and /readyz listen here; 0 turns it off (default {server.health_probe_bind_address})",
    )
    parser.add_argument(
        "--sync-period",
        type=_seconds,
        default=controller.sync_period_seconds,
        metavar="DURATION",
        help=f"re-decide every Hvpa this often (default {controller.sync_period_seconds:g}s)",
    )
    parser.add_argument(
        "--history-flush-interval",
        type=_seconds,
        default=controller.history_flush_seconds,
        metavar="DURATION",
        help="write a status whose only change is its recommendation history at most this often; "
        f"0 writes every change (default {controller.history_flush_seconds:g}s)",
    )
    parser.add_argument(
        "--metrics-max-response-bytes",
        type=_positive_int,
        default=controller.metrics_max_response_bytes,
        metavar="BYTES",
        help="a metrics API answer longer than this is a failed reading, not read further "
        f"(default {controller.metrics_max_response_bytes})",
    )
    parser.add_argument(
        "--concurrency",
        type=_positive_int,
        default=controller.concurrency,
        metavar="N",
        help=f"Hvpas reconciled at once (default {controller.concurrency})",
    )
    _bool_flag(
        parser,
        "--dry-run",
        controller.dry_run,
        "decide and report (logs, status, Events, /debug/state); never write to targets or VPAs",
    )
    parser.add_argument(
        "--log-format",
        choices=LOG_FORMATS,
        default=defaults.log_format,
        help=f"log lines as text or one JSON object each (default {defaults.log_format})",
    )
    parser.add_argument(
        "--log-level",
        choices=LOG_LEVELS,
        default=defaults.log_level,
        help=f"the least severe level logged (default {defaults.log_level})",
    )
    _bool_flag(parser, "--debug-state", server.debug_state, "serve /debug/state")
    _add_webhook_flags(parser, server.webhook)
    add_engine_flags(parser)
    _add_in_place_flags(parser, defaults.engine.in_place)


def _add_webhook_flags(parser: argparse.ArgumentParser, webhook: WebhookSettings) -> None:
    parser.add_argument(
        "--webhook-bind-address",
        default=webhook.bind_address,
        metavar="ADDRESS",
        help="the pod admission webhook (in-place resize modes) listens here over HTTPS; "
        f"0 turns it off (default {webhook.bind_address})",
    )
    parser.add_argument(
        "--webhook-cert-path",
        metavar="DIR",
        help="directory with tls.crt and tls.key for the webhook, its CA bundle injected by "
        "cert-manager (default: a CA and certificate hvpa makes and rotates in a Secret)",
    )
    parser.add_argument(
        "--webhook-secret-name",
        default=webhook.secret_name,
        metavar="NAME",
        help=f"the Secret of hvpa's namespace holding them (default {webhook.secret_name})",
    )
    parser.add_argument(
        "--webhook-configuration-name",
        default=webhook.configuration_name,
        metavar="NAME",
        help="the MutatingWebhookConfiguration the leader keeps in line "
        f"(default {webhook.configuration_name})",
    )
    parser.add_argument(
        "--webhook-service",
        default=webhook.service,
        metavar="NAME",
        help=f"the webhook's Service in hvpa's namespace (default {webhook.service})",
    )
    parser.add_argument(
        "--webhook-service-port",
        type=int,
        default=webhook.service_port,
        metavar="PORT",
        help="the port of that Service the API server calls "
        f"(default {webhook.service_port}, as manifests/webhook.yaml serves it)",
    )
    parser.add_argument(
        "--webhook-url",
        metavar="URL",
        help="register the webhook at this https URL instead of the Service (outside a cluster; "
        "default: the Service)",
    )


def _add_in_place_flags(parser: argparse.ArgumentParser, bounds: InPlaceBounds) -> None:
    for name, default, state in (
        ("--in-place-infeasible-timeout", bounds.infeasible_seconds, "Infeasible"),
        ("--in-place-deferred-timeout", bounds.deferred_seconds, "Deferred"),
        ("--in-place-in-progress-timeout", bounds.in_progress_seconds, "in progress"),
    ):
        parser.add_argument(
            name,
            type=_seconds,
            default=default,
            metavar="DURATION",
            help=f"a resize {state} this long counts as stuck: InPlaceOrRollout rolls out, "
            f"InPlace reports it (default {default:g}s)",
        )


def _lease_namespace(flag: str | None) -> str:
    if flag:
        return flag
    path = Path(SERVICE_ACCOUNT_NAMESPACE_FILE)
    if os.environ.get("KUBERNETES_SERVICE_HOST") and path.is_file():
        return path.read_text().strip() or DEFAULT_LEADER_ELECTION_NAMESPACE
    return DEFAULT_LEADER_ELECTION_NAMESPACE


def engine_settings_from_args(args: argparse.Namespace) -> EngineSettings:
    """The engine settings of the flags `add_engine_flags` added (and `hvpa run`'s in-place
    bounds, where given); ValueError for a bad combination."""
    defaults = InPlaceBounds()
    in_place = InPlaceBounds(
        infeasible_seconds=getattr(
            args, "in_place_infeasible_timeout", defaults.infeasible_seconds
        ),
        deferred_seconds=getattr(args, "in_place_deferred_timeout", defaults.deferred_seconds),
        in_progress_seconds=getattr(
            args, "in_place_in_progress_timeout", defaults.in_progress_seconds
        ),
    )
    return EngineSettings(
        in_place=in_place,
        cpu_initialization_period_seconds=args.cpu_initialization_period,
        initial_readiness_delay_seconds=args.initial_readiness_delay,
        tolerance=args.tolerance,
        downscale_stabilization_seconds=args.downscale_stabilization,
        scale_up_limit_factor=args.scale_up_limit_factor,
        scale_up_limit_minimum=args.scale_up_limit_minimum,
        field_manager=args.field_manager,
        rewrite_window_seconds=args.rewrite_window,
    )


def settings_from_args(args: argparse.Namespace) -> RunSettings:
    """The RunSettings of parsed flags; a combination no setting accepts raises ValueError."""
    namespaces = tuple(dict.fromkeys(args.namespace))
    own_namespace = _lease_namespace(args.leader_election_namespace)
    return RunSettings(
        kubeconfig=args.kubeconfig,
        context=args.context,
        leader_elect=args.leader_elect,
        leader_election=replace(
            LeaderElectionSettings(),
            lease_name=args.leader_election_id,
            lease_namespace=own_namespace,
        ),
        controller=ControllerSettings(
            namespaces=namespaces,
            sync_period_seconds=args.sync_period,
            history_flush_seconds=args.history_flush_interval,
            metrics_max_response_bytes=args.metrics_max_response_bytes,
            concurrency=args.concurrency,
            dry_run=args.dry_run,
        ),
        server=ServerSettings(
            metrics_bind_address=args.metrics_bind_address,
            health_probe_bind_address=args.health_probe_bind_address,
            debug_state=args.debug_state,
            metrics_secure=args.metrics_secure,
            metrics_cert_path=args.metrics_cert_path,
            webhook=WebhookSettings(
                bind_address=args.webhook_bind_address,
                cert_path=args.webhook_cert_path,
                namespace=own_namespace,
                secret_name=args.webhook_secret_name,
                configuration_name=args.webhook_configuration_name,
                service=args.webhook_service,
                service_port=args.webhook_service_port,
                url=args.webhook_url,
            ),
        ),
        engine=engine_settings_from_args(args),
        log_format=args.log_format,
        log_level=args.log_level,
    )


def describe(settings: RunSettings) -> dict[str, object]:
    """The settings as one flat mapping for the start-up log line."""
    controller = settings.controller
    engine = settings.engine
    out: dict[str, object] = {
        "kubeconfig": settings.kubeconfig or "(in-cluster or default)",
        "context": settings.context or "(current)",
        "namespaces": ",".join(controller.namespaces) or "(all)",
        "leader_elect": settings.leader_elect,
        "lease": f"{settings.leader_election.lease_namespace}/{settings.leader_election.lease_name}",
        "sync_period_seconds": controller.sync_period_seconds,
        "history_flush_seconds": controller.history_flush_seconds,
        "concurrency": controller.concurrency,
        "metrics_max_response_bytes": controller.metrics_max_response_bytes,
        "dry_run": controller.dry_run,
        "metrics_bind_address": settings.server.metrics_bind_address,
        "health_probe_bind_address": settings.server.health_probe_bind_address,
        "debug_state": settings.server.debug_state,
        "metrics_secure": settings.server.metrics_secure,
        "metrics_cert_path": settings.server.metrics_cert_path or "(self-signed)",
        "field_manager": settings.engine.field_manager,
        "webhook_bind_address": settings.server.webhook.bind_address,
        "webhook_cert_path": settings.server.webhook.cert_path or "(made by hvpa)",
    }
    out.update({f.name: getattr(engine, f.name) for f in fields(engine) if f.name != "in_place"})
    out.update(
        {f"in_place_{f.name}": getattr(engine.in_place, f.name) for f in fields(engine.in_place)}
    )
    return out
