"""What the controller keeps of a ConfigMap an Hvpa names: the parameters of a one-key
cluster-proportional-autoscaler ConfigMap, and of every other value only its size, so no
message built from it can carry its data."""

from __future__ import annotations

import pytest

from hvpa.api.proportional import ProportionalError, parse_configmap_data
from hvpa.controller.configmaps import proportional_data, proportional_view, redacted
from hvpa.records import ConfigMapWire

LINEAR = '{"coresPerReplica": 2, "nodesPerReplica": 1}'


@pytest.mark.parametrize(
    ("data", "kept"),
    [
        pytest.param({"linear": LINEAR}, {"linear": LINEAR}, id="linear"),
        pytest.param({"ladder": "{}"}, {"ladder": "{}"}, id="ladder"),
        pytest.param(
            {"linear": LINEAR, "api-key": "s3cr3t"},
            {"linear": "<44 bytes>", "api-key": "<6 bytes>"},
            id="parameters-beside-another-key",
        ),
        pytest.param({"password": "hunter2"}, {"password": "<7 bytes>"}, id="one-other-key"),
        pytest.param({"k": "é"}, {"k": "<2 bytes>"}, id="size-in-utf8-bytes"),
        pytest.param({}, {}, id="empty"),
    ],
)
def test_only_parameters_are_kept(data: dict[str, str], kept: dict[str, str]) -> None:
    assert proportional_data(data) == kept


def test_the_view_keeps_the_identity() -> None:
    wire = ConfigMapWire()
    wire.metadata.name, wire.metadata.namespace = "params", "shop"
    wire.data = {"api-key": "s3cr3t", "db-password": "hunter2"}
    record = proportional_view(wire)
    assert (record.namespace, record.name) == ("shop", "params")
    assert record.data == {"api-key": redacted("s3cr3t"), "db-password": redacted("hunter2")}


@pytest.mark.parametrize(
    "data",
    [
        pytest.param({"api-key": "s3cr3t", "db-password": "hunter2"}, id="two-keys"),
        pytest.param({"s3cr3t": "hunter2"}, id="unknown-mode"),
        pytest.param({"linear": LINEAR, "db-password": "hunter2"}, id="parameters-and-more"),
    ],
)
def test_no_parse_error_carries_a_value(data: dict[str, str]) -> None:
    """The messages of cluster-proportional-autoscaler's ConfigMap parser (hvpa.api.proportional),
    fed what the view keeps, name keys and sizes only."""
    with pytest.raises(ProportionalError) as raised:
        parse_configmap_data(proportional_view(ConfigMapWire(data=data)).data)
    assert "hunter2" not in str(raised.value)
    assert "coresPerReplica" not in str(raised.value)
