"""Cluster-proportional replicas: CPA's parameter parsing, cluster status and arithmetic.

Tables from kubernetes-sigs/cluster-proportional-autoscaler (v1.10.3)'s
linear_controller_test.go, ladder_controller_test.go, k8sclient_test.go,
plugin_test.go and autoscaler_test.go. Where CPA's test expects an error, hvpa's expectation is an
invalid spec naming the parameter (field and problem), in words that never
repeat a value from the parameters.
"""

from __future__ import annotations

import json
from dataclasses import replace
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
    ProportionalInput,
    cluster_proportional_replicas,
    get_cluster_status,
    get_expected_replicas_from_entries,
    ladder_replicas,
    linear_replicas,
    proportional_input,
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


@pytest.mark.parametrize(
    ("text", "field", "problem"),
    [
        pytest.param(
            '{"coresPerReplica": 2, "nodesPerReplica": 1, "min": 1, "max": 100,}',
            "linear",
            "not valid JSON",
            id="TestControllerParser: a trailing comma",
        ),
        pytest.param(
            '{ "coresPerReplica": {{ 1:1 } }',
            "linear",
            "not valid JSON",
            id="TestControllerParser: invalid JSON",
        ),
        pytest.param(
            '{ "coresPerReplica": "whatisthis"',
            "linear",
            "not valid JSON",
            id="TestControllerParser: invalid string value (and no closing brace)",
        ),
        pytest.param(
            '{ "nodesPerReplica":  -20 }',
            "linear.nodesPerReplica",
            "must not be negative",
            id="TestControllerParser: invalid negative value",
        ),
        pytest.param(
            '{"nodesPerReplica": 1, "min": 100, "max": 50}',
            "linear.max",
            "must be 0 (no maximum) or at least min",
            id="TestControllerParser: max smaller than min",
        ),
        pytest.param(
            '{"min": 1, "max": 100}',
            "linear",
            "set coresPerReplica or nodesPerReplica (greater than 0), or both",
            id="TestControllerParser: both coresPerReplica and nodesPerReplica unset",
        ),
        pytest.param(
            '{"coresPerReplica": 2, "preventSinglePointFailure": invalid}',
            "linear",
            "not valid JSON",
            id="TestControllerParser: wrong input for preventSinglePointFailure",
        ),
        pytest.param(
            '{"coresPerReplica": 2, "nodesPerReplica": 1, "min": 1, "max": 100, '
            '"includeUnschedulableNodes": invalid,}',
            "linear",
            "not valid JSON",
            id="TestControllerParser: wrong input for includeUnschedulableNodes",
        ),
        pytest.param(
            '{"coresPerReplica": "2"}',
            "linear.coresPerReplica",
            "must be a number, not a string",
            id="a string for a number",
        ),
        pytest.param(
            '{"coresPerReplica": 2, "min": 1.5}',
            "linear.min",
            "must be a whole number",
            id="a fraction for an integer",
        ),
        pytest.param(
            '{"coresPerReplica": 2, "min": 99999999999999999999}',
            "linear.min",
            "must be a whole number within int64",
            id="an integer beyond int64",
        ),
        pytest.param(
            '{"coresPerReplica": 2, "min": -1}',
            "linear.min",
            "must not be negative",
            id="negative min",
        ),
        pytest.param(
            '{"coresPerReplica": -0.5}',
            "linear.coresPerReplica",
            "must not be negative",
            id="negative fraction",
        ),
        pytest.param(
            '{"coresPerReplica": 2, "preventSinglePointFailure": 1}',
            "linear.preventSinglePointFailure",
            "must be true or false, not a number",
            id="a number for a boolean",
        ),
        pytest.param(
            '{"coresPerReplica": NaN}', "linear", "not valid JSON", id="NaN is not a number"
        ),
        pytest.param("[2]", "linear", "must be an object, not an array", id="not an object"),
    ],
)
def test_linear_refused(text: str, field: str, problem: str) -> None:
    with pytest.raises(ProportionalError) as error:
        parse_configmap_data({"linear": text})
    assert error.value.field == field
    assert error.value.problem.startswith(problem)


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
    ("text", "field", "problem"),
    [
        pytest.param(
            '{ "coresToReplicas" : {{ 1:1 } }',
            "ladder",
            "not valid JSON",
            id="TestControllerParser: invalid JSON",
        ),
        pytest.param(
            '{ "coresToReplicas" : [[ "1, "a"]] }',
            "ladder",
            "not valid JSON",
            id="TestControllerParser: invalid string value in list",
        ),
        pytest.param(
            '{ "coresToReplicas" : [[:-200]] }',
            "ladder",
            "not valid JSON",
            id="TestControllerParser: invalid negative in list",
        ),
        pytest.param(
            '{ "coresToReplicas" : [[1, -200]] }',
            "ladder.coresToReplicas[0]",
            "must not be negative",
            id="a negative count",
        ),
        pytest.param(
            '{ "nodesToReplicas" : [[1, 1], [-1, 2]] }',
            "ladder.nodesToReplicas[1]",
            "must not be negative",
            id="a negative threshold, named by its position as written",
        ),
        pytest.param(
            '{ "coresToReplicas" : [["a", 2]] }',
            "ladder.coresToReplicas[0]",
            "must be a whole number, not a string",
            id="a string in a step",
        ),
        pytest.param(
            '{ "coresToReplicas" : {"a": 1} }',
            "ladder.coresToReplicas",
            "must be a list of [count, replicas] steps, not an object",
            id="not a list",
        ),
        pytest.param(
            '{ "coresToReplicas" : [3] }',
            "ladder.coresToReplicas[0]",
            "must be a [count, replicas] step, not a number",
            id="a step that is not a list",
        ),
    ],
)
def test_ladder_refused(text: str, field: str, problem: str) -> None:
    with pytest.raises(ProportionalError) as error:
        parse_configmap_data({"ladder": text})
    assert error.value.field == field
    assert error.value.problem.startswith(problem)


