"""The replica calculator, case by case from upstream's replica_calculator_test.go (Kubernetes 1.37.2).

Each table row keeps the name (the pytest id is the Go subtest's name) and
the figures of the Go case it comes from, under a comment or test naming
the Go test function: utilization and usage ratios, missing and unready
pods, hot CPU, failed and deleted pods, tolerance bands, overflow, pod
grouping and requests. A row or test whose name is not upstream's is hvpa's
own; docs/gardener-compatibility.md lists the upstream cases not ported and
why.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pytest
from horizontal_kit import (
    COOL,
    HOT,
    NOW,
    calculator,
    custom_metrics,
    levels,
    pod,
    pod_metrics,
    pods,
)

from hvpa.engine.explain import Explanation
from hvpa.engine.horizontal.replica_calculator import (
    Tolerances,
    calculate_requests,
    get_resource_utilization_ratio,
    group_pods,
)
from hvpa.engine.metrics import (
    ExternalMetricValue,
    ExternalMetricValueList,
    MetricError,
    PodMetric,
    PodMetricsList,
    get_external_metric,
    get_raw_metric,
    get_resource_metric,
)
from hvpa.records import ContainerMetrics, ContainerSpec, PodMetricsRecord, Resources

DEFAULT = Tolerances(0.1, 0.1)
MAX_INT32 = 2**31 - 1
MAX_INT64 = 2**63 - 1


def resource_replicas(
    current: int,
    target: int,
    requests: Sequence[int],
    metric_levels: Sequence[Sequence[int]],
    *,
    container: str = "",
    readiness: Sequence[str] | None = None,
    start_times: Sequence[float] | None = None,
    phases: Sequence[str] | None = None,
    deleting: Sequence[bool] | None = None,
    names: Sequence[str] = (),
    tolerances: Tolerances = DEFAULT,
) -> tuple[int, int, int]:
    pod_list = pods(
        current,
        readiness=readiness,
        start_times=start_times,
        phases=phases,
        deleting=deleting,
        cpu_requests=requests,
    )
    info = get_resource_metric(pod_metrics(metric_levels, names=names), "cpu", container)
    return calculator(pod_list).get_resource_replicas(
        current, target, "cpu", tolerances, container, info
    )


# replica_calculator_test.go TestReplicaCalcResourceScale, every row: (replicas,
# utilization %, raw average value in milli-units).
RESOURCE_SCALE = [
    pytest.param(
        dict(current=3, target=30, requests=[1000] * 3, metric_levels=levels(300, 500, 700)),
        (5, 50, 2 * 500),
        id="scale up",
    ),
    pytest.param(
        dict(
            current=3,
            target=30,
            requests=[1000] * 3,
            metric_levels=[[1000, 300], [1000, 500], [1000, 700]],
            container="container2",
        ),
        (5, 50, 500),
        id="scale up: container metric",
    ),
    pytest.param(
        dict(
            current=3,
            target=30,
            requests=[1000] * 3,
            metric_levels=levels(300, 500, 700),
            readiness=["False", "True", "True"],
        ),
        (4, 60, 2 * 600),
        id="scale up: unready pod scales less",
    ),
    pytest.param(
        dict(
            current=3,
            target=30,
            requests=[1000] * 3,
            metric_levels=[[0, 300], [0, 500], [0, 700]],
            start_times=[HOT, COOL, COOL],
            container="container2",
        ),
        (4, 60, 600),
        id="scale up: hot-CPU container scales less",
    ),
    pytest.param(
        dict(
            current=3,
            target=30,
            requests=[1000] * 3,
            metric_levels=levels(300, 500, 700),
            start_times=[HOT, COOL, COOL],
        ),
        (4, 60, 2 * 600),
        id="scale up: hot-CPU pod scales less",
    ),
    pytest.param(
        dict(
            current=3,
            target=30,
            requests=[1000] * 3,
            metric_levels=levels(400, 500, 700),
            readiness=["True", "False", "False"],
        ),
        (3, 40, 2 * 400),
        id="no scale: unready pods ignored",
    ),
    pytest.param(
        dict(
            current=3,
            target=30,
            requests=[1000] * 3,
            metric_levels=levels(400, 500, 700),
            readiness=["True", "False", "False"],
            start_times=[COOL, HOT, HOT],
        ),
        (3, 40, 2 * 400),
        id="no scale: hot-CPU pods ignored",
    ),
    pytest.param(
        dict(
            current=2,
            target=30,
            requests=[1000] * 4,
            metric_levels=levels(500, 700),
            readiness=["True", "True", "False", "False"],
            phases=["Running", "Running", "Failed", "Failed"],
        ),
        (4, 60, 2 * 600),
        id="scale up: failed pods ignored",
    ),
    pytest.param(
        dict(
            current=2,
            target=30,
            requests=[1000] * 4,
            metric_levels=[[1000, 500], [9000, 700], [1000], [9000]],
            readiness=["True", "True", "False", "False"],
            phases=["Running", "Running", "Failed", "Failed"],
            container="container2",
        ),
        (4, 60, 600),
        id="scale up: failed pods ignored with missing container metric",
    ),
    pytest.param(
        dict(
            current=2,
            target=30,
            requests=[1000] * 4,
            metric_levels=[[1000, 500], [9000, 700]],
            readiness=["True", "True", "False", "False"],
            phases=["Running", "Running", "Failed", "Failed"],
            container="container2",
        ),
        (4, 60, 600),
        id="scale up: container metrics with failed pods ignored",
    ),
    pytest.param(
        dict(
            current=2,
            target=30,
            requests=[1000] * 4,
            metric_levels=levels(500, 700),
            readiness=["True", "True", "False", "False"],
            phases=["Running"] * 4,
            deleting=[False, False, True, True],
        ),
        (4, 60, 2 * 600),
        id="scale up: pods being deleted are ignored",
    ),
    pytest.param(
        dict(
            current=2,
            target=30,
            requests=[1000] * 4,
            metric_levels=levels(500, 700),
            readiness=["True", "True", "False", "False"],
            phases=["Running"] * 4,
            deleting=[False, False, True, True],
            container="container1",
        ),
        (4, 60, 600),
        id="scale up: container metrics with pods being deleted ignored",
    ),
    pytest.param(
        dict(
            current=5, target=50, requests=[1000] * 5, metric_levels=levels(100, 300, 500, 250, 250)
        ),
        (3, 28, 2 * 280),
        id="scale down",
    ),
    pytest.param(
        dict(
            current=5,
            target=50,
            requests=[1000] * 5,
            metric_levels=[[1000, 100], [1000, 300], [1000, 500], [1000, 250], [1000, 250]],
            container="container2",
        ),
        (3, 28, 280),
        id="scale down: container metric",
    ),
    pytest.param(
        dict(
            current=5,
            target=50,
            requests=[1000] * 5,
            metric_levels=levels(100, 300, 500, 250, 250),
            readiness=["True", "True", "True", "False", "False"],
        ),
        (2, 30, 2 * 300),
        id="scale down: exclude unready pods",
    ),
    pytest.param(
        dict(
            current=5,
            target=50,
            requests=[1000] * 5,
            metric_levels=[[1000, 100], [1000, 300], [1000, 500], [1000, 250], [1000, 250]],
            readiness=["True", "True", "True", "False", "False"],
            container="container2",
        ),
        (2, 30, 300),
        id="scale down: container metric excludes unready pods",
    ),
    pytest.param(
        dict(
            current=5,
            target=50,
            requests=[1000] * 5,
            metric_levels=levels(100),
            readiness=["True", "False", "False", "False", "False"],
            phases=["Running", "Pending", "Pending", "Pending", "Pending"],
        ),
        (1, 10, 2 * 100),
        id="scale down: exclude unscheduled pods",
    ),
    pytest.param(
        dict(
            current=5,
            target=50,
            requests=[1000] * 5,
            metric_levels=[[1000, 100], [1000, 300], [1000, 500], [1000, 250], [1000, 250]],
            readiness=["True", "False", "False", "False", "False"],
            phases=["Running", "Pending", "Pending", "Pending", "Pending"],
            container="container2",
        ),
        (1, 10, 100),
        id="scale down: container metric excludes unscheduled pods",
    ),
    pytest.param(
        dict(
            current=5,
            target=50,
            requests=[1000] * 5,
            metric_levels=levels(100, 300, 500, 250, 250),
            start_times=[COOL, COOL, COOL, HOT, HOT],
        ),
        (2, 30, 2 * 300),
        id="scale down: ignore hot-CPU pods",
    ),
    pytest.param(
        dict(
            current=5,
            target=50,
            requests=[1000] * 5,
            metric_levels=[[1000, 100], [1000, 300], [1000, 500], [1000, 1000], [1000, 1000]],
            start_times=[COOL, COOL, COOL, HOT, HOT],
            container="container2",
        ),
        (2, 30, 300),
        id="scale down: container metric ignores hot-CPU pods",
    ),
    pytest.param(
        dict(
            current=5,
            target=50,
            requests=[1000] * 7,
            metric_levels=levels(100, 300, 500, 250, 250),
            readiness=["True"] * 5 + ["False"] * 2,
            phases=["Running"] * 5 + ["Failed"] * 2,
        ),
        (3, 28, 2 * 280),
        id="scale down: failed pods ignored",
    ),
    pytest.param(
        dict(
            current=5,
            target=50,
            requests=[1000] * 7,
            metric_levels=[[1000, 100], [1000, 300], [1000, 500], [1000, 250], [1000, 250]],
            readiness=["True"] * 5 + ["False"] * 2,
            phases=["Running"] * 5 + ["Failed"] * 2,
            container="container2",
        ),
        (3, 28, 280),
        id="scale down: container metric with failed pods ignored",
    ),
    pytest.param(
        dict(
            current=5,
            target=50,
            requests=[1000] * 7,
            metric_levels=levels(100, 300, 500, 250, 250),
            readiness=["True"] * 5 + ["False"] * 2,
            phases=["Running"] * 7,
            deleting=[False] * 5 + [True] * 2,
        ),
        (3, 28, 2 * 280),
        id="scale down: pods being deleted are ignored",
    ),
    pytest.param(
        dict(
            current=5,
            target=50,
            requests=[1000] * 7,
            metric_levels=[[1000, 100], [1000, 300], [1000, 500], [1000, 250], [1000, 250]],
            readiness=["True"] * 5 + ["False"] * 2,
            phases=["Running"] * 7,
            deleting=[False] * 5 + [True] * 2,
            container="container2",
        ),
        (3, 28, 280),
        id="scale down: still-running pods being deleted are ignored",
    ),
]


@pytest.mark.parametrize(("case", "expected"), RESOURCE_SCALE)
def test_replica_calc_resource_scale(
    case: dict[str, object], expected: tuple[int, int, int]
) -> None:
    assert resource_replicas(**case) == expected  # type: ignore[arg-type]


# replica_calculator_test.go TestReplicaCalcResourceTolerance, every row.
RESOURCE_TOLERANCE = [
    pytest.param(
        dict(
            current=3,
            target=100,
            requests=[900, 1000, 1100],
            metric_levels=levels(1010, 1030, 1020),
        ),
        (3, 102, 2 * 1020),
        id="within default tolerance",
    ),
    pytest.param(
        dict(
            current=3,
            target=100,
            requests=[900, 1000, 1100],
            metric_levels=levels(909, 1010, 1111),
            tolerances=Tolerances(0.0, 0.0),
        ),
        (4, 101, 2 * 1010),
        id="outside 0% tolerance",
    ),
    pytest.param(
        dict(
            current=3,
            target=100,
            requests=[900, 1000, 1100],
            metric_levels=levels(1890, 1910, 1900),
            tolerances=Tolerances(0.1, 2.0),
        ),
        (3, 190, 2 * 1900),
        id="within 200% scale-up tolerance",
    ),
    pytest.param(
        dict(
            current=3,
            target=100,
            requests=[900, 1000, 1100],
            metric_levels=levels(1100, 1080, 1090),
            tolerances=Tolerances(2.0, 0.08),
        ),
        (4, 109, 2 * 1090),
        id="outside 8% scale-up tolerance (superfluous scale-down tolerance)",
    ),
    pytest.param(
        dict(
            current=3,
            target=100,
            requests=[900, 1000, 1100],
            metric_levels=levels(660, 640, 650),
            tolerances=Tolerances(0.36, 0.1),
        ),
        (3, 65, 2 * 650),
        id="within 36% scale-down tolerance",
    ),
    pytest.param(
        dict(
            current=3,
            target=100,
            requests=[900, 1000, 1100],
            metric_levels=levels(660, 640, 650),
            tolerances=Tolerances(0.34, 0.1),
        ),
        (2, 65, 2 * 650),
        id="outside 34% scale-down tolerance",
    ),
]


@pytest.mark.parametrize(("case", "expected"), RESOURCE_TOLERANCE)
def test_replica_calc_resource_tolerance(
    case: dict[str, object], expected: tuple[int, int, int]
) -> None:
    assert resource_replicas(**case) == expected  # type: ignore[arg-type]


# replica_calculator_test.go TestReplicaCalcResourceMissingMetrics, the rows with a
# result (its three error rows are test_replica_calc_resource_missing_metrics_errors).
RESOURCE_MISSING_METRICS = [
    pytest.param(
        dict(
            current=4,
            target=100,
            requests=[1000] * 4,
            metric_levels=levels(4000, 9500, 3000, 7000, 3200, 2000),
        ),
        (24, 587, 2 * 5875),
        id="superfluous metrics counted",
    ),
    pytest.param(
        dict(current=4, target=100, requests=[1000] * 4, metric_levels=levels(400, 95)),
        (3, 24, 495),
        id="some pods missing metrics scales down",
    ),
    pytest.param(
        dict(current=2, target=100, requests=[1000] * 2, metric_levels=levels(1000)),
        (2, 100, 2 * 1000),
        id="no change: metric equal to target",
    ),
    pytest.param(
        dict(current=2, target=100, requests=[1000] * 2, metric_levels=levels(1900)),
        (2, 190, 2 * 1900),
        id="no change: metric above target",
    ),
    pytest.param(
        dict(current=2, target=100, requests=[1000] * 2, metric_levels=levels(600)),
        (2, 60, 2 * 600),
        id="no change: metric below target",
    ),
    pytest.param(
        dict(
            current=3,
            target=50,
            requests=[1000] * 3,
            metric_levels=levels(100, 450),
            readiness=["False", "True", "True"],
        ),
        (3, 45, 2 * 450),
        id="no change: unready pod metric missing",
    ),
    pytest.param(
        dict(
            current=3,
            target=50,
            requests=[1000] * 3,
            metric_levels=levels(100, 450),
            start_times=[HOT, COOL, COOL],
        ),
        (3, 45, 2 * 450),
        id="no change: hot-CPU pod metric missing",
    ),
    pytest.param(
        dict(
            current=3,
            target=50,
            requests=[1000] * 3,
            metric_levels=levels(100, 2000),
            readiness=["False", "True", "True"],
        ),
        (4, 200, 2 * 2000),
        id="scale up: unready pod metric missing",
    ),
    pytest.param(
        dict(
            current=3,
            target=50,
            requests=[1000] * 3,
            metric_levels=levels(100, 2000),
            readiness=["False", "True", "True"],
            start_times=[HOT, COOL, COOL],
        ),
        (4, 200, 2 * 2000),
        id="scale up: hot-CPU pod metric missing",
    ),
    pytest.param(
        dict(
            current=4,
            target=50,
            requests=[1000] * 4,
            metric_levels=levels(100, 100, 100),
            readiness=["False", "True", "True", "True"],
        ),
        (3, 10, 2 * 100),
        id="scale down: unready pod metric missing",
    ),
    pytest.param(
        dict(
            current=4,
            target=300,
            requests=[1000, 1000, 2000, 2000],
            metric_levels=levels(200, 100, 100),
            readiness=["False", "True", "True", "True"],
        ),
        (2, 6, 2 * 100),
        id="scale down: target over 100",
    ),
    pytest.param(
        dict(
            current=2,
            target=50,
            requests=[1000] * 3,
            metric_levels=levels(100, 100),
            phases=["Running"] * 3,
        ),
        (2, 10, 2 * 100),
        id="rolling update with maxSurge: extra pod missing metric",
    ),
]


@pytest.mark.parametrize(("case", "expected"), RESOURCE_MISSING_METRICS)
def test_replica_calc_resource_missing_metrics(
    case: dict[str, object], expected: tuple[int, int, int]
) -> None:
    assert resource_replicas(**case) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("case", "message"),
    [
        pytest.param(
            dict(
                current=1,
                target=100,
                requests=[1000],
                metric_levels=levels(100),
                names=["an-older-pod-name"],
            ),
            "no metrics returned matched known pods",
            id="disjoint pod and metric names",
        ),
        pytest.param(
            dict(current=1, target=100, requests=[], metric_levels=levels(200)),
            "missing request for cpu in container container1 of Pod test-pod-0",
            id="missing CPU request on container",
        ),
        pytest.param(
            dict(current=0, target=100, requests=[], metric_levels=levels(200)),
            "no pods returned by selector while calculating replica count",
            id="hvpa's own: no pods",
        ),
    ],
)
def test_replica_calc_resource_missing_metrics_errors(
    case: dict[str, object], message: str
) -> None:
    with pytest.raises(MetricError) as error:
        resource_replicas(**case)  # type: ignore[arg-type]
    assert error.value.message == message


def test_no_metrics_at_all_is_an_error_of_the_metrics_client() -> None:
    """TestReplicaCalcResourceMissingMetrics/no metrics returned from metrics API.

    Upstream's GetResourceReplicas wraps it as "unable to get metrics for resource cpu: ...";
    here the metrics client's own message is checked where hvpa raises it.
    """
    with pytest.raises(MetricError, match=r"^no metrics returned from resource metrics API$"):
        get_resource_metric(pod_metrics([]), "cpu", "")


def test_metrics_matching_no_known_pod() -> None:
    """Extraneous metrics only: no request matches, upstream's 'no metrics returned matched known pods'."""
    with pytest.raises(MetricError, match="no metrics returned matched known pods"):
        get_resource_utilization_ratio({"gone": PodMetric(100)}, {"test-pod-0": 1000}, 100)


