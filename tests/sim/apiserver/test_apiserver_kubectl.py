"""Debian's kubectl against the server, as against a cluster: apply, create, edit and explain
without --validate=false, get with each kind's columns, scale, wait.

kubectl builds its REST mapping from discovery, reads the OpenAPI v3 documents (explain, and
whether the server validates fields: it then sends fieldValidation=Strict) and prints the
Tables the server sends, so this checks those answers are complete enough for a real client.
In CI a missing kubectl fails these tests (tests/conftest.py's kubectl fixture).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

import orjson
import pytest
import yaml

from hvpa.sim.apiserver import ApiServer

MANIFESTS = Path(__file__).parents[3] / "manifests"

DEPLOYMENT = """\
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


class Kubectl:
    """kubectl with the server's kubeconfig and a private HOME and cache."""

    def __init__(self, binary: str, server: ApiServer, home: Path) -> None:
        self.binary = binary
        self.server = server
        self.home = home

    async def run(
        self, *args: str, ok: bool = True, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        command = [
            self.binary,
            "--kubeconfig",
            str(self.server.kubeconfig_path),
            "--cache-dir",
            str(self.home / "cache"),
            *args,
        ]
        result = await asyncio.to_thread(
            subprocess.run,
            command,
            capture_output=True,
            text=True,
            env={"HOME": str(self.home), "PATH": os.environ.get("PATH", ""), **(env or {})},
            timeout=30,
        )
        if ok:
            assert result.returncode == 0, f"kubectl {' '.join(args)}: {result.stderr}"
        return result

    async def __call__(self, *args: str) -> str:
        return (await self.run(*args)).stdout

    async def apply(self, text: str, *flags: str) -> str:
        """`kubectl apply` of `text` (no --validate=false), from the one manifest file."""
        manifest = self.home / "manifest.yaml"
        manifest.write_text(text)
        return await self("apply", "-f", str(manifest), *flags)


@pytest.fixture
def cli(kubectl: str, server: ApiServer, tmp_path: Path) -> Kubectl:
    return Kubectl(kubectl, server, tmp_path)


def rows(output: str) -> list[list[str]]:
    return [line.split() for line in output.strip().splitlines()]


async def test_apply_get_scale(cli: Kubectl, server: ApiServer) -> None:
    assert "created" in await cli.apply(DEPLOYMENT)
    assert "configured" in await cli.apply(DEPLOYMENT.replace("cpu: 100m", "cpu: 200m"))
    # Strict field validation asked for and strategic merge patches sent, as to a cluster.
    patches = [r for r in server.requests if r.method == "PATCH" and r.resource == "deployments"]
    assert patches
    applied = orjson.loads(await cli("get", "deployment", "web", "-o", "json"))
    containers = applied["spec"]["template"]["spec"]["containers"]
    assert [c["name"] for c in containers] == ["web", "sidecar"]
    assert containers[0]["resources"]["requests"] == {"cpu": "200m", "memory": "64Mi"}
    assert applied["metadata"]["generation"] == 2
    assert rows(await cli("get", "deploy"))[0] == [
        "NAME",
        "READY",
        "UP-TO-DATE",
        "AVAILABLE",
        "AGE",
    ]
    assert "scaled" in await cli("scale", "deployment/web", "--replicas=5")
    assert server.objects.get("deployments", "web")["spec"]["replicas"] == 5
    assert any(r.subresource == "scale" for r in server.requests)


async def test_unknown_fields_are_refused_as_by_a_cluster(cli: Kubectl) -> None:
    typo = DEPLOYMENT.replace("requests: {cpu", "requets: {cpu")
    manifest = cli.home / "typo.yaml"
    manifest.write_text(typo)
    refused = await cli.run("apply", "-f", str(manifest), ok=False)
    assert refused.returncode == 1
    assert (
        'strict decoding error: unknown field "spec.template.spec.containers[0].resources.requets"'
        in (refused.stderr)
    )


async def test_create_and_edit_without_validate_false(cli: Kubectl, server: ApiServer) -> None:
    manifest = cli.home / "hvpa.yaml"
    manifest.write_text(HVPA)
    assert "created" in await cli("create", "-f", str(manifest))
    editor = cli.home / "editor.sh"
    editor.write_text("#!/bin/sh\nsed -i 's/replicas: 1/replicas: 4/' \"$1\"\n")
    editor.chmod(0o755)
    edited = await cli.run("edit", "hvpa", "web", env={"EDITOR": str(editor)})
    assert edited.returncode == 0, edited.stderr
    assert server.objects.get("hvpas", "web")["spec"]["replicas"] == 4
    assert any(
        r.method == "PATCH" and r.resource == "hvpas" and r.name == "web" for r in server.requests
    )


async def test_apply_a_custom_resource_uses_merge_patch(cli: Kubectl, server: ApiServer) -> None:
    assert "created" in await cli.apply(HVPA)
    assert "configured" in await cli.apply(HVPA.replace("replicas: 1", "replicas: 2"))
    assert server.objects.get("hvpas", "web")["spec"]["replicas"] == 2
    header, row = rows(await cli("get", "hvpas"))
    assert header == ["NAME", "TARGET", "STRATEGY", "DESIRED", "CURRENT", "AGE"]
    assert row[0] == "web"


async def test_an_invalid_hvpa_is_refused_with_its_field(cli: Kubectl) -> None:
    manifest = cli.home / "bad.yaml"
    manifest.write_text(HVPA.replace("replicas: 1", "replicas: 1\n  strategy: Sideways"))
    refused = await cli.run("apply", "-f", str(manifest), ok=False)
    assert refused.returncode == 1
    assert "spec.strategy: Unsupported value: " in refused.stderr


async def test_explain_shows_the_crds_descriptions(cli: Kubectl) -> None:
    explained = await cli("explain", "hvpa.spec")
    crd = yaml.safe_load((MANIFESTS / "crd.yaml").read_text())
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    spec_description = schema["properties"]["spec"]["description"]
    assert "KIND:       Hvpa" in explained
    assert " ".join(spec_description.split()[:6]) in " ".join(explained.split())
    assert "targetRef" in explained
    built_in = await cli("explain", "deployment.spec.template.spec.containers.resources")
    assert "requests" in built_in and "limits" in built_in


async def test_the_crd_applies_and_is_established(cli: Kubectl) -> None:
    """manifests/crd.yaml over the one installed: configured, and Established at once."""
    assert "configured" in await cli("apply", "-f", str(MANIFESTS / "crd.yaml"))
    waited = await cli(
        "wait", "--for=condition=established", "--timeout=5s", "crd/hvpas.autoscaling.k8s.io"
    )
    assert "condition met" in waited
    header = rows(await cli("get", "crd"))[0]
    assert header == ["NAME", "SCOPE", "VERSIONS", "CREATED", "AT"]


async def test_get_prints_each_kinds_columns(cli: Kubectl, server: ApiServer) -> None:
    server.objects.create(
        "pods",
        {
            "metadata": {"name": "p", "labels": {"app": "web"}},
            "spec": {"containers": [{"name": "a", "image": "i"}]},
        },
    )
    server.objects.create(
        "leases",
        {"metadata": {"name": "hvpa"}, "spec": {"holderIdentity": "me"}},
        namespace="kube-system",
    )
    pods = rows(await cli("get", "pods"))
    assert pods == [
        ["NAME", "READY", "STATUS", "RESTARTS", "AGE"],
        ["p", "0/1", "Pending", "0", pods[1][4]],
    ]
    wide = rows(await cli("get", "pods", "-o", "wide"))
    assert wide[0][:7] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE"]
    leases = rows(await cli("get", "lease", "-A"))
    assert leases[0] == ["NAMESPACE", "NAME", "HOLDER", "AGE"]
    assert leases[1][:3] == ["kube-system", "hvpa", "me"]
    server.objects.create(
        "verticalpodautoscalers",
        {"metadata": {"name": "v"}, "spec": {"targetRef": {"kind": "Deployment", "name": "web"}}},
    )
    assert rows(await cli("get", "vpa"))[0] == ["NAME", "MODE", "CPU", "MEM", "PROVIDED", "AGE"]


async def test_create_generators_send_protobuf_and_are_read(
    cli: Kubectl, server: ApiServer
) -> None:
    """kubectl's typed clients write built-in kinds as protobuf (protobuf.py reads them)."""
    assert "created" in await cli("create", "namespace", "team")
    assert "created" in await cli("create", "configmap", "cfg", "--from-literal=a=1")
    assert "created" in await cli(
        "create", "deployment", "api", "--image=nginx:1.25", "--replicas=0", "--port=80"
    )
    assert server.objects.get("namespaces", "team")["status"]["phase"] == "Active"
    assert server.objects.get("configmaps", "cfg")["data"] == {"a": "1"}
    created = server.objects.get("deployments", "api")
    assert created["spec"]["replicas"] == 0  # a pointer's zero is kept
    (container,) = created["spec"]["template"]["spec"]["containers"]
    assert (container["image"], container["ports"][0]["containerPort"]) == ("nginx:1.25", 80)
