"""The envelope's rows for what deciding every Hvpa each sync period asks of the controller:
the figures a reader compares with one core when the decision rate falls short."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from bench.bench_envelope import (
    SETTLE_PERIODS,
    TriggerSplit,
    _clear_of_stalls_rows,
    _on_cpu_share,
    _shortest_reread,
    _split_rows,
    _what_a_period_needs,
    _write_stalls,
    split_triggers,
)
from bench.controller_process import _patched_deployment


def settled(*, quiet: dict[str, float] | None = None, **fields: Any) -> dict[str, Any]:
    return {"settled": True, "queued": 0, **({"quiet": quiet} if quiet else {}), **fields}


def test_the_quiet_window_splits_a_decisions_own_cost_from_the_churns() -> None:
    # The resync alone: 1,000 decisions in 1.2 CPU-s, 1.2 ms each. The window: 3,000
    # decisions in 6 CPU-s over 20 s, so 6 - 3.6 = 2.4 CPU-s of churn, 12 % of a core.
    # Every Hvpa each period: 10,000 / 15 * 1.2 ms = 0.8 cores, plus 0.12: 0.92, one core
    # is enough; at 12,000 Hvpas 0.96 + 0.12 = 1.08 is not.
    quiet = {"decisions": 1_000, "cpu": 1.2, "seconds": 15.0}
    own, churn, cores = _what_a_period_needs(10_000, 15.0, (3_000, 6.0, 20.0), settled(quiet=quiet))
    assert own.value == pytest.approx(1.2)
    assert churn.value == pytest.approx(12.0)
    assert cores.value == pytest.approx(0.92)
    assert cores.met is True
    *_, more = _what_a_period_needs(12_000, 15.0, (3_000, 6.0, 20.0), settled(quiet=quiet))
    assert more.value == pytest.approx(1.08)
    assert more.met is False


def test_a_settle_that_gave_up_says_how_many_keys_were_still_queued() -> None:
    rows = _what_a_period_needs(
        10_000, 15.0, (5_000, 10.0, 30.0), settled(settled=False, queued=700)
    )
    assert [row.value for row in rows] == [700]
    assert f"after {SETTLE_PERIODS} sync periods" in rows[0].name


def test_no_decision_in_either_window_gives_no_cost_rows() -> None:
    quiet = {"decisions": 1, "cpu": 1.0, "seconds": 3.0}
    assert _what_a_period_needs(10, 15.0, (0, 1.0, 30.0), settled(quiet=quiet)) == []
    quiet = {"decisions": 0, "cpu": 1.0, "seconds": 3.0}
    assert _what_a_period_needs(10, 15.0, (5, 1.0, 30.0), settled(quiet=quiet)) == []


def test_a_pause_on_a_cpu_for_half_its_time_reads_as_half() -> None:
    # 300 ms with 250 on a CPU, 100 ms with none: 250 / 400.
    assert _on_cpu_share([(0.3, 0.25), (0.1, 0.0)]) == pytest.approx(62.5)
    assert _on_cpu_share([]) == 0.0


def test_the_shortest_reread_is_of_one_namespace() -> None:
    # Two namespaces read 15 s apart each, 1 s apart from each other: 15 s.
    reads = [("a", 0.0), ("b", 1.0), ("a", 15.0), ("b", 16.5), ("a", 31.0)]
    assert _shortest_reread(reads) == pytest.approx(15.0)
    assert _shortest_reread([("a", 0.0), ("b", 0.5)]) == float("inf")


def test_a_trigger_is_split_at_the_first_moments_after_it_in_turn() -> None:
    """Triggered at 101.0 (1 s after the window began), read by the server 100 ms later:
    the moments before the trigger, or before the part before them, are an earlier one's."""
    watch_writes = [("ns/a", 100.4), ("ns/a", 101.01)]
    moments = {
        "vpa_updates": [("ns/a", 100.5), ("ns/a", 101.005), ("ns/a", 101.03), ("ns/a", 101.04)],
        "patches": [("ns/a", 101.02), ("ns/a", 101.06), ("ns/b", 101.5)],
        "sent": [("ns/a", 101.05), ("ns/a", 101.07)],
    }
    answered = [(1.0, 0.100, "ns/a"), (1.0, 0.2, "ns/b")]  # b: no watch write, left out
    (split,) = split_triggers(100.0, answered, moments, watch_writes)
    assert split.server == pytest.approx(0.01)
    assert split.delivery == pytest.approx(0.02)
    assert split.controller == pytest.approx(0.03)
    assert split.sending == pytest.approx(0.01)
    assert split.return_ == pytest.approx(0.03)


