"""/debug/state as bytes on the wire, bounded: per Hvpa entry and for the whole answer.

The Manager's state already caps how many Hvpas, explanation lines and queue
keys it shows, but not how large one entry is: an Hvpa's problems, error
and explanation repeat what its spec holds, and a spec may be a megabyte
(three such Hvpas made each answer 30 MB). So the answer is encoded here
within two byte limits (`ServerSettings.debug_state_max_entry_bytes` and
`debug_state_max_bytes`):

- an Hvpa entry larger than its limit is replaced by a short one: its last
  reconcile's time and result, its size, and a `truncated` message saying
  so and pointing at `hvpa explain NAMESPACE/NAME`;
- entries are added in key order while the whole answer stays within its
  limit; the rest are left out, `hvpas.shown` counts what is there,
  `hvpas.truncated` is true and `hvpas.sizeTruncated` says why;
- the parts about the controller itself (informers, queue, leader) are
  small and bounded where they are built; should they alone pass the limit,
  the answer is only the identity and a `truncated` message.

The JSON is compact (no indentation): `jq` shows it readably.
"""

from __future__ import annotations

from typing import Any, Final

import orjson

__all__ = ["encode_state"]

# Fields of an entry kept when the entry itself is too large: small by construction.
_SUMMARY_FIELDS: Final = ("lastReconcile", "result", "dryRun")


def _summary(key: str, entry: dict[str, Any], size: int, limit: int) -> dict[str, Any]:
    short: dict[str, Any] = {name: entry[name] for name in _SUMMARY_FIELDS if name in entry}
    short["truncated"] = (
        f"this entry is {size} bytes, over the limit of {limit}; "
        f"`hvpa explain {key}` shows its decision"
    )
    return short


def encode_state(state: dict[str, Any], *, max_entry_bytes: int, max_bytes: int) -> bytes:
    """`state` (the Manager's) as compact JSON of at most about `max_bytes` bytes."""
    hvpas: dict[str, Any] = dict(state.get("hvpas") or {})
    items: dict[str, Any] = hvpas.get("items") or {}
    frame = {**state, "hvpas": {**hvpas, "items": {}, "sizeTruncated": ""}}
    budget = max_bytes - len(orjson.dumps(frame))
    if budget < 0:
        return orjson.dumps(
            {
                "identity": state.get("identity"),
                "truncated": f"the state is over the limit of {max_bytes} bytes even "
                "without its Hvpas",
            }
        )
    kept: dict[str, Any] = {}
    left_out = 0
    for key, entry in items.items():
        encoded = orjson.dumps(entry)
        if len(encoded) > max_entry_bytes:
            entry = _summary(key, entry, len(encoded), max_entry_bytes)
            encoded = orjson.dumps(entry)
        # The key, its quotes, the colon and a comma beside the entry.
        cost = len(encoded) + len(orjson.dumps(key)) + 2
        if cost > budget:
            left_out += 1
            continue
        budget -= cost
        kept[key] = entry
    hvpas["items"] = kept
    hvpas["shown"] = len(kept)
    if left_out:
        hvpas["truncated"] = True
        hvpas["sizeTruncated"] = (
            f"{left_out} more Hvpas not shown: the answer is limited to {max_bytes} bytes"
        )
    return orjson.dumps({**state, "hvpas": hvpas})
