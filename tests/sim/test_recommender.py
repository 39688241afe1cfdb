"""metrics-server and the VPA-like recommender: windows, decaying percentiles, margins, OOM bumps,
container policies, and the VPA status hvpa reads."""

from __future__ import annotations

from typing import Any

import pytest
from sim_kit import MIB, container, model, workload

from hvpa.labels import LabelSelector
from hvpa.quantity import parse_bytes, parse_cpu_millis
from hvpa.sim.load import ContainerLoad, WorkloadLoad
from hvpa.sim.recommender import DecayingHistogram
from hvpa.sim.traces import Demand, Trace

DEPLOYMENT = ("Deployment", "default", "web")
HOUR = 3600.0


def histogram(half_life: float = HOUR) -> DecayingHistogram:
    return DecayingHistogram(first_bucket=10.0, ratio=1.05, half_life_seconds=half_life)


def within_a_bucket(result: float | None, expected: float) -> bool:
    """Buckets start 10 wide and grow 5% each: a percentile is the end of the sample's bucket."""
    return result is not None and expected <= result <= expected + 10.0 + 0.06 * expected


def test_percentiles_land_within_a_bucket_of_the_samples() -> None:
    h = histogram()
    assert h.empty and h.percentile(0.9) is None
    for value in range(10, 1010, 10):
        h.add(float(value), 1.0, 0.0)
    for fraction, expected in ((0.5, 500.0), (0.9, 900.0), (0.95, 950.0)):
        assert within_a_bucket(h.percentile(fraction), expected)


def test_old_samples_fade_with_the_half_life() -> None:
    h = histogram()
    for _ in range(90):
        h.add(1000.0, 1.0, 0.0)
    for _ in range(10):
        h.add(100.0, 1.0, 4 * HOUR)
    # Four half-lives later the 90 old samples weigh 90/16 against 10 new ones.
    assert within_a_bucket(h.percentile(0.5), 100.0)
    same_time = histogram()
    for _ in range(90):
        same_time.add(1000.0, 1.0, 0.0)
    for _ in range(10):
        same_time.add(100.0, 1.0, 0.0)
    result = same_time.percentile(0.5)
    assert result is not None and result >= 1000.0


def test_decay_over_many_half_lives_renormalises_without_overflow() -> None:
    h = histogram(half_life=60.0)
    for step in range(200):
        h.add(500.0 if step < 100 else 50.0, 1.0, step * 60.0)
    assert within_a_bucket(h.percentile(0.9), 50.0)


def vpa(policies: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "updatePolicy": {"updateMode": "Off"},
    }
    if policies is not None:
        spec["resourcePolicy"] = {"containerPolicies": policies}
    return {
        "apiVersion": "autoscaling.k8s.io/v1",
        "kind": "VerticalPodAutoscaler",
        "metadata": {"name": "web-vpa", "namespace": "default"},
        "spec": spec,
    }


def loaded_model(policies: list[dict[str, Any]] | None = None, **settings: Any) -> Any:
    """Two pods, each using 400m CPU and 300Mi memory (with its base); a VPA on them."""
    m = model(**settings)
    m.server.objects.create(
        "deployments",
        workload(
            "Deployment",
            replicas=2,
            containers=[container(limit_memory="1Gi"), container("sidecar", cpu="10m")],
        ),
    )
    m.cluster.loads[DEPLOYMENT] = WorkloadLoad(
        Trace("test", lambda t: Demand(700.0, 500 * MIB)),
        {"app": ContainerLoad(1.0, 50.0, 50 * MIB), "sidecar": ContainerLoad(0.0, 5.0, 8 * MIB)},
    )
    m.server.objects.create("verticalpodautoscalers", vpa(policies))
    return m


def recommendation(m: Any) -> dict[str, dict[str, Any]]:
    status = m.server.objects.get("verticalpodautoscalers", "web-vpa")["status"]
    assert {c["type"]: c["status"] for c in status["conditions"]} == {
        "RecommendationProvided": "True"
    }
    return {c["containerName"]: c for c in status["recommendation"]["containerRecommendations"]}


