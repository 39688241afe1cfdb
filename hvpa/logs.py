"""Structured logging: readable text by default, one JSON object per line with `--log-format json`.

Library code logs through `logging.getLogger(__name__)` and passes fields as
`extra={"fields": {...}}` (or keyword arguments to `log_fields`), never by
formatting them into the message, so the JSON form keeps them as keys.
"""

from __future__ import annotations

import logging
import sys
from datetime import UTC, datetime
from typing import Any, Final, TextIO

import orjson

__all__ = ["configure", "fields"]

_STANDARD: Final = frozenset(vars(logging.makeLogRecord({})).keys()) | {"message", "asctime"}


def fields(**values: Any) -> dict[str, Any]:
    """`logger.info("scaled", extra=fields(hvpa=key, replicas=3))`."""
    return {"fields": values}


def _record_fields(record: logging.LogRecord) -> dict[str, Any]:
    values: dict[str, Any] = dict(getattr(record, "fields", None) or {})
    for key, value in vars(record).items():
        if key not in _STANDARD and key != "fields":
            values[key] = value
    return values


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        entry.update(_record_fields(record))
        if record.exc_info:
            entry["error"] = self.formatException(record.exc_info)
        return orjson.dumps(entry, default=str).decode()


class TextFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        when = datetime.fromtimestamp(record.created, UTC).strftime("%H:%M:%S.%f")[:-3]
        extra = " ".join(f"{key}={value}" for key, value in _record_fields(record).items())
        line = f"{when} {record.levelname:<7} {record.name}: {record.getMessage()}"
        if extra:
            line = f"{line}  {extra}"
        if record.exc_info:
            line = f"{line}\n{self.formatException(record.exc_info)}"
        return line


def configure(level: str = "info", fmt: str = "text", stream: TextIO | None = None) -> None:
    """Install one handler on the root logger; safe to call again (tests, `hvpa sim`)."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    root = logging.getLogger()
    for existing in list(root.handlers):
        root.removeHandler(existing)
    root.addHandler(handler)
    root.setLevel(level.upper())
    for noisy in ("aiohttp.access", "asyncio"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, root.level))
