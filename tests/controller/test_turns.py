"""The budget of reconciles a turn of the event loop begins (hvpa.controller.turns)."""

from __future__ import annotations

import asyncio

import pytest

from hvpa.controller.turns import TurnBudget


async def _turns_of(budget: TurnBudget, callers: int, shares: list[int] | None = None) -> list[int]:
    """Each caller's turn of the loop (0: the turn they all called in) when `begin` let
    it go on, counted by a callback that goes around the loop once a turn; caller i asks
    for `shares[i]` (one each by default)."""
    turn = 0
    ticking = True

    def tick() -> None:
        nonlocal turn
        turn += 1
        if ticking:
            asyncio.get_running_loop().call_soon(tick)

    async def caller(share: int) -> int:
        await budget.begin(share)
        return turn

    asyncio.get_running_loop().call_soon(tick)
    began = await asyncio.gather(*(caller(share) for share in shares or [1] * callers))
    ticking = False
    return began


async def test_a_turn_begins_at_most_its_budget_in_the_order_they_came() -> None:
    began = await _turns_of(TurnBudget(per_turn=3), callers=10)
    assert began == sorted(began)  # first come, first served
    counts = [began.count(turn) for turn in sorted(set(began))]
    assert counts == [3, 3, 3, 1]
    assert len(set(began)) == 4  # a turn of its own for each three


async def test_work_worth_several_reconciles_takes_as_many_of_a_turns_budget() -> None:
    began = await _turns_of(TurnBudget(per_turn=3), callers=5, shares=[1, 2, 1, 2, 1])
    assert [began.count(turn) for turn in sorted(set(began))] == [2, 2, 1]
    assert began == sorted(began)


async def test_a_share_that_does_not_fit_is_not_passed_by_a_smaller_one() -> None:
    # The second 2 does not fit beside the first; the 1 after it would, and waits its turn.
    began = await _turns_of(TurnBudget(per_turn=3), callers=3, shares=[2, 2, 1])
    assert began[0] < began[1] == began[2]


async def test_work_worth_a_whole_turn_or_more_begins_in_a_turn_of_its_own() -> None:
    began = await _turns_of(TurnBudget(per_turn=3), callers=4, shares=[1, 5, 3, 1])
    assert len(set(began)) == 4
    assert began == sorted(began)


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
