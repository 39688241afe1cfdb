"""A minimal stand-in for the kubelet and the Deployment controller, for the integration tests.

It keeps each Deployment's pods in line with its replicas and template (a
template change replaces every pod, as a Recreate rollout would), marks them
Running and Ready (as if started a minute ago, so the HPA's initialization
rules count them), writes the Deployment's status as the Deployment
controller would, and sets each pod's PodMetrics from a per-Deployment load:
the total CPU shared evenly among the pods, and a fixed memory per pod.

It works through the API server's in-process object API, so every change
goes through the server's rules, history and watches exactly as a real
controller's would. It is not the simulator's cluster model: just enough for
the controller to see a workload react.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from hvpa.aio import Tasks
from hvpa.records import format_time
from hvpa.sim.apiserver import ApiServer, NotFound

HASH_LABEL = "pod-template-hash"


@dataclass
class Load:
    cpu_millicores: int = 0  # total over the Deployment's pods
    memory_bytes_per_pod: int = 100 * 1024 * 1024


@dataclass
class MiniCluster:
    server: ApiServer
    clock: Callable[[], float]
    tasks: Tasks
    period_seconds: float = 1.0
    loads: dict[str, Load] = field(default_factory=dict)
    namespace: str = "default"
    running: bool = False

    # -- setup -------------------------------------------------------------------

    def deployment(
        self,
        name: str,
        *,
        replicas: int,
        requests: dict[str, str],
        limits: dict[str, str] | None = None,
        load: Load | None = None,
    ) -> dict[str, Any]:
        labels = {"app": name}
        resources: dict[str, Any] = {"requests": requests}
        if limits:
            resources["limits"] = limits
        body = {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": name, "namespace": self.namespace},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": labels},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {
                        "containers": [{"name": "app", "image": "app:1", "resources": resources}]
                    },
                },
            },
        }
        self.loads[name] = load or Load()
        created = self.server.objects.create("deployments.apps", body, namespace=self.namespace)
        self.step()
        if not self.running:
            # Started from the test, not the fixture: looptime's virtual clock runs only there.
            self.running = True
            self.tasks.start(self.run(), name="mini-cluster")
        return created

    # -- the loop ------------------------------------------------------------------

    async def run(self) -> None:
        while True:
            self.step()
            await asyncio.sleep(self.period_seconds)

    def step(self) -> None:
        for deployment in self.server.objects.list("deployments.apps", namespace=self.namespace):
            self._sync(deployment)

    def _sync(self, deployment: dict[str, Any]) -> None:
        objects = self.server.objects
        name = deployment["metadata"]["name"]
        spec = deployment["spec"]
        wanted = int(spec.get("replicas", 1))
        template = spec["template"]
        template_hash = hashlib.sha256(
            orjson.dumps(template, option=orjson.OPT_SORT_KEYS)
        ).hexdigest()[:8]
        selector = ",".join(f"{k}={v}" for k, v in spec["selector"]["matchLabels"].items())
        pods = objects.list("pods", namespace=self.namespace, label_selector=selector)
        current = [p for p in pods if p["metadata"]["labels"].get(HASH_LABEL) == template_hash]
        for pod in pods:
            if pod not in current:
                self._delete_pod(pod)
        current.sort(key=lambda p: p["metadata"]["name"])
        for pod in current[wanted:]:
            self._delete_pod(pod)
        names = {p["metadata"]["name"] for p in current[:wanted]}
        index = 0
        while len(names) < wanted:
            pod_name = f"{name}-{template_hash}-{index}"
            index += 1
            if pod_name not in names:
                self._create_pod(pod_name, template, template_hash)
                names.add(pod_name)
        self._metrics(name, sorted(names))
        status = {
            "observedGeneration": deployment["metadata"]["generation"],
            "replicas": wanted,
            "updatedReplicas": wanted,
            "readyReplicas": wanted,
            "availableReplicas": wanted,
        }
        if deployment.get("status") != status:
            objects.patch(
                "deployments.apps",
                name,
                {"status": status},
                namespace=self.namespace,
                subresource="status",
            )

    def _create_pod(self, name: str, template: dict[str, Any], template_hash: str) -> None:
        started = format_time(self.clock() - 60)
        labels = {**template["metadata"]["labels"], HASH_LABEL: template_hash}
        body = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": self.namespace, "labels": labels},
            "spec": template["spec"],
            "status": {
                "phase": "Running",
                "startTime": started,
                "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": started}],
            },
        }
        self.server.objects.create("pods", body, namespace=self.namespace, keep_status=True)

    def _delete_pod(self, pod: dict[str, Any]) -> None:
        name = pod["metadata"]["name"]
        try:
            self.server.objects.delete(
                "pods", name, namespace=self.namespace, grace_period_seconds=0
            )
        except NotFound:
            return
        self.server.metrics.remove_pod_metrics(self.namespace, name)

    def _metrics(self, deployment: str, pods: list[str]) -> None:
        load = self.loads.setdefault(deployment, Load())
        if not pods:
            return
        share = load.cpu_millicores // len(pods)
        for pod in pods:
            self.server.metrics.set_pod_metrics(
                self.namespace,
                pod,
                {"app": {"cpu": f"{share}m", "memory": str(load.memory_bytes_per_pod)}},
            )

    # -- reading -------------------------------------------------------------------

    def replicas(self, name: str) -> int:
        obj = self.server.objects.get("deployments.apps", name, namespace=self.namespace)
        return int(obj["spec"]["replicas"])

    def requests(self, name: str) -> dict[str, str]:
        obj = self.server.objects.get("deployments.apps", name, namespace=self.namespace)
        requests: dict[str, str] = obj["spec"]["template"]["spec"]["containers"][0]["resources"][
            "requests"
        ]
        return requests