# ---------------------------------------------------------------------------
# The ConfigMap (plugin.EnsureController) and the inline spec


@pytest.mark.parametrize(
    ("data", "message"),
    [
        pytest.param(
            {"invalidmode": ""},
            "invalidmode (0 bytes): not a supported mode (linear or ladder)",
            id="TestEnsureController: an invalid mode",
        ),
        pytest.param(
            {"toomanyentries1": "", "toomanyentries2": ""},
            "a ConfigMap must hold exactly one key, linear or ladder; it has "
            "toomanyentries1 (0 bytes), toomanyentries2 (0 bytes)",
            id="TestEnsureController: too many entries",
        ),
        pytest.param(
            {},
            "a ConfigMap must hold exactly one key, linear or ladder; it has none",
            id="no entries",
        ),
    ],
)
def test_configmap_shape(data: dict[str, str], message: str) -> None:
    with pytest.raises(ProportionalError) as error:
        parse_configmap_data(data)
    assert str(error.value) == message


def test_configmap_accepted() -> None:
    """TestEnsureController: `{"nodesPerReplica":1}` under `linear` is accepted."""
    assert parse_configmap_data({"linear": '{"nodesPerReplica":1}'}) == LinearParams(0.0, 1.0)


SECRET = "hunter2-s3cr3t-t0k3n"


