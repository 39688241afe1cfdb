"""A workload that OOM-loops from its first pod, in `hvpa sim`: the rollout that never ends.

Its pods die before they are ever available, so the target always reports
a rollout in progress; a Rollout gate that waited for it would hold the
OOM guard's memory increase for ever (the run would end with every OOMKill
unanswered and the request where it started). The OOMKilled pods run the
current template, so the increase passes the gate (guards.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from hvpa.sim.runner import RunOptions, simulate
from hvpa.sim.scenarios import scenario_from_file
from hvpa.sim.traces import parse_trace

MIB = 2**20

HVPA = {
    "apiVersion": "autoscaling.k8s.io/v1alpha1",
    "kind": "Hvpa",
    "metadata": {"name": "oomer", "namespace": "default"},
    "spec": {
        "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "oomer"},
        "hpa": {
            "deploy": True,
            "template": {
                "spec": {
                    "minReplicas": 2,
                    "maxReplicas": 4,
                    "metrics": [
                        {
                            "type": "Resource",
                            "resource": {
                                "name": "cpu",
                                "target": {"type": "Utilization", "averageUtilization": 70},
                            },
                        }
                    ],
                }
            },
        },
        "vpa": {
            "deploy": True,
            "template": {
                "spec": {
                    "resourcePolicy": {
                        "containerPolicies": [
                            {
                                "containerName": "app",
                                "minAllowed": {"cpu": "100m", "memory": "128Mi"},
                                "maxAllowed": {"cpu": "2", "memory": "4Gi"},
                            }
                        ]
                    }
                }
            },
        },
    },
}
# 300Mi limits against 64Mi of base and half of 1Gi of load each: every pod OOMs.
DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "oomer", "namespace": "default"},
    "spec": {
        "replicas": 2,
        "selector": {"matchLabels": {"app": "oomer"}},
        "template": {
            "metadata": {"labels": {"app": "oomer"}},
            "spec": {
                "containers": [
                    {
                        "name": "app",
                        "image": "app",
                        "resources": {
                            "requests": {"cpu": "250m", "memory": "256Mi"},
                            "limits": {"cpu": "500m", "memory": "300Mi"},
                        },
                    }
                ]
            },
        },
    },
}


@pytest.mark.slow
def test_an_oom_looping_workload_gets_its_memory(tmp_path: Path) -> None:
    manifest = tmp_path / "oomer.yaml"
    manifest.write_text(yaml.safe_dump_all([HVPA, DEPLOYMENT]), encoding="utf-8")
    scenario = scenario_from_file(manifest)
    duration = 30 * 60
    trace = parse_trace("steady:memory=1Gi", duration_seconds=duration, peak=scenario.peak, seed=1)
    report = simulate(RunOptions(scenario=scenario, trace=trace, duration_seconds=duration, seed=1))
    summary = report["summary"]
    assert summary["oomKills"] > 0
    assert summary["oomKillsAnswered"] > 0
    assert summary["podRequests"]["max"]["memory"] > 256 * MIB
    assert summary["rollouts"] > 0
    assert summary["underProvisionedMinutes"]["total"] < duration / 60 / 2