def test_computed_tolerance_boundary() -> None:
    """TestReplicaCalcComputedToleranceAlgImplementation: just outside the band scales, just inside does not."""
    start_pods = 10
    used = start_pods * 150
    requested = 2 * used
    per_pod = requested // start_pods
    jitter = [100, -100, 10, -10, 2, -2, 1, -1, 0, 0]
    requests = [per_pod + j for j in jitter]
    target = abs(1 / (2.0 * (1 - 0.1))) + 0.01
    final_target = int(target * 100)
    final_pods = math.ceil(used / (requested * target) * start_pods)
    expected_utilization = used * 100 // requested
    # requests are per container here; each pod has two containers at half the request.
    pod_list = pods(start_pods)
    pod_list = tuple(
        pod(
            p.name,
            containers=[
                ContainerSpec("container1", requests=Resources(cpu=requests[i])),
            ],
        )
        for i, p in enumerate(pod_list)
    )
    reading = pod_metrics([[used // 10]] * start_pods)
    info = get_resource_metric(reading, "cpu", "container1")
    result = calculator(pod_list).get_resource_replicas(
        start_pods, final_target, "cpu", DEFAULT, "container1", info
    )
    assert result == (final_pods, expected_utilization, used // 10)

    near_target = int((abs(1 / (2.0 * (1 - 0.1))) + 0.004) * 100)
    info = get_resource_metric(reading, "cpu", "container1")
    result = calculator(pod_list).get_resource_replicas(
        start_pods, near_target, "cpu", DEFAULT, "container1", info
    )
    assert result[0] == start_pods


# ---------------------------------------------------------------------------
# Pods metrics (custom metrics per pod): replica_calculator_test.go TestReplicaCalcPodMetric


@pytest.mark.parametrize(
    ("current", "values", "target", "readiness", "start_times", "expected"),
    [
        pytest.param(3, (20000, 10000, 30000), 15000, None, None, (4, 20000), id="scale up"),
        pytest.param(
            3,
            (50000, 10000, 30000),
            15000,
            ["True", "True", "False"],
            [COOL, COOL, HOT],
            (6, 30000),
            id="scale up: unready hot-CPU pod scales less",
        ),
        pytest.param(
            3,
            (50000, 15000, 30000),
            15000,
            ["False", "True", "False"],
            [HOT, COOL, HOT],
            (7, 31666),
            id="scale up: unready hot-CPU pods avoid scale-down",
        ),
        pytest.param(5, (12000,) * 5, 20000, None, None, (3, 12000), id="scale down"),
        pytest.param(
            3, (20000, 21000, 21000), 20000, None, None, (3, 20666), id="within default tolerance"
        ),
        pytest.param(
            5, (20000, 19000, 21000), 20000, None, None, (5, 20000), id="no change: missing metrics"
        ),
    ],
)
def test_pods_metric_replicas(
    current: int,
    values: tuple[int, ...],
    target: int,
    readiness: list[str] | None,
    start_times: list[float] | None,
    expected: tuple[int, int],
) -> None:
    pod_list = pods(current, readiness=readiness, start_times=start_times)
    info = get_raw_metric(custom_metrics(*values))
    assert calculator(pod_list).get_metric_replicas(current, target, DEFAULT, info) == expected


def test_pods_metric_configurable_tolerance() -> None:
    """TestReplicaCalcPodMetric/outside configurable 1% tolerance: a 1% scale-up tolerance lets 3.3% through."""
    info = get_raw_metric(custom_metrics(20000, 21000, 21000))
    result = calculator(pods(3)).get_metric_replicas(3, 20000, Tolerances(0.1, 0.01), info)
    assert result == (4, 20666)


def test_pods_metric_rolling_update_with_surge() -> None:
    """TestReplicaCalcPodMetric/rolling update with maxSurge: extra pod missing metric.

    The surge pod without metrics holds the count.
    """
    info = get_raw_metric(custom_metrics(10000, 10000))
    pod_list = pods(2, phases=["Running"] * 3)
    assert calculator(pod_list).get_metric_replicas(2, 17000, DEFAULT, info) == (2, 10000)


# ---------------------------------------------------------------------------
# Object metrics: replica_calculator_test.go TestReplicaCalcObjectMetric and
# TestReplicaCalcObjectPerPodMetric, every row; then hvpa's own large-number cases


@pytest.mark.parametrize(
    ("current", "usage", "target", "readiness", "tolerances", "expected"),
    [
        pytest.param(3, 20000, 15000, None, DEFAULT, 4, id="scale up"),
        pytest.param(
            3,
            MAX_INT64,
            1,
            None,
            DEFAULT,
            MAX_INT32,
            id="scale up: very large metric saturates replicas to MaxInt32",
        ),
        pytest.param(
            3,
            50000,
            10000,
            ["False", "True", "False"],
            DEFAULT,
            5,
            id="scale up: ignores unready pods",
        ),
        pytest.param(5, 12000, 20000, None, DEFAULT, 3, id="scale down"),
        pytest.param(3, 20666, 20000, None, DEFAULT, 3, id="within default tolerance"),
        pytest.param(
            3,
            20666,
            20000,
            None,
            Tolerances(0.1, 0.01),
            4,
            id="outside configurable 1% tolerance",
        ),
    ],
)
def test_replica_calc_object_metric(
    current: int,
    usage: int,
    target: int,
    readiness: list[str] | None,
    tolerances: Tolerances,
    expected: int,
) -> None:
    calc = calculator(pods(current, readiness=readiness))
    assert calc.get_object_metric_replicas(current, target, usage, tolerances) == expected


@pytest.mark.parametrize(
    ("current", "usage", "target", "tolerances", "expected"),
    [
        pytest.param(3, 20000, 5000, DEFAULT, (4, 6667), id="scale up"),
        pytest.param(5, 6000, 2000, DEFAULT, (3, 1200), id="scale down"),
        pytest.param(4, 20166, 5000, DEFAULT, (4, 5042), id="within default tolerance"),
        pytest.param(
            4,
            20208,
            5000,
            Tolerances(0.1, 0.01),
            (5, 5052),
            id="outside configurable 1% tolerance",
        ),
    ],
)
def test_replica_calc_object_per_pod_metric(
    current: int, usage: int, target: int, tolerances: Tolerances, expected: tuple[int, int]
) -> None:
    calc = calculator(pods(current))
    assert calc.get_object_per_pod_metric_replicas(current, target, usage, tolerances) == expected


@pytest.mark.parametrize(
    ("usage", "target", "expected"),
    [
        # hvpa's own cases: no upstream test divides by zero current replicas. The ratio
        # is infinite, so the count is the usage over the per-pod target, as upstream
        # computes it; the reported average is the saturated quotient (20000 / 0 is +Inf,
        # the int64 maximum; 0 / 0 is NaN, 0), where Go's conversion is
        # implementation-defined (the int64 minimum on amd64).
        pytest.param(20000, 5000, (4, MAX_INT64), id="usage over zero replicas"),
        pytest.param(0, 5000, (0, 0), id="no usage over zero replicas"),
        pytest.param(MAX_INT64, 5000, (MAX_INT32, MAX_INT64), id="usage at int64, zero replicas"),
    ],
)
def test_per_pod_averages_with_zero_status_replicas(
    usage: int, target: int, expected: tuple[int, int]
) -> None:
    calc = calculator(pods(0))
    assert calc.get_object_per_pod_metric_replicas(0, target, usage, DEFAULT) == expected
    assert calc.get_external_per_pod_metric_replicas(0, target, [usage], DEFAULT) == expected


def test_negative_object_usage_over_zero_replicas_saturates_low() -> None:
    """-20000 / 0 is -Inf: the average saturates at the int64 minimum, the count is ceil(-4) = -4.

    hvpa's own case (an Object metric may be negative; an External per-pod sum that turns
    negative is read as an overflow instead). min/max bring the count back later.
    """
    calc = calculator(pods(0))
    assert calc.get_object_per_pod_metric_replicas(0, 5000, -20000, DEFAULT) == (-4, -(2**63))


def test_per_pod_object_average_saturates_at_int64() -> None:
    """An Object AverageValue metric at MaxInt64 reports MaxInt64, as the External form does."""
    calc = calculator(pods(1))
    assert calc.get_object_per_pod_metric_replicas(1, MAX_INT64, MAX_INT64, DEFAULT) == (
        1,
        MAX_INT64,
    )


def test_utilization_saturates_at_int32() -> None:
    """A usage of 1e30 over a request of one byte (memory "1" is 1000 milli-bytes).

    The percentage is 1e33 x 100 / 1000 = 1e32 %, far beyond int32: it
    saturates at MaxInt32 (Go's conversion would wrap it, possibly to a
    negative number that reads as a scale-down), and the raw average stays
    exact.
    """
    huge = 10**33  # 1e30 bytes in milli-bytes
    ratio, utilization, raw = get_resource_utilization_ratio(
        {"test-pod-0": PodMetric(huge)}, {"test-pod-0": 1000}, 80
    )
    assert utilization == MAX_INT32
    assert ratio == MAX_INT32 / 80
    assert raw == huge


def test_metric_values_beyond_int64_saturate() -> None:
    """The metrics client holds int64 milli-units: a larger quantity reads as MaxInt64."""
    huge = 10**33
    info = get_resource_metric(pod_metrics([[huge, huge]]), "cpu", "")
    assert info["test-pod-0"].value == MAX_INT64
    assert get_raw_metric(custom_metrics(huge, -huge))["test-pod-0"].value == MAX_INT64
    assert get_raw_metric(custom_metrics(huge, -huge))["test-pod-1"].value == -(2**63)
    values = ExternalMetricValueList((ExternalMetricValue(huge), ExternalMetricValue(7)))
    assert get_external_metric(values) == [MAX_INT64, 7]


def test_huge_usage_over_a_one_byte_request_never_scales_down() -> None:
    """Memory usage 1e30 against requests of one byte: the count rises, never falls."""
    pod_list = tuple(
        pod(
            f"test-pod-{i}",
            containers=[ContainerSpec("app", requests=Resources(memory=1000))],
        )
        for i in range(3)
    )
    metrics = PodMetricsList(
        tuple(
            PodMetricsRecord(
                namespace="test-namespace",
                name=f"test-pod-{i}",
                timestamp=None,
                window_seconds=60.0,
                containers=(ContainerMetrics("app", Resources(memory=10**33)),),
            )
            for i in range(3)
        )
    )
    info = get_resource_metric(metrics, "memory", "")
    replicas, utilization, _ = calculator(pod_list).get_resource_replicas(
        3, 80, "memory", DEFAULT, "", info
    )
    assert utilization == MAX_INT32
    # ceil(MaxInt32 / 80 x 3 ready pods) = ceil(80530636.76)
    assert replicas == 80_530_637


@pytest.mark.parametrize(
    "compute",
    [
        pytest.param(
            lambda calc: calc.get_metric_replicas(
                3, 10000, DEFAULT, get_raw_metric(custom_metrics(-30000, 5000, 5000))
            ),
            id="Pods metric",
        ),
        pytest.param(
            lambda calc: calc.get_object_metric_replicas(3, 10000, -5000, DEFAULT),
            id="Object metric",
        ),
        pytest.param(
            lambda calc: calc.get_external_metric_replicas(3, 10000, [-5000, 2000], DEFAULT),
            id="External metric",
        ),
    ],
)
def test_negative_metric_values_are_used_as_upstream_uses_them(compute: Any) -> None:
    """A negative value counts as it is (no clamp, no error) and the explanation says so."""
    explain = Explanation()
    compute(calculator(pods(3), explain))
    assert any("negative" in line for line in explain.lines)


def test_negative_pods_metric_lowers_the_average() -> None:
    """(-30 + 5 + 5) / 3 = -6.666 (truncated) against 10: ceil(-0.6666 x 3) = ceil(-1.9998) = -1.

    The calculator returns upstream's figure; min/max bring it back to minReplicas later.
    """
    info = get_raw_metric(custom_metrics(-30000, 5000, 5000))
    assert calculator(pods(3)).get_metric_replicas(3, 10000, DEFAULT, info) == (-1, -6666)


def test_scale_from_zero_ignores_tolerance() -> None:
    """From zero replicas the ratio alone decides, without tolerance.

    The calculator's part of horizontal_test.go TestScaleUpCMObject/scale up from zero
    ignores tolerance with HPAScaleToZero enabled (1 against 1: 1) and /scale up from
    zero with HPAScaleToZero enabled (20 against 15: 2).
    """
    calc = calculator(pods(0))
    assert calc.get_object_metric_replicas(0, 1000, 1000, DEFAULT) == 1
    assert calc.get_object_metric_replicas(0, 15000, 20000, DEFAULT) == 2


# ---------------------------------------------------------------------------
# External metrics: replica_calculator_test.go TestReplicaCalcExternalMetric and
# TestReplicaCalcExternalPerPodMetric, every row (and hvpa's own, marked)


@pytest.mark.parametrize(
    ("current", "values", "target", "readiness", "tolerances", "expected"),
    [
        pytest.param(
            3,
            [8600],
            4400,
            ["False", "True", "False"],
            DEFAULT,
            (2, 8600),
            id="scale down: ignores unready pods (would otherwise scale up)",
        ),
        pytest.param(5, [8600], 14334, None, DEFAULT, (3, 8600), id="scale down"),
        pytest.param(3, [8600], 8888, None, DEFAULT, (3, 8600), id="within default tolerance"),
        pytest.param(
            3,
            [8900],
            8800,
            None,
            Tolerances(0.1, 0.01),
            (4, 8900),
            id="outside configurable 1% tolerance",
        ),
        pytest.param(
            3,
            [MAX_INT64 // 2 + 1, MAX_INT64 // 2 + 1],
            MAX_INT64,
            None,
            DEFAULT,
            (3, MAX_INT64),
            id="usage overflow caps at MaxInt64",
        ),
    ],
)
def test_replica_calc_external_metric(
    current: int,
    values: list[int],
    target: int,
    readiness: list[str] | None,
    tolerances: Tolerances,
    expected: tuple[int, int],
) -> None:
    calc = calculator(pods(current, readiness=readiness))
    assert calc.get_external_metric_replicas(current, target, values, tolerances) == expected


@pytest.mark.parametrize(
    ("current", "values", "target", "tolerances", "expected"),
    [
        pytest.param(3, [8600], 2150, DEFAULT, (4, 2867), id="scale up"),
        pytest.param(5, [8600], 2867, DEFAULT, (3, 1720), id="scale down"),
        pytest.param(3, [8600], 2900, DEFAULT, (3, 2867), id="within default tolerance"),
        pytest.param(
            3,
            [8600],
            2800,
            Tolerances(0.1, 0.01),
            (4, 2867),
            id="outside configurable 1% tolerance",
        ),
        pytest.param(
            1,
            [MAX_INT64],
            1,
            DEFAULT,
            (MAX_INT32, MAX_INT64),
            id="replica count overflow saturates to MaxInt32",
        ),
        pytest.param(
            1,
            [MAX_INT64],
            MAX_INT64,
            DEFAULT,
            (1, MAX_INT64),
            id="usage overflow with huge target leaves replicas unchanged",
        ),
        # hvpa's own: two halves past MaxInt64, the running sum overflows, read as MaxInt64.
        pytest.param(
            3, [MAX_INT64 // 2 + 1] * 2, 1, DEFAULT, (MAX_INT32, MAX_INT64), id="sum overflow"
        ),
        # hvpa's own: a negative running sum is upstream's overflow test, so it reads as
        # MaxInt64 too.
        pytest.param(3, [-5], 1000, DEFAULT, (MAX_INT32, MAX_INT64), id="negative sum"),
    ],
)
def test_replica_calc_external_per_pod_metric(
    current: int, values: list[int], target: int, tolerances: Tolerances, expected: tuple[int, int]
) -> None:
    calc = calculator(pods(current))
    assert (
        calc.get_external_per_pod_metric_replicas(current, target, values, tolerances) == expected
    )


def test_external_metric_empty_list() -> None:
    with pytest.raises(MetricError, match=r"^no metrics returned from external metrics API$"):
        get_external_metric(ExternalMetricValueList(()))
    assert get_external_metric(ExternalMetricValueList((ExternalMetricValue(5),))) == [5]


# ---------------------------------------------------------------------------
# Tolerance band


@pytest.mark.parametrize(
    ("ratio", "within"),
    [
        pytest.param(0.9, True, id="exactly at 1 - tolerance"),
        pytest.param(1.1, True, id="exactly at 1 + tolerance"),
        pytest.param(0.8999999, False, id="just below the band"),
        pytest.param(1.1000001, False, id="just above the band"),
    ],
)
def test_tolerance_band_is_inclusive(ratio: float, within: bool) -> None:
    assert Tolerances(0.1, 0.1).is_within(ratio) is within


def test_tolerance_printed_as_upstream() -> None:
    assert str(Tolerances(0.1, 0.05)) == "[down:10.0%, up:5.0%]"


# ---------------------------------------------------------------------------
# groupPods: replica_calculator_test.go TestGroupPods, every row, with its pods
# in phase Succeeded as upstream gives them (groupPods ignores only deleted and
# Failed pods, so a Succeeded pod is grouped by its readiness and metrics like
# a running one); the rows after them are hvpa's own boundary cases.


M = PodMetric


@pytest.mark.parametrize(
    ("pod_list", "metrics", "resource", "expected"),
    [
        pytest.param((), {}, "cpu", (0, set(), set(), set()), id="void"),
        pytest.param(
            (pod("bentham", phase="Succeeded", ready=None, start=None),),
            {"bentham": M(1, NOW, 60)},
            "memory",
            (1, set(), set(), set()),
            id="count in a ready pod - memory",
        ),
        pytest.param(
            (pod("lucretius", phase="Succeeded", ready=None, start=NOW),),
            {"lucretius": M(1)},
            "cpu",
            (0, {"lucretius"}, set(), set()),
            id="unready a pod without ready condition - CPU",
        ),
        pytest.param(
            (pod("bentham", phase="Succeeded", start=NOW - 60, transition=NOW - 30),),
            {"bentham": M(1, NOW, 30)},
            "cpu",
            (1, set(), set(), set()),
            id="count in a ready pod with fresh metrics during initialization period - CPU",
        ),
        pytest.param(
            (pod("bentham", phase="Succeeded", start=NOW - 60, transition=NOW - 30),),
            {"bentham": M(1, NOW, 60)},
            "cpu",
            (0, {"bentham"}, set(), set()),
            id="unready a ready pod without fresh metrics during initialization period - CPU",
        ),
        pytest.param(
            (
                pod(
                    "lucretius",
                    phase="Succeeded",
                    ready="False",
                    start=NOW - 600,
                    transition=NOW - 594,
                ),
            ),
            {"lucretius": M(1)},
            "cpu",
            (0, {"lucretius"}, set(), set()),
            id="unready an unready pod during initialization period - CPU",
        ),
        pytest.param(
            (pod("bentham", phase="Succeeded", start=NOW - 180, transition=NOW - 180),),
            {"bentham": M(1, NOW - 120, 60)},
            "cpu",
            (1, set(), set(), set()),
            id="count in a ready pod without fresh metrics after initialization period - CPU",
        ),
        pytest.param(
            (
                pod(
                    "lucretius",
                    phase="Succeeded",
                    ready="False",
                    start=NOW - 600,
                    transition=NOW - 540,
                ),
            ),
            {"lucretius": M(1)},
            "cpu",
            (1, set(), set(), set()),
            id="count in an unready pod that was ready after initialization period - CPU",
        ),
        pytest.param(
            (
                pod(
                    "lucretius",
                    phase="Succeeded",
                    ready="False",
                    start=NOW - 600,
                    transition=NOW - 590,
                ),
            ),
            {"lucretius": M(1)},
            "cpu",
            (1, set(), set(), set()),
            id="unready pod that has never been ready after initialization period - CPU",
        ),
        pytest.param(
            (pod("epicurus", phase="Succeeded", ready=None, start=NOW - 180),),
            {},
            "cpu",
            (0, set(), {"epicurus"}, set()),
            id="a missing pod",
        ),
        pytest.param(
            (
                pod("lucretius", phase="Succeeded", ready=None, start=NOW),
                pod("niccolo", phase="Succeeded", start=NOW - 180, transition=NOW - 180),
                pod("epicurus", phase="Succeeded", ready=None, start=NOW - 180),
            ),
            {"lucretius": M(1), "niccolo": M(1)},
            "cpu",
            (1, {"lucretius"}, {"epicurus"}, set()),
            id="several pods",
        ),
        pytest.param(
            (pod("unscheduled", phase="Pending", ready=None, start=None),),
            {},
            "cpu",
            (0, {"unscheduled"}, set(), set()),
            id="pending pods are unreadied",
        ),
        pytest.param(
            (pod("deleted", phase="Pending", ready=None, deleting=True),),
            {"deleted": M(1)},
            "cpu",
            (0, set(), set(), {"deleted"}),
            id="ignore pods with deletion timestamps",
        ),
        pytest.param(
            (pod("failed", phase="Failed", ready=None),),
            {"failed": M(1)},
            "cpu",
            (0, set(), set(), {"failed"}),
            id="ignore pods in a failed state",
        ),
        pytest.param(
            (pod("starting", ready="True", start=NOW - 120, transition=NOW - 120),),
            {"starting": M(1, NOW - 30, 60)},
            "cpu",
            (1, set(), set(), set()),
            id="exactly at the end of the initialization period the pod counts",
        ),
        pytest.param(
            (pod("starting", ready="True", start=NOW - 119, transition=NOW - 119),),
            {"starting": M(1, NOW - 60, 60)},
            "cpu",
            (0, {"starting"}, set(), set()),
            id="inside the period, a sample one window after turning ready is still too early",
        ),
        pytest.param(
            (pod("starting", ready="True", start=NOW - 119, transition=NOW - 119),),
            {"starting": M(1, NOW - 59, 60)},
            "cpu",
            (1, set(), set(), set()),
            id="inside the period, a sample a full window after turning ready counts",
        ),
        pytest.param(
            (pod("late", ready="False", start=NOW - 600, transition=NOW - 591),),
            {"late": M(1)},
            "cpu",
            (0, {"late"}, set(), set()),
            id="turned unready within the readiness delay: it never was ready",
        ),
        pytest.param(
            (pod("late", ready="Unknown", start=NOW - 60, transition=NOW - 60),),
            {"late": M(1, NOW, 30)},
            "cpu",
            (1, set(), set(), set()),
            id="an Unknown Ready status is not False",
        ),
    ],
)
def test_group_pods(
    pod_list: tuple[object, ...],
    metrics: dict[str, PodMetric],
    resource: str,
    expected: tuple[int, set[str], set[str], set[str]],
) -> None:
    groups = group_pods(pod_list, metrics, resource, 120, 10, NOW)  # type: ignore[arg-type]
    assert (
        groups.ready_count,
        set(groups.unready),
        set(groups.missing),
        set(groups.ignored),
    ) == expected


# ---------------------------------------------------------------------------
# calculateRequests: TestCalculateRequests with PodLevelResources on, as it always is
# in hvpa. Its row "Sum container requests if pod-level feature is disabled" needs
# the feature off; its figures are those of the "enabled, but not set" row below.


def _request(name: str, cpu: int | None, sidecar: bool = False) -> ContainerSpec:
    return ContainerSpec(name, requests=Resources(cpu=cpu), sidecar=sidecar)


POD_LEVEL = Resources(cpu=800)


def test_calculate_requests_void() -> None:
    """TestCalculateRequests/void: no pods, no requests."""
    assert calculate_requests([], "", "cpu") == {}


@pytest.mark.parametrize(
    ("containers", "container", "expected", "pod_requests"),
    [
        pytest.param(
            [_request("container1", 100), _request("container2", 50)],
            "",
            150,
            None,
            id="Pod-level resources are enabled, but not set: fallback to sum container requests",
        ),
        pytest.param(
            [_request("container1", 100), _request("container2", 50)],
            "",
            800,
            POD_LEVEL,
            id="Pod-level resources override container requests when feature enabled and pod "
            "resources specified",
        ),
        pytest.param(
            [_request("container1", None), _request("container2", 50)],
            "",
            800,
            POD_LEVEL,
            id="Pod-level resources override missing container requests when feature enabled and "
            "pod resources specified",
        ),
        pytest.param(
            [_request("container1", 100), _request("container2", 50)],
            "container1",
            100,
            None,
            id="Container: if a container name is specified, calculate requests only for that "
            "container",
        ),
        pytest.param(
            [_request("container1", 100), _request("container2", 50)],
            "container1",
            100,
            POD_LEVEL,
            id="Container: if a container name is specified, calculate requests only for that "
            "container and ignore pod-level requests",
        ),
        pytest.param(
            [_request("container1", 100), _request("restartable-container1", 50, sidecar=True)],
            "",
            150,
            None,
            id="pod with restartable init containers",
        ),
        # hvpa's own: pod-level requests set for memory only, CPU comes from the containers
        # that request it.
        pytest.param(
            [_request("container1", None), _request("container2", 50)],
            "",
            50,
            Resources(memory=1000),
            id="pod-level requests without the resource: the containers that request it",
        ),
    ],
)
def test_calculate_requests(
    containers: list[ContainerSpec], container: str, expected: int, pod_requests: Resources | None
) -> None:
    pods_list = [pod("test-pod", containers=containers, pod_requests=pod_requests)]
    assert calculate_requests(pods_list, container, "cpu") == {"test-pod": expected}


def test_pod_level_requests_without_the_resource_anywhere() -> None:
    """Pod-level memory only, no container requests CPU: upstream's pod-level error."""
    pods_list = [
        pod("test-pod", containers=[_request("container1", None)], pod_requests=Resources(memory=1))
    ]
    with pytest.raises(MetricError) as error:
        calculate_requests(pods_list, "", "cpu")
    assert error.value.message == "missing pod-level request for cpu in Pod test-pod"


def test_utilization_against_pod_level_requests() -> None:
    """Two pods with a 1-core pod-level request and no container requests, 500m used each: 50%."""
    pod_list = tuple(
        pod(
            f"test-pod-{i}",
            containers=[_request("container1", None), _request("container2", None)],
            pod_requests=Resources(cpu=1000),
        )
        for i in range(2)
    )
    info = get_resource_metric(pod_metrics(levels(250, 250)), "cpu", "")
    assert calculator(pod_list).get_resource_replicas(2, 25, "cpu", DEFAULT, "", info) == (
        4,
        50,
        500,
    )


@pytest.mark.parametrize(
    ("containers", "container", "message"),
    [
        pytest.param(
            [_request("container1", None), _request("container2", 50)],
            "",
            "missing request for cpu in container container1 of Pod test-pod",
            id="Fail if at least one of the containers is missing requests and pod-level "
            "feature/requests are not set",
        ),
        pytest.param(
            [_request("container1", 100)],
            "non-existent-container",
            "container non-existent-container not found in Pod test-pod",
            id="TestCalculatePodRequestsFromContainers_NonExistentContainer",
        ),
    ],
)
def test_calculate_requests_errors(
    containers: list[ContainerSpec], container: str, message: str
) -> None:
    with pytest.raises(MetricError) as error:
        calculate_requests([pod("test-pod", containers=containers)], container, "cpu")
    assert error.value.message == message