@pytest.mark.parametrize(
    "data",
    [
        pytest.param({"linear": "{}", "password": SECRET}, id="a second key"),
        pytest.param({"password": SECRET}, id="a key that is not a mode"),
        pytest.param({"linear": SECRET}, id="a value that is not JSON"),
        pytest.param({"linear": f'{{"min": "{SECRET}"}}'}, id="a string where a number goes"),
        pytest.param({"ladder": f'{{"coresToReplicas": [["{SECRET}", 1]]}}'}, id="in a step"),
        pytest.param({"linear": '{"coresPerReplica": 1, "min": 31337}x'}, id="after the JSON"),
    ],
)
def test_messages_never_repeat_configmap_data(data: dict[str, str]) -> None:
    """A message lands in the Hvpa's status, readable by whoever may not read the ConfigMap."""
    with pytest.raises(ProportionalError) as error:
        parse_configmap_data(data)
    message = str(error.value)
    assert SECRET not in message and "31337" not in message


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
    ("raw", "field", "problem"),
    [
        pytest.param(
            {}, "", "exactly one of linear, ladder or configMapRef must be set", id="none"
        ),
        pytest.param(
            {"linear": {"min": 2.5, "coresPerReplica": 1}},
            "linear.min",
            "must be a whole number",
            id="the parameter is named",
        ),
        pytest.param(
            {"configMapRef": {}}, "configMapRef.name", "required", id="a ConfigMap without a name"
        ),
        pytest.param(
            {"linear": {"coresPerReplica": 1}, "nodeSelector": {"a": 1}},
            "nodeSelector",
            "must be a map of label names to values",
            id="a non-string label value",
        ),
    ],
)
def test_inline_spec_refused(raw: dict[str, Any], field: str, problem: str) -> None:
    with pytest.raises(ProportionalError) as error:
        parse_cluster_proportional(raw)
    assert (error.value.field, error.value.problem) == (field, problem)


@pytest.mark.parametrize(
    "params",
    [
        pytest.param({"linear": {"nodesPerReplica": -20}}, id="negative"),
        pytest.param({"linear": {"nodesPerReplica": 1, "min": 100, "max": 50}}, id="max < min"),
        pytest.param({"linear": {"min": 1}}, id="neither per-replica value"),
        pytest.param({"ladder": {"coresToReplicas": [[1, -200]]}}, id="negative step"),
    ],
)
def test_inline_and_configmap_refused_alike(params: dict[str, Any]) -> None:
    """The same parameters refused the same way whether inline or in a ConfigMap."""
    ((mode, values),) = params.items()
    with pytest.raises(ProportionalError) as inline:
        parse_cluster_proportional(params)
    with pytest.raises(ProportionalError) as configmap:
        parse_configmap_data({mode: json.dumps(values)})
    assert str(inline.value) == str(configmap.value)


def test_parsed_once_per_content() -> None:
    """The same parameters again are not parsed again (the cache answers), different ones are."""
    text = '{"coresPerReplica": 3.5}'
    first = parse_configmap_data({"linear": text})
    assert parse_configmap_data({"linear": text}) is first
    assert parse_configmap_data({"linear": '{"coresPerReplica": 4.5}'}) is not first
    raw = {"linear": {"coresPerReplica": 3.5}}
    assert parse_cluster_proportional(raw) is parse_cluster_proportional(dict(raw))


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


@pytest.mark.parametrize(
    ("schedulable_cores", "schedulable_nodes", "cores", "nodes", "expected"),
    [
        (0, 0, 0, 0, 1),
        (1, 1, 1, 1, 1),
        (2, 2, 2, 2, 2),
        (4, 4, 4, 4, 2),
        (2, 2, 4, 4, 2),
        (8, 8, 8, 8, 4),
        (6, 6, 8, 8, 4),
        (21, 21, 210, 210, 100),
    ],
)
def test_linear_scale_from_unschedulable_nodes(
    schedulable_cores: int, schedulable_nodes: int, cores: int, nodes: int, expected: int
) -> None:
    """linear_controller_test.go TestScaleFromUnschedulableNodes: with includeUnschedulableNodes
    the totals count, whatever is schedulable (2 cores and 2 nodes per replica, 1 to 100)."""
    params = LinearParams(2, 2, 1, 100, True, True)
    status = ClusterStatus(nodes, schedulable_nodes, cores, schedulable_cores)
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


SHUFFLED = [
    [2, 2], [3, 3], [512, 5], [1024, 7], [20480, 50], [4096, 15], [2048, 10], [8192, 20],
    [65535, 100], [16384, 40], [12288, 30], [1, 1], [24576, 60], [32768, 80], [28672, 70],
]  # fmt: skip
SORTED = (
    (1, 1), (2, 2), (3, 3), (512, 5), (1024, 7), (2048, 10), (4096, 15), (8192, 20),
    (12288, 30), (16384, 40), (20480, 50), (24576, 60), (28672, 70), (32768, 80), (65535, 100),
)  # fmt: skip


