"""The resources the controller watches beyond `hvpa.kube.resources`, and their records.

- `HVPAS`: the Hvpa itself. Its record carries the parsed Hvpa, or, for a
  spec that does not parse, the problems and the status as written: an
  invalid Hvpa must reach the reconciler (to get its InvalidSpec condition),
  so conversion never raises, or the informer would skip the object.
- `HPAS`: HorizontalPodAutoscalers, read only to see who else scales a target.
- `OWNED_VPAS`: VerticalPodAutoscalers with what the controller needs to own
  one: labels (for `vpa.selector`), owner references, and the spec as
  written (to tell whether the child VPA matches its template).
"""

from __future__ import annotations

import hashlib
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import msgspec

from hvpa.api import KIND as HVPA_KIND
from hvpa.api import PLURAL as HVPA_PLURAL
from hvpa.api import VERSION as HVPA_VERSION
from hvpa.api import InvalidHvpa
from hvpa.api.parts import SpecPart, join_parts, parse_spec_part, parse_status_part
from hvpa.api.resource import GROUP as HVPA_GROUP
from hvpa.api.resource import Hvpa
from hvpa.api.spec import LabelSelectorSpec
from hvpa.engine.memo import ByIdentity
from hvpa.engine.rewrites import RESUME_ANNOTATION
from hvpa.kube.resources import Resource
from hvpa.labels import LabelSelector, SelectorError
from hvpa.records import VpaRecord, decode_vpa

__all__ = [
    "HPAS",
    "HVPAS",
    "OWNED_VPAS",
    "HpaRecord",
    "HvpaRecord",
    "OwnerRef",
    "VpaObject",
    "hvpa_from_wire",
    "vpa_selector",
]


class _Meta(msgspec.Struct, rename="camel"):
    name: str = ""
    namespace: str = ""
    uid: str = ""
    resource_version: str = ""
    generation: int = 0
    creation_timestamp: str | None = None
    deletion_timestamp: str | None = None
    labels: dict[str, str] | None = None
    owner_references: list[dict[str, Any]] | None = None


def _metadata(meta: _Meta, **more: Any) -> dict[str, Any]:
    """The metadata a parser reads back: identity, `more`, and the creation time when set."""
    metadata: dict[str, Any] = {
        "name": meta.name,
        "namespace": meta.namespace,
        "uid": meta.uid,
        "resourceVersion": meta.resource_version,
        **more,
    }
    if meta.creation_timestamp is not None:
        metadata["creationTimestamp"] = meta.creation_timestamp
    return metadata


# ---------------------------------------------------------------------------
# Hvpa


class _HvpaMeta(_Meta):
    annotations: dict[str, str] | None = None


class HvpaWire(msgspec.Struct, rename="camel"):
    api_version: str = ""
    kind: str = ""
    metadata: _HvpaMeta = msgspec.field(default_factory=_HvpaMeta)
    spec: Any = None
    status: Any = None


@dataclass(frozen=True, slots=True)
class HvpaRecord:
    """One Hvpa as cached: parsed (`hvpa`), or not (`problems`, with its raw status).

    `spec_part` holds the parsed spec this record was built from, so the cache of
    parsed specs keeps it while some record does (and no longer)."""

    namespace: str
    name: str
    uid: str
    resource_version: str
    generation: int
    deleting: bool
    hvpa: Hvpa | None
    problems: tuple[str, ...] = ()
    raw_status: Mapping[str, Any] | None = None
    spec_part: SpecPart | None = field(default=None, compare=False, repr=False)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def target(self) -> tuple[str, str, str] | None:
        """(namespace, kind, name) of the target; None for an invalid Hvpa."""
        if self.hvpa is None:
            return None
        ref = self.hvpa.spec.target_ref
        return (self.namespace, ref.kind, ref.name)

    @property
    def config_map(self) -> tuple[str, str] | None:
        """(namespace, name) of the ConfigMap `clusterProportional.configMapRef` names.

        Always in the Hvpa's own namespace, whatever `configMapRef.namespace`
        says: the controller may read every ConfigMap, the Hvpa's author may not.
        """
        if self.hvpa is None or self.hvpa.spec.cluster_proportional is None:
            return None
        ref = self.hvpa.spec.cluster_proportional.config_map_ref
        if ref is None:
            return None
        return (self.namespace, ref.name)

    @property
    def cluster_proportional(self) -> bool:
        return self.hvpa is not None and self.hvpa.spec.cluster_proportional is not None


