"""Leader election against the in-repo API server, in virtual time with the default
timings (lease 15 s, renew deadline 10 s, retry 2 s): one leader at a time; a
killed leader replaced after the lease runs out; a stopped leader hands over at
once; a renewal that fails or hangs costs the lease at the renew deadline, never
later; a 409 on renewal is survived; and the Lease fields are what client-go writes."""

import asyncio
import random
import re
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from kube_helpers import eventually
from prometheus_client import CollectorRegistry

from hvpa.kube.client import KubeClient
from hvpa.kube.leader import LeaderElector, LeadershipLost
from hvpa.kube.metrics import KubeMetrics
from hvpa.kube.settings import LeaderElectionSettings
from hvpa.records import parse_time
from hvpa.sim.apiserver import ApiServer

pytestmark = pytest.mark.looptime

EPOCH = 1_750_000_000.0
LEASE = 15.0
DEADLINE = 10.0
RETRY = 2.0
JITTER = 1.2
# A candidate polls every RETRY * (1 + JITTER) at most; it sees the last renewal
# at most one poll late, and takes over at most one poll after the lease ran out.
TAKEOVER = LEASE + 2 * RETRY * (1 + JITTER)
MICRO_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")


@dataclass
class Candidate:
    elector: LeaderElector
    registry: CollectorRegistry
    calls: list[str] = field(default_factory=list)
    task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self.task = asyncio.create_task(self.elector.run(), name=self.elector.identity)

    async def stop(self) -> BaseException | None:
        assert self.task is not None
        self.task.cancel()
        try:
            await self.task
        except BaseException as error:  # cancelled, or lost before
            return error
        return None

    @property
    def gauge(self) -> float | None:
        return self.registry.get_sample_value("leader_election_master_status", {"name": "hvpa"})


@pytest.fixture
async def candidates(kube: KubeClient) -> AsyncIterator[Callable[..., Candidate]]:
    made: list[Candidate] = []
    loop = asyncio.get_running_loop()

    def make(identity: str, **settings: Any) -> Candidate:
        registry = CollectorRegistry()
        candidate = Candidate(elector=None, registry=registry)  # type: ignore[arg-type]
        candidate.elector = LeaderElector(
            client=kube,
            identity=identity,
            metrics=KubeMetrics(registry),
            settings=LeaderElectionSettings(**settings),
            clock=lambda: EPOCH + loop.time(),
            on_started_leading=lambda: candidate.calls.append("started"),
            on_stopped_leading=lambda: candidate.calls.append("stopped"),
            on_new_leader=lambda leader: candidate.calls.append(f"leader={leader}"),
            rng=random.Random(identity),
        )
        made.append(candidate)
        return candidate

    yield make
    for candidate in made:
        if candidate.task is not None and not candidate.task.done():
            await candidate.stop()


def lease(apiserver: ApiServer) -> dict[str, Any]:
    spec: dict[str, Any] = apiserver.objects.get("leases", "hvpa", namespace="kube-system")["spec"]
    return spec


def leaders(*candidates: Candidate) -> list[str]:
    return [c.elector.identity for c in candidates if c.elector.is_leader()]


async def test_one_leader_at_a_time(
    apiserver: ApiServer, candidates: Callable[..., Candidate]
) -> None:
    group = [candidates(name) for name in ("a", "b", "c")]
    for candidate in group:
        candidate.start()
    await eventually(lambda: len(leaders(*group)) == 1, within=10)
    (first,) = leaders(*group)
    for _ in range(240):  # two minutes, sampled every half second
        await asyncio.sleep(0.5)
        assert leaders(*group) == [first]
    holder = next(c for c in group if c.elector.identity == first)
    assert holder.calls == [f"leader={first}", "started"]
    assert holder.gauge == 1
    assert [c.gauge for c in group if c is not holder] == [0, 0]
    assert all(c.elector.leader == first for c in group)
    assert lease(apiserver)["holderIdentity"] == first


async def test_lease_fields(apiserver: ApiServer, candidates: Callable[..., Candidate]) -> None:
    loop = asyncio.get_running_loop()
    a = candidates("a")
    a.start()
    await eventually(a.elector.is_leader, within=5)
    first = lease(apiserver)
    assert first["holderIdentity"] == "a"
    assert first["leaseDurationSeconds"] == 15
    assert first["leaseTransitions"] == 0
    assert MICRO_TIME.match(first["acquireTime"]) and MICRO_TIME.match(first["renewTime"])
    await asyncio.sleep(9)
    later = lease(apiserver)
    assert later["acquireTime"] == first["acquireTime"], "renewals keep the acquire time"
    assert later["renewTime"] > first["renewTime"]
    renewed = EPOCH + loop.time() - (parse_time(later["renewTime"]) or 0.0)
    assert 0 <= renewed <= RETRY + 0.01, "renewed every retry period"
    assert a.elector.state()["leader"] == "a"