@pytest.mark.parametrize(
    "steps",
    [
        pytest.param(SHUFFLED, id="shuffled"),
        pytest.param([list(step) for step in reversed(SORTED)], id="reversed"),
    ],
)
def test_ladder_sorter(steps: list[list[int]]) -> None:
    """ladder_controller_test.go TestControllerSorter: the steps end up ordered by threshold.

    CPA sorts them when it syncs the ConfigMap; hvpa sorts them when it parses.
    """
    parsed = parse_configmap_data({"ladder": json.dumps({"coresToReplicas": steps})})
    assert parsed == LadderParams(SORTED)


LADDER_TEST_RUN = {
    "coresToReplicas": [list(step) for step in SORTED],
    "nodesToReplicas": [[1, 1], [2, 2]],
}
LADDER_TEST_RUN_CHANGED = {
    "coresToReplicas": [[3, 4] if step == (3, 3) else list(step) for step in SORTED[:-1]]
    + [[65535, 200]],
    "nodesToReplicas": [[1, 1], [2, 2]],
}
LINEAR_TEST_RUN = {"coresPerReplica": 100, "nodesPerReplica": 10, "min": 1, "max": 100}


@pytest.mark.parametrize(
    ("data", "nodes", "cores", "expected"),
    [
        pytest.param({"ladder": LADDER_TEST_RUN}, 0, 0, 1, id="no node and no core: 1"),
        pytest.param({"ladder": LADDER_TEST_RUN}, 1, 800, 5, id="800 cores and 1 node: 5"),
        pytest.param({"ladder": LADDER_TEST_RUN}, 3, 1, 2, id="1 core and 3 nodes: 2"),
        pytest.param({"ladder": LADDER_TEST_RUN}, 50000, 200000, 100, id="200000 cores: 100"),
        pytest.param({"ladder": LADDER_TEST_RUN_CHANGED}, 50000, 200000, 200, id="changed: 200"),
        pytest.param({"ladder": LADDER_TEST_RUN_CHANGED}, 100, 500, 4, id="changed, 500: 4"),
        pytest.param({"ladder": LADDER_TEST_RUN_CHANGED}, 400, 2000, 7, id="changed, 2000: 7"),
        pytest.param({"linear": LINEAR_TEST_RUN}, 400, 2000, 40, id="linear, 400 nodes: 40"),
        pytest.param({"linear": LINEAR_TEST_RUN}, 100, 1600, 16, id="linear, 1600 cores: 16"),
        pytest.param({"linear": LINEAR_TEST_RUN}, 20000, 100000, 100, id="linear, capped: 100"),
    ],
)
def test_polling_loop_steps(data: dict[str, Any], nodes: int, cores: int, expected: int) -> None:
    """autoscaler_test.go TestRun: each step of CPA's polling loop, as one decision's arithmetic.

    CPA's mock reports every node and core as schedulable. The ConfigMap edits
    and the switch from ladder to linear are a new content for hvpa, parsed
    and used at the next decision.
    """
    params = parse_configmap_data({mode: json.dumps(value) for mode, value in data.items()})
    status = ClusterStatus(nodes, nodes, cores, cores)
    if isinstance(params, LinearParams):
        assert linear_replicas(params, status) == expected
    else:
        assert ladder_replicas(params, status) == expected


