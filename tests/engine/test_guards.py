"""Guards: other writers, missing data, CPU starvation and OOMKills."""

from __future__ import annotations

import msgspec
import pytest

from hvpa.api import parse_hvpa
from hvpa.engine.guards import (
    Starving,
    Writer,
    apply_starvation,
    detect_starvation,
    find_conflicts,
    missing_data_holds,
    writer_from_hvpa,
    writer_from_vpa,
)
from hvpa.engine.strategies.plan import Blocked, Hold, HorizontalInput, Plan
from hvpa.engine.vertical import ContainerTarget, ResourceChange, VerticalRecommendation
from hvpa.quantity import parse_milli
from hvpa.records import (
    ContainerMetrics,
    ContainerSpec,
    OomKill,
    PodMetricsRecord,
    PodRecord,
    Resources,
    VpaRecord,
)


def res(cpu: str | None = None, memory: str | None = None) -> Resources:
    return Resources(
        cpu=parse_milli(cpu) if cpu is not None else None,
        memory=parse_milli(memory) if memory is not None else None,
    )


ME = Writer("Hvpa", "shop", "web", "Deployment", "web", created=100.0)


def writer(
    kind: str, name: str, target: str = "web", mode: str = "", created: float | None = None
) -> Writer:
    return Writer(kind, "shop", name, "Deployment", target, mode, created)


@pytest.mark.parametrize(
    ("other", "expected"),
    [
        pytest.param(writer("HorizontalPodAutoscaler", "web-hpa"), ["horizontal"], id="hpa-same-target"),
        pytest.param(writer("HorizontalPodAutoscaler", "api-hpa", "api"), [], id="hpa-other-target"),
        pytest.param(writer("VerticalPodAutoscaler", "web-vpa", mode="Off"), [], id="vpa-off"),
        pytest.param(writer("VerticalPodAutoscaler", "web-vpa", mode="Auto"), ["vertical"], id="vpa-auto"),
        pytest.param(writer("VerticalPodAutoscaler", "web-vpa", mode="Initial"), ["vertical"], id="vpa-initial"),
        pytest.param(writer("Hvpa", "old", created=50.0), ["horizontal", "vertical"], id="older-hvpa-acts"),
        pytest.param(writer("Hvpa", "new", created=150.0), [], id="newer-hvpa-waits"),
        pytest.param(writer("Hvpa", "unknown"), [], id="unknown-age-is-newest"),
        pytest.param(writer("Hvpa", "aaa", created=100.0), ["horizontal", "vertical"], id="same-age-by-name"),
        pytest.param(writer("Hvpa", "zzz", created=100.0), [], id="same-age-later-name"),
        pytest.param(writer("Hvpa", "web", created=1.0), [], id="itself"),
    ],
)  # fmt: skip
def test_find_conflicts(other: Writer, expected: list[str]) -> None:
    holds = find_conflicts(ME, [other])
    assert [h.axis for h in holds] == expected
    assert all(h.reason == "ConflictingAutoscaler" and other.name in h.message for h in holds)


def test_conflicts_only_on_axes_this_hvpa_drives() -> None:
    others = [writer("HorizontalPodAutoscaler", "h"), writer("Hvpa", "old", created=1.0)]
    holds = find_conflicts(ME, others, horizontal=False)
    assert [h.axis for h in holds] == ["vertical"]


def test_other_namespace_is_no_conflict() -> None:
    other = Writer("HorizontalPodAutoscaler", "elsewhere", "web-hpa", "Deployment", "web")
    assert find_conflicts(ME, [other]) == ()


def test_writer_from_vpa() -> None:
    record = VpaRecord(
        namespace="shop",
        name="web-vpa",
        uid="u",
        target_kind="Deployment",
        target_name="web",
        update_mode="Recreate",
        container_policies=(),
        recommendations=None,
        conditions={},
        creation_time=7.0,
    )
    assert writer_from_vpa(record) == Writer(
        "VerticalPodAutoscaler", "shop", "web-vpa", "Deployment", "web", "Recreate", 7.0
    )


def test_missing_data_holds() -> None:
    unusable = VerticalRecommendation((), "LowConfidence", "too little history")
    assert missing_data_holds(vertical=unusable) == (
        Hold("vertical", "LowConfidence", "too little history"),
    )
    assert missing_data_holds(vertical=VerticalRecommendation(())) == ()
    assert missing_data_holds(vertical=None) == ()


