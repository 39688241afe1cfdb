"""/debug/state within its byte limits: an Hvpa entry over its limit becomes a summary that
says so, entries past the whole answer's limit are left out and counted, and the answer
never passes the limit."""

from __future__ import annotations

from typing import Any

import orjson

from hvpa.server.debug_state import encode_state


def state(entries: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {
        "identity": "hvpa-a",
        "queue": {"depth": 0},
        "hvpas": {
            "count": len(entries),
            "shown": len(entries),
            "truncated": False,
            "items": entries,
        },
    }


def entry(size: int) -> dict[str, Any]:
    return {"lastReconcile": "2026-01-01T00:00:00Z", "result": "success", "error": "x" * size}


def test_small_state_is_served_whole() -> None:
    whole = state({"a/one": entry(10), "a/two": entry(10)})
    assert orjson.loads(encode_state(whole, max_entry_bytes=1000, max_bytes=10_000)) == whole


def test_a_large_entry_becomes_a_summary() -> None:
    served = orjson.loads(
        encode_state(state({"a/big": entry(5000)}), max_entry_bytes=1000, max_bytes=100_000)
    )
    summary = served["hvpas"]["items"]["a/big"]
    assert summary["result"] == "success"
    assert "error" not in summary
    # 5000 bytes of error, plus 70 of the other fields and JSON punctuation.
    assert summary["truncated"] == (
        "this entry is 5070 bytes, over the limit of 1000; `hvpa explain a/big` shows its decision"
    )


def test_entries_past_the_answers_limit_are_left_out_and_counted() -> None:
    entries = {f"a/{index:02}": entry(900) for index in range(20)}
    encoded = encode_state(state(entries), max_entry_bytes=1000, max_bytes=5000)
    assert len(encoded) <= 5000
    hvpas = orjson.loads(encoded)["hvpas"]
    shown = hvpas["shown"]
    assert 0 < shown < 20 and list(hvpas["items"]) == sorted(entries)[:shown]
    assert hvpas["truncated"] is True
    assert hvpas["count"] == 20
    assert hvpas["sizeTruncated"] == (
        f"{20 - shown} more Hvpas not shown: the answer is limited to 5000 bytes"
    )


def test_a_state_over_the_limit_without_hvpas_says_only_that() -> None:
    huge = state({}) | {"informers": ["i" * 10_000]}
    assert orjson.loads(encode_state(huge, max_entry_bytes=1000, max_bytes=5000)) == {
        "identity": "hvpa-a",
        "truncated": "the state is over the limit of 5000 bytes even without its Hvpas",
    }
