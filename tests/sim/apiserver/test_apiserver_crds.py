"""CustomResourceDefinitions: a CRD written is a resource served, and its custom resources are
pruned, defaulted and validated against its schema on every write, as the real server does.

The expected answers for the Widget CRD (apiserver_objects.WIDGET_CRD) were read off a real
kube-apiserver v1.37.2 given the same CRD and the same objects: every cause (reason, field,
message) must match. The real server reports causes of one object in Go's map order, which
varies from request to request, so they are compared as sets. One case differs by design:
a float `size: 2.0` where CEL (cel-go) fails to evaluate `self.size <= 5`; cel-python reads
2.0 as a number and passes it.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from apiserver_http import Http, WatchStream
from apiserver_objects import WIDGET_CRD, widget

from hvpa.sim.apiserver import ApiServer
from hvpa.sim.apiserver.celvalidation import cel_available

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
NOT_CHECKED = (
    "FieldValueInvalid",
    "<nil>",
    "Invalid value: null: some validation rules were not checked because the object was "
    "invalid; correct the existing errors to complete validation",
)
needs_cel = pytest.mark.skipif(
    not cel_available() and os.environ.get("CI") != "true",
    reason="cel-python is not installed (a dev dependency: in CI its absence fails)",
)


def causes(body: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {(c["reason"], c["field"], c["message"]) for c in body["details"]["causes"]}


async def test_a_crd_written_is_served_and_established(http: Http) -> None:
    assert (await http.get("/apis/example.com/v1")).status == 404
    created = await http.post(CRDS, WIDGET_CRD)
    assert created.status == 201
    crd = (await http.get(f"{CRDS}/widgets.example.com")).body
    conditions = {c["type"]: c["status"] for c in crd["status"]["conditions"]}
    assert conditions == {"NamesAccepted": "True", "Established": "True"}
    assert crd["status"]["acceptedNames"]["shortNames"] == ["wd"]
    assert crd["status"]["storedVersions"] == ["v1"]
    assert crd["spec"]["conversion"] == {"strategy": "None"}
    listed = (await http.get("/apis/example.com/v1")).body
    assert {r["name"] for r in listed["resources"]} == {
        "widgets",
        "widgets/status",
        "widgets/scale",
    }
    groups = {g["name"] for g in (await http.get("/apis")).body["groups"]}
    assert "example.com" in groups


async def test_a_crd_updated_keeps_its_objects_and_serves_the_new_schema(
    http: Http, widgets: str
) -> None:
    assert (await http.post(widgets, widget("a", size=3))).status == 201
    crd = (await http.get(f"{CRDS}/widgets.example.com")).body
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"][
        "size"
    ]["maximum"] = 2
    assert (await http.put(f"{CRDS}/widgets.example.com", crd)).status == 200
    assert (await http.get(f"{widgets}/a")).body["spec"]["size"] == 3
    refused = await http.post(widgets, widget("b", size=3))
    assert refused.status == 422
    # Ratcheting: the stored object keeps its size 3 through an update of something else.
    patched = await http.patch(f"{widgets}/a", {"spec": {"mode": "B"}})
    assert patched.status == 200, patched.body


async def test_a_crd_deleted_takes_its_objects_and_ends_their_watches(
    http: Http, widgets: str, watch: Any
) -> None:
    await http.post(widgets, widget("a"))
    stream: WatchStream = await watch(widgets, resourceVersion="1")
    assert (await stream.next() or {})["type"] == "ADDED"
    assert (await http.delete(f"{CRDS}/widgets.example.com")).status == 200
    assert (await stream.next() or {})["type"] == "DELETED"
    assert await stream.next() is None  # the stream ends: the resource is gone
    assert (await http.get(widgets)).status == 404


async def test_invalid_crds_are_refused(http: Http) -> None:
    crd = {**WIDGET_CRD, "metadata": {"name": "gadgets.example.com"}}
    reply = await http.post(CRDS, crd)
    assert reply.status == 422
    assert ("FieldValueInvalid", "metadata.name") in {
        (c["reason"], c["field"]) for c in reply.body["details"]["causes"]
    }


async def test_unknown_fields_are_pruned_and_defaults_filled(http: Http, widgets: str) -> None:
    body = widget(
        "ok",
        unknownField=1,
        free={"a": {"b": 1}, "n": None, "m": [None]},
        nested={"zzz": 1},
        embedded={"apiVersion": "v1", "kind": "X", "metadata": {"name": "e", "bogus": 1}, "x": 1},
        maybe=None,
        defaulted=None,
    )
    body["spec"]["name"] = None  # not nullable, no default: dropped
    body["extra"] = 1
    reply = await http.post(widgets, body)
    assert reply.status == 201, reply.body
    assert "extra" not in reply.body
    assert reply.body["spec"] == {
        "size": 1,
        "defaulted": "dflt",
        "free": {"a": {"b": 1}, "n": None, "m": [None]},
        "nested": {"inner": 7},
        "embedded": {"apiVersion": "v1", "kind": "X", "metadata": {"name": "e"}, "x": 1},
        "maybe": None,
    }


CASES = [
    pytest.param(
        {"size": "x"},
        [
            (
                "FieldValueTypeInvalid",
                "spec.size",
                'Invalid value: "string": spec.size in body must be of type integer: "string"',
            ),
            (
                "FieldValueInvalid",
                ".spec.size",
                "Invalid value: 0: .spec.size accessor error: x is of the type string, expected int64",
            ),
            NOT_CHECKED,
        ],
        id="type",
    ),
    pytest.param(
        {"size": 1, "labels": "x"},
        [
            (
                "FieldValueTypeInvalid",
                "spec.labels",
                'Invalid value: "string": spec.labels in body must be of type object: "string"',
            ),
            NOT_CHECKED,
        ],
        id="typeobj",
    ),
    pytest.param(
        {"size": 0},
        [
            (
                "FieldValueInvalid",
                "spec.size",
                "Invalid value: 0: spec.size in body should be greater than or equal to 1",
            ),
        ],
        id="min",
    ),
    pytest.param(
        {"size": 11, "mode": "B"},
        [
            (
                "FieldValueInvalid",
                "spec.size",
                "Invalid value: 11: spec.size in body should be less than or equal to 10",
            ),
        ],
        id="max",
    ),
    pytest.param(
        {"size": 1, "ratio": 0},
        [
            (
                "FieldValueInvalid",
                "spec.ratio",
                "Invalid value: 0: factor MultipleOf declared for spec.ratio must be positive: 0",
            ),
            (
                "FieldValueInvalid",
                "spec.ratio",
                "Invalid value: 0: spec.ratio in body should be greater than 0",
            ),
        ],
        id="exclmin",
    ),
    pytest.param(
        {"size": 1, "ratio": 0.3},
        [
            (
                "FieldValueInvalid",
                "spec.ratio",
                "Invalid value: 0.3: spec.ratio in body should be a multiple of 0.5",
            ),
        ],
        id="multipleof",
    ),
    pytest.param(
        {"size": 1, "name": "a"},
        [
            (
                "FieldValueInvalid",
                "spec.name",
                'Invalid value: "a": spec.name in body should be at least 2 chars long',
            ),
        ],
        id="minlen",
    ),
    pytest.param(
        {"size": 1, "name": "abcdef"},
        [
            ("FieldValueTooLong", "spec.name", "Too long: may not be more than 5 bytes"),
            NOT_CHECKED,
        ],
        id="maxlen",
    ),
    pytest.param(
        {"size": 1, "name": "AB"},
        [
            (
                "FieldValueInvalid",
                "spec.name",
                "Invalid value: \"AB\": spec.name in body should match '^[a-z]+$'",
            ),
        ],
        id="pattern",
    ),
    pytest.param(
        {"size": 1, "mode": "C"},
        [
            (
                "FieldValueNotSupported",
                "spec.mode",
                'Unsupported value: "C": supported values: "A", "B"',
            ),
            NOT_CHECKED,
        ],
        id="enum",
    ),
    pytest.param(
        {"size": 1, "tags": []},
        [
            (
                "FieldValueInvalid",
                "spec.tags",
                "Invalid value: 0: spec.tags in body should have at least 1 items",
            ),
        ],
        id="minitems",
    ),
    pytest.param(
        {"size": 1, "tags": ["a", "b", "c"]},
        [
            ("FieldValueTooMany", "spec.tags", "Too many: 3: must have at most 2 items"),
            NOT_CHECKED,
        ],
        id="maxitems",
    ),
    pytest.param(
        {"size": 1, "tags": ["a", "a"]},
        [
            ("FieldValueDuplicate", "spec.tags[1]", 'Duplicate value: "a"'),
        ],
        id="dupset",
    ),
    pytest.param(
        {"size": 1, "labels": {"a": "1", "b": "2", "c": "3"}},
        [
            ("FieldValueTooMany", "spec.labels", "Too many: 3: must have at most 2 items"),
            NOT_CHECKED,
        ],
        id="maxprops",
    ),
    pytest.param(
        {"size": 1, "quantity": "abc"},
        [
            (
                "FieldValueInvalid",
                "spec.quantity",
                "Invalid value: \"abc\": spec.quantity in body should match '^[0-9]+m?$'",
            ),
        ],
        id="intorstring",
    ),
    pytest.param(
        {"size": 1, "quantity": 1.5},
        [
            (
                "FieldValueTypeInvalid",
                "spec.quantity",
                'Invalid value: "number": spec.quantity in body must be of type integer,string: "number"',
            ),
            (
                "FieldValueInvalid",
                "<nil>",
                'Invalid value: "": "spec.quantity" must validate at least one schema (anyOf)',
            ),
            (
                "FieldValueTypeInvalid",
                "spec.quantity",
                'Invalid value: "number": spec.quantity in body must be of type integer: "number"',
            ),
            (
                "FieldValueInvalid",
                "<nil>",
                'Invalid value: "": Checked value must be of type integer (default format) in spec.quantity',
            ),
            NOT_CHECKED,
        ],
        id="intorstringfloat",
    ),
    pytest.param(
        {"size": 1, "when": "notadate"},
        [
            (
                "FieldValueTypeInvalid",
                "spec.when",
                'Invalid value: "notadate": spec.when in body must be of type date-time: "notadate"',
            ),
            NOT_CHECKED,
        ],
        id="format",
    ),
    pytest.param(
        {"size": 1, "ports": [{"name": "a", "port": 1}, {"name": "a", "port": 2}]},
        [
            ("FieldValueDuplicate", "spec.ports[1]", 'Duplicate value: {"name":"a"}'),
        ],
        id="dupmap",
    ),
    pytest.param(
        {"size": 1, "ports": [{"port": 1}]},
        [
            ("FieldValueRequired", "spec.ports[0].name", "Required value"),
            NOT_CHECKED,
        ],
        id="mapkeymissing",
    ),
    pytest.param(
        {"size": 1, "embedded": {"x": 1}},
        [
            ("FieldValueRequired", "spec.embedded.apiVersion", "Required value"),
            ("FieldValueRequired", "spec.embedded.kind", "Required value"),
            NOT_CHECKED,
        ],
        id="embeddedmissing",
    ),
    pytest.param(
        {},
        [
            ("FieldValueRequired", "spec.size", "Required value"),
            NOT_CHECKED,
        ],
        id="required",
    ),
    pytest.param(
        {"size": 0, "name": "A", "mode": "Z"},
        [
            (
                "FieldValueInvalid",
                "spec.name",
                'Invalid value: "A": spec.name in body should be at least 2 chars long',
            ),
            (
                "FieldValueInvalid",
                "spec.size",
                "Invalid value: 0: spec.size in body should be greater than or equal to 1",
            ),
            (
                "FieldValueNotSupported",
                "spec.mode",
                'Unsupported value: "Z": supported values: "A", "B"',
            ),
            NOT_CHECKED,
        ],
        id="several",
    ),
    pytest.param(
        {"size": 1, "ports": [{"name": "a", "port": 3000000000}]},
        [
            (
                "FieldValueInvalid",
                "<nil>",
                'Invalid value: "": Checked value must be of type integer with format int32 in spec.ports[0].port',
            ),
        ],
        id="int32",
    ),
    pytest.param(
        {"size": 1.5},
        [
            (
                "FieldValueTypeInvalid",
                "spec.size",
                'Invalid value: "number": spec.size in body must be of type integer: "number"',
            ),
            (
                "FieldValueInvalid",
                "<nil>",
                'Invalid value: "": Checked value must be of type integer (default format) in spec.size',
            ),
            (
                "FieldValueInvalid",
                ".spec.size",
                "Invalid value: 0: .spec.size accessor error: 1.5 is of the type float64, expected int64",
            ),
            NOT_CHECKED,
        ],
        id="float_for_int",
    ),
    pytest.param(
        [],
        [
            (
                "FieldValueTypeInvalid",
                "spec",
                'Invalid value: "array": spec in body must be of type object: "array"',
            ),
            (
                "FieldValueInvalid",
                ".spec.size",
                "Invalid value: 0: .spec.size accessor error: [] is of the type []interface {}, expected map[string]interface{}",
            ),
            NOT_CHECKED,
        ],
        id="specarray",
    ),
    pytest.param(
        {"size": 1, "labels": {"a": 1}},
        [
            (
                "FieldValueTypeInvalid",
                "spec.labels.a",
                'Invalid value: "integer": spec.labels.a in body must be of type string: "integer"',
            ),
            NOT_CHECKED,
        ],
        id="labelsval",
    ),
]


@pytest.mark.parametrize(("spec", "expected"), CASES)
async def test_schema_validation_answers_as_the_real_server(
    http: Http, widgets: str, spec: dict[str, Any], expected: list[tuple[str, str, str]]
) -> None:
    reply = await http.post(widgets, {**widget("x"), "spec": spec})
    assert reply.status == 422, reply.body
    assert reply.body["reason"] == "Invalid"
    assert reply.body["details"]["kind"] == "Widget"
    assert reply.body["message"].startswith('Widget.example.com "x" is invalid: ')
    assert causes(reply.body) == set(expected)


@needs_cel
@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        pytest.param(
            {"size": 7, "mode": "A"},
            ("FieldValueInvalid", "spec", "Invalid value: sizes above 5 need mode B"),
            id="message",
        ),
        pytest.param(
            {"size": 1, "name": "bad"},
            (
                "FieldValueInvalid",
                "spec",
                "Invalid value: failed rule: !has(self.name) || self.name != 'bad'",
            ),
            id="no-message",
        ),
    ],
)
async def test_cel_rules_refuse_with_their_messages(
    http: Http, widgets: str, spec: dict[str, Any], expected: tuple[str, str, str]
) -> None:
    reply = await http.post(widgets, {**widget("x"), "spec": spec})
    assert reply.status == 422
    assert causes(reply.body) == {expected}


async def test_status_is_validated_against_the_status_schema(http: Http, widgets: str) -> None:
    await http.post(widgets, widget("full", size=3))
    obj = (await http.get(f"{widgets}/full")).body
    reply = await http.put(
        f"{widgets}/full/status", {**obj, "status": {"replicas": "x", "selector": 5}}
    )
    assert reply.status == 422
    assert causes(reply.body) == {
        (
            "FieldValueTypeInvalid",
            "status.replicas",
            'Invalid value: "string": replicas in body must be of type integer: "string"',
        ),
        (
            "FieldValueTypeInvalid",
            "status.selector",
            'Invalid value: "integer": selector in body must be of type string: "integer"',
        ),
        (
            "FieldValueInvalid",
            ".status.replicas",
            "Invalid value: 0: .status.replicas accessor error: x is of the type string, expected int64",
        ),
        (
            "FieldValueInvalid",
            ".status.selector",
            'Invalid value: "": .status.selector accessor error: 5 is of the type int64, expected string',
        ),
        NOT_CHECKED,
    }
    negative = await http.put(f"{widgets}/full/status", {**obj, "status": {"replicas": -1}})
    assert causes(negative.body) == {
        (
            "FieldValueInvalid",
            ".status.replicas",
            "Invalid value: -1: should be a non-negative integer",
        )
    }
    patched = await http.patch(f"{widgets}/full", {"spec": {"size": -2}})
    assert causes(patched.body) == {
        (
            "FieldValueInvalid",
            "spec.size",
            "Invalid value: -2: spec.size in body should be greater than or equal to 1",
        ),
        ("FieldValueInvalid", ".spec.size", "Invalid value: -2: should be a non-negative integer"),
    }


async def test_hvpas_are_validated_against_hvpas_crd(server: ApiServer, http: Http) -> None:
    """The installed Hvpa CRD is manifests/crd.yaml's: a spec it refuses is refused here."""
    hvpas = "/apis/autoscaling.k8s.io/v1alpha1/namespaces/default/hvpas"
    reply = await http.post(
        hvpas,
        {
            "apiVersion": "autoscaling.k8s.io/v1alpha1",
            "kind": "Hvpa",
            "metadata": {"name": "h"},
            "spec": {
                "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "strategy": "Sideways",
            },
        },
    )
    assert reply.status == 422
    assert {(c["reason"], c["field"]) for c in reply.body["details"]["causes"]} >= {
        ("FieldValueNotSupported", "spec.strategy")
    }


