"""One recorded run of the real controller against the in-repo API server, for the RBAC check.

Two controller instances with leader election (the Lease in `hvpa-system`, as
the Deployment in manifests/ runs them) drive a cluster model (the
simulator's nodes, scheduler, workload controllers, kubelet, metrics-server
and VPA recommender) in virtual time through a scenario that reaches every
write the controller makes:

- `web` (Deployment): horizontal only, CPU utilization; the load rises, it
  scales out through `deployments/scale`;
- `api` (Deployment): Pods, Object and External metrics (custom and external
  metrics APIs) and a vertical-only weight; the VPA recommendation resizes
  it (a patch of the Deployment); later `vpa.deploy` is switched off, so its
  VPA is deleted;
- `db` (StatefulSet): vertical only; resized (a patch of the StatefulSet);
  its `vpa.template` changes, so its VPA is patched;
- `cache` (StatefulSet): cluster-proportional from a ConfigMap named by
  `configMapRef`, scaled through `statefulsets/scale`;
- `batch` (a bare ReplicaSet): cluster-proportional from inline parameters,
  scaled through `replicasets/scale`;
- `broken`: an Hvpa hvpa's validation refuses (InvalidSpec, an Event); the
  CRD's rules refuse it too, so it is stored as one written before them
  would be (`validate=False`). Later its status is cleared (as a restore from
  a backup would leave it), so the controller writes the condition again and
  repeats the Event, which its event recorder counts by a patch;
- `legacy`: an HPA for another Deployment, which conflict detection reads;
- `cart` (Deployment): vertical only, resized in place (`resizeMode:
  InPlaceOrRollout`): its pods through `pods/resize`, later a scale-up's pod
  sized at admission by the webhook; every instance serves the webhook and
  reads its certificate's Secret, the leader writes the Secret and the
  MutatingWebhookConfiguration (both created as the manifests create them);
  the controller looks `pods/resize` up in the core API's discovery document;
- Prometheus scrapes the leader's /metrics and reads its /debug/state as the
  manifests serve them: HTTPS, with a bearer token the controller has the API
  server review (TokenReview, SubjectAccessReview);
- the leader stops cleanly (releasing the Lease) and the standby takes over.

The request log (`ApiServer.requests`) holds what an authorizer would have
seen for every request: verb, API group, resource, subresource, namespace.
"""

from __future__ import annotations

import asyncio
import functools
import random
import socket
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, Final

import aiohttp
import orjson
from prometheus_client import CollectorRegistry

from hvpa.controller.manager import Manager
from hvpa.kube.client import KubeClient, client_from_kubeconfig
from hvpa.kube.metrics import KubeMetrics
from hvpa.kube.settings import LeaderElectionSettings
from hvpa.server import Server
from hvpa.settings import ControllerSettings, ServerSettings, WebhookSettings
from hvpa.sim.apiserver import ApiServer, RequestRecord
from hvpa.sim.clock import SimClock, SimEventLoop
from hvpa.sim.cluster import Cluster, ClusterSettings
from hvpa.sim.load import ContainerLoad, WorkloadLoad
from hvpa.sim.traces import Demand, Trace

__all__ = ["CONTROLLER_NAMESPACE", "WORKLOAD_NAMESPACE", "RecordedRun", "record_run"]

CONTROLLER_NAMESPACE: Final = "hvpa-system"
WORKLOAD_NAMESPACE: Final = "shop"
START_EPOCH: Final = 1_767_225_600.0  # 2026-01-01T00:00:00Z
TICK_SECONDS: Final = 5.0
GIB: Final = 2**30
# Prometheus, as the ServiceMonitor scrapes: its service account's token, and the two
# ClusterRoles of manifests/rbac.yaml bound to it.
PROMETHEUS: Final = "system:serviceaccount:monitoring:prometheus-k8s"
PROMETHEUS_TOKEN: Final = "prometheus-token"
# manifests/webhook.yaml's objects (the defaults of hvpa run's --webhook-* flags).
WEBHOOK_SECRET: Final = "hvpa-webhook-tls"
WEBHOOK_CONFIGURATION: Final = "hvpa"


