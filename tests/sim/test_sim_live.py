"""`hvpa sim --keep-running` as a live cluster: probes, leader election, the cluster's clock at
the machine's, kubectl, and Events that keep coming (issue 19's live simulator).

A kept-running run must report what a plain run of the same seed reports (only its start
differs), so these runs are compared with a plain one.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from hvpa.records import parse_time
from hvpa.sim.runner import LEASE, Endpoints, RunOptions, live_start, simulate
from hvpa.sim.scenarios import builtin_scenario
from hvpa.sim.traces import parse_trace

TOKEN = {"Authorization": "Bearer hvpa-sim-token"}
DAY = 86400.0
DURATION = 600.0


@pytest.mark.parametrize(
    ("start", "duration", "now", "expected"),
    [
        # 2025-01-06T00:00:00Z = 1736121600; a 6 h run ending at or before now keeps 00:00.
        pytest.param(
            1736121600.0,
            6 * 3600.0,
            1736121600.0 + 400 * DAY + 7 * 3600,
            1736121600.0 + 400 * DAY,
            id="same-day",
        ),
        pytest.param(
            1736121600.0,
            6 * 3600.0,
            1736121600.0 + 400 * DAY + 5 * 3600,
            1736121600.0 + 399 * DAY,
            id="day-before",
        ),
        pytest.param(
            1736121600.0, 6 * 3600.0, 1736121600.0 + 6 * 3600, 1736121600.0, id="ends-now"
        ),
        # A scenario dated after now moves back.
        pytest.param(
            1736121600.0, 3600.0, 1736121600.0 - 10 * DAY, 1736121600.0 - 11 * DAY, id="future"
        ),
    ],
)
def test_a_live_run_keeps_its_time_of_day_and_ends_by_now(
    start: float, duration: float, now: float, expected: float
) -> None:
    assert live_start(start, duration, now) == expected
    assert (live_start(start, duration, now) - start) % DAY == 0
    assert live_start(start, duration, now) + duration <= now


def options(tmp_path: Path, duration: float = DURATION) -> RunOptions:
    chosen = builtin_scenario("proposal-1")
    return RunOptions(
        scenario=chosen,
        trace=parse_trace("ramp", duration_seconds=duration, peak=chosen.peak, seed=1),
        duration_seconds=duration,
        kubeconfig_path=tmp_path / "kubeconfig",
    )


Probe = Callable[[Endpoints], Coroutine[Any, Any, dict[str, Any]]]


def run_live(
    tmp_path: Path, probe: Probe, duration: float = DURATION
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A kept-running run: its report, and what `probe` saw once it was serving."""
    seen: dict[str, Any] = {}
    reports: list[dict[str, Any]] = []

    async def probe_then_stop(endpoints: Endpoints, main: asyncio.Task[Any]) -> None:
        try:
            seen.update(await probe(endpoints))
        finally:
            main.cancel()

    def serving(endpoints: Endpoints) -> None:
        main = asyncio.current_task()
        assert main is not None
        seen["task"] = asyncio.get_running_loop().create_task(probe_then_stop(endpoints, main))

    with pytest.raises(asyncio.CancelledError):
        simulate(
            options(tmp_path, duration),
            on_report=reports.append,
            keep_running=True,
            on_serving=serving,
        )
    (report,) = reports
    return report, seen


async def get(session: aiohttp.ClientSession, url: str) -> Any:
    async with session.get(url, headers=TOKEN) as response:
        assert response.status == 200, await response.text()
        return await response.json(content_type=None)


async def look(endpoints: Endpoints) -> dict[str, Any]:
    seen: dict[str, Any] = {"wall": time.time()}
    async with aiohttp.ClientSession() as session:
        for probe in ("healthz", "readyz"):
            async with session.get(getattr(endpoints, probe)) as response:
                seen[probe] = response.status
        namespace, name = endpoints.lease.split("/")
        seen["lease"] = await get(
            session,
            f"{endpoints.api_server}/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}",
        )
        # A fresh object shows the cluster's clock: it must read as the machine's.
        created = await session.post(
            f"{endpoints.api_server}/api/v1/namespaces/default/configmaps",
            json={"metadata": {"name": "clock"}},
            headers=TOKEN,
        )
        seen["created"] = (await created.json())["metadata"]["creationTimestamp"]
        # After the run, a change the CRD admits but hvpa refuses (its stages run to 7
        # replicas, past a maximum of 1): the controller must say so with an InvalidSpec Event
        # however many Events the run wrote (issue 19: they stopped after about 25).
        hvpas = f"{endpoints.api_server}/apis/autoscaling.k8s.io/v1alpha1/namespaces/default/hvpas"
        before = await get(session, f"{endpoints.api_server}/api/v1/namespaces/default/events")
        async with session.patch(
            f"{hvpas}/hvpa-sample",
            data=json.dumps({"spec": {"hpaSpec": {"maxReplicas": 1, "minReplicas": 1}}}),
            headers={**TOKEN, "Content-Type": "application/merge-patch+json"},
        ) as response:
            assert response.status == 200, await response.text()
        for _ in range(100):
            await asyncio.sleep(0.1)
            after = await get(session, f"{endpoints.api_server}/api/v1/namespaces/default/events")
            if _total(after) > _total(before):
                break
        seen["events_before"], seen["events_after"] = before["items"], after["items"]
    seen["kubeconfig"] = endpoints.kubeconfig
    return seen