async def test_an_invalid_object_can_be_stored_on_purpose(server: ApiServer) -> None:
    """validate=False: how a test stores what the CRD refuses, as written before the rule."""
    server.objects.create("customresourcedefinitions", WIDGET_CRD)
    stored = server.objects.create("widgets", widget("old", size=99), validate=False)
    assert stored["spec"]["size"] == 99
    updated = server.objects.patch("widgets", "old", {"spec": {"mode": "B"}})
    assert updated["spec"] == {**stored["spec"], "mode": "B"}


@needs_cel
async def test_a_message_built_with_format_reads_as_the_real_servers(http: Http) -> None:
    """hvpa's CRD prints numbers in its messages with `format` (cel-go's strings library; the
    cost of string() of an int cannot be bounded): the message is the one kube-apiserver and
    hvpa validate give, not "failed rule"."""
    hvpas = "/apis/autoscaling.k8s.io/v1alpha1/namespaces/default/hvpas"
    reply = await http.post(
        hvpas,
        {
            "apiVersion": "autoscaling.k8s.io/v1alpha1",
            "kind": "Hvpa",
            "metadata": {"name": "h"},
            "spec": {
                "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "hpa": {"template": {"spec": {"minReplicas": 5, "maxReplicas": 3}}},
            },
        },
    )
    assert reply.status == 422
    assert causes(reply.body) == {
        (
            "FieldValueInvalid",
            "spec.hpa.template.spec.maxReplicas",
            "Invalid value: must be >= minReplicas (5)",
        )
    }