@dataclass(frozen=True)
class RecordedRun:
    requests: tuple[RequestRecord, ...]
    # The leader's /metrics exposition and /debug/state at the end of its term.
    exposition: str
    debug_state: dict[str, Any]
    # Objects at the end of the run, for the test to check the scenario did what it says.
    hvpas: dict[str, dict[str, Any]]
    events: tuple[dict[str, Any], ...]


def _workload(
    kind: str, name: str, replicas: int, cpu: str, memory: str, cpu_limit: str | None = None
) -> dict[str, Any]:
    labels = {"app": name}
    resources: dict[str, Any] = {"requests": {"cpu": cpu, "memory": memory}}
    if cpu_limit is not None:
        resources["limits"] = {"cpu": cpu_limit}
    spec: dict[str, Any] = {
        "replicas": replicas,
        "selector": {"matchLabels": labels},
        "template": {
            "metadata": {"labels": labels},
            "spec": {
                "containers": [
                    {
                        "name": "app",
                        "image": f"registry.example/{name}:1",
                        "resources": resources,
                    }
                ]
            },
        },
    }
    if kind == "StatefulSet":
        spec["serviceName"] = name
    return {
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": {"name": name, "namespace": WORKLOAD_NAMESPACE},
        "spec": spec,
    }


def _hvpa(name: str, kind: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "autoscaling.k8s.io/v1alpha1",
        "kind": "Hvpa",
        "metadata": {"name": name, "namespace": WORKLOAD_NAMESPACE},
        "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": kind, "name": name}, **spec},
    }


def _hpa(name: str, metrics: list[dict[str, Any]], *, deploy: bool = True) -> dict[str, Any]:
    return {
        "deploy": deploy,
        "selector": {"matchLabels": {"role": f"{name}-hpa"}},
        "template": {
            "metadata": {"labels": {"role": f"{name}-hpa"}},
            "spec": {"minReplicas": 1, "maxReplicas": 10, "metrics": metrics},
        },
    }


def _vpa(name: str, *, deploy: bool = True) -> dict[str, Any]:
    return {
        "deploy": deploy,
        "selector": {"matchLabels": {"role": f"{name}-vpa"}},
        "template": {"metadata": {"labels": {"role": f"{name}-vpa"}}},
    }


CPU_UTILIZATION: Final = {
    "type": "Resource",
    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}},
}
# Targets far above what is served: the metrics are read, the replica count stays.
CUSTOM_METRICS: Final = [
    {
        "type": "Pods",
        "pods": {
            "metric": {"name": "requests_per_second"},
            "target": {"type": "AverageValue", "averageValue": "1k"},
        },
    },
    {
        "type": "Object",
        "object": {
            "describedObject": {"apiVersion": "v1", "kind": "Service", "name": "api"},
            "metric": {"name": "requests_per_second"},
            "target": {"type": "Value", "value": "10k"},
        },
    },
    {
        "type": "External",
        "external": {
            "metric": {"name": "queue_length", "selector": {"matchLabels": {"queue": "api"}}},
            "target": {"type": "AverageValue", "averageValue": "1k"},
        },
    },
]
VERTICAL_ONLY: Final = [{"vpaWeight": 100}]
HORIZONTAL_ONLY: Final = [{"vpaWeight": 0}]


