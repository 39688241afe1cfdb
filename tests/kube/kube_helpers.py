"""Helpers for the kube tests (importable: conftest is not)."""

import asyncio
from collections.abc import Callable


async def eventually(predicate: Callable[[], bool], *, within: float, step: float = 0.05) -> float:
    """Poll until `predicate()` holds (in the loop's time); returns how long it took."""
    loop = asyncio.get_running_loop()
    start = loop.time()
    while not predicate():
        if loop.time() - start > within:
            raise AssertionError(f"not true within {within} s")
        await asyncio.sleep(step)
    return loop.time() - start
