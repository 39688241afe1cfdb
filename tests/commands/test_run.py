"""`hvpa run`: flags to one settings object (defaults, every flag, bad values), the controller
run in-process in virtual time (SIGTERM stops it with exit 0 and a released lease; a lost
lease exits 1), and the real command in a subprocess (in real time: ready, serving metrics,
exit 0 on SIGTERM with the lease released)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import os
import signal
import socket
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from prometheus_client import CollectorRegistry

from hvpa.cli import build_parser
from hvpa.commands.run import run_controller
from hvpa.engine.settings import Settings as EngineSettings
from hvpa.kube.settings import LeaderElectionSettings
from hvpa.settings import (
    DEFAULT_CONCURRENCY,
    DEFAULT_SYNC_PERIOD_SECONDS,
    ControllerSettings,
    RunSettings,
    ServerSettings,
    settings_from_args,
)
from hvpa.sim.apiserver import ApiServer

EPOCH = 1_750_000_000.0
ROOT = Path(__file__).parents[2]


def parse(*flags: str) -> RunSettings:
    args = build_parser().parse_args(["run", *flags])
    return settings_from_args(args)


def test_defaults() -> None:
    settings = parse()
    assert settings.kubeconfig is None
    assert settings.leader_elect is False
    assert settings.leader_election.lease_name == "hvpa"
    assert settings.controller.namespaces == ()
    assert settings.controller.sync_period_seconds == DEFAULT_SYNC_PERIOD_SECONDS == 15
    assert settings.controller.concurrency == DEFAULT_CONCURRENCY
    assert settings.controller.dry_run is False
    assert settings.server == RunSettings().server
    assert settings.server.webhook.bind_address == ":9443"
    assert ServerSettings().webhook.bind_address == "0"  # in process: off unless asked for
    assert settings.server.metrics_bind_address == ":8443"
    assert settings.server.metrics_secure is True
    assert settings.server.metrics_cert_path is None
    assert settings.server.health_probe_bind_address == ":8081"
    assert settings.server.debug_state is True
    assert settings.engine == EngineSettings()
    assert (settings.log_format, settings.log_level) == ("text", "info")


@pytest.mark.parametrize(
    ("flags", "path", "expected"),
    [
        pytest.param(["--kubeconfig", "/k"], "kubeconfig", "/k", id="kubeconfig"),
        pytest.param(
            ["--namespace", "a", "--namespace", "b", "--namespace", "a"],
            "controller.namespaces",
            ("a", "b"),
            id="namespaces",
        ),
        pytest.param(["--leader-elect"], "leader_elect", True, id="leader-elect"),
        pytest.param(["--leader-elect=false"], "leader_elect", False, id="leader-elect-false"),
        pytest.param(
            ["--leader-election-namespace", "ops"],
            "leader_election.lease_namespace",
            "ops",
            id="lease-namespace",
        ),
        pytest.param(
            ["--leader-election-id", "x"], "leader_election.lease_name", "x", id="lease-id"
        ),
        pytest.param(
            ["--metrics-bind-address", "127.0.0.1:9"],
            "server.metrics_bind_address",
            "127.0.0.1:9",
            id="metrics-address",
        ),
        pytest.param(
            ["--metrics-secure=false"], "server.metrics_secure", False, id="metrics-plain"
        ),
        pytest.param(
            ["--metrics-cert-path", "/certs"],
            "server.metrics_cert_path",
            "/certs",
            id="metrics-cert-path",
        ),
        pytest.param(
            ["--health-probe-bind-address", "0"],
            "server.health_probe_bind_address",
            "0",
            id="probe-address",
        ),
        pytest.param(
            ["--sync-period", "1m30s"], "controller.sync_period_seconds", 90.0, id="sync-go"
        ),
        pytest.param(
            ["--sync-period", "45"], "controller.sync_period_seconds", 45.0, id="sync-secs"
        ),
        pytest.param(
            ["--history-flush-interval", "2m"],
            "controller.history_flush_seconds",
            120.0,
            id="history-flush",
        ),
        pytest.param(["--concurrency", "12"], "controller.concurrency", 12, id="concurrency"),
        pytest.param(["--dry-run"], "controller.dry_run", True, id="dry-run"),
        pytest.param(["--log-format", "json"], "log_format", "json", id="log-format"),
        pytest.param(["--log-level", "debug"], "log_level", "debug", id="log-level"),
        pytest.param(["--debug-state=false"], "server.debug_state", False, id="debug-state-off"),
        pytest.param(
            ["--cpu-initialization-period", "2m"],
            "engine.cpu_initialization_period_seconds",
            120.0,
            id="cpu-init",
        ),
        pytest.param(
            ["--initial-readiness-delay", "10s"],
            "engine.initial_readiness_delay_seconds",
            10.0,
            id="readiness",
        ),
        pytest.param(["--tolerance", "0.2"], "engine.tolerance", 0.2, id="tolerance"),
        pytest.param(
            ["--downscale-stabilization", "60"],
            "engine.downscale_stabilization_seconds",
            60.0,
            id="downscale",
        ),
        pytest.param(
            ["--scale-up-limit-factor", "3"], "engine.scale_up_limit_factor", 3.0, id="limit-factor"
        ),
        pytest.param(
            ["--scale-up-limit-minimum", "6"],
            "engine.scale_up_limit_minimum",
            6,
            id="limit-minimum",
        ),
    ],
)
def test_each_flag(flags: list[str], path: str, expected: Any) -> None:
    value: Any = parse(*flags)
    for part in path.split("."):
        value = getattr(value, part)
    assert value == expected


@pytest.mark.parametrize(
    "flags",
    [
        pytest.param(["--concurrency", "0"], id="no-workers"),
        pytest.param(["--sync-period", "soon"], id="bad-duration"),
        pytest.param(["--sync-period", "-5s"], id="negative-duration"),
        pytest.param(["--tolerance", "x"], id="bad-tolerance"),
        pytest.param(["--dry-run=maybe"], id="bad-bool"),
        pytest.param(["--log-format", "xml"], id="bad-format"),
    ],
)
def test_bad_flags_exit_2(flags: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(["run", *flags])
    assert exited.value.code == 2
    assert flags[0].split("=")[0] in capsys.readouterr().err


def test_settings_refuse_a_zero_sync_period() -> None:
    with pytest.raises(ValueError, match="sync period"):
        ControllerSettings(sync_period_seconds=0)


def test_a_factor_below_one_is_refused_before_connecting(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args: argparse.Namespace = build_parser().parse_args(["run", "--scale-up-limit-factor", "0.5"])
    assert args.handler(args) == 2
    assert "scaleUpLimitFactor" in capsys.readouterr().err


# ---------------------------------------------------------------------------
# In-process, in virtual time


@pytest.fixture
async def apiserver() -> AsyncIterator[ApiServer]:
    loop = asyncio.get_running_loop()
    async with ApiServer(seed=1, clock=lambda: EPOCH + loop.time()) as server:
        yield server


def lease(server: ApiServer) -> dict[str, Any]:
    spec: dict[str, Any] = server.objects.get("leases", "hvpa", namespace="default")["spec"]
    return spec


def in_process(server: ApiServer) -> RunSettings:
    return RunSettings(
        kubeconfig=str(server.kubeconfig_path),
        leader_elect=True,
        leader_election=LeaderElectionSettings(lease_namespace="default"),
        server=ServerSettings(
            metrics_bind_address="127.0.0.1:0", health_probe_bind_address="127.0.0.1:0"
        ),
    )


async def until(predicate: Callable[[], bool], within: float) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while not predicate():
        assert loop.time() < deadline, f"not true within {within} s"
        await asyncio.sleep(0.5)


def holder(server: ApiServer) -> str | None:
    with contextlib.suppress(Exception):
        return lease(server).get("holderIdentity")
    return None


@pytest.mark.looptime
async def test_sigterm_stops_cleanly_and_releases_the_lease(apiserver: ApiServer) -> None:
    """Also: the controller run in this process leaves its collector as it was (only `hvpa
    run`'s own process is tuned, hvpa.controller.collector)."""
    thresholds = gc.get_threshold()
    loop = asyncio.get_running_loop()
    running = asyncio.create_task(
        run_controller(
            in_process(apiserver), clock=lambda: EPOCH + loop.time(), registry=CollectorRegistry()
        )
    )
    await until(lambda: bool(holder(apiserver)), within=30)
    os.kill(os.getpid(), signal.SIGTERM)
    assert await asyncio.wait_for(running, timeout=60) == 0
    assert not lease(apiserver).get("holderIdentity")
    assert gc.get_threshold() == thresholds


@pytest.mark.looptime
async def test_a_lost_lease_exits_1(apiserver: ApiServer) -> None:
    loop = asyncio.get_running_loop()
    running = asyncio.create_task(
        run_controller(
            in_process(apiserver), clock=lambda: EPOCH + loop.time(), registry=CollectorRegistry()
        )
    )
    await until(lambda: bool(holder(apiserver)), within=30)
    current = apiserver.objects.get("leases", "hvpa", namespace="default")
    current["spec"]["holderIdentity"] = "someone-else"
    current["spec"]["leaseDurationSeconds"] = 3600
    apiserver.objects.update("leases", current)
    assert await asyncio.wait_for(running, timeout=60) == 1


# ---------------------------------------------------------------------------
# The real command


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_hvpa_run_in_a_subprocess() -> None:
    async with ApiServer(seed=1) as server, aiohttp.ClientSession() as http:
        metrics, probes, webhook = free_port(), free_port(), free_port()
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "hvpa",
            "run",
            "--kubeconfig",
            str(server.kubeconfig_path),
            "--leader-elect",
            "--leader-election-namespace",
            "default",
            "--metrics-bind-address",
            f"127.0.0.1:{metrics}",
            # Plain HTTP, so the scrape below needs no token (tests/integration/test_server.py
            # covers secure serving).
            "--metrics-secure=false",
            "--health-probe-bind-address",
            f"127.0.0.1:{probes}",
            "--webhook-bind-address",
            f"127.0.0.1:{webhook}",
            "--log-format",
            "json",
            cwd=ROOT,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            async with asyncio.timeout(30):
                while True:
                    with contextlib.suppress(aiohttp.ClientError):
                        async with http.get(f"http://127.0.0.1:{probes}/readyz") as response:
                            if response.status == 200:
                                break
                    await asyncio.sleep(0.2)
                async with http.get(f"http://127.0.0.1:{metrics}/metrics") as response:
                    text = await response.text()
            assert 'leader_election_master_status{name="hvpa"} 1.0' in text
            process.send_signal(signal.SIGTERM)
            async with asyncio.timeout(30):
                _, stderr = await process.communicate()
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
        assert process.returncode == 0, stderr.decode()[-2000:]
        assert b'"msg": "stopped"' in stderr or b'"msg":"stopped"' in stderr
        assert not lease(server).get("holderIdentity")


def test_one_field_manager_for_the_engine_and_the_client() -> None:
    """rewrites.py tells hvpa's writes from others' by the name the client writes under:
    the client's is the engine's, whichever way the settings are made."""
    settings = RunSettings(engine=EngineSettings(field_manager="gitops-hvpa"))
    assert settings.client.field_manager == "gitops-hvpa"
    from_flags = parse("--field-manager", "x")
    assert from_flags.engine.field_manager == from_flags.client.field_manager == "x"