APP = ContainerSpec("app", requests=res("500m", "1G"), limits=res("1", "2G"))
TARGET = ContainerTarget("app", res("800m", "1500M"), max_allowed=res(memory="10G"))


def pod(
    name: str = "web-1",
    oom: float | str | None = "none",
    container: ContainerSpec = APP,
) -> PodRecord:
    kills = () if oom == "none" else (OomKill("app", oom if not isinstance(oom, str) else None),)
    return PodRecord(
        namespace="shop",
        name=name,
        labels={},
        phase="Running",
        deleting=False,
        start_time=0.0,
        ready="True",
        ready_transition=0.0,
        containers=(container,),
        oom_kills=kills,
    )


def usage(cpu: str, name: str = "web-1") -> PodMetricsRecord:
    return PodMetricsRecord("shop", name, 0.0, 30.0, (ContainerMetrics("app", res(cpu, "500M")),))


@pytest.mark.parametrize(
    ("target", "sample", "own", "deleting", "starving"),
    [
        pytest.param(TARGET, "500m", APP, False, True, id="usage-at-request"),
        pytest.param(TARGET, "700m", APP, False, True, id="usage-above-request"),
        pytest.param(TARGET, "499m", APP, False, False, id="usage-below-request"),
        pytest.param(ContainerTarget("app", res("500m", "1G")), "900m", APP, False, False, id="target-not-higher"),
        pytest.param(ContainerTarget("app", res("2"), controlled=("memory",)), "900m", APP, False, False, id="cpu-not-controlled"),
        pytest.param(TARGET, "600m", ContainerSpec("app", requests=res("600m")), False, True, id="pod-own-request-above-the-template"),
        pytest.param(TARGET, "300m", ContainerSpec("app", requests=res("300m")), False, False, id="old-template-pod-below-the-template"),
        pytest.param(TARGET, "700m", APP, True, False, id="pod-being-deleted"),
    ],
)  # fmt: skip
def test_cpu_starvation(
    target: ContainerTarget, sample: str, own: ContainerSpec, deleting: bool, starving: bool
) -> None:
    """Usage at the pod's own request is starvation, unless the template already gives more
    (a pod of an older template, which the rollout replaces) or the pod is being deleted."""
    found, lines = detect_starvation(
        [APP],
        [target],
        [msgspec.structs.replace(pod(container=own), deleting=deleting)],
        [usage(sample)],
        since=None,
    )
    assert bool(found and found[0].cpu) is starving
    assert bool(lines) is starving


@pytest.mark.parametrize(
    ("oom", "since", "override", "floor"),
    [
        pytest.param(200.0, 100.0, False, "1400M", id="oom-after-last-scaling"),
        pytest.param(50.0, 100.0, False, None, id="oom-before-last-scaling"),
        pytest.param(None, 100.0, False, "1400M", id="oom-time-unknown"),
        pytest.param(50.0, None, False, "1400M", id="never-scaled"),
        pytest.param("none", None, True, "1400M", id="gardener-override"),
        pytest.param("none", None, False, None, id="nothing"),
    ],
)
def test_oom(
    oom: float | str | None, since: float | None, override: bool, floor: str | None
) -> None:
    found, _ = detect_starvation(
        [APP], [TARGET], [pod(oom=oom)], [], since=since, override_oom=override
    )
    if floor is None:
        assert found == ()
    else:
        (guard,) = found
        assert guard.memory_floor == parse_milli(floor)
        assert guard.memory


def test_oom_floor_uses_the_limit_hit_then_the_request_and_stays_within_max() -> None:
    hit = ContainerSpec("app", requests=res("500m", "1G"), limits=res("1", "3G"))
    found, _ = detect_starvation([APP], [TARGET], [pod(oom=None, container=hit)], [], since=None)
    assert found[0].memory_floor == parse_milli("1600M")
    unlimited = ContainerSpec("app", requests=res("500m", "1000001"))
    found, _ = detect_starvation(
        [unlimited], [TARGET], [pod(oom=None, container=unlimited)], [], since=None
    )
    assert found[0].memory_floor == parse_milli("1201000")
    capped = ContainerTarget("app", res("800m", "1G"), max_allowed=res(memory="1100M"))
    found, _ = detect_starvation([APP], [capped], [pod(oom=None)], [], since=None)
    assert found[0].memory_floor == parse_milli("1100M")
    at_max = ContainerTarget("app", res("800m", "1G"), max_allowed=res(memory="1G"))
    found, lines = detect_starvation([APP], [at_max], [pod(oom=None)], [], since=None)
    assert found[0].memory_floor is None
    assert "maxAllowed" in lines[0]


