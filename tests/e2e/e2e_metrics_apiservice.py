"""The suite's resource metrics API (metrics.k8s.io/v1beta1), served as an aggregated APIService.

metrics-server cannot run here: it scrapes kubelets, and the suite's nodes are kwok's, which
serve no stats. This stands in for it behind the real aggregation layer: the API server
proxies `/apis/metrics.k8s.io/v1beta1/...` here over TLS (checked against the APIService's
caBundle), presenting the front proxy's client certificate, which this server requires.

What it reports is the test's to say: `usage.json` maps a namespace to the usage of every
container of its Running pods (`{"ns": {"cpu": "300m", "memory": "64Mi"}}`), or to a total
CPU load shared evenly by the Running pods of the selection (`{"totalCpuMillicores": 600,
"memory": "64Mi"}`: more pods, less each, as a real service's load spreads), re-read on every
request. Which pods exist, and which match a label selector, it asks the real API server, as
metrics-server asks its pod informer, so selector semantics are the server's own.

Run as a script by the suite's fixtures:
    python e2e_metrics_apiservice.py --port P --cert C --key K --client-ca CA --usage FILE
        --apiserver URL --apiserver-ca CA --admin-cert C --admin-key K
"""

from __future__ import annotations

import argparse
import json
import ssl
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from e2e_api import Api

GROUP_VERSION = "metrics.k8s.io/v1beta1"
PREFIX = f"/apis/{GROUP_VERSION}"
# The window a sample covers. Short, so that a pod Ready for a second already has a sample
# taken after its readiness (the HPA algorithm ignores CPU samples from before it).
WINDOW = "1s"

RESOURCE_LIST = {
    "kind": "APIResourceList",
    "apiVersion": "v1",
    "groupVersion": GROUP_VERSION,
    "resources": [
        {
            "name": "pods",
            "singularName": "",
            "namespaced": True,
            "kind": "PodMetrics",
            "verbs": ["get", "list"],
        },
        {
            "name": "nodes",
            "singularName": "",
            "namespaced": False,
            "kind": "NodeMetrics",
            "verbs": ["get", "list"],
        },
    ],
}
OPENAPI_V2 = {
    "swagger": "2.0",
    "info": {"title": "hvpa-e2e-metrics", "version": "v1beta1"},
    "paths": {},
}


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _container_usage(
    usage: dict[str, Any], pod: dict[str, Any], running_pods: int
) -> dict[str, str]:
    """One container's usage: as given, or its share of the namespace's total CPU."""
    total = usage.get("totalCpuMillicores")
    if total is None:
        return {key: str(value) for key, value in usage.items()}
    share = int(total) // max(running_pods, 1) // len(pod["spec"]["containers"])
    rest = {key: str(value) for key, value in usage.items() if key != "totalCpuMillicores"}
    return {"cpu": f"{share}m", **rest}


class MetricsHandler(BaseHTTPRequestHandler):
    server: MetricsServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        sys.stderr.write(f"{self.address_string()} {format % args}\n")

    def _send(self, status: int, body: Any) -> None:
        payload = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _not_found(self, path: str) -> None:
        self._send(
            404,
            {
                "kind": "Status",
                "apiVersion": "v1",
                "status": "Failure",
                "reason": "NotFound",
                "code": 404,
                "message": f"{path} not found",
            },
        )

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        path = parts.path.rstrip("/")
        query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
        if path == PREFIX:
            self._send(200, RESOURCE_LIST)
        elif path == "/openapi/v2":
            self._send(200, OPENAPI_V2)
        elif path == "/openapi/v3":
            self._send(200, {"paths": {}})
        elif path.startswith(PREFIX + "/namespaces/") and path.count("/") in (6, 7):
            self._pods(path, query)
        else:
            self._not_found(path)

    def _pods(self, path: str, query: dict[str, str]) -> None:
        # ['', 'apis', 'metrics.k8s.io', 'v1beta1', 'namespaces', NS, 'pods', NAME?]
        segments = path.split("/")
        if segments[6] != "pods":
            self._not_found(path)
            return
        namespace = segments[5]
        name = segments[7] if len(segments) == 8 else None
        items = self.server.pod_metrics(namespace, query.get("labelSelector", ""))
        if name is None:
            self._send(
                200,
                {
                    "kind": "PodMetricsList",
                    "apiVersion": GROUP_VERSION,
                    "metadata": {},
                    "items": items,
                },
            )
            return
        for item in items:
            if item["metadata"]["name"] == name:
                self._send(200, item)
                return
        self._not_found(path)


class MetricsServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int, *, usage_file: Path, apiserver: Api) -> None:
        super().__init__(("127.0.0.1", port), MetricsHandler)
        self._usage_file = usage_file
        self._apiserver = apiserver

    def _usage(self) -> dict[str, dict[str, Any]]:
        try:
            return dict(json.loads(self._usage_file.read_text()))
        except (OSError, ValueError):
            return {}

    def pod_metrics(self, namespace: str, label_selector: str) -> list[dict[str, Any]]:
        usage = self._usage().get(namespace)
        if usage is None:
            return []
        params = {"labelSelector": label_selector} if label_selector else None
        listed = self._apiserver.get(f"/api/v1/namespaces/{namespace}/pods", params=params)
        pods = [p for p in listed["items"] if p.get("status", {}).get("phase") == "Running"]
        now = _now()
        return [
            {
                "kind": "PodMetrics",
                "apiVersion": GROUP_VERSION,
                "metadata": {
                    "name": pod["metadata"]["name"],
                    "namespace": namespace,
                    "labels": pod["metadata"].get("labels", {}),
                    "creationTimestamp": now,
                },
                "timestamp": now,
                "window": WINDOW,
                "containers": [
                    {"name": container["name"], "usage": _container_usage(usage, pod, len(pods))}
                    for container in pod["spec"]["containers"]
                ],
            }
            for pod in pods
        ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--cert", type=Path, required=True)
    parser.add_argument("--key", type=Path, required=True)
    parser.add_argument("--client-ca", type=Path, required=True, help="the front proxy's CA")
    parser.add_argument("--usage", type=Path, required=True)
    parser.add_argument("--apiserver", required=True)
    parser.add_argument("--apiserver-ca", type=Path, required=True)
    parser.add_argument("--admin-cert", type=Path, required=True)
    parser.add_argument("--admin-key", type=Path, required=True)
    arguments = parser.parse_args()
    apiserver = Api(
        arguments.apiserver,
        ca_file=arguments.apiserver_ca,
        client_cert=(arguments.admin_cert, arguments.admin_key),
    )
    server = MetricsServer(arguments.port, usage_file=arguments.usage, apiserver=apiserver)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(arguments.cert), str(arguments.key))
    context.load_verify_locations(str(arguments.client_ca))
    context.verify_mode = ssl.CERT_REQUIRED
    server.socket = context.wrap_socket(server.socket, server_side=True)
    sys.stderr.write(f"metrics APIService listening on 127.0.0.1:{arguments.port}\n")
    sys.stderr.flush()
    server.serve_forever()


if __name__ == "__main__":
    main()
