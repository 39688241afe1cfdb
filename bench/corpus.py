"""Realistic Kubernetes objects for the benchmarks, generated deterministically.

A pod here looks like one a kubelet and a Deployment controller have
written: managedFields from two managers, two containers with env, ports,
probes and volume mounts, a projected service-account volume, five status
conditions and two container statuses - 6 to 7 KiB of JSON, as pods of
ordinary workloads are. Pods of one workload share labels and container
specs, as they do in a cluster (which is what the store's interning relies
on). Everything is a function of the indexes given, so every run and every
process builds the same bytes.
"""

from __future__ import annotations

import hashlib
from typing import Any, Final

__all__ = [
    "NAMESPACES",
    "deployment",
    "namespace_name",
    "namespace_of",
    "node",
    "pod",
    "pod_name",
    "workload_name",
]

# Five workloads per namespace at 1,000 workloads: team namespaces of a few services each.
NAMESPACES: Final = 200
START: Final = "2026-03-01T08:00:00Z"
_IMAGES: Final = ("registry.example.com/shop/api", "registry.example.com/shop/worker")


def _uid(*parts: object) -> str:
    digest = hashlib.sha256("/".join(map(str, parts)).encode()).hexdigest()
    return f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"


def _hash(*parts: object) -> str:
    return hashlib.sha256("/".join(map(str, parts)).encode()).hexdigest()[:10]


def workload_name(workload: int) -> str:
    return f"svc-{workload:05d}"


def namespace_of(workload: int) -> str:
    return namespace_name(workload % NAMESPACES)


def namespace_name(index: int) -> str:
    return f"team-{index:03d}"


def pod_name(workload: int, replica: int) -> str:
    suffix = f"{_hash('pod', workload, replica)[:2]}{replica:03x}"  # 5 characters, unique
    return f"{workload_name(workload)}-{_hash('rs', workload)}-{suffix}"


def workload_labels(workload: int) -> dict[str, str]:
    return {
        "app.kubernetes.io/name": workload_name(workload),
        "app.kubernetes.io/part-of": "shop",
        "app.kubernetes.io/version": "1.42.0",
        "team": namespace_of(workload),
    }


def app_cpu_millicores(workload: int) -> int:
    """What the workload's `app` container requests (and its pods' template carries)."""
    return 100 + (workload % 8) * 50


def _env(workload: int) -> list[dict[str, Any]]:
    env: list[dict[str, Any]] = [
        {"name": "SERVICE_NAME", "value": workload_name(workload)},
        {"name": "LOG_LEVEL", "value": "info"},
        {"name": "HTTP_PORT", "value": "8080"},
        {"name": "METRICS_PORT", "value": "9090"},
        {"name": "DATABASE_URL", "value": f"postgres://db.{namespace_of(workload)}:5432/shop"},
        {"name": "CACHE_TTL_SECONDS", "value": "300"},
        {"name": "FEATURE_FLAGS", "value": "checkout-v2,search-ranking,async-payments"},
        {
            "name": "POD_NAME",
            "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}},
        },
        {
            "name": "POD_IP",
            "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "status.podIP"}},
        },
        {
            "name": "API_TOKEN",
            "valueFrom": {"secretKeyRef": {"name": "api-credentials", "key": "token"}},
        },
    ]
    return env


def _containers(workload: int) -> list[dict[str, Any]]:
    probe = {
        "httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"},
        "initialDelaySeconds": 5,
        "timeoutSeconds": 1,
        "periodSeconds": 10,
        "successThreshold": 1,
        "failureThreshold": 3,
    }
    mounts = [
        {"name": "config", "mountPath": "/etc/shop", "readOnly": True},
        {"name": "tmp", "mountPath": "/tmp"},
        {
            "name": "kube-api-access-x7k2p",
            "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
            "readOnly": True,
        },
    ]
    cpu = app_cpu_millicores(workload)
    return [
        {
            "name": "app",
            "image": f"{_IMAGES[workload % 2]}:1.42.0",
            "imagePullPolicy": "IfNotPresent",
            "args": ["--config=/etc/shop/config.yaml", "--port=8080"],
            "ports": [
                {"name": "http", "containerPort": 8080, "protocol": "TCP"},
                {"name": "metrics", "containerPort": 9090, "protocol": "TCP"},
            ],
            "env": _env(workload),
            "resources": {
                "requests": {"cpu": f"{cpu}m", "memory": "256M"},
                "limits": {"cpu": f"{2 * cpu}m", "memory": "512M"},
            },
            "livenessProbe": probe,
            "readinessProbe": {**probe, "httpGet": {**probe["httpGet"], "path": "/ready"}},
            "volumeMounts": mounts,
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File",
            "securityContext": {
                "runAsNonRoot": True,
                "readOnlyRootFilesystem": True,
                "allowPrivilegeEscalation": False,
                "capabilities": {"drop": ["ALL"]},
            },
        },
        {
            "name": "proxy",
            "image": "registry.example.com/mesh/proxy:1.21.3",
            "imagePullPolicy": "IfNotPresent",
            "args": ["proxy", "sidecar", "--concurrency=2"],
            "ports": [{"name": "admin", "containerPort": 15000, "protocol": "TCP"}],
            "env": [
                {"name": "PROXY_CONFIG", "value": '{"holdApplicationUntilProxyStarts":true}'},
                {
                    "name": "INSTANCE_IP",
                    "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "status.podIP"}},
                },
            ],
            "resources": {
                "requests": {"cpu": "50m", "memory": "64M"},
                "limits": {"cpu": "500m", "memory": "256M"},
            },
            "volumeMounts": mounts[2:],
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File",
        },
    ]