def test_memory_not_controlled_is_not_guarded() -> None:
    cpu_only = ContainerTarget("app", res("500m"), controlled=("cpu",))
    assert (
        detect_starvation([APP], [cpu_only], [pod(oom=None)], [], since=None, override_oom=True)[0]
        == ()
    )


def plan_with(changes: tuple[ResourceChange, ...], blocked: tuple[Blocked, ...] = ()) -> Plan:
    horizontal = HorizontalInput(current=2, min_replicas=1, max_replicas=4, desired=2)
    return Plan("Weighted", horizontal, 2, changes, blocked, 0)


def step(resource: str, current: str, proposed: str, target: str | None = None) -> ResourceChange:
    now, then = parse_milli(current), parse_milli(proposed)
    wanted = parse_milli(target) if target else then
    return ResourceChange("app", resource, now, wanted, then, then - now, 40)


def test_starving_cpu_is_marked_and_weight_still_decides() -> None:
    cpu = step("cpu", "500m", "620m", "800m")
    planned = apply_starvation(
        plan_with((cpu,)), [Starving("app", cpu="usage at request")], [APP], [TARGET]
    )
    assert planned.changes == (
        ResourceChange(
            "app", "cpu", cpu.current, cpu.target, cpu.proposed, cpu.step, 40, "usage at request"
        ),
    )


def test_starving_of_cpu_only_leaves_the_memory_change_alone() -> None:
    memory = step("memory", "1G", "600M")
    planned = apply_starvation(
        plan_with((memory,)), [Starving("app", cpu="usage at request")], [APP], [TARGET]
    )
    assert planned.changes == (memory,)


def test_oom_raises_memory_to_its_floor() -> None:
    small = step("memory", "1G", "1100M", "1500M")
    guard = Starving("app", memory="OOMKilled", memory_floor=parse_milli("1400M"))
    (raised,) = apply_starvation(plan_with((small,)), [guard], [APP], [TARGET]).changes
    assert (raised.proposed, raised.direction, raised.starving) == (
        parse_milli("1400M"),
        "up",
        "OOMKilled",
    )
    large = step("memory", "1G", "1450M", "1500M")
    (kept,) = apply_starvation(plan_with((large,)), [guard], [APP], [TARGET]).changes
    assert (kept.proposed, kept.starving) == (parse_milli("1450M"), "OOMKilled")


def test_oom_turns_a_memory_scale_down_into_the_floor() -> None:
    down = step("memory", "1G", "900M")
    guard = Starving("app", memory="OOMKilled", memory_floor=parse_milli("1400M"))
    (raised,) = apply_starvation(plan_with((down,)), [guard], [APP], [TARGET]).changes
    assert (raised.direction, raised.proposed) == ("up", parse_milli("1400M"))
    no_floor = Starving("app", memory="OOMKilled")
    assert apply_starvation(plan_with((down,)), [no_floor], [APP], [TARGET]).changes == ()


def test_oom_overrides_a_weight_hold() -> None:
    held = Blocked("vertical", "up", "Weight", "vpaWeight 0", "app", "memory")
    other = Blocked("vertical", "up", "Weight", "vpaWeight 0", "app", "cpu")
    guard = Starving("app", memory="OOMKilled", memory_floor=parse_milli("1400M"))
    planned = apply_starvation(plan_with((), (held, other)), [guard], [APP], [TARGET])
    (created,) = planned.changes
    assert (created.resource, created.current, created.proposed, created.target) == (
        "memory",
        parse_milli("1G"),
        parse_milli("1400M"),
        parse_milli("1500M"),
    )
    assert planned.blocked == (other,)
    assert any("OOMKill" in line for line in planned.explanation)


def test_no_starvation_leaves_the_plan() -> None:
    original = plan_with((step("cpu", "500m", "600m"),))
    assert apply_starvation(original, [], [APP], [TARGET]) is original


def test_writer_from_hvpa() -> None:
    hvpa = parse_hvpa(
        {
            "apiVersion": "autoscaling.k8s.io/v1alpha1",
            "kind": "Hvpa",
            "metadata": {
                "name": "web",
                "namespace": "shop",
                "creationTimestamp": "1970-01-01T00:01:40Z",
            },
            "spec": {
                "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "hpa": {"template": {"spec": {"maxReplicas": 3}}},
            },
        }
    )
    assert writer_from_hvpa(hvpa) == ME
