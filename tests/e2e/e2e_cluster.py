"""The whole end-to-end cluster, set up once per session: the control plane, hvpa's manifests
applied with kubectl, the VPA CRD, the metrics APIService, kwok nodes, and two hvpa
controllers running as the hvpa ServiceAccount.

Each step is a method named for what it does, called in order by `Cluster.up()`; each test
then works in a namespace of its own (see conftest), so one control plane serves them all.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from e2e_api import Api
from e2e_controlplane import KWOK_NODE_ANNOTATION, ControlPlane, write_kubeconfig
from e2e_hvpa import LEASE_NAME, LEASE_NAMESPACE, WEBHOOK_SERVICE_PORT, HvpaController
from e2e_pki import make_pki
from e2e_processes import Process, free_port, wait_until
from e2e_proxy import TcpProxy

__all__ = ["REPOSITORY", "Cluster"]

REPOSITORY = Path(__file__).resolve().parents[2]
MANIFESTS = REPOSITORY / "manifests"
METRICS_NAMESPACE = "hvpa-e2e-metrics"
METRICS_SERVICE = "metrics"
# Reads hvpa's /metrics and /debug/state in the suite.
READER = "e2e-reader"
HVPA_USER = f"system:serviceaccount:{LEASE_NAMESPACE}:hvpa"
# hvpa's pod admission webhook (manifests/webhook.yaml): the Service hvpa registers in its
# MutatingWebhookConfiguration, on the unprivileged port the suite's controllers are given
# (--webhook-service-port; the manifests' Service serves 443).
WEBHOOK_SERVICE = "hvpa-webhook"
WEBHOOK_PORT = WEBHOOK_SERVICE_PORT

# Our own minimal VerticalPodAutoscaler CRD (autoscaling.k8s.io/v1): the upstream CRD is not
# copied into this repository. hvpa creates, patches and deletes VPAs and reads their
# status.recommendation, and the tests write that recommendation through /status, so the
# CRD needs the name, the status subresource and room for any spec and status.
VPA_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {
        "name": "verticalpodautoscalers.autoscaling.k8s.io",
        # *.k8s.io groups are protected: a CRD in one needs this annotation (the API server
        # refuses it otherwise). The upstream VPA CRD carries its approval's PR; ours says so.
        "annotations": {"api-approved.kubernetes.io": "unapproved, hvpa's test stand-in"},
    },
    "spec": {
        "group": "autoscaling.k8s.io",
        "scope": "Namespaced",
        "names": {
            "kind": "VerticalPodAutoscaler",
            "listKind": "VerticalPodAutoscalerList",
            "plural": "verticalpodautoscalers",
            "singular": "verticalpodautoscaler",
            "shortNames": ["vpa"],
        },
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "x-kubernetes-preserve-unknown-fields": True,
                            },
                            "status": {
                                "type": "object",
                                "x-kubernetes-preserve-unknown-fields": True,
                            },
                        },
                    }
                },
            }
        ],
    },
}
# The kwok nodes every workload's pods land on: room for the suite's few dozen pods.
KWOK_NODES = ("kwok-node-0", "kwok-node-1")
KWOK_NODE_CAPACITY = {"cpu": "32", "memory": "128Gi", "pods": "110"}


class Cluster:
    def __init__(self, directory: Path, *, binaries: dict[str, Path]) -> None:
        self.directory = directory
        self.binaries = binaries
        self.pki = make_pki(
            directory / "pki", metrics_service_host=f"{METRICS_SERVICE}.{METRICS_NAMESPACE}.svc"
        )
        self.control_plane = ControlPlane(directory, binaries=binaries, pki=self.pki)
        self.admin: Api = self.control_plane.admin
        self.proxy = TcpProxy(self.control_plane.ports.apiserver)
        self.webhook_proxy: TcpProxy | None = None
        self.webhook_route_problem = ""
        self.usage_file = directory / "usage.json"
        self.usage_file.write_text("{}")
        self.metrics_port = free_port()
        self.metrics_apiservice = Process(
            "metrics-apiservice", self._metrics_command(), log_directory=directory
        )
        self.controllers: list[HvpaController] = []
        self._controller_count = 0
        self.hvpa_kubeconfig = directory / "hvpa.kubeconfig"
        self.reader_token = ""
        self.timings: dict[str, float] = {}

    # -- set up, in order ------------------------------------------------------

    def up(self) -> None:
        steps = (
            ("control plane", self.control_plane.start),
            ("kubectl apply -k manifests/", self.apply_manifests),
            ("webhook route", self.route_webhook),
            ("VPA CRD", self.install_vpa_crd),
            ("metrics APIService", self.install_metrics_apiservice),
            ("kwok nodes", self.create_kwok_nodes),
            ("hvpa controllers", self.start_controllers),
        )
        for name, step in steps:
            started = time.monotonic()
            step()
            self.timings[name] = time.monotonic() - started

    def kubectl(
        self, *arguments: str, check: bool = True, stdin: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        """The built kubectl (the server's version) as the cluster admin."""
        result = subprocess.run(
            [
                str(self.binaries["kubectl"]),
                f"--kubeconfig={self.control_plane.admin_kubeconfig}",
                *arguments,
            ],
            input=stdin,
            capture_output=True,
            text=True,
            check=False,
            env={**os.environ, "KUBECTL_EXTERNAL_DIFF": "", "HOME": str(self.directory)},
        )
        if check and result.returncode != 0:
            raise AssertionError(
                f"kubectl {' '.join(arguments)} failed ({result.returncode}): {result.stderr}"
            )
        return result

    def apply_manifests(self) -> None:
        self.kubectl("apply", "-k", str(MANIFESTS))
        self.kubectl(
            "wait", "--for=condition=Established", "crd/hvpas.autoscaling.k8s.io", "--timeout=60s"
        )
        # No image is built here (no container engine, and kwok runs no containers): the
        # controller runs as processes on this host instead, with the same args and identity.
        self.kubectl("-n", LEASE_NAMESPACE, "scale", "deployment/hvpa", "--replicas=0")

    def route_webhook(self) -> None:
        """Let kube-apiserver reach hvpa's webhook through the Service reference hvpa writes.

        As for the metrics APIService, the Service becomes an ExternalName `localhost`: the
        API server then calls https://localhost:PORT (the port of the reference) and checks
        the certificate against the Service's name, hvpa-webhook.hvpa-system.svc, which
        hvpa's own certificate holds. A proxy on that loopback port passes each connection to
        a running controller's webhook listener (every replica answers alike)."""
        path = f"/api/v1/namespaces/{LEASE_NAMESPACE}/services"
        self.admin.delete(f"{path}/{WEBHOOK_SERVICE}")
        wait_until(
            lambda: not self.admin.exists(f"{path}/{WEBHOOK_SERVICE}"),
            timeout_seconds=30,
            what="the webhook's ClusterIP Service gone",
        )
        self.admin.create(
            path,
            {
                "metadata": {"name": WEBHOOK_SERVICE},
                "spec": {
                    "type": "ExternalName",
                    "externalName": "localhost",
                    "ports": [{"name": "webhook", "port": WEBHOOK_PORT}],
                },
            },
        )
        try:
            self.webhook_proxy = TcpProxy(
                lambda: [c.webhook_port for c in self.running_controllers()],
                listen_port=WEBHOOK_PORT,
            )
        except OSError as error:
            # The port was taken since it was chosen: only the tests of
            # the webhook need it, and they fail saying why (test_e2e_in_place).
            self.webhook_route_problem = f"cannot listen on 127.0.0.1:{WEBHOOK_PORT}: {error}"
            return
        self.webhook_proxy.start()

    def install_vpa_crd(self) -> None:
        self.kubectl("apply", "-f", "-", stdin=json.dumps(VPA_CRD))
        self.kubectl(
            "wait",
            "--for=condition=Established",
            "crd/verticalpodautoscalers.autoscaling.k8s.io",
            "--timeout=60s",
        )

    def _metrics_command(self) -> list[str]:
        pki = self.pki
        return [
            sys.executable,
            str(Path(__file__).with_name("e2e_metrics_apiservice.py")),
            f"--port={self.metrics_port}",
            f"--cert={pki.metrics_apiservice.cert}",
            f"--key={pki.metrics_apiservice.key}",
            f"--client-ca={pki.front_proxy_ca.cert}",
            f"--usage={self.usage_file}",
            f"--apiserver={self.control_plane.server}",
            f"--apiserver-ca={pki.ca.cert}",
            f"--admin-cert={pki.admin.cert}",
            f"--admin-key={pki.admin.key}",
        ]

    def install_metrics_apiservice(self) -> None:
        """Register the suite's metrics server and wait until the aggregator finds it Available.

        The Service is an ExternalName `localhost`: the aggregator then proxies to
        https://localhost:PORT. Endpoints may not hold loopback addresses, and anything but
        loopback is off limits here, so aggregator routing to endpoints is not an option.
        """
        self.metrics_apiservice.start()
        admin = self.admin
        admin.create("/api/v1/namespaces", {"metadata": {"name": METRICS_NAMESPACE}})
        admin.create(
            f"/api/v1/namespaces/{METRICS_NAMESPACE}/services",
            {
                "metadata": {"name": METRICS_SERVICE},
                "spec": {
                    "type": "ExternalName",
                    "externalName": "localhost",
                    "ports": [{"name": "https", "port": self.metrics_port}],
                },
            },
        )
        admin.create(
            "/apis/apiregistration.k8s.io/v1/apiservices",
            {
                "metadata": {"name": "v1beta1.metrics.k8s.io"},
                "spec": {
                    "group": "metrics.k8s.io",
                    "version": "v1beta1",
                    "groupPriorityMinimum": 100,
                    "versionPriority": 100,
                    "service": {
                        "namespace": METRICS_NAMESPACE,
                        "name": METRICS_SERVICE,
                        "port": self.metrics_port,
                    },
                    "caBundle": base64.b64encode(self.pki.ca.cert.read_bytes()).decode(),
                },
            },
        )

        def available() -> bool:
            service = admin.get(
                "/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.metrics.k8s.io"
            )
            return any(
                c["type"] == "Available" and c["status"] == "True"
                for c in service.get("status", {}).get("conditions", [])
            )

        wait_until(available, timeout_seconds=60, what="metrics APIService Available")

    def create_kwok_nodes(self) -> None:
        key, value = KWOK_NODE_ANNOTATION
        for name in KWOK_NODES:
            self.admin.create(
                "/api/v1/nodes",
                {
                    "metadata": {
                        "name": name,
                        "annotations": {key: value},
                        "labels": {"type": "kwok", "kubernetes.io/hostname": name},
                    },
                    "status": {"capacity": KWOK_NODE_CAPACITY, "allocatable": KWOK_NODE_CAPACITY},
                },
            )

        def ready() -> bool:
            for name in KWOK_NODES:
                node = self.admin.get(f"/api/v1/nodes/{name}")
                conditions = node.get("status", {}).get("conditions", [])
                if not any(c["type"] == "Ready" and c["status"] == "True" for c in conditions):
                    return False
            return True

        wait_until(ready, timeout_seconds=60, what="kwok nodes Ready")

    # -- hvpa ------------------------------------------------------------------

    def token(self, namespace: str, service_account: str) -> str:
        """A token of a ServiceAccount, as the kubelet would project into its pod."""
        review = self.admin.create(
            f"/api/v1/namespaces/{namespace}/serviceaccounts/{service_account}/token",
            {
                "apiVersion": "authentication.k8s.io/v1",
                "kind": "TokenRequest",
                "spec": {"expirationSeconds": 6 * 3600},
            },
        )
        return str(review["status"]["token"])

    def hvpa_token(self) -> str:
        return self.token(LEASE_NAMESPACE, "hvpa")

    def make_reader(self) -> str:
        """A ServiceAccount bound to the shipped hvpa-metrics-reader and
        hvpa-debug-state-reader ClusterRoles, as an operator would bind them; its token."""
        self.admin.create(
            f"/api/v1/namespaces/{METRICS_NAMESPACE}/serviceaccounts",
            {"metadata": {"name": READER}},
        )
        for role in ("hvpa-metrics-reader", "hvpa-debug-state-reader"):
            self.admin.create(
                "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
                {
                    "metadata": {"name": f"e2e-{role}"},
                    "roleRef": {
                        "apiGroup": "rbac.authorization.k8s.io",
                        "kind": "ClusterRole",
                        "name": role,
                    },
                    "subjects": [
                        {"kind": "ServiceAccount", "name": READER, "namespace": METRICS_NAMESPACE}
                    ],
                },
            )
        return self.token(METRICS_NAMESPACE, READER)

    def start_controllers(self) -> None:
        write_kubeconfig(
            self.hvpa_kubeconfig,
            server=self.proxy.url,
            ca_file=self.pki.ca.cert,
            token=self.hvpa_token(),
            user=HVPA_USER,
        )
        self.proxy.start()
        self.reader_token = self.make_reader()
        for _ in range(2):
            self.add_controller()
        wait_until(lambda: self.leader() is not None, timeout_seconds=60, what="an hvpa leader")
        wait_until(
            lambda: all(c.ready() for c in self.controllers),
            timeout_seconds=60,
            what="both hvpa controllers ready",
        )

    def add_controller(self) -> HvpaController:
        self._controller_count += 1
        controller = HvpaController(
            f"hvpa-{self._controller_count}",
            kubeconfig=self.hvpa_kubeconfig,
            directory=self.directory,
            reader_token=self.reader_token,
        )
        controller.start()
        self.controllers.append(controller)
        return controller

    def replace_controller(self, gone: HvpaController) -> HvpaController:
        """A new controller process (new identity) for one that was stopped for good."""
        self.controllers.remove(gone)
        controller = self.add_controller()
        wait_until(controller.ready, timeout_seconds=60, what=f"{controller.name} ready")
        return controller

    def restart_exited_controllers(self) -> None:
        """Start again every controller that exited, as its pod's kubelet would, and wait for
        them to be ready and for one of them to lead."""
        for controller in self.controllers:
            if not controller.process.running():
                controller.start()
        wait_until(
            lambda: all(c.ready() for c in self.controllers),
            timeout_seconds=60,
            what="every hvpa controller ready",
        )
        wait_until(lambda: self.leader() is not None, timeout_seconds=60, what="an hvpa leader")

    def running_controllers(self) -> list[HvpaController]:
        return [c for c in self.controllers if c.process.running()]

    def lease_holder(self) -> str:
        lease = self.admin.get(
            f"/apis/coordination.k8s.io/v1/namespaces/{LEASE_NAMESPACE}/leases/{LEASE_NAME}"
        )
        return str(lease["spec"].get("holderIdentity") or "")

    def leader(self) -> HvpaController | None:
        """The running controller that holds the Lease and knows it."""
        holder = self.lease_holder()
        for controller in self.running_controllers():
            try:
                if controller.identity() == holder and controller.is_leader():
                    return controller
            except OSError:
                continue
        return None

    # -- the metrics the APIService reports ---------------------------------------

    def set_usage(self, namespace: str, usage: dict[str, str | int] | None) -> None:
        """What the metrics APIService reports for `namespace` (see e2e_metrics_apiservice;
        None: no metrics)."""
        current = json.loads(self.usage_file.read_text())
        if usage is None:
            current.pop(namespace, None)
        else:
            current[namespace] = usage
        staged = self.usage_file.with_suffix(".tmp")
        staged.write_text(json.dumps(current))
        staged.replace(self.usage_file)

    # -- tear down -------------------------------------------------------------

    def down(self) -> None:
        for controller in self.controllers:
            controller.process.stop()
        self.metrics_apiservice.stop()
        self.proxy.close()
        if self.webhook_proxy is not None:
            self.webhook_proxy.close()
        self.control_plane.stop()