def _volumes() -> list[dict[str, Any]]:
    return [
        {"name": "config", "configMap": {"name": "shop-config", "defaultMode": 420}},
        {"name": "tmp", "emptyDir": {"sizeLimit": "1Gi"}},
        {
            "name": "kube-api-access-x7k2p",
            "projected": {
                "defaultMode": 420,
                "sources": [
                    {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                    {
                        "configMap": {
                            "name": "kube-root-ca.crt",
                            "items": [{"key": "ca.crt", "path": "ca.crt"}],
                        }
                    },
                    {
                        "downwardAPI": {
                            "items": [
                                {
                                    "path": "namespace",
                                    "fieldRef": {
                                        "apiVersion": "v1",
                                        "fieldPath": "metadata.namespace",
                                    },
                                }
                            ]
                        }
                    },
                ],
            },
        },
    ]


def _managed_fields() -> list[dict[str, Any]]:
    """What kube-controller-manager and the kubelet leave in every pod (trimmed to typical)."""
    containers = {
        'k:{"name":"app"}': {
            ".": {},
            "f:args": {},
            "f:env": {
                f'k:{{"name":"{n}"}}': {".": {}, "f:name": {}, "f:value": {}} for n in "ABCDEFG"
            },
            "f:image": {},
            "f:imagePullPolicy": {},
            "f:livenessProbe": {".": {}, "f:httpGet": {".": {}, "f:path": {}, "f:port": {}}},
            "f:name": {},
            "f:ports": {'k:{"containerPort":8080,"protocol":"TCP"}': {".": {}, "f:name": {}}},
            "f:resources": {".": {}, "f:limits": {".": {}, "f:cpu": {}, "f:memory": {}}},
            "f:volumeMounts": {'k:{"mountPath":"/etc/shop"}': {".": {}, "f:name": {}}},
        },
        'k:{"name":"proxy"}': {".": {}, "f:image": {}, "f:name": {}, "f:resources": {".": {}}},
    }
    status = {
        "f:conditions": {
            f'k:{{"type":"{t}"}}': {".": {}, "f:lastProbeTime": {}, "f:status": {}, "f:type": {}}
            for t in ("ContainersReady", "Initialized", "PodReadyToStartContainers", "Ready")
        },
        "f:containerStatuses": {},
        "f:hostIP": {},
        "f:phase": {},
        "f:podIP": {},
        "f:podIPs": {".": {}, 'k:{"ip":"10.0.0.1"}': {".": {}, "f:ip": {}}},
        "f:startTime": {},
    }
    return [
        {
            "manager": "kube-controller-manager",
            "operation": "Update",
            "apiVersion": "v1",
            "time": START,
            "fieldsType": "FieldsV1",
            "fieldsV1": {
                "f:metadata": {
                    "f:generateName": {},
                    "f:labels": {".": {}, "f:app.kubernetes.io/name": {}, "f:team": {}},
                    "f:ownerReferences": {".": {}, 'k:{"uid":"x"}': {}},
                },
                "f:spec": {"f:containers": containers, "f:dnsPolicy": {}, "f:volumes": {}},
            },
        },
        {
            "manager": "kubelet",
            "operation": "Update",
            "apiVersion": "v1",
            "time": START,
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:status": status},
            "subresource": "status",
        },
    ]


def pod(workload: int, replica: int, *, managed_fields: bool = True) -> dict[str, Any]:
    """One Running, Ready pod of `workload`'s Deployment."""
    name = pod_name(workload, replica)
    node = f"node-{(workload * 7 + replica) % 1000:04d}"
    ip = f"10.{(workload >> 8) % 256}.{workload % 256}.{replica % 250 + 2}"
    labels = {**workload_labels(workload), "pod-template-hash": _hash("rs", workload)}
    conditions = [
        {"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": START}
        for t in (
            "PodReadyToStartContainers",
            "Initialized",
            "Ready",
            "ContainersReady",
            "PodScheduled",
        )
    ]
    statuses = [
        {
            "name": c,
            "state": {"running": {"startedAt": START}},
            "lastState": {},
            "ready": True,
            "restartCount": 0,
            "image": image,
            "imageID": f"{image}@sha256:{hashlib.sha256(image.encode()).hexdigest()}",
            "containerID": f"containerd://{hashlib.sha256(f'{name}/{c}'.encode()).hexdigest()}",
            "started": True,
        }
        for c, image in (
            ("app", f"{_IMAGES[workload % 2]}:1.42.0"),
            ("proxy", "registry.example.com/mesh/proxy:1.21.3"),
        )
    ]
    metadata: dict[str, Any] = {
        "name": name,
        "generateName": f"{workload_name(workload)}-{_hash('rs', workload)}-",
        "namespace": namespace_of(workload),
        "uid": _uid("pod", workload, replica),
        "resourceVersion": str(100_000 + workload * 1000 + replica),
        "creationTimestamp": START,
        "labels": labels,
        "annotations": {
            "kubectl.kubernetes.io/restartedAt": START,
            "prometheus.io/scrape": "true",
            "prometheus.io/port": "9090",
        },
        "ownerReferences": [
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "name": f"{workload_name(workload)}-{_hash('rs', workload)}",
                "uid": _uid("rs", workload),
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
    }
    if managed_fields:
        metadata["managedFields"] = _managed_fields()
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": {
            "containers": _containers(workload),
            "volumes": _volumes(),
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "shop",
            "serviceAccount": "shop",
            "nodeName": node,
            "securityContext": {"runAsUser": 10001, "fsGroup": 10001},
            "schedulerName": "default-scheduler",
            "tolerations": [
                {
                    "key": "node.kubernetes.io/not-ready",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 300,
                },
                {
                    "key": "node.kubernetes.io/unreachable",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 300,
                },
            ],
            "priority": 0,
            "enableServiceLinks": True,
            "preemptionPolicy": "PreemptLowerPriority",
        },
        "status": {
            "phase": "Running",
            "conditions": conditions,
            "hostIP": f"192.168.{(workload * 7 + replica) % 1000 // 250}.{(workload * 7 + replica) % 250}",
            "hostIPs": [{"ip": "192.168.0.1"}],
            "podIP": ip,
            "podIPs": [{"ip": ip}],
            "startTime": START,
            "containerStatuses": statuses,
            "qosClass": "Burstable",
        },
    }