# Parsed specs by the digest of (apiVersion, kind, the spec's JSON): every watch event of an
# Hvpa whose spec did not change (its status writes, relists, label edits) reuses the parse.
# An entry lives as long as a record holds its part. BLAKE2b's 16 bytes put a collision of
# two different specs out of reach, so the digest stands for the JSON without keeping it.
_spec_parts: weakref.WeakValueDictionary[bytes, SpecPart] = weakref.WeakValueDictionary()


def _spec_part(api_version: str, kind: str, spec: Any) -> SpecPart:
    """The spec's part, parsed from its JSON, so that equal JSON is one parse. The spec
    came from JSON (a watch event) or is read as the API server would read it (a scenario's
    YAML: map keys that are not strings become strings, as in any JSON)."""
    text = msgspec.json.encode(spec)
    digest = hashlib.blake2b(text, digest_size=16)
    digest.update(b"\0" + api_version.encode() + b"\0" + kind.encode())
    key = digest.digest()
    part = _spec_parts.get(key)
    if part is None:
        part = parse_spec_part(api_version, kind, msgspec.json.decode(text))
        _spec_parts[key] = part
    return part


def hvpa_from_wire(wire: HvpaWire) -> HvpaRecord:
    """Never raises: a spec that does not parse becomes a record with its problems.

    What `parse_hvpa` gives for the object as JSON, in two parts (`hvpa.api.parts`): the
    spec parsed once per content, the status at every event (its fast decode where it
    applies)."""
    meta = wire.metadata
    more: dict[str, Any] = {"generation": meta.generation}
    # The one annotation the decision reads (engine/rewrites.py); the rest is not kept.
    resume = (meta.annotations or {}).get(RESUME_ANNOTATION)
    if resume is not None:
        more["annotations"] = {RESUME_ANNOTATION: resume}
    spec = _spec_part(
        wire.api_version or f"{HVPA_GROUP}/{HVPA_VERSION}", wire.kind or HVPA_KIND, wire.spec
    )
    common: dict[str, Any] = {
        "namespace": meta.namespace,
        "name": meta.name,
        "uid": meta.uid,
        "resource_version": meta.resource_version,
        "generation": meta.generation,
        "deleting": meta.deletion_timestamp is not None,
        "spec_part": spec,
    }
    status = None if wire.status is None else msgspec.json.encode(wire.status)
    try:
        hvpa = join_parts(spec, parse_status_part(status), _metadata(meta, **more))
    except InvalidHvpa as error:
        return HvpaRecord(
            **common,
            hvpa=None,
            problems=tuple(str(p) for p in error.problems),
            raw_status=wire.status if isinstance(wire.status, Mapping) else None,
        )
    return HvpaRecord(**common, hvpa=hvpa)


HVPAS: Final[Resource[HvpaWire, HvpaRecord]] = Resource(
    HVPA_GROUP, HVPA_VERSION, HVPA_PLURAL, HVPA_KIND, True, HvpaWire, hvpa_from_wire
)


# ---------------------------------------------------------------------------
# HorizontalPodAutoscaler


class _ScaleTargetRef(msgspec.Struct):
    kind: str = ""
    name: str = ""


class _HpaSpec(msgspec.Struct, rename="camel"):
    scale_target_ref: _ScaleTargetRef = msgspec.field(default_factory=_ScaleTargetRef)


class HpaWire(msgspec.Struct):
    metadata: _Meta = msgspec.field(default_factory=_Meta)
    spec: _HpaSpec = msgspec.field(default_factory=_HpaSpec)