async def test_a_killed_leader_is_replaced_when_its_lease_runs_out(
    apiserver: ApiServer, candidates: Callable[..., Candidate]
) -> None:
    loop = asyncio.get_running_loop()
    a = candidates("a", release_on_cancel=False)  # killed: no goodbye
    a.start()
    await eventually(a.elector.is_leader, within=5)
    b = candidates("b")
    b.start()
    await asyncio.sleep(20)
    assert leaders(a, b) == ["a"]
    acquired = lease(apiserver)["acquireTime"]
    killed = loop.time()
    assert isinstance(await a.stop(), asyncio.CancelledError)
    took = await eventually(b.elector.is_leader, within=TAKEOVER + 1)
    assert LEASE - RETRY <= took <= TAKEOVER, took
    spec = lease(apiserver)
    assert (spec["holderIdentity"], spec["leaseTransitions"]) == ("b", 1)
    assert spec["acquireTime"] != acquired
    assert loop.time() - killed == pytest.approx(took, abs=0.1)
    assert "leader=b" in b.calls and "started" in b.calls


async def test_a_stopped_leader_hands_over_at_once(
    apiserver: ApiServer, candidates: Callable[..., Candidate]
) -> None:
    a = candidates("a")
    a.start()
    await eventually(a.elector.is_leader, within=5)
    b = candidates("b")
    b.start()
    await asyncio.sleep(10)
    assert isinstance(await a.stop(), asyncio.CancelledError)
    assert a.calls[-1] == "stopped" and a.gauge == 0
    released = lease(apiserver)
    assert "holderIdentity" not in released and released["leaseDurationSeconds"] == 1
    took = await eventually(b.elector.is_leader, within=RETRY * (1 + JITTER) + 0.1)
    assert took <= RETRY * (1 + JITTER)
    assert lease(apiserver)["leaseTransitions"] == 1


@pytest.mark.parametrize("fault", ["hang", "fail"])
async def test_a_renewal_that_hangs_or_fails_loses_the_lease_at_the_deadline(
    apiserver: ApiServer, candidates: Callable[..., Candidate], fault: str
) -> None:
    loop = asyncio.get_running_loop()
    a = candidates("a")
    a.start()
    await eventually(a.elector.is_leader, within=5)
    b = candidates("b")
    b.start()
    await asyncio.sleep(5)
    if fault == "hang":
        apiserver.faults.delay(3600, method="PUT", path="/leases/hvpa$")
    else:
        apiserver.faults.fail(status=500, times=1000, method="PUT", path="/leases/hvpa$")
    began = loop.time()
    lost_after = await eventually(lambda: not a.elector.is_leader(), within=DEADLINE + 0.1)
    assert DEADLINE - RETRY <= lost_after <= DEADLINE, lost_after
    assert a.task is not None
    with pytest.raises(LeadershipLost):
        await asyncio.wait_for(a.task, timeout=RETRY)
    assert loop.time() - began <= DEADLINE + 0.01, "the elector gave up at the deadline"
    assert a.calls[-1] == "stopped" and a.gauge == 0
    assert not a.elector.leading.is_set()
    apiserver.faults.clear()
    await eventually(b.elector.is_leader, within=TAKEOVER)
    assert lease(apiserver)["holderIdentity"] == "b"


async def test_a_conflict_on_renewal_is_survived(
    apiserver: ApiServer, candidates: Callable[..., Candidate]
) -> None:
    a = candidates("a")
    a.start()
    await eventually(a.elector.is_leader, within=5)
    apiserver.faults.conflict("leases", "hvpa", namespace="kube-system", times=2)
    for _ in range(40):
        await asyncio.sleep(0.5)
        assert a.elector.is_leader()
    conflicts = [r for r in apiserver.requests if r.method == "PUT" and r.status == 409]
    assert len(conflicts) == 2
    assert lease(apiserver)["leaseTransitions"] == 0


def test_settings_must_leave_room() -> None:
    with pytest.raises(ValueError, match="renew deadline"):
        LeaderElectionSettings(lease_duration_seconds=10, renew_deadline_seconds=10)
    with pytest.raises(ValueError, match="retry period"):
        LeaderElectionSettings(retry_period_seconds=10)
