"""A tenant's Hvpa cannot read another namespace's ConfigMap through the controller, and
nothing the controller says about a ConfigMap it reads - the Hvpa's status, its Events,
the log at info and above, /debug/state - carries the ConfigMap's data: key names and
sizes only (hvpa.controller.configmaps)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Final

import orjson
import pytest
from integration_cluster import MiniCluster
from integration_helpers import VIRTUAL_TIME

from hvpa.sim.apiserver import ApiServer

pytestmark = VIRTUAL_TIME

# Values that must never be echoed; each is unique enough that a hit is the value itself.
API_KEY: Final = "AKIA-7f3c-not-for-tenants"
DB_PASSWORD: Final = "hunter2-correct-horse"
# Parameters that, if read, would make `stray` scale to 7 replicas.
FOREIGN_LINEAR: Final = '{"nodesPerReplica": 100, "min": 7, "comment": "kube-system only"}'
SECRETS: Final = (API_KEY, DB_PASSWORD, FOREIGN_LINEAR, "kube-system only")


def cluster_proportional_hvpa(name: str, target: str, ref: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "autoscaling.k8s.io/v1alpha1",
        "kind": "Hvpa",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target},
            "hpa": {"deploy": True},
            "clusterProportional": {"configMapRef": ref},
        },
    }


def said(apiserver: ApiServer, state: dict[str, Any], logs: list[logging.LogRecord]) -> str:
    """Everything the controller told anyone: statuses, Events, /debug/state, log lines."""
    hvpas = [apiserver.objects.get("hvpas", n, namespace="default") for n in ("leaky", "stray")]
    parts = [orjson.dumps([h.get("status") for h in hvpas]).decode()]
    parts.append(orjson.dumps(apiserver.objects.list("events", namespace="default")).decode())
    parts.append(orjson.dumps(state).decode())
    parts += [f"{r.getMessage()} {getattr(r, 'fields', '')!r}" for r in logs]
    return "\n".join(parts)


async def test_no_data_leaves_and_no_other_namespace_is_read(
    apiserver: ApiServer,
    cluster: MiniCluster,
    start_controller: Any,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    apiserver.objects.create(
        "nodes",
        {
            "metadata": {"name": "node-0"},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]},
        },
        keep_status=True,
    )
    apiserver.objects.create(
        "configmaps",
        {"metadata": {"name": "params"}, "data": {"api-key": API_KEY, "db-password": DB_PASSWORD}},
        namespace="default",
    )
    apiserver.objects.create(
        "configmaps",
        {"metadata": {"name": "params"}, "data": {"linear": FOREIGN_LINEAR}},
        namespace="kube-system",
    )
    cluster.deployment("dns", replicas=1, requests={"cpu": "50m"})
    cluster.deployment("dns2", replicas=1, requests={"cpu": "50m"})
    apiserver.objects.create("hvpas", cluster_proportional_hvpa("leaky", "dns", {"name": "params"}))
    apiserver.objects.create(  # the CRD refuses it too: stored as if written before its rule
        "hvpas",
        cluster_proportional_hvpa("stray", "dns2", {"name": "params", "namespace": "kube-system"}),
        validate=False,
    )
    running = await start_controller()
    await asyncio.sleep(45)

    # The other namespace's ConfigMap was never asked for, and never acted on.
    assert [r.raw_path for r in apiserver.requests if r.namespace == "kube-system"] == []
    assert cluster.replicas("dns2") == 1
    # The tenant's own ConfigMap was read: its condition names the keys and their sizes.
    leaky = apiserver.objects.get("hvpas", "leaky", namespace="default")
    messages = " ".join(c["message"] for c in leaky["status"]["conditions"])
    assert "api-key (25 bytes), db-password (21 bytes)" in messages  # len(API_KEY), len(DB_...)
    text = said(apiserver, running.manager.state(), caplog.records)
    for secret in SECRETS:
        assert secret not in text
