"""Cluster-proportional replicas: CPA's parameter parsing, cluster status and arithmetic.

Tables from kubernetes-sigs/cluster-proportional-autoscaler's
linear_controller_test.go, ladder_controller_test.go, k8sclient_test.go and
plugin.go, plus the messages its Go JSON decoding gives.
"""

from __future__ import annotations

from typing import Any

import pytest

from hvpa.api.proportional import (
    ClusterProportionalSpec,
    ConfigMapRef,
    LadderParams,
    LinearParams,
    ProportionalError,
    parse_cluster_proportional,
    parse_configmap_data,
    parse_ladder,
    parse_linear,
)
from hvpa.engine.explain import Explanation
from hvpa.engine.horizontal.proportional import (
    ClusterStatus,
    cluster_proportional_replicas,
    get_cluster_status,
    get_expected_replicas_from_entries,
    ladder_replicas,
    linear_replicas,
)
from hvpa.engine.metrics import MetricError
from hvpa.records import ConfigMapRecord, NodeRecord, Resources

# ---------------------------------------------------------------------------
# Parsing: linear (TestControllerParser) and its messages


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            '{"coresPerReplica": 2, "nodesPerReplica": 1, "min": 1, "max": 100, "preventSinglePointFailure": true}',
            LinearParams(2.0, 1.0, 1, 100, True, False),
            id="all fields",
        ),
        pytest.param(
            '{"nodesPerReplica": 0.5}', LinearParams(0.0, 0.5, 1, 0), id="min defaults to 1"
        ),
        pytest.param(
            '{"CoresPerReplica": 4}',
            LinearParams(4.0, 0.0, 1, 0),
            id="keys match case-insensitively",
        ),
        pytest.param(
            '{"coresPerReplica": 4, "foo": 1}',
            LinearParams(4.0, 0.0, 1, 0),
            id="unknown keys ignored",
        ),
        pytest.param(
            '{"coresPerReplica": 4, "min": null}', LinearParams(4.0, 0.0, 1, 0), id="null is zero"
        ),
        pytest.param(
            '{"coresPerReplica": 4, "includeUnschedulableNodes": true}',
            LinearParams(4.0, 0.0, 1, 0, False, True),
            id="include unschedulable nodes",
        ),
    ],
)
def test_linear_parses(text: str, expected: LinearParams) -> None:
    assert parse_configmap_data({"linear": text}) == expected


_PREFIX = "Error syncing configMap with controller: error parsing linear params: "


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            '{ "coresPerReplica": {{ 1:1 } }',
            "could not parse parameters (invalid character '{' looking for beginning of object key string)",
            id="invalid JSON",
        ),
        pytest.param(
            '{ "coresPerReplica": "whatisthis"',
            "could not parse parameters (unexpected end of JSON input)",
            id="invalid string value",
        ),
        pytest.param(
            '{ "nodesPerReplica":  -20 }',
            "invalid negative value for nodesPerReplica: -20",
            id="invalid negative value",
        ),
        pytest.param(
            '{"nodesPerReplica": 1, "min": 100, "max": 50}',
            "max replicas count 50 should be greater than / equal to min replicas count 100",
            id="max below min",
        ),
        pytest.param(
            '{"min": 1, "max": 100}',
            "should at least provide either CoresPerReplica or NodesPerReplica (Greater than 0)",
            id="neither per-replica value",
        ),
        pytest.param(
            '{"coresPerReplica": 2, "preventSinglePointFailure": invalid}',
            "could not parse parameters (invalid character 'i' looking for beginning of value)",
            id="wrong input for preventSinglePointFailure",
        ),
        pytest.param(
            '{"coresPerReplica": "2"}',
            "could not parse parameters (json: cannot unmarshal string into Go struct field linearParams.coresPerReplica of type float64)",
            id="a string for a number",
        ),
        pytest.param(
            '{"coresPerReplica": 2, "min": 1.5}',
            "could not parse parameters (json: cannot unmarshal number 1.5 into Go struct field linearParams.min of type int)",
            id="a fraction for an integer",
        ),
        pytest.param(
            '{"coresPerReplica": 2, "min": -1}',
            "invalid negative value for min: -1",
            id="negative min",
        ),
        pytest.param(
            '{"coresPerReplica": -0.5}',
            "invalid negative value for coresPerReplica: -0.5",
            id="negative fraction",
        ),
        pytest.param(
            '{"coresPerReplica": 2, "preventSinglePointFailure": 1}',
            "could not parse parameters (json: cannot unmarshal number into Go struct field linearParams.preventSinglePointFailure of type bool)",
            id="a number for a boolean",
        ),
        pytest.param(
            "[2]",
            "could not parse parameters (json: cannot unmarshal array into Go value of type linearcontroller.linearParams)",
            id="not an object",
        ),
    ],
)
def test_linear_refused(text: str, message: str) -> None:
    with pytest.raises(ProportionalError) as error:
        parse_configmap_data({"linear": text})
    assert str(error.value) == _PREFIX + message


