"""The controller process's collector thresholds (hvpa.controller.collector)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from hvpa.controller.collector import THRESHOLDS, tune_collector


@pytest.fixture
def thresholds_restored() -> Iterator[None]:
    before = gc.get_threshold()
    yield
    gc.set_threshold(*before)


@pytest.mark.usefixtures("thresholds_restored")
def test_a_controller_process_collects_less_often_than_python_by_default() -> None:
    gc.set_threshold(700, 10, 10)
    tune_collector()
    young, middle, oldest = gc.get_threshold()
    assert (young, middle, oldest) == THRESHOLDS
    # Fewer collections of each generation than the defaults, none switched off (0).
    assert young > 700 and middle >= 10 and oldest > 10
