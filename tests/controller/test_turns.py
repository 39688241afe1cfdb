"""The budget of reconciles a turn of the event loop begins (hvpa.controller.turns)."""

from __future__ import annotations

import asyncio

import pytest
from loop_turns import LoopTurns

from hvpa.controller.turns import TurnBudget


async def _turns_of(budget: TurnBudget, callers: int) -> list[int]:
    """Each caller's turn of the loop (0: the turn they all called in) when `begin` let
    it go on."""
    turns = LoopTurns()

    async def caller() -> int:
        await budget.begin()
        return turns.now

    began = await asyncio.gather(*(caller() for _ in range(callers)))
    turns.stop()
    return began


async def test_a_turn_begins_at_most_its_budget_in_the_order_they_came() -> None:
    began = await _turns_of(TurnBudget(per_turn=3), callers=10)
    assert began == sorted(began)  # first come, first served
    counts = [began.count(turn) for turn in sorted(set(began))]
    assert counts == [3, 3, 3, 1]
    assert len(set(began)) == 4  # a turn of its own for each three


async def test_a_cancelled_waiters_share_goes_to_the_next() -> None:
    budget = TurnBudget(per_turn=1)
    first, second, third = (asyncio.ensure_future(budget.begin()) for _ in range(3))
    await asyncio.sleep(0)  # the three called in one turn: the first went on
    assert first.done() and not second.done() and not third.done()
    second.cancel()
    await asyncio.sleep(0)  # the next turn grants its one: the third, not the cancelled second
    await asyncio.sleep(0)  # and the third runs in the turn after
    assert second.cancelled() and third.done()


def test_a_budget_begins_at_least_one() -> None:
    with pytest.raises(ValueError, match="at least one"):
        TurnBudget(per_turn=0)
