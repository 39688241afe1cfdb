"""Oscillations: moves that reverse the axis' previous move within ten minutes."""

from __future__ import annotations

import pytest

from hvpa.sim.oscillations import PodSizes, direction_changes, replica_moves, size_moves

MINUTE = 60.0


@pytest.mark.parametrize(
    ("moves", "expected"),
    [
        pytest.param([], 0, id="no moves"),
        pytest.param([(0.0, 1), (60.0, 1), (120.0, 1)], 0, id="one way"),
        pytest.param([(0.0, 1), (600.0, -1)], 1, id="back at ten minutes"),
        pytest.param([(0.0, 1), (601.0, -1)], 0, id="back after ten minutes"),
        pytest.param(
            [(0.0, 1), (60.0, -1), (120.0, 1), (900.0, -1)], 2, id="up down up, later down"
        ),
    ],
)
def test_direction_changes(moves: list[tuple[float, int]], expected: int) -> None:
    assert direction_changes(moves) == expected


def test_replica_moves() -> None:
    assert replica_moves([(0.0, 2, 3), (5.0, 3, 3), (10.0, 3, 2)]) == [(0.0, 1), (10.0, -1)]


def test_size_moves_per_resource_from_where_it_starts() -> None:
    """The first size is the start, not a move; a resource a size leaves out keeps its amount."""
    sizes = [
        (0.0, {"cpu": 250, "memory": 100}),
        (MINUTE, {"cpu": 500, "memory": 100}),
        (2 * MINUTE, {"cpu": 400}),
        (3 * MINUTE, {"cpu": 400, "memory": 50}),
    ]
    assert size_moves(sizes) == {
        "cpu": [(MINUTE, 1), (2 * MINUTE, -1)],
        "memory": [(3 * MINUTE, -1)],
    }


def test_pod_sizes_step_when_a_pod_shows_a_size_other_than_the_last_reached() -> None:
    """A new pod, or a pod resized in place, at a size other than the last one reached is a
    step; pods at the size already reached, and pods going away, are none."""
    small, large = {"cpu": 250}, {"cpu": 500}
    sizes = PodSizes()
    sizes.observe(0.0, {"a": small, "b": small})
    sizes.observe(5.0, {"a": large, "b": small})  # a resized in place
    sizes.observe(10.0, {"a": large, "b": large})  # b too: the size was reached already
    sizes.observe(15.0, {"a": large, "b": large, "c": large})  # a new pod at that size
    sizes.observe(20.0, {"b": large, "c": large})  # a gone
    sizes.observe(25.0, {"b": large, "c": large, "a": small})  # a new pod named as the gone one
    assert sizes.sizes == [(0.0, small), (5.0, large), (25.0, small)]
