"""hvpa as the suite runs it: `hvpa run --leader-elect` processes with the hvpa ServiceAccount's
token and nothing more, as the shipped Deployment runs it.

The Deployment's args are kept (leader election in hvpa-system, Lease `hvpa`, /metrics and
/debug/state over HTTPS to callers the API server authenticates and authorizes, JSON logs);
the listeners move to free loopback ports (two processes share one host), and the HPA
timings shrink so a test sees a decision in seconds: a resync every 2 s, no CPU
initialization period or initial readiness delay (kwok's pods are Ready at once and the
metrics are fresh), a 10 s downscale stabilization window, and a 20 s rewrite window (a
GitOps tool rewriting what hvpa set twice within it holds that axis for a window and doubling:
seconds instead of the default hour, so test_e2e_gitops sees a hold run out).

The suite reads /debug/state as a ServiceAccount bound to the shipped hvpa-metrics-reader
and hvpa-debug-state-reader ClusterRoles, so hvpa's TokenReview and SubjectAccessReview run
against the real API server on every read.
"""

from __future__ import annotations

import json
import ssl
import sys
import urllib.request
from pathlib import Path
from typing import Any

from e2e_processes import Process, free_port

__all__ = [
    "E2E_HVPA_ARGS",
    "LEASE_NAMESPACE",
    "REWRITE_WINDOW_SECONDS",
    "WEBHOOK_SERVICE_PORT",
    "HvpaController",
]

LEASE_NAMESPACE = "hvpa-system"
LEASE_NAME = "hvpa"
REWRITE_WINDOW_SECONDS = 20
# The port hvpa registers for its webhook Service (--webhook-service-port): a free
# unprivileged one, so that the suite's proxy for it needs no root (443 would).
WEBHOOK_SERVICE_PORT = free_port()
E2E_HVPA_ARGS = (
    "--sync-period=2s",
    "--cpu-initialization-period=0s",
    "--initial-readiness-delay=0s",
    "--downscale-stabilization=10s",
    "--history-flush-interval=5s",
    f"--rewrite-window={REWRITE_WINDOW_SECONDS}s",
    f"--webhook-service-port={WEBHOOK_SERVICE_PORT}",
)


class HvpaController:
    """One hvpa controller process and its HTTP views (/debug/state, /metrics, /readyz)."""

    def __init__(self, name: str, *, kubeconfig: Path, directory: Path, reader_token: str) -> None:
        self.name = name
        self._reader_token = reader_token
        self.metrics_port = free_port()
        self.health_port = free_port()
        self.webhook_port = free_port()
        hvpa = Path(sys.executable).with_name("hvpa")
        self.process = Process(
            name,
            [
                str(hvpa),
                "run",
                f"--kubeconfig={kubeconfig}",
                "--leader-elect",
                f"--leader-election-namespace={LEASE_NAMESPACE}",
                f"--leader-election-id={LEASE_NAME}",
                f"--metrics-bind-address=127.0.0.1:{self.metrics_port}",
                "--metrics-secure=true",
                f"--health-probe-bind-address=127.0.0.1:{self.health_port}",
                f"--webhook-bind-address=127.0.0.1:{self.webhook_port}",
                "--log-format=json",
                *E2E_HVPA_ARGS,
            ],
            log_directory=directory,
        )

    def start(self) -> None:
        self.process.start()

    def secure_get(self, path: str, *, token: str | None = None) -> bytes:
        """GET from the HTTPS listener with a bearer token (the reader's unless given).

        Its certificate is self-signed, made at start: not verified here (the Deployment's
        callers verify the one --metrics-cert-path names)."""
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        request = urllib.request.Request(
            f"https://127.0.0.1:{self.metrics_port}{path}",
            headers={"Authorization": f"Bearer {token or self._reader_token}"},
        )
        with urllib.request.urlopen(request, timeout=10, context=context) as reply:
            return bytes(reply.read())

    def state(self) -> dict[str, Any]:
        return dict(json.loads(self.secure_get("/debug/state")))

    def metrics_text(self) -> str:
        return self.secure_get("/metrics").decode()

    def ready(self) -> bool:
        url = f"http://127.0.0.1:{self.health_port}/readyz"
        try:
            with urllib.request.urlopen(url, timeout=5):
                return True
        except OSError:
            return False

    def identity(self) -> str:
        return str(self.state()["leader"]["identity"])

    def is_leader(self) -> bool:
        return bool(self.state()["leader"].get("isLeader"))

    def informers(self) -> list[dict[str, Any]]:
        return list(self.state()["informers"])

    def log_records(self) -> list[dict[str, Any]]:
        """The JSON log lines so far (other lines, such as a traceback, come back as `text`)."""
        records: list[dict[str, Any]] = []
        for line in self.process.log().splitlines():
            if not line.strip() or line.startswith("=== start"):
                continue
            try:
                records.append(json.loads(line))
            except ValueError:
                records.append({"text": line})
        return records