def _total(events: dict[str, Any]) -> int:
    return sum(int(e.get("count") or 1) for e in events["items"])


def test_a_kept_running_cluster_is_live(tmp_path: Path) -> None:
    live_report, seen = run_live(tmp_path, look)
    assert (seen["healthz"], seen["readyz"]) == (200, 200)
    assert seen["lease"]["spec"]["holderIdentity"] == "hvpa-sim"
    assert f"{seen['lease']['metadata']['namespace']}/{seen['lease']['metadata']['name']}" == (
        f"{LEASE.lease_namespace}/{LEASE.lease_name}"
    )
    created = parse_time(seen["created"])
    assert created is not None and abs(created - seen["wall"]) < 5
    # Events continue after the run, stamped with the machine's time.
    (invalid,) = [e for e in seen["events_after"] if e["reason"] == "InvalidSpec"]
    assert invalid["type"] == "Warning"
    assert abs((parse_time(invalid["lastTimestamp"]) or 0) - seen["wall"]) < 15
    # Same seed, same figures: leader election and the moved start change nothing but times.
    plain = simulate(options(tmp_path))
    assert live_report["scenario"].pop("start") != plain["scenario"].pop("start")
    for report in (live_report, plain):
        for condition in report["hvpaStatus"]["conditions"]:
            condition.pop("lastTransitionTime")
    assert live_report == plain


def test_kubectl_works_against_a_kept_running_cluster(tmp_path: Path, kubectl: str) -> None:
    async def use_kubectl(endpoints: Endpoints) -> dict[str, Any]:
        def run(*args: str) -> str:
            result = subprocess.run(
                [
                    kubectl,
                    "--kubeconfig",
                    str(endpoints.kubeconfig),
                    "--cache-dir",
                    str(tmp_path / "cache"),
                    *args,
                ],
                capture_output=True,
                text=True,
                timeout=30,
                env={"HOME": str(tmp_path)},
            )
            assert result.returncode == 0, result.stderr
            return result.stdout

        outputs = {}
        for name, args in {
            "lease": ("get", "lease", "-A"),
            "pods": ("get", "pods"),
            "rs": ("get", "rs"),
            "hvpa": ("get", "hvpa"),
            "events": ("get", "events"),
        }.items():
            outputs[name] = await asyncio.to_thread(run, *args)
        return outputs

    _, seen = run_live(tmp_path, use_kubectl)
    lease = seen["lease"].splitlines()
    assert lease[0].split() == ["NAMESPACE", "NAME", "HOLDER", "AGE"]
    assert lease[1].split()[:3] == ["kube-system", "hvpa", "hvpa-sim"]
    assert seen["pods"].splitlines()[0].split() == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert "Running" in seen["pods"]
    assert seen["rs"].splitlines()[0].split() == ["NAME", "DESIRED", "CURRENT", "READY", "AGE"]
    assert seen["hvpa"].splitlines()[1].split()[0] == "hvpa-sample"
    header = seen["events"].splitlines()[0].split()
    assert header == ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    # Ages of a run that ended at the machine's clock: minutes, not 689d. AGE is the last
    # column (the first, NAME, may end in a d: web-...-zx8qd).
    ages = [line.split()[-1] for line in seen["pods"].splitlines()[1:]]
    assert ages and not any(age.endswith("d") for age in ages), ages


@pytest.mark.slow
@pytest.mark.timeout(600)  # about 15 s alone; several times that beside other runs under xdist
def test_events_do_not_stop_after_the_spam_filters_burst(tmp_path: Path) -> None:
    """client-go's spam filter lets 25 Events per object through, then one per 5 minutes of
    its clock. The correlator counts cluster time, so a 2 h run of the default scenario (some
    seconds of the machine's) writes as many as two real hours would: more than 25 for its
    Hvpa (47 when this test was written). Counted on the wall clock, it would stop at 25."""

    async def count(endpoints: Endpoints) -> dict[str, Any]:
        async with aiohttp.ClientSession() as session:
            events = await get(session, f"{endpoints.api_server}/api/v1/namespaces/default/events")
        about_hvpa = [e for e in events["items"] if e["involvedObject"]["kind"] == "Hvpa"]
        return {"written": _total({"items": about_hvpa})}

    _, seen = run_live(tmp_path, count, duration=2 * 3600.0)
    assert seen["written"] > 25
