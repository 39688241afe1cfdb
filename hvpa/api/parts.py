"""An Hvpa parsed in two parts, spec and status, so that an unchanged spec is parsed once.

The controller sees an Hvpa again at every write of its status (its own
included), every relist and every metadata change, and the spec is the same
each time: parsing it (the structure walk, the normalisers, validation) cost
about 200 us an event, and the status as much again. `parse_spec_part`
returns what the spec contributes to `parse_hvpa`'s answer, so a caller may
keep it as long as the spec's content is unchanged (the controller keys it
by the spec's bytes); `parse_status_part` reads only the status (msgspec's
decoder where `ExactDecoder` says the walk would agree, the walk otherwise);
`join_parts` gives exactly what `parse_hvpa` gives for the whole object: the
same Hvpa, or InvalidHvpa with the same problems in the same order (the
walk's problems in field order - apiVersion, kind, metadata, spec, status -
then validation's). tests/api/test_hvpa_parts.py holds them to that.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import msgspec

from hvpa.api.codec import NORMALISERS
from hvpa.api.exact_decode import ExactDecoder
from hvpa.api.problems import Findings, InvalidHvpa, Problem
from hvpa.api.resource import Hvpa
from hvpa.api.spec import HvpaSpec
from hvpa.api.status import HvpaStatus
from hvpa.api.structure import Walk
from hvpa.api.validation import validate

__all__ = ["SpecPart", "StatusPart", "join_parts", "parse_spec_part", "parse_status_part"]


@dataclass(frozen=True, slots=True, weakref_slot=True)
class SpecPart:
    """What apiVersion, kind and spec contribute: the spec as read (a placeholder where it
    could not be), the walk's problems and validation's. Weakly referable, so a cache of
    parts can forget those no Hvpa holds any more."""

    api_version: str
    kind: str
    spec: HvpaSpec
    structural: tuple[Problem, ...]
    missing: tuple[Problem, ...]
    semantic: tuple[Problem, ...]


@dataclass(frozen=True, slots=True)
class StatusPart:
    status: HvpaStatus | None
    problems: tuple[Problem, ...]


def parse_spec_part(api_version: str, kind: str, spec: Any) -> SpecPart:
    """The spec as `parse_hvpa` reads it (`spec`: the decoded JSON, None when absent)."""
    findings = Findings()
    raw = {"apiVersion": api_version, "kind": kind, "metadata": {}, "spec": spec}
    hvpa: Hvpa = Walk(findings, NORMALISERS).read(raw, Hvpa, "")
    walked = tuple(findings.problems)
    validate(hvpa, findings)
    # The walk names a missing top-level field after every field present, the status
    # included, so those problems join after the status's.
    cut = len(walked)
    while cut and _is_top_level_missing(walked[cut - 1]):
        cut -= 1
    return SpecPart(
        api_version,
        kind,
        hvpa.spec,
        walked[:cut],
        walked[cut:],
        tuple(findings.problems[len(walked) :]),
    )


_TOP_LEVEL: Final = frozenset(field.encode_name for field in msgspec.structs.fields(Hvpa))


def _is_top_level_missing(problem: Problem) -> bool:
    return problem.message == "required" and problem.path in _TOP_LEVEL


_decode_status: Final = ExactDecoder(HvpaStatus)


def parse_status_part(status: bytes | msgspec.Raw | None) -> StatusPart:
    """The status as `parse_hvpa` reads it, from its JSON (None: there is none)."""
    if status is None:
        return StatusPart(None, ())
    fast = _decode_status.decode(status)
    if fast is not None:
        return StatusPart(fast, ())
    findings = Findings()
    raw = msgspec.json.decode(status)
    read: HvpaStatus | None = Walk(findings, NORMALISERS).read(raw, HvpaStatus | None, "status")
    return StatusPart(read, tuple(findings.problems))


def join_parts(spec: SpecPart, status: StatusPart, metadata: Mapping[str, Any]) -> Hvpa:
    """The Hvpa `parse_hvpa` returns for the object the parts came from (with `metadata`);
    raise InvalidHvpa with the problems it would raise."""
    problems = (*spec.structural, *status.problems, *spec.missing, *spec.semantic)
    if problems:
        raise InvalidHvpa(problems)
    return Hvpa(
        api_version=spec.api_version,
        kind=spec.kind,
        metadata=dict(metadata),
        spec=spec.spec,
        status=status.status,
    )
