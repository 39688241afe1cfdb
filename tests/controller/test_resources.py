"""The Hvpa record: a valid Hvpa parsed with what the indexes need; an invalid one kept with
every problem and its status as written (never skipped: it must get its condition)."""

from __future__ import annotations

from typing import Any

import pytest
from controller_records import hvpa

from hvpa.api.parts import SpecPart
from hvpa.controller import resources


def test_valid_record() -> None:
    record = hvpa(clusterProportional={"configMapRef": {"name": "params"}})
    assert record.hvpa is not None and record.problems == ()
    assert record.key == "default/web"
    assert record.target == ("default", "Deployment", "web")
    assert record.config_map == ("default", "params")
    assert record.cluster_proportional
    assert record.hvpa.metadata["creationTimestamp"] == "2025-01-01T00:00:00Z"


def test_config_map_defaults_to_the_hvpa_namespace() -> None:
    assert hvpa(clusterProportional={"configMapRef": {"name": "p"}}).config_map == ("default", "p")
    assert hvpa().config_map is None


def test_invalid_record_keeps_its_problems() -> None:
    record = hvpa(hpa={"deploy": True, "template": {"spec": {"minReplicas": 9, "maxReplicas": 1}}})
    assert record.hvpa is None
    assert record.target is None and record.config_map is None
    assert any("maxReplicas" in problem for problem in record.problems)


def test_a_spec_is_parsed_once_while_its_content_is_unchanged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Status writes, relists and label edits bring the same spec again: one parse for all of
    them while a record holds the part; a changed spec is parsed anew."""
    calls: list[object] = []
    real = resources.parse_spec_part

    def counting(api_version: str, kind: str, spec: Any) -> SpecPart:
        calls.append(spec)
        return real(api_version, kind, spec)

    monkeypatch.setattr(resources, "parse_spec_part", counting)
    # A spec no other test in this process has parsed, so the first record parses it.
    first = hvpa(name="once", hpa={"deploy": False, "template": {"spec": {"maxReplicas": 7}}})
    again = [
        hvpa(name="once", hpa={"deploy": False, "template": {"spec": {"maxReplicas": 7}}})
        for _ in range(3)
    ]
    assert len(calls) == 1
    assert all(record.spec_part is first.spec_part for record in again)
    changed = hvpa(name="once", hpa={"deploy": False, "template": {"spec": {"maxReplicas": 8}}})
    assert len(calls) == 2
    assert changed.hvpa is not None and first.hvpa is not None
    assert changed.hvpa.spec != first.hvpa.spec


def test_the_vpa_selector_is_parsed_once_per_spec_and_follows_an_edit() -> None:
    """Every reconcile asks for the VPA's selector; one parse per spec content, and an edited
    selector (a new spec) gives the new selector, an unreadable one None."""
    first = hvpa(name="sel", vpa={"selector": {"matchLabels": {"app": "web"}}})
    again = hvpa(name="sel", vpa={"selector": {"matchLabels": {"app": "web"}}})
    assert first.hvpa is not None and again.hvpa is not None
    parsed = resources.vpa_selector(first.hvpa)
    assert parsed is not None and parsed.matches({"app": "web"})
    assert resources.vpa_selector(again.hvpa) is parsed
    edited = hvpa(name="sel", vpa={"selector": {"matchLabels": {"app": "api"}}})
    assert edited.hvpa is not None
    moved = resources.vpa_selector(edited.hvpa)
    assert moved is not None and moved.matches({"app": "api"})
    assert not moved.matches({"app": "web"})
    unset = hvpa(name="sel").hvpa
    assert unset is not None and resources.vpa_selector(unset) is None
