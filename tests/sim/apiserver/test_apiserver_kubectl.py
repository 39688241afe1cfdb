"""Debian's kubectl against the server: apply (client-side, strategic merge), get, scale.

kubectl builds its REST mapping from discovery, so this also checks the
discovery documents are complete enough for a real client.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from pathlib import Path

import orjson
import pytest

from hvpa.sim.apiserver import ApiServer

KUBECTL = shutil.which("kubectl")
pytestmark = pytest.mark.skipif(
    KUBECTL is None, reason="kubectl is not installed (Debian package kubernetes-client)"
)

MANIFEST = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:1.25
        resources:
          requests: {cpu: 100m, memory: 64Mi}
      - name: sidecar
        image: busybox:1.36
"""

HVPA = """\
apiVersion: autoscaling.k8s.io/v1alpha1
kind: Hvpa
metadata:
  name: web
spec:
  replicas: 1
  targetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
"""


async def kubectl(server: ApiServer, home: Path, *args: str) -> str:
    command = [
        str(KUBECTL),
        "--kubeconfig",
        str(server.kubeconfig_path),
        "--cache-dir",
        str(home / "cache"),
        *args,
    ]
    result = await asyncio.to_thread(
        subprocess.run, command, capture_output=True, text=True, env={"HOME": str(home)}, timeout=30
    )
    assert result.returncode == 0, f"kubectl {' '.join(args)}: {result.stderr}"
    return result.stdout


async def apply(server: ApiServer, home: Path, text: str) -> str:
    """`kubectl apply` of `text`, written to the one manifest file each test applies."""
    manifest = home / "manifest.yaml"
    manifest.write_text(text)
    return await kubectl(server, home, "apply", "--validate=false", "-f", str(manifest))


async def test_apply_get_scale(server: ApiServer, tmp_path: Path) -> None:
    assert "created" in await apply(server, tmp_path, MANIFEST)
    assert "configured" in await apply(server, tmp_path, MANIFEST.replace("cpu: 100m", "cpu: 200m"))
    assert any(r.method == "PATCH" and r.resource == "deployments" for r in server.requests)
    applied = orjson.loads(
        await kubectl(server, tmp_path, "get", "deployment", "web", "-o", "json")
    )
    containers = applied["spec"]["template"]["spec"]["containers"]
    assert [c["name"] for c in containers] == ["web", "sidecar"]
    assert containers[0]["resources"]["requests"] == {"cpu": "200m", "memory": "64Mi"}
    assert applied["metadata"]["generation"] == 2
    assert "web" in await kubectl(server, tmp_path, "get", "deploy")
    assert "scaled" in await kubectl(server, tmp_path, "scale", "deployment/web", "--replicas=5")
    assert server.objects.get("deployments", "web")["spec"]["replicas"] == 5
    assert any(r.subresource == "scale" for r in server.requests)


async def test_apply_a_custom_resource_uses_merge_patch(server: ApiServer, tmp_path: Path) -> None:
    assert "created" in await apply(server, tmp_path, HVPA)
    assert "configured" in await apply(server, tmp_path, HVPA.replace("replicas: 1", "replicas: 2"))
    assert server.objects.get("hvpas", "web")["spec"]["replicas"] == 2
    assert "web" in await kubectl(server, tmp_path, "get", "hvpas")
