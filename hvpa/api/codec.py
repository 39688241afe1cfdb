"""Parse an Hvpa from its raw form, and serialise it back.

`parse_hvpa` is the one way in: it accepts Gardener's form, the proposal's
three-stage form and autoscaling/v2beta1 metrics, checks structure and
meaning in one pass, and either returns the typed Hvpa exactly as written
(no defaults added) or raises InvalidHvpa with every problem. `to_dict`
writes it back; serialise(parse(x)) parses to an equal Hvpa, and serialising
that again gives identical JSON (the three-stage form and v2beta1 metrics come
back in the Gardener/v2 form they were converted to).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from hvpa.api.autoscaling import MetricSpec
from hvpa.api.base import plain
from hvpa.api.problems import Findings, InvalidHvpa
from hvpa.api.resource import API_VERSION, KIND, Hvpa
from hvpa.api.spec import HvpaSpec
from hvpa.api.structure import Normaliser, Walk
from hvpa.api.threestage import normalise_spec
from hvpa.api.v2beta1 import normalise_metric
from hvpa.api.validation import validate

__all__ = ["NORMALISERS", "parse_hvpa", "to_dict"]

NORMALISERS: Final[dict[type, Normaliser]] = {
    HvpaSpec: normalise_spec,
    MetricSpec: normalise_metric,
}


def parse_hvpa(obj: object) -> Hvpa:
    """The typed Hvpa of a decoded manifest or API object; raise InvalidHvpa listing every problem."""
    findings = Findings()
    if not isinstance(obj, Mapping):
        findings.structural("", "an Hvpa must be an object")
        raise InvalidHvpa(findings.problems)
    hvpa: Hvpa = Walk(findings, NORMALISERS).read(dict(obj), Hvpa, "")
    validate(hvpa, findings)
    if findings.problems:
        raise InvalidHvpa(findings.problems)
    return hvpa


def to_dict(hvpa: Hvpa) -> dict[str, Any]:
    """The JSON form (plain dicts, lists, strings, numbers), apiVersion and kind first."""
    body: dict[str, Any] = plain(hvpa)
    body.pop("apiVersion", None)
    body.pop("kind", None)
    return {"apiVersion": hvpa.api_version or API_VERSION, "kind": hvpa.kind or KIND, **body}