def test_ladder_without_steps_asks_for_zero() -> None:
    """getExpectedReplicasFromEntries: no steps, 0 replicas (CPA 1.8.5 on; it said 1 before)."""
    assert get_expected_replicas_from_entries(7, ()) == 0
    assert ladder_replicas(LadderParams((), ((0, 0),)), ClusterStatus(0, 0, 0, 0)) == 0
    assert ladder_replicas(LadderParams((), ((4, 2),)), ClusterStatus(5, 5, 8, 8)) == 2


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
    """k8sclient_test.go TestNewK8sClient: 4 selected nodes, 2 schedulable, 9 cores, 3 schedulable.

    test-node-3 is cordoned (and reports no conditions), test-node-5 is not
    cordoned but NotReady: both count in the totals only; test-node-4 is not
    selected.
    """
    nodes = [
        node("test-node-1", "1000m", {"app": "autoscaler"}),
        node("test-node-2", "2000m", {"app": "autoscaler"}),
        node("test-node-3", "3000m", {"app": "autoscaler"}, unschedulable=True, ready=None),
        node("test-node-4", "4000m", {"app": "something-else"}, ready=None),
        node("test-node-5", "3000m", {"app": "autoscaler"}, ready="False"),
    ]
    assert get_cluster_status(nodes, {"app": "autoscaler"}) == ClusterStatus(4, 2, 9, 3)


def test_cluster_status_rounds_allocatable_cpu_up_after_summing() -> None:
    nodes = [
        node("a", "1500m", {}),
        node("b", "1600m", {}),
        node("c", "900m", {}, unschedulable=True),
    ]
    assert get_cluster_status(nodes, {}) == ClusterStatus(3, 2, 4, 4)


def test_cluster_status_schedulable_only_when_ready() -> None:
    """isNodeReady: Ready=True; False, Unknown or no condition is not schedulable."""
    nodes = [
        node("a", "2", {}, ready="False"),
        node("b", "2", {}, ready=None),
        node("c", "2", {}, ready="Unknown"),
        node("d", "2", {}),
    ]
    assert get_cluster_status(nodes, {}) == ClusterStatus(4, 1, 8, 2)


def test_ladder_counts_schedulable_nodes_and_cores_only() -> None:
    """includeUnschedulableNodes false: a NotReady and a cordoned node add nothing to the lookup."""
    nodes = [
        node("a", "4", {}),
        node("b", "4", {}, ready="False"),
        node("c", "4", {}, unschedulable=True),
    ]
    params = LadderParams(((0, 0), (4, 1), (8, 2), (12, 3)), ((0, 0), (1, 1), (2, 2), (3, 3)))
    status = get_cluster_status(nodes, {})
    assert ladder_replicas(params, status) == 1
    assert ladder_replicas(replace(params, include_unschedulable_nodes=True), status) == 3


# ---------------------------------------------------------------------------
# The engine's entry point: parameters from the spec or a ConfigMap


def _input(config_maps: list[ConfigMapRecord]) -> ProportionalInput:
    spec = ClusterProportionalSpec(config_map_ref=ConfigMapRef("dns-autoscaler"))
    return proportional_input(spec, "kube-system", config_maps)


def test_configmap_reference_is_read() -> None:
    config_maps = [
        ConfigMapRecord(
            "kube-system", "dns-autoscaler", {"ladder": '{"nodesToReplicas": [[1, 1], [3, 2]]}'}
        )
    ]
    nodes = [node(f"n{i}", "2", {}) for i in range(4)]
    assert cluster_proportional_replicas(_input(config_maps), nodes, Explanation()) == 2


@pytest.mark.parametrize(
    "config_maps",
    [
        pytest.param([], id="missing"),
        pytest.param(
            [ConfigMapRecord("other", "dns-autoscaler", {"linear": '{"nodesPerReplica": 1}'})],
            id="in another namespace",
        ),
    ],
)
def test_a_configmap_not_found_is_a_failed_read(config_maps: list[ConfigMapRecord]) -> None:
    with pytest.raises(MetricError) as error:
        cluster_proportional_replicas(_input(config_maps), [], Explanation())
    assert error.value.message == 'configmaps "dns-autoscaler" not found in namespace kube-system'


def test_invalid_configmap_parameters_are_an_invalid_spec() -> None:
    config_maps = [ConfigMapRecord("kube-system", "dns-autoscaler", {"linear": "{}"})]
    with pytest.raises(ProportionalError) as error:
        _input(config_maps)
    assert str(error.value) == (
        "configMapRef: ConfigMap kube-system/dns-autoscaler: linear: set coresPerReplica or "
        "nodesPerReplica (greater than 0), or both"
    )
