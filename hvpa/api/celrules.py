"""The cross-field checks of `hvpa.api.validation`, spelled in CEL for the CRD.

The API server evaluates these (`x-kubernetes-validations`) on every write,
so an Hvpa that `hvpa validate` refuses for one of these reasons is refused
by `kubectl apply` too, with the same message at the same field path. Each
rule's message is the constant `hvpa.api.validation` reports, or a
`messageExpression` that builds the same text; tests/api evaluates every rule
against passing and failing manifests and compares the two.

What CEL can see decides what is here. A rule sees `self` (the value it sits
on) and nothing of the object's metadata but its name, so the ConfigMap's
namespace cannot be compared with the Hvpa's: it is refused outright. Checks
that need quantity arithmetic, label selector matching, Go duration syntax or
the case-insensitive keys of the three-stage form stay in hvpa's own
validation (the controller refuses such an Hvpa with `InvalidSpec`). The
estimated cost of every rule is bounded by the lists and strings it walks,
which the schema bounds (`hvpa.api.base`), and no message converts a number
with `string()`, whose cost the server cannot bound (see `_with_number`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from hvpa.api import references
from hvpa.api.autoscaling import HPAScalingRules, MetricIdentifier, MetricSpec, ObjectMetricSource
from hvpa.api.spec import (
    ClusterProportional,
    ConfigMapReference,
    HpaSpec,
    HpaTemplateSpec,
    HvpaSpec,
    VpaSpec,
    WeightBasedScalingInterval,
)
from hvpa.api.v2beta1 import (
    ExternalMetricSourceV2beta1,
    ObjectMetricSourceV2beta1,
    PodsMetricSourceV2beta1,
)

__all__ = ["RULES", "Rule", "all_rules", "rendered"]


@dataclass(frozen=True, slots=True)
class Rule:
    """One x-kubernetes-validations entry; exactly one of `message`, `message_expression`."""

    rule: str
    message: str | None = None
    message_expression: str | None = None
    field_path: str | None = None

    def render(self) -> dict[str, str]:
        out = {"rule": self.rule}
        if self.message is not None:
            out["message"] = self.message
        if self.message_expression is not None:
            out["messageExpression"] = self.message_expression
        if self.field_path is not None:
            out["fieldPath"] = self.field_path
        return out


def _path_segment(value: str) -> tuple[Rule, ...]:
    """apimachinery's IsPathSegmentName on `value` (an expression), with its messages."""
    return (
        Rule(
            rule=f"{value} != '.' && {value} != '..'",
            message_expression=f'"may not be \'" + {value} + "\'"',
        ),
        Rule(rule=f"!{value}.contains('/')", message="may not contain '/'"),
        Rule(rule=f"!{value}.contains('%')", message="may not contain '%'"),
    )


def _with_number(text: str, number: str) -> str:
    """A messageExpression: `text (N)`, N the integer `number` (an expression) in decimal.

    Not `text + string(number)`: the API server cannot bound the size of `string()` of an
    int when it estimates a rule's cost, so it estimates the concatenation beyond any budget
    and refuses the CRD. `format` (the strings library, Kubernetes 1.29 and later) has a
    bounded estimate and writes the same decimal.
    """
    return f"'{text} (%d)'.format([{number}])"


def _field_path_segment(field: str) -> tuple[Rule, ...]:
    """The path segment rules on an optional string field of the object the rule sits on."""
    return tuple(
        Rule(
            rule=f"!has(self.{field}) || self.{field} == '' || ({rule.rule})",
            message=rule.message,
            message_expression=rule.message_expression,
            field_path=f".{field}",
        )
        for rule in _path_segment(f"self.{field}")
    )


_TARGET_KINDS: Final = "['Deployment', 'StatefulSet', 'ReplicaSet']"
_THREE_STAGE: Final = (
    "has(self.hpaSpec) || has(self.stageTwoStartReplicaCount) || has(self.stageTwoStopReplicaCount)"
    " || has(self.firstStageVpaWeight) || has(self.secondStageVpaWeight)"
    " || has(self.thirdStageVpaWeight) || has(self.vpaSpec)"
)
_HPA_TEMPLATE_SPEC: Final = "has(self.hpa) && has(self.hpa.template) && has(self.hpa.template.spec)"
_SOURCES: Final = {
    "Resource": "resource",
    "ContainerResource": "containerResource",
    "Pods": "pods",
    "Object": "object",
    "External": "external",
}
# The messages hvpa.api.validation reports for these rules.
THREE_STAGE_EXCLUSIVE: Final = (
    "cannot be combined with the three-stage form (hpaSpec, stageTwoStartReplicaCount, ...), "
    "which sets it itself"
)