def test_metrics_server_publishes_window_averages_for_running_pods() -> None:
    m = loaded_model()
    m.run(60)
    pods = m.server.metrics.pod_metrics("default", None, LabelSelector.parse("app=web"))
    assert len(pods) == 2
    for item in pods:
        usage = {c["name"]: c["usage"] for c in item["containers"]}
        assert parse_cpu_millis(usage["app"]["cpu"]) == 400
        assert parse_bytes(usage["app"]["memory"]) == 300 * MIB
        assert item["window"] == "15s"
    nodes = m.server.metrics.node_metrics(None, LabelSelector.parse(""))
    assert sum(parse_cpu_millis(n["usage"]["cpu"]) for n in nodes) == 2 * 405


def test_recommendation_is_the_p90_plus_margin_with_bounds() -> None:
    m = loaded_model()
    assert "status" not in m.server.objects.get("verticalpodautoscalers", "web-vpa")
    m.run(300)
    app = recommendation(m)["app"]
    cpu = parse_cpu_millis(app["target"]["cpu"])
    assert within_a_bucket(cpu / 1.15, 400)
    memory = parse_bytes(app["target"]["memory"])
    assert 300 * MIB * 1.15 <= memory <= 300 * MIB * 1.15 * 1.06
    assert (
        parse_cpu_millis(app["lowerBound"]["cpu"])
        <= cpu
        <= parse_cpu_millis(app["upperBound"]["cpu"])
    )
    assert app["uncappedTarget"] == app["target"]
    sidecar = recommendation(m)["sidecar"]
    # The VPA's per-pod floors, split over two containers: 25m / 2 and 250Mi / 2.
    assert parse_cpu_millis(sidecar["target"]["cpu"]) == 13
    assert parse_bytes(sidecar["target"]["memory"]) == 125 * MIB


def test_container_policies_cap_skip_and_limit_resources() -> None:
    m = loaded_model(
        [
            {
                "containerName": "app",
                "maxAllowed": {"cpu": "300m"},
                "minAllowed": {"memory": "1Gi"},
            },
            {"containerName": "*", "mode": "Off"},
        ]
    )
    m.run(300)
    found = recommendation(m)
    assert set(found) == {"app"}
    app = found["app"]
    assert app["target"] == {"cpu": "300m", "memory": "1Gi"}
    assert parse_cpu_millis(app["uncappedTarget"]["cpu"]) > 400

    only_cpu = loaded_model([{"containerName": "*", "controlledResources": ["cpu"]}])
    only_cpu.run(120)
    assert set(recommendation(only_cpu)["app"]["target"]) == {"cpu"}


def test_an_oomkill_pushes_the_memory_target_above_the_limit() -> None:
    m = loaded_model(readiness_delay_seconds=5.0)
    m.run(120)
    before = parse_bytes(recommendation(m)["app"]["target"]["memory"])
    assert before < 2**30
    # One bumped sample among the few taken so far is more than a tenth of their weight:
    # the target is the bump (limit x 1.2) plus the margin.
    m.cluster.recommender.observe_oom(DEPLOYMENT, "app", 2**30)
    m.run(60)
    assert parse_bytes(recommendation(m)["app"]["target"]["memory"]) >= 2**30 * 1.2 * 1.15


@pytest.mark.parametrize("resource", ["cpu", "memory"])
def test_recommendations_follow_usage_down_over_half_lives(resource: str) -> None:
    m = loaded_model()
    m.run(300)
    high = recommendation(m)["app"]["target"][resource]
    m.cluster.loads[DEPLOYMENT] = WorkloadLoad(
        Trace("low", lambda t: Demand(100.0, 100 * MIB)),
        {"app": ContainerLoad(1.0, 50.0, 50 * MIB)},
    )
    m.run(4 * 3600)
    low = recommendation(m)["app"]["target"][resource]
    parse = parse_cpu_millis if resource == "cpu" else parse_bytes
    assert parse(low) < parse(high) / 2
