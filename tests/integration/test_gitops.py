"""The controller beside a GitOps tool that re-applies the original manifest on a schedule.

A second writer, "flux", server-side applies (forced, as Flux's kustomize-controller does)
the Deployment's manifest from "git" every 3 virtual minutes over HTTP, putting
`spec.replicas` back to 2 while the load wants more. hvpa's /scale writes carry its field
manager, so managedFields name hvpa; after the second rewrite within the window hvpa holds
the replica count with AbleToScale=False, ConflictingFieldManager, naming flux and the
field, and raises a Warning Event. Over two hours of the fight hvpa writes /scale three
times (two before the hold, one probe when the first one-hour hold ends, which flux
rewrites again and which starts a two-hour hold), where without the guard it would write
after every one of the 40 re-applies. The resume annotation lets it write at once.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import aiohttp
from integration_cluster import Load, MiniCluster
from integration_helpers import VIRTUAL_TIME, events, eventually, hvpa_manifest, writes

from hvpa.records import format_time
from hvpa.sim.apiserver import ApiServer

pytestmark = VIRTUAL_TIME

REAPPLY_SECONDS = 180.0  # Argo CD's default refresh; a common Flux interval is of that order


def manifest() -> dict[str, Any]:
    """What "git" holds: the Deployment as the MiniCluster creates it, replicas 2."""
    labels = {"app": "web"}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [
                        {
                            "name": "app",
                            "image": "app:1",
                            "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
                        }
                    ]
                },
            },
        },
    }


async def reapply_forever(server: ApiServer) -> None:
    url = f"{server.url}/apis/apps/v1/namespaces/default/deployments/web"
    params = {"fieldManager": "flux", "force": "true"}
    headers = {"Content-Type": "application/apply-patch+yaml"}
    async with aiohttp.ClientSession() as session:
        while True:
            async with session.patch(url, json=manifest(), params=params, headers=headers) as reply:
                assert reply.status == 200, await reply.text()
            await asyncio.sleep(REAPPLY_SECONDS)


def scale_writes(server: ApiServer) -> int:
    return len(writes(server, resource="deployments", subresource="scale"))


def condition(server: ApiServer, kind: str) -> dict[str, Any] | None:
    status = server.objects.get("hvpas", "web").get("status") or {}
    return next((c for c in status.get("conditions") or () if c["type"] == kind), None)


def held(server: ApiServer) -> bool:
    found = condition(server, "AbleToScale")
    return found is not None and found["reason"] == "ConflictingFieldManager"


async def test_a_reapplying_writer_gets_a_bounded_number_of_writes_then_a_hold(
    apiserver: ApiServer, cluster: MiniCluster, start_controller: Any, clock: Any
) -> None:
    # 200m over 2 pods of 100m is 100% of the 50% target: hvpa wants 4, and at 4 pods
    # (50m each, 50%) it stays there; flux's 2 brings the want of 4 back each time.
    cluster.deployment(
        "web", replicas=2, requests={"cpu": "100m", "memory": "64Mi"}, load=Load(200)
    )
    writer = asyncio.create_task(reapply_forever(apiserver))
    try:
        apiserver.objects.create("hvpas", hvpa_manifest())
        await start_controller()
        await eventually(lambda: scale_writes(apiserver) == 1, within=60)
        managers = {
            (e["manager"], e.get("subresource", ""))
            for e in apiserver.objects.get("deployments.apps", "web")["metadata"]["managedFields"]
        }
        assert ("hvpa", "scale") in managers

        await eventually(lambda: held(apiserver), within=2 * REAPPLY_SECONDS + 60)
        assert scale_writes(apiserver) == 2
        message = condition(apiserver, "AbleToScale")["message"]  # type: ignore[index]
        assert 'field manager "flux" rewrote .spec.replicas of Deployment default/web' in message
        assert "hvpa had set 4" in message
        warnings = events(apiserver, "ConflictingFieldManager")
        assert [e["type"] for e in warnings] == ["Warning"]

        # Two hours of the fight: 40 re-applies by flux.
        await asyncio.sleep(2 * 3600)
        # Derivation: writes 1 and 2 are rewritten within minutes (count 2: hold 1 h); the
        # probe after that hold is rewritten within 3 min (count 3: hold 2 h), which lasts
        # past the end of the two hours.
        assert scale_writes(apiserver) == 3
        assert held(apiserver)
        status = apiserver.objects.get("hvpas", "web")["status"]
        (rewrite,) = status["history"]["rewrites"]
        assert (rewrite["manager"], rewrite["field"], rewrite["count"]) == (
            "flux",
            ".spec.replicas",
            3,
        )

        # The user settles it and says so: hvpa writes again at once.
        now = format_time(clock())
        apiserver.objects.patch(
            "hvpas",
            "web",
            {"metadata": {"annotations": {"autoscaling.k8s.io/hvpa-resume-writes": now}}},
        )
        writer.cancel()
        await eventually(lambda: scale_writes(apiserver) == 4, within=60)
        await eventually(lambda: not held(apiserver), within=60)
    finally:
        writer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await writer
