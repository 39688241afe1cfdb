"""Hypothesis strategies that turn valid documents into hostile ones, and the fuzz budget.

A mutation picks a node of a document (a map, a list or a leaf, the root
included) and replaces it with a hostile value, deletes it, adds a sibling,
or changes its type; one to four mutations per example, so most examples
stay close to a valid document and reach past the first check. Hostile
values are the ones that broke hvpa before (quantities of 1e51 and up,
exponents past int32, integers past int64, times out of range, non-mapping
metadata) plus arbitrary text, numbers and nested containers.

Budget: the default runs the whole of tests/fuzz (about 4,300 examples) in
about 25 s of CPU, so in CI on two cores; HVPA_FUZZ=large runs ten times as
many, for a longer hunt before a release:

    HVPA_FUZZ=large .venv/bin/python -m pytest -q -n 2 tests/fuzz
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable
from typing import Any, Final

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

__all__ = [
    "EXAMPLES",
    "LARGE",
    "fuzz_settings",
    "hostile_values",
    "mutated",
]

LARGE: Final = os.environ.get("HVPA_FUZZ") == "large"
# Examples per fuzz test (the cheaper tests take a multiple): sized so that tests/fuzz runs in
# well under a minute on two cores; measured, one recommend or validate example costs ~20 ms,
# one watch line ~5 ms, most of it generating the example.
EXAMPLES: Final = 5000 if LARGE else 500


def fuzz_settings(examples: int = EXAMPLES) -> Callable[[Any], Any]:
    """No deadline (a slow example is no failure); the filesystem and big inputs are fine.

    The large profile also lifts pytest-timeout's limit: a timeout that fires inside
    hypothesis's engine leaves it reporting flaky failures instead of the real ones."""
    chosen = settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.large_base_example,
            HealthCheck.function_scoped_fixture,
        ],
    )

    def apply(test: Any) -> Any:
        test = chosen(test)
        return pytest.mark.timeout(0)(test) if LARGE else test

    return apply


# Values that broke hvpa, or sit on a boundary it must hold.
HOSTILE_STRINGS: Final = (
    "1e51",
    "1e400",
    "9" * 400,
    "-1e51",
    "1e2147483648",
    "1e-2147483649",
    "9Ei",
    "18446744073709551616",
    "9223372036854775808",
    "-1",
    "0",
    "-0.5",
    "1e-400",
    "0.000000000000000000001",
    "",
    " ",
    "NaN",
    "inf",
    "1Ki1",
    "100mm",
    "9" * 5000 + "h",
    "0001-01-01T00:00:00Z",
    "9999-12-31T23:59:59+14:00",
    "2026-02-30T25:61:61Z",
    "2026-01-01T00:00:00",
    "a in (b",
    "!!",
    "x" * 3000,
    "\u0000",
    "\U0001f642",
)
HOSTILE_NUMBERS: Final = (
    0,
    -1,
    1,
    2**31 - 1,
    2**31,
    -(2**31) - 1,
    2**63 - 1,
    2**63,
    -(2**63) - 1,
    2**64,
    10**30,
    10**400,
    0.5,
    -0.0,
    1e308,
    1e-308,
)
# Keys that a mutation adds beside others: ones hvpa reads, so the added value is looked at.
KEYS: Final = (
    "metadata",
    "name",
    "namespace",
    "labels",
    "spec",
    "status",
    "containers",
    "resources",
    "requests",
    "limits",
    "cpu",
    "memory",
    "replicas",
    "selector",
    "matchLabels",
    "matchExpressions",
    "window",
    "timestamp",
    "value",
    "usage",
    "target",
    "conditions",
    "kind",
    "apiVersion",
)


_KEYS: Final = st.sampled_from(KEYS) | st.text(max_size=6)
_LEAVES: Final = st.one_of(
    st.sampled_from(HOSTILE_STRINGS),
    st.sampled_from(HOSTILE_NUMBERS),
    st.text(max_size=12),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.none(),
)
# Built once: a strategy made per draw costs more than the example it draws.
_HOSTILE: Final = st.recursive(
    _LEAVES,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=3),
    max_leaves=6,
)
_ACTIONS: Final = st.sampled_from(("replace", "replace", "delete", "add", "retype"))
_TYPES: Final = st.sampled_from(("list", "map", "text"))


def hostile_values() -> st.SearchStrategy[Any]:
    return _HOSTILE


Path = tuple[str | int, ...]


def _paths(node: Any, prefix: Path = ()) -> list[Path]:
    """Every node's path, the root's `()` first."""
    found = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            found += _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _paths(value, (*prefix, index))
    return found


def _get(document: Any, path: Path) -> Any:
    for step in path:
        document = document[step]
    return document


def _mutate_once(draw: st.DrawFn, document: Any) -> Any:
    path = draw(st.sampled_from(_paths(document)))
    node = _get(document, path)
    action = draw(_ACTIONS)
    if action == "add" and isinstance(node, dict):
        node[draw(_KEYS)] = draw(_HOSTILE)
        return document
    if action == "add" and isinstance(node, list):
        copied: bool = bool(node) and draw(st.booleans())
        extra = copy.deepcopy(node[0]) if copied else draw(_HOSTILE)
        node.append(extra)
        return document
    if action == "retype":
        new: Any = draw(_TYPES)
        replacement = [node] if new == "list" else {"x": node} if new == "map" else str(node)
    elif action == "delete" and path:
        parent = _get(document, path[:-1])
        del parent[path[-1]]
        return document
    else:
        replacement = draw(_HOSTILE)
    if not path:
        return replacement
    _get(document, path[:-1])[path[-1]] = replacement
    return document


@st.composite
def mutated(draw: st.DrawFn, documents: list[Any], most: int = 4) -> Any:
    """One of `documents`, deep-copied, with 1..`most` mutations."""
    document = copy.deepcopy(draw(st.sampled_from(documents)))
    for _ in range(draw(st.integers(min_value=1, max_value=most))):
        document = _mutate_once(draw, document)
    return document