def _scenario_objects() -> Iterable[tuple[str, dict[str, Any]]]:
    yield "deployments.apps", _workload("Deployment", "web", 2, "200m", "128Mi")
    yield "deployments.apps", _workload("Deployment", "api", 2, "100m", "64Mi", cpu_limit="1")
    yield "deployments.apps", _workload("Deployment", "legacy", 1, "100m", "64Mi")
    yield "deployments.apps", _workload("Deployment", "cart", 2, "100m", "64Mi", cpu_limit="1")
    yield "statefulsets.apps", _workload("StatefulSet", "db", 2, "100m", "64Mi")
    yield "statefulsets.apps", _workload("StatefulSet", "cache", 1, "50m", "32Mi")
    yield (
        "configmaps",
        {
            "metadata": {"name": "cache-params", "namespace": WORKLOAD_NAMESPACE},
            "data": {"linear": '{"nodesPerReplica": 1, "min": 1}'},
        },
    )
    yield (
        "horizontalpodautoscalers.autoscaling",
        {
            "apiVersion": "autoscaling/v2",
            "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "legacy", "namespace": WORKLOAD_NAMESPACE},
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "legacy"},
                "minReplicas": 1,
                "maxReplicas": 3,
                "metrics": [CPU_UTILIZATION],
            },
        },
    )
    yield (
        "hvpas",
        _hvpa(
            "web",
            "Deployment",
            hpa=_hpa("web", [CPU_UTILIZATION]),
            vpa=_vpa("web", deploy=False),
            weightBasedScalingIntervals=HORIZONTAL_ONLY,
        ),
    )
    yield (
        "hvpas",
        _hvpa(
            "api",
            "Deployment",
            hpa=_hpa("api", CUSTOM_METRICS),
            vpa=_vpa("api"),
            weightBasedScalingIntervals=VERTICAL_ONLY,
        ),
    )
    yield (
        "hvpas",
        _hvpa(
            "db",
            "StatefulSet",
            hpa=_hpa("db", [CPU_UTILIZATION], deploy=False),
            vpa=_vpa("db"),
            weightBasedScalingIntervals=VERTICAL_ONLY,
        ),
    )
    yield (
        "hvpas",
        _hvpa(
            "cache",
            "StatefulSet",
            hpa={"deploy": True},
            clusterProportional={"configMapRef": {"name": "cache-params"}},
        ),
    )
    # A bare ReplicaSet (nothing runs its pods here), cluster-proportional from inline params.
    yield "replicasets.apps", _workload("ReplicaSet", "batch", 1, "50m", "32Mi")
    yield (
        "hvpas",
        _hvpa(
            "batch",
            "ReplicaSet",
            hpa={"deploy": True},
            clusterProportional={"linear": {"nodesPerReplica": 1, "min": 1}},
        ),
    )
    in_place = _vpa("cart")
    in_place["resizeMode"] = "InPlaceOrRollout"
    yield (
        "hvpas",
        _hvpa(
            "cart",
            "Deployment",
            hpa=_hpa("cart", [CPU_UTILIZATION], deploy=False),
            vpa=in_place,
            weightBasedScalingIntervals=VERTICAL_ONLY,
        ),
    )
    broken = _hvpa("broken", "Deployment", hpa=_hpa("broken", [CPU_UTILIZATION]))
    broken["spec"]["hpa"]["template"]["spec"].update(minReplicas=5, maxReplicas=2)
    yield "hvpas", broken


def _constant(cpu_millicores: float, memory_bytes: float) -> WorkloadLoad:
    demand = Demand(cpu_millicores, memory_bytes)
    return WorkloadLoad(
        Trace("constant", lambda elapsed: demand), containers={"app": ContainerLoad(share=1.0)}
    )


def _rising(after_seconds: float) -> WorkloadLoad:
    low, high = Demand(150.0, 0.2 * GIB), Demand(900.0, 0.2 * GIB)
    return WorkloadLoad(
        Trace("step", lambda elapsed: high if elapsed >= after_seconds else low),
        containers={"app": ContainerLoad(share=1.0)},
    )


@functools.cache
def record_run() -> RecordedRun:
    """Run the scenario on a fresh simulator loop (about ten seconds of real time); once
    per process, as several test modules read it (and none changes it)."""
    with asyncio.Runner(loop_factory=SimEventLoop) as runner:
        return runner.run(_record())


