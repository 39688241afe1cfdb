"""A reflector's sink for tests that run a Reflector alone (no informer): the objects as the
reflector last said they are, and how many lists (or watch-list initial states) replaced them.

Shared by the kube tests and the e2e suite (both import it from the tests' root)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class RecordingSink:
    """hvpa.kube.reflector.ReflectorSink, keeping every record by key."""

    def __init__(self) -> None:
        self.objects: dict[str, Any] = {}
        self.replaced = 0

    def replace(self, items: Mapping[str, Any]) -> None:
        self.objects = dict(items)
        self.replaced += 1

    def upsert(self, key: str, record: Any) -> None:
        self.objects[key] = record

    def delete(self, key: str) -> None:
        self.objects.pop(key, None)

    def get(self, key: str) -> Any:
        return self.objects.get(key)

    def renew(self, key: str, record: Any) -> None:
        self.objects[key] = record