# ---------------------------------------------------------------------------
# Parsing: ladder (TestControllerParser, TestControllerSorter)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param('{ "coresToReplicas" : [ [1,1] ] }', LadderParams(((1, 1),)), id="one step"),
        pytest.param(
            '{"coresToReplicas": [[0, 0], [1, 0], [2, 2], [3, 3], [512, 5], [65535, 100], [32768, 80]]}',
            LadderParams(((0, 0), (1, 0), (2, 2), (3, 3), (512, 5), (32768, 80), (65535, 100))),
            id="zero replicas allowed, steps sorted",
        ),
        pytest.param(
            '{"coresToReplicas": [[0,0],[1,0],[2,2],[3,3]], "nodesToReplicas": [[1,1],[2,2],[3,3]], "includeUnschedulableNodes": true}',
            LadderParams(((0, 0), (1, 0), (2, 2), (3, 3)), ((1, 1), (2, 2), (3, 3)), True),
            id="both ladders and unschedulable nodes",
        ),
        pytest.param(
            '{"coresToReplicas": [[5]]}', LadderParams(((5, 0),)), id="a short step is zero-filled"
        ),
        pytest.param(
            '{"coresToReplicas": [[5, 2, 9]]}', LadderParams(((5, 2),)), id="a long step is cut"
        ),
    ],
)
def test_ladder_parses(text: str, expected: LadderParams) -> None:
    assert parse_configmap_data({"ladder": text}) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            '{ "coresToReplicas" : {{ 1:1 } }',
            "could not parse parameters (invalid character '{' looking for beginning of object key string)",
            id="invalid JSON",
        ),
        pytest.param(
            '{ "coresToReplicas" : [[ "1, "a"]] }',
            "could not parse parameters (invalid character 'a' after array element)",
            id="invalid string value in list",
        ),
        pytest.param(
            '{ "coresToReplicas" : [[:-200]] }',
            "could not parse parameters (invalid character ':' looking for beginning of value)",
            id="invalid negative in list",
        ),
        pytest.param(
            '{ "coresToReplicas" : [[1, -200]] }',
            "invalid negative values in entry [1 -200] in cores_to_replicas_map",
            id="a negative count",
        ),
        pytest.param(
            '{ "nodesToReplicas" : [[-1, 2]] }',
            "invalid negative values in entry [-1 2] in nodes_to_replicas_map",
            id="a negative threshold",
        ),
        pytest.param(
            '{ "coresToReplicas" : [["a", 2]] }',
            "could not parse parameters (json: cannot unmarshal string into Go struct field ladderParams.coresToReplicas of type int)",
            id="a string in a step",
        ),
        pytest.param(
            '{ "coresToReplicas" : {"a": 1} }',
            "could not parse parameters (json: cannot unmarshal object into Go struct field ladderParams.coresToReplicas of type laddercontroller.paramEntries)",
            id="not a list",
        ),
    ],
)
def test_ladder_refused(text: str, message: str) -> None:
    with pytest.raises(ProportionalError) as error:
        parse_configmap_data({"ladder": text})
    assert (
        str(error.value)
        == "Error syncing configMap with controller: error parsing ladder params: " + message
    )


# ---------------------------------------------------------------------------
# The ConfigMap (plugin.EnsureController) and the inline spec


