"""Event handlers: each kind of change maps to exactly the Hvpa keys it concerns, and
nothing else (status-only Hvpa updates, node heartbeats and pod updates of fields the
record does not keep map to nothing)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace as dataclass_replace
from typing import Any

import pytest
from controller_records import hpa, hvpa, node, pod, target, vpa
from msgspec.structs import replace as struct_replace

from hvpa.controller.cache import Cache
from hvpa.controller.handlers import Handlers
from hvpa.records import ConfigMapRecord


def replace_rv(record: Any) -> Any:
    """The same Hvpa after a status write: a new resourceVersion, the same generation."""
    return dataclass_replace(record, resource_version="99")


def setup() -> tuple[Cache, Handlers, list[str], list[str]]:
    cache = Cache.of_records(
        hvpas=[
            hvpa("web"),
            hvpa("web-newer", uid="uid-2", created="2025-02-01T00:00:00Z"),
            hvpa("api", target="api", uid="uid-api"),
            hvpa(
                "dns",
                target="dns",
                uid="uid-dns",
                clusterProportional={"configMapRef": {"name": "dns-params"}},
            ),
            hvpa("db", target="db", kind="StatefulSet", uid="uid-db"),
        ],
        targets=[
            target("web"),
            target("api"),
            target("dns"),
            target("db", kind="StatefulSet"),
        ],
    )
    keys: list[str] = []
    changed: list[str] = []
    handlers = Handlers(
        cache=cache, enqueue=keys.append, on_hvpa_change=lambda: changed.append("x")
    )
    return cache, handlers, keys, changed


def fire(handler: Any, event: str, *records: Any) -> None:
    callback: Callable[..., None] = getattr(handler, f"on_{event}")
    callback(*records)


@pytest.mark.parametrize(
    ("make", "event", "records", "expected"),
    [
        pytest.param(
            lambda h: h.pods(),
            "add",
            [pod("web-1", app="web")],
            ["default/web", "default/web-newer"],
            id="pod-add",
        ),
        pytest.param(lambda h: h.pods(), "add", [pod("x", app="other")], [], id="pod-of-nothing"),
        pytest.param(
            lambda h: h.pods(),
            "update",
            [pod("p", app="web"), pod("p", app="api")],
            ["default/api", "default/web", "default/web-newer"],
            id="pod-relabelled-old-and-new",
        ),
        pytest.param(
            lambda h: h.pods(),
            "update",
            [pod("p", app="web"), struct_replace(pod("p", app="web"), resource_version="2")],
            [],
            id="pod-update-of-nothing-the-record-keeps",
        ),
        pytest.param(
            lambda h: h.pods(),
            "update",
            [
                pod("p", app="web"),
                struct_replace(pod("p", app="web"), ready="True", resource_version="2"),
            ],
            ["default/web", "default/web-newer"],
            id="pod-became-ready",
        ),
        pytest.param(
            lambda h: h.pods(), "delete", [pod("p", app="api")], ["default/api"], id="pod-delete"
        ),
        pytest.param(
            lambda h: h.targets(), "add", [target("api")], ["default/api"], id="target-add"
        ),
        pytest.param(
            lambda h: h.targets(),
            "update",
            [target("db", kind="StatefulSet")] * 2,
            ["default/db"],
            id="sts",
        ),
        pytest.param(
            lambda h: h.targets(), "delete", [target("db")], [], id="same-name-other-kind"
        ),
        pytest.param(
            lambda h: h.vpas(),
            "add",
            [vpa(owner=("api", "uid-api"), target="none")],
            ["default/api"],
            id="vpa-owner",
        ),
        pytest.param(
            lambda h: h.vpas(),
            "add",
            [vpa("user-vpa", owner=None, target="api", mode="Auto")],
            ["default/api"],
            id="vpa-conflicting-writer",
        ),
        pytest.param(
            lambda h: h.hpas(), "add", [hpa(target="api")], ["default/api"], id="hpa-writer"
        ),
        pytest.param(lambda h: h.nodes(), "add", [node("n1")], ["default/dns"], id="node-add"),
        pytest.param(
            lambda h: h.nodes(),
            "update",
            [node("n1", rv="1"), node("n1", rv="2")],
            [],
            id="node-heartbeat",
        ),
        pytest.param(
            lambda h: h.nodes(),
            "update",
            [node("n1"), node("n1", unschedulable=True)],
            ["default/dns"],
            id="node-cordoned",
        ),
        pytest.param(
            lambda h: h.config_maps(),
            "update",
            [
                ConfigMapRecord("default", "dns-params", {}),
                ConfigMapRecord("default", "dns-params", {"linear": "{}"}),
            ],
            ["default/dns"],
            id="configmap",
        ),
        pytest.param(
            lambda h: h.config_maps(),
            "add",
            [ConfigMapRecord("default", "other", {})],
            [],
            id="other-configmap",
        ),
        pytest.param(
            lambda h: h.hvpas(),
            "add",
            [hvpa("web")],
            ["default/web", "default/web-newer"],
            id="hvpa-and-siblings",
        ),
        pytest.param(
            lambda h: h.hvpas(),
            "update",
            [
                hvpa("api", target="api", uid="uid-api"),
                replace_rv(hvpa("api", target="api", uid="uid-api")),
            ],
            [],
            id="hvpa-status-only",
        ),
        pytest.param(
            lambda h: h.hvpas(),
            "update",
            [
                hvpa("api", target="api", uid="uid-api"),
                hvpa("api", target="web", uid="uid-api", generation=2),
            ],
            ["default/api", "default/web", "default/web-newer"],
            id="hvpa-retargeted",
        ),
    ],
)
def test_events_map_to_keys(make: Any, event: str, records: list[Any], expected: list[str]) -> None:
    _, handlers, keys, _ = setup()
    fire(make(handlers), event, *records)
    assert sorted(set(keys)) == expected
    assert len(keys) == len(set(keys))  # each key once per event


def test_config_map_watches_follow_config_map_refs() -> None:
    _, handlers, _, changed = setup()
    handler = handlers.hvpas()
    named = hvpa(
        "dns", target="dns", uid="uid-dns", clusterProportional={"configMapRef": {"name": "p"}}
    )
    renamed = hvpa(
        "dns", target="dns", uid="uid-dns", clusterProportional={"configMapRef": {"name": "q"}}
    )
    fire(handler, "add", hvpa("web"))
    fire(handler, "update", hvpa("web"), replace_rv(hvpa("web")))
    assert changed == []
    fire(handler, "add", named)
    fire(handler, "update", named, replace_rv(named))
    assert changed == ["x"]
    fire(handler, "update", named, renamed)
    fire(handler, "delete", renamed)
    assert changed == ["x", "x", "x"]


def test_invalid_hvpa_maps_to_itself_only() -> None:
    _, handlers, keys, _ = setup()
    broken = hvpa(
        "broken", hpa={"deploy": True, "template": {"spec": {"minReplicas": 9, "maxReplicas": 1}}}
    )
    assert broken.hvpa is None and broken.problems
    fire(handlers.hvpas(), "add", broken)
    assert keys == ["default/broken"]