RULES: Final[dict[tuple[type, str | None], tuple[Rule, ...]]] = {
    (HvpaSpec, None): (
        Rule(
            rule=f"!has(self.targetRef) || !has(self.targetRef.kind) || self.targetRef.kind == ''"
            f" || self.targetRef.kind in {_TARGET_KINDS}",
            message_expression="'must be one of Deployment, StatefulSet, ReplicaSet (got \"' "
            "+ self.targetRef.kind + '\")'",
            field_path=".targetRef.kind",
        ),
        Rule(
            rule="!has(self.targetRef) || !has(self.targetRef.apiVersion)"
            " || self.targetRef.apiVersion in ['', 'apps/v1']",
            message_expression="'must be apps/v1 (got \"' + self.targetRef.apiVersion + '\")'",
            field_path=".targetRef.apiVersion",
        ),
        *(
            Rule(
                rule=f"!has(self.targetRef) || !has(self.targetRef.name)"
                f" || self.targetRef.name == '' || ({rule.rule})",
                message=rule.message,
                message_expression=rule.message_expression,
                field_path=".targetRef.name",
            )
            for rule in _path_segment("self.targetRef.name")
        ),
        Rule(
            rule="!has(self.hpa) || !has(self.hpa.deploy) || !self.hpa.deploy"
            f" || has(self.clusterProportional) || {_HPA_TEMPLATE_SPEC} || {_THREE_STAGE}",
            message="required when spec.hpa.deploy is true (it holds minReplicas and maxReplicas)",
            field_path=".hpa.template.spec",
        ),
        Rule(
            rule=f"!has(self.strategy) || self.strategy != 'Capacity' || {_HPA_TEMPLATE_SPEC}"
            f" || {_THREE_STAGE}",
            message="required by strategy Capacity (it holds minReplicas and maxReplicas)",
            field_path=".hpa.template.spec",
        ),
        Rule(
            rule="!has(self.strategy) || self.strategy != 'Mixed' || has(self.mixed)",
            message="required when strategy is Mixed",
            field_path=".mixed",
        ),
        Rule(
            rule="!has(self.strategy) || self.strategy != 'Capacity' || has(self.capacity)",
            message="required when strategy is Capacity",
            field_path=".capacity",
        ),
        *(
            Rule(
                rule=f"!({_THREE_STAGE}) || !has(self.{field})",
                message=THREE_STAGE_EXCLUSIVE,
                field_path=f".{field}",
            )
            for field in ("hpa", "vpa", "weightBasedScalingIntervals", "targetRef")
        ),
        Rule(
            rule="!has(self.stageTwoStartReplicaCount) || !has(self.stageTwoStopReplicaCount)"
            " || self.stageTwoStopReplicaCount >= self.stageTwoStartReplicaCount",
            message_expression=_with_number(
                "must be >= stageTwoStartReplicaCount", "self.stageTwoStartReplicaCount"
            ),
            field_path=".stageTwoStopReplicaCount",
        ),
    ),
    (HpaSpec, None): (
        Rule(
            rule="!has(self.selector) || (has(self.selector.matchLabels)"
            " && size(self.selector.matchLabels) > 0) || (has(self.selector.matchExpressions)"
            " && size(self.selector.matchExpressions) > 0)",
            message="must not be empty (leave it out to use the template's labels)",
            field_path=".selector",
        ),
    ),
    (HpaTemplateSpec, None): (
        Rule(
            rule="!has(self.minReplicas) || self.maxReplicas >= self.minReplicas",
            message_expression=_with_number("must be >= minReplicas", "self.minReplicas"),
            field_path=".maxReplicas",
        ),
        Rule(
            rule="!has(self.minReplicas) || self.minReplicas != 0 || (has(self.metrics)"
            " && self.metrics.exists(m, has(m.type) && m.type in ['Object', 'External']))",
            message="must be >= 1 unless an Object or External metric is set "
            "(scaling to zero needs one)",
            field_path=".minReplicas",
        ),
    ),
    (MetricSpec, None): tuple(
        Rule(
            rule=f"!has(self.type) || self.type != '{kind}' || has(self.{field})",
            message="must populate information for the given metric source",
            field_path=f".{field}",
        )
        for kind, field in _SOURCES.items()
    ),
    (MetricIdentifier, None): _field_path_segment("name"),
    (PodsMetricSourceV2beta1, None): _field_path_segment("metricName"),
    (ObjectMetricSourceV2beta1, None): _field_path_segment("metricName"),
    (ExternalMetricSourceV2beta1, None): _field_path_segment("metricName"),
    (ObjectMetricSource, "describedObject"): (
        *_field_path_segment("kind"),
        *_field_path_segment("name"),
        Rule(
            rule="!has(self.apiVersion) || self.apiVersion == ''"
            # A raw string: CEL's quoted strings know no \. escape.
            f" || self.apiVersion.matches(r'{references.API_VERSION_PATTERN}')",
            message=references.API_VERSION_MESSAGE,
            field_path=".apiVersion",
        ),
    ),
    (HPAScalingRules, None): (
        Rule(
            rule="!has(self.policies) || size(self.policies) > 0",
            message="must specify at least one Policy",
            field_path=".policies",
        ),
    ),
    (WeightBasedScalingInterval, None): (
        Rule(
            rule="!has(self.startReplicaCount) || !has(self.lastReplicaCount)"
            " || self.startReplicaCount == 0 || self.lastReplicaCount == 0"
            " || self.lastReplicaCount >= self.startReplicaCount",
            message_expression=_with_number(
                "must be >= startReplicaCount", "self.startReplicaCount"
            ),
            field_path=".lastReplicaCount",
        ),
    ),
    (ClusterProportional, None): (
        Rule(
            rule="size([has(self.linear), has(self.ladder), has(self.configMapRef)]"
            ".filter(x, x)) == 1",
            message="exactly one of linear, ladder or configMapRef must be set",
        ),
    ),
    (ConfigMapReference, None): (
        Rule(
            rule="!has(self.namespace)",
            message=references.CONFIG_MAP_NAMESPACE_MESSAGE,
            field_path=".namespace",
        ),
    ),
}
RULES[(VpaSpec, None)] = RULES[(HpaSpec, None)]


def rendered(cls: type, field: str | None) -> list[dict[str, str]]:
    """The x-kubernetes-validations of a struct (`field` None) or of one of its fields."""
    return [rule.render() for rule in RULES.get((cls, field), ())]


def all_rules() -> list[tuple[type, str | None, Rule]]:
    return [(cls, field, rule) for (cls, field), rules in RULES.items() for rule in rules]