@pytest.mark.parametrize(
    ("data", "message"),
    [
        pytest.param(
            {}, "invalid configMap format, expected only one entry, got: map[]", id="empty"
        ),
        pytest.param(
            {"linear": "{}", "ladder": "{}"},
            "invalid configMap format, expected only one entry, got: map[ladder:{} linear:{}]",
            id="two entries",
        ),
        pytest.param(
            {"quadratic": "{}"}, "not a supported control mode: quadratic", id="unknown mode"
        ),
    ],
)
def test_configmap_shape(data: dict[str, str], message: str) -> None:
    with pytest.raises(ProportionalError) as error:
        parse_configmap_data(data)
    assert str(error.value) == message


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param(
            {"linear": {"coresPerReplica": 2, "nodesPerReplica": 1}, "nodeSelector": {"pool": "a"}},
            ClusterProportionalSpec(
                linear=LinearParams(2.0, 1.0, 1, 0), node_selector={"pool": "a"}
            ),
            id="inline linear",
        ),
        pytest.param(
            {"ladder": {"nodesToReplicas": [[1, 1], [4, 2]]}},
            ClusterProportionalSpec(ladder=LadderParams((), ((1, 1), (4, 2)))),
            id="inline ladder",
        ),
        pytest.param(
            {"configMapRef": {"name": "dns-autoscaler", "namespace": "kube-system"}},
            ClusterProportionalSpec(config_map_ref=ConfigMapRef("dns-autoscaler", "kube-system")),
            id="a ConfigMap",
        ),
    ],
)
def test_inline_spec(raw: dict[str, Any], expected: ClusterProportionalSpec) -> None:
    assert parse_cluster_proportional(raw) == expected


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        pytest.param({}, "exactly one of linear, ladder or configMapRef must be set", id="none"),
        pytest.param(
            {"linear": {"min": 2.5, "coresPerReplica": 1}},
            "linear: could not parse parameters (json: cannot unmarshal number 2.5 into Go struct field linearParams.min of type int)",
            id="the sub-field named first",
        ),
        pytest.param(
            {"configMapRef": {}}, "configMapRef.name: required", id="a ConfigMap without a name"
        ),
        pytest.param(
            {"linear": {"coresPerReplica": 1}, "nodeSelector": {"a": 1}},
            "nodeSelector: must be a map of label names to values",
            id="a non-string label value",
        ),
    ],
)
def test_inline_spec_refused(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(ProportionalError) as error:
        parse_cluster_proportional(raw)
    assert str(error.value) == message


def test_inline_and_configmap_read_alike() -> None:
    """The same parameters inline (parsed YAML) and in a ConfigMap (JSON text) give the same result."""
    assert parse_linear({"coresPerReplica": 2, "min": 3}) == parse_configmap_data(
        {"linear": '{"coresPerReplica": 2, "min": 3}'}
    )
    assert parse_ladder({"coresToReplicas": [[1, 1]]}) == LadderParams(((1, 1),))


# ---------------------------------------------------------------------------
# Arithmetic: linear (TestScaleFromSingleParam, TestScaleFromMultipleParams)


@pytest.mark.parametrize(
    ("cores", "expected"),
    [
        (0, 2),
        (1, 2),
        (2, 2),
        (3, 2),
        (4, 2),
        (6, 3),
        (10, 5),
        (11, 6),
        (19, 10),
        (20, 10),
        (21, 11),
        (30, 15),
        (40, 20),
    ],
)
def test_linear_single_param(cores: int, expected: int) -> None:
    params = LinearParams(cores_per_replica=2, min=2, max=100)
    assert linear_replicas(params, ClusterStatus(0, 0, cores, cores)) == expected


@pytest.mark.parametrize(
    ("cores", "nodes", "expected"),
    [
        (0, 0, 1),
        (1, 2, 2),
        (2, 3, 2),
        (3, 4, 2),
        (4, 4, 2),
        (6, 4, 3),
        (6, 5, 3),
        (8, 5, 4),
        (8, 15, 6),
        (8, 16, 7),
        (19, 21, 10),
        (23, 20, 12),
        (26, 38, 16),
        (30, 49, 20),
        (40, 20, 20),
    ],
)
def test_linear_multiple_params(cores: int, nodes: int, expected: int) -> None:
    params = LinearParams(2, 2.5, 1, 100, prevent_single_point_failure=True)
    assert linear_replicas(params, ClusterStatus(nodes, nodes, cores, cores)) == expected


@pytest.mark.parametrize(
    ("params", "status", "expected"),
    [
        pytest.param(
            LinearParams(0, 1, 1, 1, prevent_single_point_failure=True),
            ClusterStatus(3, 3, 12, 12),
            2,
            id="single point failure beats max",
        ),
        pytest.param(
            LinearParams(0, 10, 1, 0, prevent_single_point_failure=True),
            ClusterStatus(1, 1, 4, 4),
            1,
            id="one node: one replica is allowed",
        ),
        pytest.param(
            LinearParams(0, 1, 1, 0),
            ClusterStatus(4, 3, 13, 12),
            3,
            id="unschedulable nodes left out",
        ),
        pytest.param(
            LinearParams(0, 1, 1, 0, include_unschedulable_nodes=True),
            ClusterStatus(4, 3, 13, 12),
            4,
            id="unschedulable nodes counted",
        ),
        pytest.param(
            LinearParams(2, 1, 1, 100, True, True),
            ClusterStatus(4, 3, 13, 12),
            7,
            id="the README example: 13 cores / 2",
        ),
    ],
)
def test_linear_rules(params: LinearParams, status: ClusterStatus, expected: int) -> None:
    assert linear_replicas(params, status) == expected


# ---------------------------------------------------------------------------
# Arithmetic: ladder (TestControllerScaler, FromZero, ScaleFromUnschedulableNodes)

STEPS = ((1, 1), (2, 2), (3, 3), (4, 4), (10, 10), (20, 20))


@pytest.mark.parametrize(
    ("count", "expected"),
    [
        (0, 1),
        (1, 1),
        (2, 2),
        (3, 3),
        (4, 4),
        (6, 4),
        (10, 10),
        (11, 10),
        (19, 10),
        (20, 20),
        (21, 20),
        (40, 20),
    ],
)
def test_ladder_lookup(count: int, expected: int) -> None:
    assert get_expected_replicas_from_entries(count, STEPS) == expected


@pytest.mark.parametrize(("count", "expected"), [(0, 0), (1, 0), (2, 0), (3, 3), (4, 3)])
def test_ladder_from_zero(count: int, expected: int) -> None:
    assert get_expected_replicas_from_entries(count, ((0, 0), (3, 3))) == expected
    assert get_expected_replicas_from_entries(count, ((1, 0), (3, 3))) == expected


@pytest.mark.parametrize(
    ("status", "include", "expected"),
    [
        pytest.param(ClusterStatus(3, 2, 12, 8), True, 3, id="unschedulable nodes counted"),
        pytest.param(ClusterStatus(3, 1, 12, 4), False, 1, id="schedulable nodes only"),
    ],
)
def test_ladder_unschedulable_nodes(status: ClusterStatus, include: bool, expected: int) -> None:
    params = LadderParams(
        cores_to_replicas=((0, 0), (4, 1), (8, 2), (12, 3)),
        nodes_to_replicas=((0, 0), (1, 1), (2, 2), (3, 3)),
        include_unschedulable_nodes=include,
    )
    assert ladder_replicas(params, status) == expected


def test_ladder_without_steps_asks_for_one() -> None:
    assert ladder_replicas(LadderParams((), ((0, 0),)), ClusterStatus(0, 0, 0, 0)) == 1


# ---------------------------------------------------------------------------
# Cluster status (k8sclient: TestNewK8sClient)


def node(
    name: str,
    cpu: str,
    labels: dict[str, str],
    unschedulable: bool = False,
    ready: str | None = "True",
) -> NodeRecord:
    from hvpa.quantity import parse_cpu_millis

    return NodeRecord(name, labels, unschedulable, ready, Resources(cpu=parse_cpu_millis(cpu)))


def test_cluster_status_counts_selected_nodes() -> None:
    nodes = [
        node("test-node-1", "1000m", {"app": "autoscaler"}),
        node("test-node-2", "2000m", {"app": "autoscaler"}),
        node("test-node-3", "3000m", {"app": "autoscaler"}, unschedulable=True),
        node("test-node-4", "4000m", {"app": "something-else"}),
    ]
    assert get_cluster_status(nodes, {"app": "autoscaler"}) == ClusterStatus(3, 2, 6, 3)


def test_cluster_status_rounds_allocatable_cpu_up_after_summing() -> None:
    nodes = [
        node("a", "1500m", {}),
        node("b", "1600m", {}),
        node("c", "900m", {}, unschedulable=True),
    ]
    assert get_cluster_status(nodes, {}) == ClusterStatus(3, 2, 4, 4)


def test_cluster_status_ignores_readiness_like_cpa() -> None:
    nodes = [node("a", "2", {}, ready="False"), node("b", "2", {}, ready=None)]
    assert get_cluster_status(nodes, {}) == ClusterStatus(2, 2, 4, 4)


# ---------------------------------------------------------------------------
# The engine's entry point: parameters from the spec or a ConfigMap


def test_configmap_reference_is_read() -> None:
    spec = ClusterProportionalSpec(config_map_ref=ConfigMapRef("dns-autoscaler"))
    config_maps = [
        ConfigMapRecord(
            "kube-system", "dns-autoscaler", {"ladder": '{"nodesToReplicas": [[1, 1], [3, 2]]}'}
        )
    ]
    nodes = [node(f"n{i}", "2", {}) for i in range(4)]
    assert (
        cluster_proportional_replicas(spec, "kube-system", nodes, config_maps, Explanation()) == 2
    )


@pytest.mark.parametrize(
    ("config_maps", "message"),
    [
        pytest.param(
            [], 'configmaps "dns-autoscaler" not found in namespace kube-system', id="missing"
        ),
        pytest.param(
            [ConfigMapRecord("kube-system", "dns-autoscaler", {"linear": "{}"})],
            "should at least provide either CoresPerReplica or NodesPerReplica",
            id="invalid parameters",
        ),
        pytest.param(
            [ConfigMapRecord("other", "dns-autoscaler", {"linear": '{"nodesPerReplica": 1}'})],
            "not found",
            id="in another namespace",
        ),
    ],
)
def test_configmap_problems(config_maps: list[ConfigMapRecord], message: str) -> None:
    spec = ClusterProportionalSpec(config_map_ref=ConfigMapRef("dns-autoscaler"))
    with pytest.raises(MetricError) as error:
        cluster_proportional_replicas(spec, "kube-system", [], config_maps, Explanation())
    assert message in error.value.message