async def _record() -> RecordedRun:
    loop = asyncio.get_running_loop()
    assert isinstance(loop, SimEventLoop)
    loop.start_virtual_time()
    clock = SimClock(loop, start_epoch=START_EPOCH)
    async with ApiServer(seed=1, clock=clock, kubernetes_version="v1.35.0") as server:
        for namespace in (CONTROLLER_NAMESPACE, WORKLOAD_NAMESPACE):
            server.objects.create("namespaces", {"metadata": {"name": namespace}})
        # The webhook's objects, as manifests/webhook.yaml creates them.
        server.objects.create(
            "secrets", {"metadata": {"name": WEBHOOK_SECRET}}, namespace=CONTROLLER_NAMESPACE
        )
        server.objects.create(
            "mutatingwebhookconfigurations",
            {"metadata": {"name": WEBHOOK_CONFIGURATION}, "webhooks": []},
        )
        cluster = Cluster(server, settings=ClusterSettings(nodes=3, admission=True), clock=clock)
        for resource, body in _scenario_objects():
            server.objects.create(
                resource,
                body,
                namespace=body["metadata"].get("namespace"),
                validate=body["metadata"]["name"] != "broken",
            )
        loads = {
            "Deployment/web": _rising(after_seconds=120.0),
            "Deployment/api": _constant(1600.0, 1.0 * GIB),
            "Deployment/legacy": _constant(50.0, 0.05 * GIB),
            "StatefulSet/db": _constant(1600.0, 1.0 * GIB),
            "StatefulSet/cache": _constant(20.0, 0.02 * GIB),
            "Deployment/cart": _constant(1200.0, 0.1 * GIB),
        }
        for key, load in loads.items():
            kind, name = key.split("/")
            cluster.loads[(kind, WORKLOAD_NAMESPACE, name)] = load
        server.metrics.set_custom_metric(
            "services", "api", "requests_per_second", "20", namespace=WORKLOAD_NAMESPACE
        )
        server.metrics.set_external_metric(
            WORKLOAD_NAMESPACE, "queue_length", "3", labels={"queue": "api"}
        )

        async def tick_until(elapsed_seconds: float) -> None:
            while clock.elapsed() < elapsed_seconds:
                await asyncio.sleep(TICK_SECONDS)
                await cluster.advance()
                for pod in server.objects.list(
                    "pods", namespace=WORKLOAD_NAMESPACE, label_selector="app=api"
                ):
                    server.metrics.set_custom_metric(
                        "pods",
                        pod["metadata"]["name"],
                        "requests_per_second",
                        "10",
                        namespace=WORKLOAD_NAMESPACE,
                    )

        # The first instance takes the Lease alone; the second starts as a standby.
        leader = await _start(server, clock, identity="hvpa-a")
        await _until(leader, clock, tick_until)
        standby = await _start(server, clock, identity="hvpa-b")

        await tick_until(10 * 60)
        db = server.objects.get("hvpas", "db", namespace=WORKLOAD_NAMESPACE)
        db["spec"]["vpa"]["template"]["metadata"]["labels"]["tier"] = "storage"
        server.objects.update("hvpas", db)
        # A scale-up of the in-place workload: its new pod is sized by the webhook.
        server.objects.patch(
            "deployments", "cart", {"spec": {"replicas": 3}}, namespace=WORKLOAD_NAMESPACE
        )
        await tick_until(13 * 60)
        server.objects.patch(
            "hvpas",
            "broken",
            {"status": None},
            namespace=WORKLOAD_NAMESPACE,
            subresource="status",
            patch_type="merge",
        )
        api = server.objects.get("hvpas", "api", namespace=WORKLOAD_NAMESPACE)
        api["spec"]["vpa"]["deploy"] = False
        server.objects.update("hvpas", api)
        await tick_until(15 * 60)

        exposition, debug_state = await _scrape(server, leader)
        await leader.stop()
        await _until(standby, clock, tick_until)
        await tick_until(17 * 60)
        await standby.stop()

        hvpas = {
            h["metadata"]["name"]: h
            for h in server.objects.list("hvpas", namespace=WORKLOAD_NAMESPACE)
        }
        events = tuple(server.objects.list("events", namespace=WORKLOAD_NAMESPACE))
        return RecordedRun(tuple(server.requests), exposition, debug_state, hvpas, events)


