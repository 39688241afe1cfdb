"""Sample Hvpa manifests for the api tests: the fixtures, a small valid base, and edits to it."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Final

import yaml

FIXTURES: Final = Path(__file__).parent / "fixtures"
FIXTURE_NAMES: Final = sorted(path.name for path in FIXTURES.glob("*.yaml"))
DELETE: Final = object()


def fixture(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((FIXTURES / name).read_text())
    return loaded


def base() -> dict[str, Any]:
    """A small valid Hvpa in Gardener's form, to which each test applies one edit."""
    return {
        "apiVersion": "autoscaling.k8s.io/v1alpha1",
        "kind": "Hvpa",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "hpa": {
                "deploy": True,
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {
                        "minReplicas": 1,
                        "maxReplicas": 10,
                        "metrics": [
                            {
                                "type": "Resource",
                                "resource": {
                                    "name": "cpu",
                                    "target": {"type": "Utilization", "averageUtilization": 70},
                                },
                            }
                        ],
                    },
                },
            },
            "vpa": {"deploy": True},
            "weightBasedScalingIntervals": [
                {"vpaWeight": 60, "startReplicaCount": 1, "lastReplicaCount": 10}
            ],
        },
    }


def edited(changes: dict[str, Any], start: dict[str, Any] | None = None) -> dict[str, Any]:
    """`start` (default `base()`) with each dotted path set to its value, or removed for DELETE.

    A path segment that is a number indexes a list (`spec.hpa.template.spec.metrics.0.type`).
    """
    manifest = copy.deepcopy(start if start is not None else base())
    for path, value in changes.items():
        *parents, last = path.split(".")
        node: Any = manifest
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node.setdefault(part, {})
        key: Any = int(last) if isinstance(node, list) else last
        if value is DELETE:
            del node[key]
        else:
            node[key] = copy.deepcopy(value)
    return manifest
