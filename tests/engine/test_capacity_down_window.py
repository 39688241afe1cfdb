"""Capacity's scale-down window: its own setting, else the HPA template's behavior, else 300 s.

An Hvpa that gives its HPA template `behavior.scaleDown.stabilizationWindowSeconds`
(Gardener's kube-apiserver: 1800) and leaves `spec.capacity.scaleDownStabilizationSeconds`
unset has said once how long the count waits before it falls; Capacity reads that
(capacity_inputs.scale_down_window), and the explanation names the setting that applied.
"""

from __future__ import annotations

from typing import Any

import pytest
from capacity_kit import Workload, capacity_hvpa, shape
from decide_kit import at

from hvpa.api import parse_hvpa
from hvpa.engine.capacity_inputs import scale_down_window

HPA_WINDOW = "the HPA template's behavior.scaleDown.stabilizationWindowSeconds"
OWN_WINDOW = "spec.capacity.scaleDownStabilizationSeconds"


def with_hpa_window(hvpa: dict[str, Any], seconds: int) -> dict[str, Any]:
    template = hvpa["spec"]["hpa"]["template"]["spec"]
    template["behavior"] = {"scaleDown": {"stabilizationWindowSeconds": seconds}}
    return hvpa


@pytest.mark.parametrize(
    ("own", "hpa", "expected"),
    [
        (None, None, (300, "the default")),
        (None, 1800, (1800, HPA_WINDOW)),
        (None, 0, (0, HPA_WINDOW)),
        (600, 1800, (600, OWN_WINDOW)),
        (0, 1800, (0, OWN_WINDOW)),
    ],
    ids=["neither", "the-hpa-s", "the-hpa-s-zero", "capacity-s-own", "capacity-s-own-zero"],
)
def test_which_window_applies(own: int | None, hpa: int | None, expected: tuple[int, str]) -> None:
    hvpa = capacity_hvpa(down_seconds=own)
    if hpa is not None:
        hvpa = with_hpa_window(hvpa, hpa)
    assert scale_down_window(parse_hvpa(hvpa).spec) == expected


# As test_capacity_decide's down-window cases: 2 pods of 500m and 632.5M using 100m each, and
# a demand of 4 CPU / 1150M recorded 400 s ago. Held, the pods keep today's size at the count
# for 4 CPU (8 x 500m); forgotten, the curve's answer for today's load (2 x 400m, memory
# 1150M x 1.1 for the band).
FALLEN = Workload(memory=632_500_000_000, cpu_usage=100)
EARLIER = {"history": {"demands": [{"time": at(400), "cpu": "4", "memory": "1150M"}]}}


def test_the_hpa_s_window_holds_a_scale_down_when_capacity_sets_none() -> None:
    decision = FALLEN.decide(with_hpa_window(capacity_hvpa(status=EARLIER), 1800))
    assert shape(decision) == (8, 500, 632)
    assert any(
        f"the largest of the last 1800s ({HPA_WINDOW}) holds a scale-down" in line
        for line in decision.explanation
    )


def test_capacity_s_own_window_wins_over_the_hpa_s() -> None:
    hvpa = with_hpa_window(capacity_hvpa(status=EARLIER, down_seconds=300), 1800)
    assert shape(FALLEN.decide(hvpa)) == (2, 400, 1265)


def test_neither_set_is_the_default_300_seconds() -> None:
    assert shape(FALLEN.decide(capacity_hvpa(status=EARLIER))) == (2, 400, 1265)