def node(index: int) -> dict[str, Any]:
    """A Ready node with allocatable resources, conditions and images, as a kubelet reports it."""
    name = f"node-{index:04d}"
    labels = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "node.kubernetes.io/instance-type": "m6i.2xlarge",
        "topology.kubernetes.io/zone": f"eu-west-1{'abc'[index % 3]}",
    }
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "spec": {"podCIDR": f"10.{index // 256}.{index % 256}.0/24"},
        "status": {
            "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"},
            "allocatable": {"cpu": "7910m", "memory": "30Gi", "pods": "110"},
            "conditions": [
                {"type": t, "status": "False", "reason": f"No{t}", "lastHeartbeatTime": START}
                for t in ("MemoryPressure", "DiskPressure", "PIDPressure")
            ]
            + [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
            "nodeInfo": {
                "architecture": "amd64",
                "bootID": _uid("boot", index),
                "containerRuntimeVersion": "containerd://1.7.20",
                "kernelVersion": "6.8.0-1015-aws",
                "kubeProxyVersion": "v1.32.0",
                "kubeletVersion": "v1.32.0",
                "machineID": _hash("machine", index) * 3,
                "operatingSystem": "linux",
                "osImage": "Ubuntu 24.04 LTS",
                "systemUUID": _uid("system", index),
            },
        },
    }


def deployment(workload: int, replicas: int) -> dict[str, Any]:
    """The Deployment of `workload`'s pods (same labels and containers)."""
    labels = workload_labels(workload)
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": workload_name(workload), "namespace": namespace_of(workload)},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app.kubernetes.io/name": workload_name(workload)}},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": _containers(workload), "volumes": _volumes()},
            },
        },
    }
