"""A real control plane on loopback: etcd, kube-apiserver, kube-controller-manager,
kube-scheduler and kwok, configured as a hardened cluster runs them.

What "hardened" means here, and why each part is on:
- TLS everywhere with separate roots (see e2e_pki), anonymous requests refused;
- authorization `Node,RBAC`: hvpa runs as its ServiceAccount with the shipped RBAC, so a
  missing grant is a 403 here, not a silent pass;
- the admission plugins a hardened cluster adds to the defaults: NodeRestriction,
  OwnerReferencesPermissionEnforcement (blockOwnerDeletion needs `update` on the owner's
  finalizers), AlwaysPullImages, DenyServiceExternalIPs;
- ServiceAccount tokens signed by the cluster's key (the suite asks TokenRequest for hvpa's);
- an audit log at Metadata level for every request, which the suite reads: who got a 403,
  whether hvpa met a 409;
- the aggregation layer's front proxy (requestheader CA and the proxy's client certificate),
  through which the suite's metrics APIService is reached.

One departure, for one test: the watch cache is off for HorizontalPodAutoscalers
(`--watch-cache-sizes=horizontalpodautoscalers.autoscaling#0`), so their watches are served
by etcd itself and a watch resumed from a compacted revision gets etcd's 410, which the
compaction test provokes. Everything else is served from the watch cache as usual (which is
also what sends bookmarks).

Pods: kube-controller-manager makes them from Deployments (through ReplicaSets) and
StatefulSets, kube-scheduler binds them, and kwok plays the kubelet of every node annotated
`kwok.x-k8s.io/node: fake`, marking its pods Running and Ready. No container runs anywhere.
"""

from __future__ import annotations

import base64
import json
import ssl
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from e2e_api import Api
from e2e_pki import Certificate, Pki
from e2e_processes import Process, free_port, wait_until

__all__ = ["ControlPlane", "write_kubeconfig"]

AUDIT_POLICY = {
    "apiVersion": "audit.k8s.io/v1",
    "kind": "Policy",
    "omitStages": ["RequestReceived"],
    "rules": [
        # The bodies of /scale writes: the resilience suite checks that hvpa's carry the
        # resourceVersion precondition (test_e2e_resilience.py).
        {
            "level": "Request",
            "verbs": ["update"],
            "resources": [{"group": "apps", "resources": ["deployments/scale"]}],
        },
        {"level": "Metadata"},
    ],
}
HARDENING_ADMISSION_PLUGINS = (
    "NodeRestriction",
    "OwnerReferencesPermissionEnforcement",
    "AlwaysPullImages",
    "DenyServiceExternalIPs",
)
# kwok manages the nodes carrying this annotation, and only those.
KWOK_NODE_ANNOTATION = ("kwok.x-k8s.io/node", "fake")
SERVICE_ACCOUNT_ISSUER = "https://kubernetes.default.svc.cluster.local"
# What kwok does, as its Stage resources: a managed node turns Ready (kwok renews its Lease
# from then on); a pod bound to one turns Running and Ready at once, its containers' status
# reporting their resources as a kubelet that resizes in place does (kube-apiserver refuses
# pods/resize of a running pod whose container status has none: "Pod running on node
# without support for resize"); a pod being deleted is removed (no kubelet would ever
# confirm its graceful deletion otherwise). kwok ships stages
# like these for kwokctl's clusters; the binary alone has none.
KWOK_STAGES = """
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata: {name: e2e-node-ready}
spec:
  resourceRef: {apiGroup: v1, kind: Node}
  selector:
    matchExpressions:
    - key: '.status.conditions.[] | select( .type == "Ready" ) | .status'
      operator: NotIn
      values: ['True']
  next:
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      - type: Ready
        status: "True"
        reason: KubeletReady
        message: kwok plays this node's kubelet
        lastHeartbeatTime: {{ $now | Quote }}
        lastTransitionTime: {{ $now | Quote }}
      phase: Running
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata: {name: e2e-pod-ready}
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchExpressions:
    - {key: .metadata.deletionTimestamp, operator: DoesNotExist}
    - {key: .spec.nodeName, operator: Exists}
    - key: .status.phase
      operator: In
      values: [Pending]
  next:
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      - {type: Initialized, status: "True", lastTransitionTime: {{ $now | Quote }}}
      - {type: Ready, status: "True", lastTransitionTime: {{ $now | Quote }}}
      - {type: ContainersReady, status: "True", lastTransitionTime: {{ $now | Quote }}}
      containerStatuses:
      {{ range .spec.containers }}
      - name: {{ .name | Quote }}
        image: {{ .image | Quote }}
        ready: true
        started: true
        restartCount: 0
        state: {running: {startedAt: {{ $now | Quote }}}}
        resources: {{ toJson (or .resources (dict)) }}
      {{ end }}
      phase: Running
      startTime: {{ $now | Quote }}
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata: {name: e2e-pod-delete}
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchExpressions:
    - {key: .metadata.deletionTimestamp, operator: Exists}
  next:
    delete: true
"""