@dataclass(frozen=True, slots=True)
class HpaRecord:
    namespace: str
    name: str
    target_kind: str
    target_name: str
    creation_timestamp: str | None
    resource_version: str = ""

    @property
    def target(self) -> tuple[str, str, str]:
        return (self.namespace, self.target_kind, self.target_name)


def hpa_from_wire(wire: HpaWire) -> HpaRecord:
    ref = wire.spec.scale_target_ref
    return HpaRecord(
        namespace=wire.metadata.namespace,
        name=wire.metadata.name,
        target_kind=ref.kind,
        target_name=ref.name,
        creation_timestamp=wire.metadata.creation_timestamp,
        resource_version=wire.metadata.resource_version,
    )


HPAS: Final[Resource[HpaWire, HpaRecord]] = Resource(
    "autoscaling",
    "v2",
    "horizontalpodautoscalers",
    "HorizontalPodAutoscaler",
    True,
    HpaWire,
    hpa_from_wire,
)


# ---------------------------------------------------------------------------
# VerticalPodAutoscaler, with ownership and labels


class VpaObjectWire(msgspec.Struct):
    metadata: _Meta = msgspec.field(default_factory=_Meta)
    spec: dict[str, Any] = msgspec.field(default_factory=dict)
    status: dict[str, Any] = msgspec.field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class OwnerRef:
    kind: str
    name: str
    uid: str
    controller: bool


@dataclass(frozen=True, slots=True)
class VpaObject:
    """A VPA: the engine's record, plus labels, owners and the spec as written."""

    record: VpaRecord
    labels: Mapping[str, str]
    owners: tuple[OwnerRef, ...]
    spec: Mapping[str, Any]
    resource_version: str

    @property
    def namespace(self) -> str:
        return self.record.namespace

    @property
    def name(self) -> str:
        return self.record.name

    @property
    def target(self) -> tuple[str, str, str]:
        return (self.record.namespace, self.record.target_kind, self.record.target_name)

    def controller_uid(self) -> str | None:
        return next((o.uid for o in self.owners if o.controller), None)

    def selected_by(self, selector: LabelSelector | None) -> bool:
        return selector is None or selector.matches(self.labels)


def _owner(ref: Mapping[str, Any]) -> OwnerRef:
    return OwnerRef(
        kind=str(ref.get("kind", "")),
        name=str(ref.get("name", "")),
        uid=str(ref.get("uid", "")),
        controller=bool(ref.get("controller")),
    )


def vpa_object_from_wire(wire: VpaObjectWire) -> VpaObject:
    """Raises RecordError for a VPA that does not fit its type (the informer skips it); an
    unreadable quantity is kept in `record.unreadable` for the reconcile to report."""
    meta = wire.metadata
    metadata = _metadata(meta, ownerReferences=meta.owner_references or [])
    record = decode_vpa(
        {"metadata": metadata, "spec": wire.spec, "status": wire.status}, strict=False
    )
    return VpaObject(
        record=record,
        labels=dict(meta.labels or {}),
        owners=tuple(_owner(ref) for ref in meta.owner_references or ()),
        spec=wire.spec,
        resource_version=meta.resource_version,
    )


OWNED_VPAS: Final[Resource[VpaObjectWire, VpaObject]] = Resource(
    "autoscaling.k8s.io",
    "v1",
    "verticalpodautoscalers",
    "VerticalPodAutoscaler",
    True,
    VpaObjectWire,
    vpa_object_from_wire,
)


def _parsed_or_none(selector: LabelSelectorSpec) -> LabelSelector | None:
    try:
        return selector.parse()
    except SelectorError:
        return None


# Parsed once per spec selector object: a spec is parsed once per content and shared by the
# records of that content, so every reconcile of an Hvpa asks with the same object, and it was
# parsed again each time (0.8 % of the controller's samples in the envelope's window).
_vpa_selectors: Final = ByIdentity(_parsed_or_none)


def vpa_selector(hvpa: Hvpa) -> LabelSelector | None:
    """`spec.vpa.selector` as a selector; None when unset or unreadable (validation reports it)."""
    selector = hvpa.spec.vpa.selector
    return None if selector is None else _vpa_selectors(selector)
