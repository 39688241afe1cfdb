"""The Hvpa record: a valid Hvpa parsed with what the indexes need; an invalid one kept with
every problem and its status as written (never skipped: it must get its condition)."""

from __future__ import annotations

from controller_records import hvpa


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