def test_the_tails_shares_are_of_the_slowest_answers_time() -> None:
    # 199 fast answers, all in the controller; one slow one past the p99: 300 ms in the
    # server's watch, 100 ms in the controller.
    splits = [TriggerSplit(0.0, 0.0, 0.010, 0.0, 0.0)] * 199 + [
        TriggerSplit(0.3, 0.0, 0.1, 0.0, 0.0)
    ]
    rows = _split_rows(splits, answered=200, p99_seconds=0.4, metrics_reads=[])
    shares = [row.value for row in rows if row.name.startswith("share of the slowest")]
    assert shares == [pytest.approx(75.0), 0.0, pytest.approx(25.0), 0.0, 0.0]
    (own_p99,) = [row for row in rows if "own part" in row.name and row.name.endswith("100 ms)")]
    assert own_p99.value == pytest.approx(10.0)  # the fast ones'
    assert own_p99.met is None  # the target is the whole answer's, not a part's


def test_a_patch_after_the_answer_was_read_is_not_this_triggers() -> None:
    """An earlier PATCH answered the trigger; the one the controller sent later would make
    the return negative."""
    watch_writes = [("ns/a", 101.01)]
    moments = {"vpa_updates": [("ns/a", 101.02)], "patches": [("ns/a", 101.3)], "sent": []}
    assert split_triggers(100.0, [(1.0, 0.1, "ns/a")], moments, watch_writes) == []


def test_a_deployment_patch_is_named_and_other_requests_are_not() -> None:
    path = "/apis/apps/v1/namespaces/shop-007/deployments/web-12"
    assert _patched_deployment("PATCH", path) == "shop-007/web-12"
    assert _patched_deployment("PATCH", path + "/status") == "shop-007/web-12"
    assert _patched_deployment("GET", path) is None
    assert _patched_deployment("PATCH", "/apis/apps/v1/namespaces/shop-007/statefulsets/db") is None


def test_a_read_that_came_back_during_the_controllers_part_is_counted_as_held() -> None:
    """The controller's part of ns/a ran from 101.02 to 101.06; ns's read came back at
    101.04 (held), ns/b's namespace was read only before its part began (not held)."""
    split = TriggerSplit(0.01, 0.01, 0.04, 0.0, 0.01, key="ns/a", handled_at=101.02)
    other = TriggerSplit(0.01, 0.01, 0.002, 0.0, 0.01, key="other/b", handled_at=101.02)
    reads = [("ns", 101.04), ("other", 101.0)]
    rows = _split_rows([split, other], answered=2, p99_seconds=0.065, metrics_reads=reads)
    held_share, held_in_tail, without = rows[-3:]
    assert held_share.value == pytest.approx(50.0)
    assert held_in_tail.value == pytest.approx(100.0)  # the tail: the one that held it
    assert without.value == pytest.approx(2.0)


def test_the_p99_clear_of_a_processs_stalls_leaves_out_only_the_answers_they_reached() -> None:
    """50 answers, one a second from 100.0 s: 48 of 10 ms, and two slow ones, the first
    under a stall of the API server process, the second under one of the controller."""
    answered = [(float(i), 0.010, f"ns/{i}") for i in range(48)]
    answered += [(48.0, 0.300, "ns/48"), (49.0, 0.200, "ns/49")]
    measured = {"began": 100.0, "answered": answered, "stalls": [(148.2, 0.1)]}
    server, controller, either = _clear_of_stalls_rows(measured, [(149.15, 0.1)])
    assert "(49 of 50;" in server.name and "(49 of 50;" in controller.name
    assert "(48 of 50;" in either.name
    assert server.value > 100.0  # the controller's slow answer is left
    assert controller.value > 100.0  # the server's is
    assert either.value == pytest.approx(10.0)


def test_the_windows_stalls_are_written_where_asked_and_nowhere_else(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`HVPA_BENCH_STALLS=path`: both processes' stalls with their pids, on time.monotonic,
    to cut a native profile taken beside the run to them (docs/benchmarks.md)."""
    measured = {"began": 100.0, "elapsed": 30.0, "stalls": [[101.0, 0.2]]}
    after = {"stalls": [[102.0, 0.3]], "stall_thread_cpu": [0.29], "gc": [[103.0, 2, 0.5]]}
    monkeypatch.delenv("HVPA_BENCH_STALLS", raising=False)
    _write_stalls(7, 8, measured, after)
    assert list(tmp_path.iterdir()) == []
    path = tmp_path / "stalls.json"
    monkeypatch.setenv("HVPA_BENCH_STALLS", str(path))
    _write_stalls(7, 8, measured, after)
    assert orjson.loads(path.read_bytes()) == {
        "window": [100.0, 130.0],
        "server": {"pid": 7, "stalls": [[101.0, 0.2]]},
        "controller": {
            "pid": 8,
            "stalls": [[102.0, 0.3]],
            "thread_cpu": [0.29],
            "gc": [[103.0, 2, 0.5]],
        },
    }