@dataclass
class _Instance:
    manager: Manager
    task: asyncio.Task[None]
    client: KubeClient
    webhook: Server

    def raise_if_stopped(self) -> None:
        if self.task.done():
            self.task.result()
            raise AssertionError(f"{self.manager.identity} stopped")

    async def stop(self) -> None:
        self.manager.stop()
        try:
            await self.task
        finally:
            await self.webhook.stop()
            await self.client.close()


async def _scrape(server: ApiServer, instance: _Instance) -> tuple[str, dict[str, Any]]:
    """/metrics and /debug/state of `instance`, read as Prometheus would read them."""
    server.reviews.add_token(PROMETHEUS_TOKEN, PROMETHEUS, groups=["system:serviceaccounts"])
    for path in ("/metrics", "/debug/state"):
        server.reviews.allow(PROMETHEUS, "get", path)
    settings = ServerSettings(metrics_bind_address="127.0.0.1:0", health_probe_bind_address="0")
    headers = {"Authorization": f"Bearer {PROMETHEUS_TOKEN}"}
    async with (
        Server(manager=instance.manager, settings=settings, client=instance.client) as listener,
        aiohttp.ClientSession(headers=headers) as http,
    ):
        base = f"https://127.0.0.1:{listener.metrics_port}"
        # The certificate is self-signed, as the ServiceMonitor's insecureSkipVerify expects.
        async with http.get(f"{base}/metrics", ssl=False) as response:
            assert response.status == 200, await response.text()
            exposition = await response.text()
        async with http.get(f"{base}/debug/state", ssl=False) as response:
            assert response.status == 200, await response.text()
            debug_state: dict[str, Any] = orjson.loads(await response.read())
    return exposition, debug_state


async def _start(server: ApiServer, clock: SimClock, *, identity: str) -> _Instance:
    registry = CollectorRegistry()
    kube_metrics = KubeMetrics(registry)
    client = await client_from_kubeconfig(metrics=kube_metrics, path=str(server.kubeconfig_path))
    manager = Manager(
        client=client,
        kube_metrics=kube_metrics,
        settings=ControllerSettings(),
        leader_election=LeaderElectionSettings(
            lease_name="hvpa", lease_namespace=CONTROLLER_NAMESPACE
        ),
        identity=identity,
        clock=clock,
        rng=random.Random(identity),
    )
    task = asyncio.create_task(manager.run(), name=identity)
    # Each instance serves the webhook, as each replica of the Deployment does; registered by
    # URL (there is no Service network here), with the Secret and configuration of the manifests.
    port = _free_port()
    webhook = Server(
        manager=manager,
        settings=ServerSettings(
            metrics_bind_address="0",
            health_probe_bind_address="0",
            webhook=WebhookSettings(
                bind_address=f"127.0.0.1:{port}",
                namespace=CONTROLLER_NAMESPACE,
                secret_name=WEBHOOK_SECRET,
                configuration_name=WEBHOOK_CONFIGURATION,
                url=f"https://127.0.0.1:{port}",
            ),
        ),
        client=client,
    )
    await webhook.start()
    return _Instance(manager, task, client, webhook)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _until(
    instance: _Instance, clock: SimClock, tick_until: Callable[[float], Awaitable[None]]
) -> None:
    """Tick the cluster until `instance` leads (at most five virtual minutes)."""
    deadline = clock.elapsed() + 300
    while not instance.manager.leading():
        instance.raise_if_stopped()
        if clock.elapsed() > deadline:
            raise AssertionError(f"{instance.manager.identity} did not lead within 300 s")
        await tick_until(clock.elapsed() + TICK_SECONDS)