def write_kubeconfig(
    path: Path,
    *,
    server: str,
    ca_file: Path,
    client: Certificate | None = None,
    token: str | None = None,
    user: str = "e2e",
) -> Path:
    credentials: dict[str, str] = {}
    if client is not None:
        credentials = {"client-certificate": str(client.cert), "client-key": str(client.key)}
    if token is not None:
        credentials = {"token": token}
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": "e2e", "cluster": {"server": server, "certificate-authority": str(ca_file)}}
        ],
        "users": [{"name": user, "user": credentials}],
        "contexts": [{"name": "e2e", "context": {"cluster": "e2e", "user": user}}],
        "current-context": "e2e",
    }
    path.write_text(yaml.safe_dump(config))
    return path


@dataclass(frozen=True)
class Ports:
    etcd_client: int
    etcd_peer: int
    apiserver: int

    @classmethod
    def pick(cls) -> Ports:
        return cls(etcd_client=free_port(), etcd_peer=free_port(), apiserver=free_port())


class ControlPlane:
    """The processes, their flags, and the handles the tests use (admin Api, kubeconfigs)."""

    def __init__(self, directory: Path, *, binaries: dict[str, Path], pki: Pki) -> None:
        self.directory = directory
        self.binaries = binaries
        self.pki = pki
        self.ports = Ports.pick()
        self.server = f"https://127.0.0.1:{self.ports.apiserver}"
        self.audit_log = directory / "audit.log"
        self.admin_kubeconfig = write_kubeconfig(
            directory / "admin.kubeconfig",
            server=self.server,
            ca_file=pki.ca.cert,
            client=pki.admin,
        )
        self.admin = Api(
            self.server, ca_file=pki.ca.cert, client_cert=(pki.admin.cert, pki.admin.key)
        )
        self.etcd = Process("etcd", self._etcd_command(), log_directory=directory)
        self.apiserver = Process(
            "kube-apiserver", self._apiserver_command(), log_directory=directory
        )
        self.controller_manager = Process(
            "kube-controller-manager", self._controller_manager_command(), log_directory=directory
        )
        self.scheduler = Process(
            "kube-scheduler", self._scheduler_command(), log_directory=directory
        )
        self.kwok = Process("kwok", self._kwok_command(), log_directory=directory)
        # (from, to) wall-clock times the API server was restarting: down, then up but not
        # yet ready, when it refuses what it will allow once its caches have synced.
        self.restarts: list[tuple[float, float]] = []

    # -- commands ------------------------------------------------------------

    @property
    def etcd_url(self) -> str:
        return f"https://127.0.0.1:{self.ports.etcd_client}"

    def _etcd_command(self) -> list[str]:
        peer = f"http://127.0.0.1:{self.ports.etcd_peer}"
        pki = self.pki
        return [
            str(self.binaries["etcd"]),
            "--name=e2e",
            f"--data-dir={self.directory / 'etcd-data'}",
            f"--listen-client-urls={self.etcd_url}",
            f"--advertise-client-urls={self.etcd_url}",
            f"--listen-peer-urls={peer}",
            f"--initial-advertise-peer-urls={peer}",
            f"--initial-cluster=e2e={peer}",
            f"--cert-file={pki.etcd_server.cert}",
            f"--key-file={pki.etcd_server.key}",
            f"--trusted-ca-file={pki.etcd_ca.cert}",
            "--client-cert-auth",
            # Nothing here must survive a power cut: skip the fsyncs, which on a shared disk
            # cost more than everything else etcd does.
            "--unsafe-no-fsync",
            "--log-level=warn",
        ]

    def _apiserver_command(self) -> list[str]:
        pki = self.pki
        policy = self.directory / "audit-policy.yaml"
        policy.write_text(yaml.safe_dump(AUDIT_POLICY))
        return [
            str(self.binaries["kube-apiserver"]),
            f"--etcd-servers={self.etcd_url}",
            f"--etcd-cafile={pki.etcd_ca.cert}",
            f"--etcd-certfile={pki.etcd_client.cert}",
            f"--etcd-keyfile={pki.etcd_client.key}",
            "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1",
            # The `kubernetes` Service's endpoints may not be loopback addresses, and nothing
            # here reaches the API server through that Service: no endpoint reconciler.
            "--endpoint-reconciler-type=none",
            f"--secure-port={self.ports.apiserver}",
            f"--tls-cert-file={pki.apiserver.cert}",
            f"--tls-private-key-file={pki.apiserver.key}",
            f"--client-ca-file={pki.ca.cert}",
            "--anonymous-auth=false",
            "--authorization-mode=Node,RBAC",
            "--enable-admission-plugins=" + ",".join(HARDENING_ADMISSION_PLUGINS),
            f"--service-account-issuer={SERVICE_ACCOUNT_ISSUER}",
            f"--service-account-key-file={pki.service_account_public_key}",
            f"--service-account-signing-key-file={pki.service_account_key}",
            "--service-cluster-ip-range=10.96.0.0/24",
            f"--audit-policy-file={policy}",
            f"--audit-log-path={self.audit_log}",
            "--audit-log-maxsize=0",
            f"--requestheader-client-ca-file={pki.front_proxy_ca.cert}",
            "--requestheader-allowed-names=front-proxy-client",
            "--requestheader-username-headers=X-Remote-User",
            "--requestheader-group-headers=X-Remote-Group",
            "--requestheader-extra-headers-prefix=X-Remote-Extra-",
            f"--proxy-client-cert-file={pki.front_proxy_client.cert}",
            f"--proxy-client-key-file={pki.front_proxy_client.key}",
            "--watch-cache-sizes=horizontalpodautoscalers.autoscaling#0",
            "--profiling=false",
            # Restarts in the suite should not wait out the production drain delays.
            "--shutdown-delay-duration=0s",
        ]

    def _component_kubeconfig(self, name: str, client: Certificate) -> Path:
        return write_kubeconfig(
            self.directory / f"{name}.kubeconfig",
            server=self.server,
            ca_file=self.pki.ca.cert,
            client=client,
        )

    def _controller_manager_command(self) -> list[str]:
        kubeconfig = self._component_kubeconfig("controller-manager", self.pki.controller_manager)
        return [
            str(self.binaries["kube-controller-manager"]),
            f"--kubeconfig={kubeconfig}",
            f"--authentication-kubeconfig={kubeconfig}",
            f"--authorization-kubeconfig={kubeconfig}",
            "--bind-address=127.0.0.1",
            f"--secure-port={free_port()}",
            f"--cert-dir={self.directory / 'controller-manager-certs'}",
            "--leader-elect=false",
            # Each controller as its own ServiceAccount, with the bootstrap RBAC roles.
            "--use-service-account-credentials=true",
            f"--root-ca-file={self.pki.ca.cert}",
            f"--service-account-private-key-file={self.pki.service_account_key}",
            "--cluster-cidr=10.244.0.0/16",
        ]

    def _scheduler_command(self) -> list[str]:
        kubeconfig = self._component_kubeconfig("scheduler", self.pki.scheduler)
        return [
            str(self.binaries["kube-scheduler"]),
            f"--kubeconfig={kubeconfig}",
            f"--authentication-kubeconfig={kubeconfig}",
            f"--authorization-kubeconfig={kubeconfig}",
            "--bind-address=127.0.0.1",
            f"--secure-port={free_port()}",
            f"--cert-dir={self.directory / 'scheduler-certs'}",
            "--leader-elect=false",
        ]

    def _kwok_command(self) -> list[str]:
        key, value = KWOK_NODE_ANNOTATION
        stages = self.directory / "kwok-stages.yaml"
        stages.write_text(KWOK_STAGES)
        return [
            str(self.binaries["kwok"]),
            f"--config={stages}",
            f"--kubeconfig={self.admin_kubeconfig}",
            f"--manage-nodes-with-annotation-selector={key}={value}",
            "--cidr=10.244.0.1/16",
            "--node-lease-duration-seconds=40",
            f"--server-address=127.0.0.1:{free_port()}",
        ]

    # -- lifecycle -------------------------------------------------------------

    def start(self) -> None:
        self.etcd.start()
        wait_until(self._etcd_healthy, timeout_seconds=60, what="etcd healthy")
        self.start_apiserver()
        for process in (self.controller_manager, self.scheduler, self.kwok):
            process.start()

    def start_apiserver(self) -> None:
        self.apiserver.start()
        wait_until(
            self._apiserver_ready,
            timeout_seconds=180,
            what=f"kube-apiserver ready (log: {self.apiserver.log_path})",
            interval_seconds=0.5,
        )

    def stop(self) -> None:
        for process in (
            self.kwok,
            self.scheduler,
            self.controller_manager,
            self.apiserver,
            self.etcd,
        ):
            process.stop()

    def restart_apiserver(self) -> None:
        stopped = time.time()
        self.apiserver.stop()
        self.start_apiserver()
        self.restarts.append((stopped, time.time()))

    def _apiserver_ready(self) -> bool:
        if not self.apiserver.running():
            raise RuntimeError(f"kube-apiserver exited: {self.apiserver.tail()}")
        return self.admin.request("GET", "/readyz").status == 200

    # -- etcd ------------------------------------------------------------------

    def _etcd_call(self, path: str, body: dict[str, Any]) -> Any:
        """A call to etcd's JSON gateway (the v3 API over HTTP), as the etcd client."""
        context = ssl.create_default_context(cafile=str(self.pki.etcd_ca.cert))
        context.load_cert_chain(str(self.pki.etcd_client.cert), str(self.pki.etcd_client.key))
        request = urllib.request.Request(
            self.etcd_url + path,
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, context=context, timeout=10) as reply:
            return json.loads(reply.read())

    def _etcd_healthy(self) -> bool:
        if not self.etcd.running():
            raise RuntimeError(f"etcd exited: {self.etcd.tail()}")
        self._etcd_call("/v3/maintenance/status", {})
        return True

    def etcd_revision(self) -> int:
        status = self._etcd_call("/v3/maintenance/status", {})
        return int(status["header"]["revision"])

    def advance_and_compact_etcd(self) -> int:
        """Write a key outside the API server's prefix (the revision is etcd-wide), then
        compact everything before the new revision; returns that revision.

        After this, a watch resumed from any earlier resourceVersion of a resource served
        from etcd gets 410 Gone.
        """
        key = base64.b64encode(b"/hvpa-e2e/compaction").decode()
        written = self._etcd_call(
            "/v3/kv/put", {"key": key, "value": base64.b64encode(b"x").decode()}
        )
        revision = int(written["header"]["revision"])
        self._etcd_call("/v3/kv/compaction", {"revision": revision, "physical": True})
        return revision
