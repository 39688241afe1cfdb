"""Pods.write's shortcut: a pod whose status_key() did not move is not rendered again.

The key must move whenever the status does, or a changed pod would never be
written; these tests change each field the status reads, one at a time and
at random, and compare the keys' verdict with the statuses' own.
"""

from __future__ import annotations

import random
from dataclasses import replace

from hvpa.sim.pods import ContainerSize, ContainerState, SimPod


def _pod() -> SimPod:
    size = ContainerSize("app", 100, 2**27, 200, 2**28)
    return SimPod(
        namespace="default",
        name="web-1",
        uid="u1",
        workload=("Deployment", "default", "web"),
        revision="r1",
        created_at=0.0,
        containers=[ContainerState(size), ContainerState(replace(size, name="side"))],
    )


def _mutate(pod: SimPod, rng: random.Random) -> None:
    """One change of one field the kubelet, the scheduler or a resize makes."""
    container = rng.choice(pod.containers)
    now = float(rng.randrange(1, 50))
    step = rng.randrange(13)
    if step == 0:
        pod.node = rng.choice([None, "node-1", "node-2"])
    elif step == 1:
        pod.unschedulable = rng.choice(["", "0/3 nodes are available", "no room"])
    elif step == 2:
        pod.phase = rng.choice(["Pending", "Running"])
    elif step == 3:
        pod.resize_pending = rng.choice([None, ("Deferred", "no room"), ("Infeasible", "big")])
    elif step == 4:
        pod.resize_started = rng.choice([None, now])
    elif step == 5:
        pod.resize_error = rng.choice(["", "attempting to set pod memory limit below usage"])
    elif step == 6:
        pod.started_at = rng.choice([None, now])
    elif step == 7:
        pod.ready_since = rng.choice([None, now])
    elif step == 8:
        pod.reports_resources = rng.choice([True, False])
    elif step == 9:
        container.size = replace(container.size, request_cpu=rng.choice([100, 150, None]))
    elif step == 10:
        container.allocated = rng.choice([None, replace(container.size, request_memory=2**26)])
    elif step == 11:
        if container.started_at is None:
            container.started_at = now
        else:
            container.kill(now, reason="OOMKilled", exit_code=137)
    else:
        container.restart(now)


def test_the_key_moves_whenever_the_status_does() -> None:
    rng = random.Random(19)
    pod = _pod()
    before_key, before_status = pod.status_key(), pod.status()
    moved = 0
    for _ in range(5_000):
        _mutate(pod, rng)
        key, status = pod.status_key(), pod.status()
        if status != before_status:
            moved += 1
            assert key != before_key, status
        before_key, before_status = key, status
    # Each of the 13 kinds of change moves the status often over 5,000 draws.
    assert moved > 1_000


def test_a_kill_is_a_new_key_even_at_the_same_restart_count() -> None:
    """A container's last termination is part of the status on its own."""
    pod = _pod()
    pod.started_at = 1.0
    pod.containers[0].started_at = 1.0
    pod.containers[0].kill(5.0, reason="OOMKilled", exit_code=137)
    key = pod.status_key()
    pod.containers[0].last_termination = {"terminated": {"reason": "Error", "exitCode": 1}}
    assert pod.status_key() != key


def test_requests_sum_every_container_as_it_runs_unset_as_zero() -> None:
    pod = _pod()
    pod.containers[1].size = ContainerSize("side", None, 2**20)
    pod.containers[1].spec = ContainerSize("side", 999, 999)  # desired, not running yet
    assert pod.requests() == (100, 2**27 + 2**20)
    pod.containers[0].size = ContainerSize("app")
    assert pod.requests() == (0, 2**20)


def test_resizing_compares_the_desired_size_with_the_running_one_by_value() -> None:
    pod = _pod()
    assert not pod.resizing
    running = pod.containers[1].size
    pod.containers[1].spec = replace(running)  # an equal size, another object
    assert not pod.resizing
    pod.containers[1].spec = replace(running, request_cpu=300)
    assert pod.resizing
    pod.containers[1].spec = None
    pod.containers[1].allocated = replace(running, limit_memory=2**29)  # admitted, not applied
    assert pod.resizing


def test_a_started_pod_holds_the_largest_of_its_sizes_per_container() -> None:
    pod = _pod()
    pod.started_at = 1.0
    assert pod.held() == (200, 2**27 + 2**27)
    app = pod.containers[0]
    app.allocated = replace(app.size, request_cpu=300)  # admitted, not applied yet
    app.spec = replace(app.size, request_memory=2**26, request_cpu=250)  # asked for after
    assert pod.held() == (300 + 100, 2**27 + 2**27)
    pod.containers[1].spec = replace(pod.containers[1].size, request_memory=2**29)
    assert pod.held() == (300 + 100, 2**27 + 2**29)
