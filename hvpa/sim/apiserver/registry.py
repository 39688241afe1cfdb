"""The generic registry: create, read, update, patch, delete, /status, /scale and pods/binding,
with the real server's rules in the real server's order.

HTTP handlers and in-process callers (the simulator, tests) both come here,
so a write from either side bumps the one resourceVersion, appears in history
and reaches watchers the same way. Rules kept:
- create: namespace match (400), status reset, defaults, validation (422),
  AlreadyExists (409), uid/creationTimestamp/generation set by the server;
- update: resourceVersion precondition (409), unconditional when absent
  (except Leases and custom resources: 422), create-on-update for Leases
  and Events, status
  ignored by the main resource and everything but status ignored by /status,
  generation bumped when the spec changes, no write (and no event) when
  nothing changed;
- patch: the patch's own metadata.resourceVersion is a precondition;
  strategic merge refused for custom resources (415);
- delete: preconditions, finalizers, graceful deletion of scheduled pods;
- managedFields: a write that names its field manager (every HTTP write
  does) records what it set, and server-side apply merges, owns and
  reports conflicts, as managedfields.py says; an in-process write that
  names none (the simulator's own controllers) leaves the entries as they
  were.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import orjson

from hvpa.labels import LabelSelector
from hvpa.records import format_time
from hvpa.sim.apiserver.builtin_schemas import compiled_builtin
from hvpa.sim.apiserver.crds import CRD_GROUP, crd_status, resource_type_of
from hvpa.sim.apiserver.defaults import apply_defaults, has_defaults, prepare_create_status
from hvpa.sim.apiserver.errors import (
    AlreadyExists,
    BadRequest,
    Conflict,
    FieldError,
    InternalError,
    Invalid,
    NotFound,
    Timeout,
    UnsupportedMediaType,
)
from hvpa.sim.apiserver.managedfields import (
    ManagedEntry,
    Write,
    decode_entries,
    encode_entries,
    record_apply,
    record_update,
    requested_entries,
)
from hvpa.sim.apiserver.patching import PatchType, apply_patch
from hvpa.sim.apiserver.resources import ResourceTable, ResourceType
from hvpa.sim.apiserver.selectors import FieldSelector, parse_label_selector, selector_string
from hvpa.sim.apiserver.storage import (
    CONTINUE_EXPIRED,
    LIST_EXPIRED,
    Entry,
    ListPage,
    Predicate,
    Storage,
    decode_continue,
)
from hvpa.sim.apiserver.validation import validate as validate_object
from hvpa.sim.apiserver.validation import validate_name, validate_status

__all__ = ["LIST_OPTIONS", "Registry", "parse_resource_version"]

# managedFields entries (a name of its own: the class below has a method called `list`).
_Entries = list[ManagedEntry]
_NAME_SUFFIX_ALPHABET: Final = "bcdfghjklmnpqrstvwxz2456789"
_SCALE_KIND: Final = ResourceType("autoscaling", "v1", "scale", "scale", "Scale")
# What 422s about list and watch parameters name, as upstream's ValidateListOptions does.
LIST_OPTIONS: Final = ResourceType("meta.k8s.io", "v1", "listoptions", "", "ListOptions")
_SYSTEM_METADATA: Final = (
    "uid",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "generation",
)


class Registry:
    def __init__(
        self,
        table: ResourceTable,
        storage: Storage,
        *,
        clock: Callable[[], float],
        rng: random.Random,
    ) -> None:
        self.table = table
        self.storage = storage
        self._clock = clock
        self._rng = rng
        self._namespaces = table.at("", "v1", "namespaces")
        self._pods = table.at("", "v1", "pods")

    def resource(self, name: str | ResourceType) -> ResourceType:
        """A served, stored resource by any name kubectl accepts (`po`, `deployments.apps`)."""
        if isinstance(name, ResourceType):
            return name
        rtype = self.table.named(name)
        if rtype is None or rtype.metrics:
            raise LookupError(f"the server doesn't have a resource type {name!r}")
        return rtype

    def now(self) -> str:
        return format_time(self._clock())

    def clock(self) -> float:
        """The server's time (POSIX seconds): what ages in tables are counted against."""
        return self._clock()

    def unknown_fields(self, rtype: ResourceType, body: Any, *, patch: bool = False) -> list[str]:
        """The fields of `body` (an object, or a merge or strategic merge patch of one) that
        its kind's schema does not know: what fieldValidation reports or refuses."""
        schema = rtype.schema if rtype.schema is not None else compiled_builtin(rtype)
        if schema is None or not isinstance(body, dict):
            return []
        return schema.unknown_fields(body, patch=patch)

    # ================================================================ reads

    def get(self, rtype: ResourceType, namespace: str | None, name: str) -> Entry:
        entry = self.storage.store(rtype).entries.get(rtype.key(namespace, name))
        if entry is None:
            raise NotFound.of(rtype, name)
        return entry

    def predicate(
        self, rtype: ResourceType, label_selector: str, field_selector: str
    ) -> Predicate | None:
        labels = parse_label_selector(label_selector) if label_selector else LabelSelector()
        fields = FieldSelector.parse(field_selector, rtype) if field_selector else FieldSelector()
        if labels.empty and fields.empty:
            return None
        if fields.empty:
            return lambda entry: labels.matches(entry.labels)
        if labels.empty:
            return lambda entry: fields.matches(entry.fields)
        return lambda entry: labels.matches(entry.labels) and fields.matches(entry.fields)

    def list(
        self,
        rtype: ResourceType,
        *,
        namespace: str | None,
        label_selector: str = "",
        field_selector: str = "",
        limit: int | None = None,
        continue_token: str | None = None,
        resource_version: str | None = None,
        resource_version_match: str | None = None,
    ) -> ListPage:
        """A list with the documented resourceVersion semantics.

        - unset: most recent; paginated at the first page's version.
        - "0": any version; like the watch cache, `limit` is ignored.
        - "N" with NotOlderThan (or unset match and no limit): now (paginated), if now >= N.
        - "N" with Exact (or unset match with a limit): the state at N, 410 once compacted.
        """
        store = self.storage.store(rtype)
        predicate = self.predicate(rtype, label_selector, field_selector)
        latest = self.storage.resource_version
        if limit is not None and limit <= 0:
            limit = None
        if continue_token:
            if resource_version not in (None, "", "0"):
                raise BadRequest("specifying resource version is not allowed when using continue")
            at_rv, after = decode_continue(continue_token)
            if at_rv == -1:
                at_rv = latest
            store.check_readable(at_rv, CONTINUE_EXPIRED, continue_after=after)
            return store.page(
                namespace=namespace, predicate=predicate, limit=limit, after=after, at_rv=at_rv
            )
        if resource_version_match and not resource_version:
            raise Invalid.of(
                LIST_OPTIONS,
                "",
                [
                    FieldError.forbidden(
                        "resourceVersionMatch",
                        "resourceVersionMatch is forbidden unless resourceVersion is provided",
                    )
                ],
            )
        if resource_version_match not in (None, "", "NotOlderThan", "Exact"):
            raise BadRequest(f"unsupported resourceVersionMatch {resource_version_match!r}")
        if not resource_version:
            return store.page(
                namespace=namespace, predicate=predicate, limit=limit, after=None, at_rv=latest
            )
        requested = parse_resource_version(resource_version)
        if requested == 0:
            if resource_version_match == "Exact":
                raise BadRequest("resourceVersionMatch=Exact requires a non-zero resourceVersion")
            return store.page(
                namespace=namespace, predicate=predicate, limit=None, after=None, at_rv=latest
            )
        if requested > latest:
            raise Timeout(
                f"Too large resource version: {requested}, current: {latest}",
                details={
                    "causes": [
                        {
                            "reason": "ResourceVersionTooLarge",
                            "message": "Too large resource version",
                        }
                    ],
                    "retryAfterSeconds": 1,
                },
            )
        exact = resource_version_match == "Exact" or (
            not resource_version_match and limit is not None
        )
        if not exact:
            return store.page(
                namespace=namespace, predicate=predicate, limit=limit, after=None, at_rv=latest
            )
        store.check_readable(requested, LIST_EXPIRED)
        return store.page(
            namespace=namespace, predicate=predicate, limit=limit, after=None, at_rv=requested
        )

    # ================================================================ create

    def create(
        self,
        rtype: ResourceType,
        namespace: str | None,
        body: Any,
        *,
        keep_status: bool = False,
        dry_run: bool = False,
        validate: bool = True,
        uid: str | None = None,
        manager: str | None = None,
        managed: _Entries | None = None,
    ) -> Entry:
        """`validate=False` and `uid` are for in-process callers only: objects.py says why.
        `manager` records the creation as that manager's Update; `managed` (an apply that
        creates) are the entries to store instead."""
        obj = self._decode(rtype, body)
        metadata = obj["metadata"]
        namespace = self._own_namespace(rtype, namespace, metadata)
        if not metadata.get("name") and metadata.get("generateName"):
            metadata["name"] = self._generate_name(rtype, namespace, str(metadata["generateName"]))
        name = str(metadata.get("name") or "")
        for field in (*_SYSTEM_METADATA, "selfLink", "managedFields"):
            metadata.pop(field, None)
        if not keep_status:
            prepare_create_status(rtype, obj)
        apply_defaults(rtype, obj)
        if rtype.generation:
            metadata["generation"] = 1
        errors = (
            validate_name(rtype, name)
            if name
            else [FieldError.required("metadata.name", "name or generateName is required")]
        )
        if validate or rtype.schema is None:
            errors += validate_object(rtype, obj, None)
        if errors:
            raise Invalid.of(rtype, name, errors)
        if namespace is not None:
            self._require_namespace(namespace)
        store = self.storage.store(rtype)
        key = rtype.key(namespace, name)
        if key in store.entries:
            raise AlreadyExists.of(rtype, name)
        if metadata.pop("resourceVersion", None):
            raise InternalError("resourceVersion should not be set on objects to be created")
        metadata["uid"] = uid or str(uuid.UUID(int=self._rng.getrandbits(128), version=4))
        metadata["creationTimestamp"] = self.now()
        write = self._write(rtype, manager, "")
        if managed is None and write is not None:
            managed = record_update([], None, obj, write, rtype.group)
        encoded = encode_entries(managed or ())
        if encoded:
            metadata["managedFields"] = encoded
        entry = self._store(rtype, key, obj, dry_run=dry_run)
        if _is_crd(rtype) and not dry_run:
            entry = self._serve_crd(entry)
        return entry

    def _generate_name(self, rtype: ResourceType, namespace: str | None, prefix: str) -> str:
        entries = self.storage.store(rtype).entries
        while True:
            suffix = "".join(self._rng.choice(_NAME_SUFFIX_ALPHABET) for _ in range(5))
            candidate = f"{prefix[: 63 - 5]}{suffix}"
            if rtype.key(namespace, candidate) not in entries:
                return candidate

    def _require_namespace(self, namespace: str) -> None:
        assert self._namespaces is not None
        if (
            self._namespaces.key(None, namespace)
            not in self.storage.store(self._namespaces).entries
        ):
            raise NotFound.of(self._namespaces, namespace)

    # ================================================================ update

    def update(
        self,
        rtype: ResourceType,
        namespace: str | None,
        name: str,
        body: Any,
        *,
        subresource: str | None = None,
        dry_run: bool = False,
        manager: str | None = None,
    ) -> tuple[Entry, bool]:
        """PUT; returns the stored entry and whether it was created (create-on-update)."""
        obj = self._decode(rtype, body)
        metadata = obj["metadata"]
        self._own_namespace(rtype, namespace, metadata)
        _require_name(metadata.get("name"), name)
        key = rtype.key(namespace, name)
        current = self.storage.store(rtype).entries.get(key)
        if current is None:
            if rtype.create_on_update and subresource is None:
                metadata.pop("resourceVersion", None)
                return self.create(rtype, namespace, obj, dry_run=dry_run, manager=manager), True
            raise NotFound.of(rtype, name)
        write = self._write(rtype, manager, subresource or "")
        return self._update(
            rtype, current, obj, subresource=subresource, dry_run=dry_run, write=write
        ), False

    def _update(
        self,
        rtype: ResourceType,
        current: Entry,
        obj: dict[str, Any],
        *,
        subresource: str | None,
        dry_run: bool,
        trusted: bool = False,
        write: Write | None = None,
        managed: _Entries | None = None,
    ) -> Entry:
        """Write `obj` over `current` after the preconditions and the strategy's rules.

        `trusted` marks the server's own writes (pods/binding): no validation, status kept.
        `write` records the change in managedFields as its manager's Update; `managed` (an
        apply) are the entries to store instead; neither keeps the live entries."""
        old = current.load()
        old_meta = old["metadata"]
        name = str(old_meta["name"])
        metadata = obj["metadata"]
        requested = metadata.get("managedFields")
        wanted_rv = metadata.get("resourceVersion")
        if wanted_rv in (None, "") and not rtype.unconditional_update:
            # Upstream's generic store qualifies this one error by the resource, not the
            # kind: `hvpas.autoscaling.k8s.io "web" is invalid`, details.kind "hvpas".
            raise Invalid.of(
                rtype,
                name,
                [
                    FieldError.invalid(
                        "metadata.resourceVersion", 0, "must be specified for an update"
                    )
                ],
                by_resource=True,
            )
        _require_resource_version(rtype, name, wanted_rv, current)
        if metadata.get("uid") and metadata["uid"] != old_meta.get("uid"):
            raise Conflict.of(
                rtype,
                name,
                f"Precondition failed: UID in precondition: {metadata['uid']}, "
                f"UID in object meta: {old_meta.get('uid')}",
            )
        if subresource == "status":
            new = _status_base(rtype, current, old)
            if "status" in obj:
                new["status"] = obj["status"]
            else:
                new.pop("status", None)
            if rtype.plural == "pods" and rtype.group == "" and isinstance(new.get("status"), dict):
                new["status"].setdefault("qosClass", (old.get("status") or {}).get("qosClass"))
            apply_defaults(rtype, new)
            errors = validate_status(rtype, new, old)
            if errors:
                raise Invalid.of(rtype, name, errors)
        else:
            new = obj
            if rtype.status and not trusted:
                if "status" in old:
                    new["status"] = old["status"]
                else:
                    new.pop("status", None)
            for field in _SYSTEM_METADATA:
                if field in old_meta:
                    metadata[field] = old_meta[field]
                else:
                    metadata.pop(field, None)
            metadata["name"] = name
            if rtype.namespaced:
                metadata["namespace"] = old_meta["namespace"]
            metadata.pop("selfLink", None)
            apply_defaults(rtype, new)
            if not trusted:
                errors = validate_object(rtype, new, old)
                if errors:
                    raise Invalid.of(rtype, name, errors)
            if rtype.generation and _spec_changed(rtype, new, old):
                metadata["generation"] = int(old_meta.get("generation", 0)) + 1
        new["metadata"]["resourceVersion"] = str(current.rv)
        self._set_managed(rtype, old, new, requested, write, managed)
        if new == old:
            return current
        store = self.storage.store(rtype)
        entry = self._store(rtype, current.key, new, dry_run=dry_run)
        new_meta = new["metadata"]
        finished = new_meta.get("deletionTimestamp") and not new_meta.get("finalizers")
        if finished and not dry_run and not _graceful_pending(rtype, new_meta):
            if _is_crd(rtype):
                self._unserve_crd(name)
            self._remove(rtype, store.entries[current.key])
        elif _is_crd(rtype) and not dry_run and subresource != "status":
            entry = self._serve_crd(entry)
        return entry

    # ================================================================ patch

    def patch(
        self,
        rtype: ResourceType,
        namespace: str | None,
        name: str,
        patch: Any,
        patch_type: PatchType,
        *,
        subresource: str | None = None,
        dry_run: bool = False,
        manager: str | None = None,
    ) -> Entry:
        current = self.get(rtype, namespace, name)
        if patch_type is PatchType.STRATEGIC and rtype.custom:
            raise _strategic_unsupported()
        patched = apply_patch(current.load(), patch, patch_type)
        metadata = patched.get("metadata")
        if not isinstance(metadata, dict):
            raise BadRequest("the patch removed metadata")
        _require_name(metadata.get("name"), name)
        _require_resource_version(rtype, name, metadata.get("resourceVersion"), current)
        metadata["resourceVersion"] = str(current.rv)
        obj = self._decode(rtype, patched)
        self._own_namespace(rtype, namespace, obj["metadata"])
        write = self._write(rtype, manager, subresource or "")
        return self._update(
            rtype, current, obj, subresource=subresource, dry_run=dry_run, write=write
        )

    # ================================================================ apply

    def apply(
        self,
        rtype: ResourceType,
        namespace: str | None,
        name: str,
        config: Any,
        *,
        manager: str,
        force: bool = False,
        subresource: str | None = None,
        dry_run: bool = False,
    ) -> tuple[Entry, bool]:
        """Server-side apply of `config` by `manager`; the entry, and whether it was created.

        The configuration must name its apiVersion and kind (400 otherwise), and a
        metadata.resourceVersion in it is a precondition. A missing object is created
        (only through the object itself, not a subresource); a conflict with another
        manager's fields is a 409 naming each one, unless `force`."""
        if not isinstance(config, dict):
            raise BadRequest("the apply configuration must be an object")
        for field in ("apiVersion", "kind"):
            if not config.get(field):
                raise BadRequest(f"the apply configuration must set {field}")
        config = self._decode(rtype, config)
        metadata = config["metadata"]
        _require_name(metadata.get("name"), name)
        self._own_namespace(rtype, namespace, metadata)
        write = self._write(rtype, manager, subresource or "")
        assert write is not None
        current = self.storage.store(rtype).entries.get(rtype.key(namespace, name))
        if current is None:
            if subresource is not None:
                raise NotFound.of(rtype, name)
            merged, entries = record_apply([], None, config, write, rtype.group, force=force)
            merged["metadata"].pop("resourceVersion", None)
            made = self.create(rtype, namespace, merged, dry_run=dry_run, managed=entries)
            return made, True
        live = current.load()
        _require_resource_version(rtype, name, metadata.get("resourceVersion"), current)
        live_entries = decode_entries(live["metadata"].get("managedFields"))
        merged, entries = record_apply(live_entries, live, config, write, rtype.group, force=force)
        merged["metadata"]["resourceVersion"] = str(current.rv)
        obj = self._decode(rtype, merged)
        entry = self._update(
            rtype, current, obj, subresource=subresource, dry_run=dry_run, managed=entries
        )
        return entry, False

    def _write(self, rtype: ResourceType, manager: str | None, subresource: str) -> Write | None:
        if manager is None:
            return None
        return Write(
            manager, rtype.api_version, subresource, self.now(), rtype.status, rtype.custom
        )

    def _set_managed(
        self,
        rtype: ResourceType,
        old: dict[str, Any],
        new: dict[str, Any],
        requested: Any,
        write: Write | None,
        managed: _Entries | None,
    ) -> None:
        """metadata.managedFields of `new`: the entries an apply computed, or those a named
        manager's write leaves (after what it asked for: `requested`, its own
        metadata.managedFields); an in-process write that names no manager keeps the live ones."""
        live = old["metadata"].get("managedFields")
        if managed is None and write is None:
            _set_or_drop(new["metadata"], "managedFields", live)
            return
        if managed is None:
            assert write is not None
            asked = requested_entries(requested, live)
            managed = asked if asked is not None else decode_entries(live)
            managed = record_update(managed, old, new, write, rtype.group)
        _set_or_drop(new["metadata"], "managedFields", encode_entries(managed))

    # ================================================================ checked subresources

    def write_subresource(
        self,
        rtype: ResourceType,
        namespace: str | None,
        name: str,
        body: Any,
        patch_type: PatchType | None,
        *,
        prepare: Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]],
        check: Callable[[dict[str, Any], dict[str, Any]], Sequence[FieldError]],
        dry_run: bool = False,
    ) -> Entry:
        """PATCH (`patch_type`) or PUT (None) of a subresource that changes only what its own
        strategy keeps (`prepare(new, old)`, e.g. pods/resize's resources) and checks
        (`check(new, old)`, in place of the update validation); a resourceVersion in the
        request is a precondition."""
        current = self.get(rtype, namespace, name)
        old = current.load()
        if patch_type is None:
            requested = self._decode(rtype, body)
        else:
            if patch_type is PatchType.STRATEGIC and rtype.custom:
                raise _strategic_unsupported()
            requested = self._decode(rtype, apply_patch(current.load(), body, patch_type))
        metadata = requested["metadata"]
        _require_name(metadata.get("name"), name)
        _require_resource_version(rtype, name, metadata.get("resourceVersion"), current)
        self._own_namespace(rtype, namespace, metadata)
        new = prepare(requested, old)
        apply_defaults(rtype, new)
        errors = check(new, old)
        if errors:
            raise Invalid.of(rtype, name, list(errors))
        new["metadata"] = {**old["metadata"]}
        return self._update(rtype, current, new, subresource=None, dry_run=dry_run, trusted=True)

    # ================================================================ scale

    def get_scale(self, rtype: ResourceType, namespace: str | None, name: str) -> dict[str, Any]:
        return _scale_of(rtype, self.get(rtype, namespace, name))

    def update_scale(
        self,
        rtype: ResourceType,
        namespace: str | None,
        name: str,
        scale: Any,
        *,
        dry_run: bool = False,
        manager: str | None = None,
    ) -> dict[str, Any]:
        paths = rtype.scale
        if paths is None:
            raise NotFound(
                f"the server could not find the requested resource ({rtype.plural}/scale)"
            )
        current = self.get(rtype, namespace, name)
        if not isinstance(scale, dict):
            raise BadRequest("the body of a scale update must be a Scale object")
        metadata = scale.get("metadata") or {}
        _require_name(metadata.get("name", name), name)
        _require_resource_version(rtype, name, metadata.get("resourceVersion"), current)
        replicas = (scale.get("spec") or {}).get("replicas", 0)
        if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
            raise Invalid.of(
                _SCALE_KIND,
                name,
                [
                    FieldError.invalid(
                        "spec.replicas", replicas, "must be greater than or equal to 0"
                    )
                ],
            )
        obj = current.load()
        _set_path(obj, paths.spec_replicas, replicas)
        write = self._write(rtype, manager, "scale")
        entry = self._update(rtype, current, obj, subresource=None, dry_run=dry_run, write=write)
        return _scale_of(rtype, entry)

    def patch_scale(
        self,
        rtype: ResourceType,
        namespace: str | None,
        name: str,
        patch: Any,
        patch_type: PatchType,
        *,
        dry_run: bool = False,
        manager: str | None = None,
    ) -> dict[str, Any]:
        scale = self.get_scale(rtype, namespace, name)
        patched = apply_patch(scale, patch, patch_type)
        return self.update_scale(rtype, namespace, name, patched, dry_run=dry_run, manager=manager)

    # ================================================================ binding

    def bind(self, namespace: str, name: str, binding: Any, *, dry_run: bool = False) -> None:
        """pods/binding: the scheduler's only way to set spec.nodeName."""
        pods = self._pods
        assert pods is not None
        if not isinstance(binding, dict):
            raise BadRequest("the body of a binding must be a Binding object")
        target = binding.get("target") or {}
        node = target.get("name")
        if not node:
            raise Invalid.of(pods, name, [FieldError.required("target.name")])
        current = self.get(pods, namespace, name)
        pod = current.load()
        spec = pod.setdefault("spec", {})
        if spec.get("nodeName"):
            raise Conflict.of(
                pods, name, f'pod {name} is already assigned to node "{spec["nodeName"]}"'
            )
        if pod["metadata"].get("deletionTimestamp"):
            raise Conflict.of(
                pods, name, f"pod {name} is being deleted, cannot be assigned to a host"
            )
        spec["nodeName"] = node
        status = pod.setdefault("status", {})
        conditions = [c for c in status.get("conditions") or [] if c.get("type") != "PodScheduled"]
        conditions.append(
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": self.now()}
        )
        status["conditions"] = conditions
        self._update(pods, current, pod, subresource=None, dry_run=dry_run, trusted=True)

    # ================================================================ delete

    def delete(
        self,
        rtype: ResourceType,
        namespace: str | None,
        name: str,
        *,
        grace_period_seconds: int | None = None,
        preconditions: Mapping[str, Any] | None = None,
        dry_run: bool = False,
    ) -> tuple[Entry, bool]:
        """Returns the object and whether it is gone (False: finalizers or a grace period hold it)."""
        current = self.get(rtype, namespace, name)
        obj = current.load()
        metadata = obj["metadata"]
        for field, have in (("uid", metadata.get("uid")), ("resourceVersion", str(current.rv))):
            wanted = (preconditions or {}).get(field)
            if wanted not in (None, "") and str(wanted) != have:
                label = "UID" if field == "uid" else "ResourceVersion"
                raise Conflict.of(
                    rtype,
                    name,
                    f"Precondition failed: {label} in precondition: {wanted}, {label} in object meta: {have}",
                )
        grace = self._grace_period(rtype, obj, grace_period_seconds)
        deleting = bool(metadata.get("deletionTimestamp"))
        if grace > 0 or metadata.get("finalizers"):
            already = metadata.get("deletionGracePeriodSeconds")
            if deleting and already is not None and already <= grace:
                return current, False
            if not deleting and int(metadata.get("generation", 0)) > 0:
                metadata["generation"] = int(metadata["generation"]) + 1
            if not deleting or grace > 0:
                metadata["deletionTimestamp"] = format_time(self._clock() + grace)
            metadata["deletionGracePeriodSeconds"] = grace
            return self._store(rtype, current.key, obj, dry_run=dry_run), False
        if dry_run:
            return current, True
        if rtype.group == "" and rtype.plural == "namespaces":
            self._empty_namespace(name)
        if _is_crd(rtype):
            self._unserve_crd(name)
        self._remove(rtype, current)
        return current, True

    def _grace_period(self, rtype: ResourceType, obj: dict[str, Any], requested: int | None) -> int:
        """Pods wait for the kubelet unless unscheduled or finished; everything else goes now."""
        if not (rtype.group == "" and rtype.plural == "pods"):
            return 0
        spec = obj.get("spec") or {}
        grace = (
            requested
            if requested is not None
            else int(spec.get("terminationGracePeriodSeconds", 30))
        )
        if not spec.get("nodeName") or (obj.get("status") or {}).get("phase") in (
            "Succeeded",
            "Failed",
        ):
            return 0
        return max(grace, 1) if grace < 0 else grace

    def _empty_namespace(self, namespace: str) -> None:
        """What the namespace controller does before the namespace goes: delete its contents."""
        for store in self.storage.stores():
            if store.rtype.namespaced:
                for entry in list(store.current(namespace)):
                    self._remove(store.rtype, entry)

    def _remove(self, rtype: ResourceType, current: Entry) -> None:
        rv = self.storage.next_resource_version()
        self.storage.store(rtype).remove(current.with_resource_version(rtype, rv))

    # ================================================================ CRDs

    def _serve_crd(self, entry: Entry) -> Entry:
        """What the CRD controllers do after a CRD is written: serve its resource (in
        place of the one it served before: the objects stay when the URL does), and
        write the status that says so (accepted names, Established)."""
        crd = entry.load()
        rtype = resource_type_of(crd)
        before = self.table.of_crd(crd["metadata"]["name"])
        if before is not None and before.plural == rtype.plural and before.version == rtype.version:
            self.table.add(rtype)
            self.storage.add_store(rtype, replacing=before)
        else:
            if before is not None:
                self._stop_serving(before)
            self.table.add(rtype)
            self.storage.add_store(rtype)
        status = crd_status(crd, self.now())
        if crd.get("status") == status:
            return entry
        crd["status"] = status
        crds = self.resource("customresourcedefinitions")
        return self._store(crds, entry.key, crd, dry_run=False)

    def _unserve_crd(self, name: str) -> None:
        """A CRD deleted takes its objects with it (each a deletion watchers see)."""
        rtype = self.table.of_crd(name)
        if rtype is not None:
            self._stop_serving(rtype)

    def _stop_serving(self, rtype: ResourceType) -> None:
        for entry in list(self.storage.store(rtype).current(None)):
            self._remove(rtype, entry)
        self.table.remove(rtype)
        self.storage.remove_store(rtype)

    # ================================================================ shared

    def _store(self, rtype: ResourceType, key: str, obj: dict[str, Any], *, dry_run: bool) -> Entry:
        if dry_run:
            return Entry.build(rtype, key, obj, int(obj["metadata"].get("resourceVersion") or 0))
        rv = self.storage.next_resource_version()
        obj["metadata"]["resourceVersion"] = str(rv)
        entry = Entry.build(rtype, key, obj, rv)
        self.storage.store(rtype).put(entry)
        return entry

    def _decode(self, rtype: ResourceType, body: Any) -> dict[str, Any]:
        """The checks and normalisation decoding a request body does: kind, nulls, metadata."""
        if not isinstance(body, dict):
            raise BadRequest("the body of the request must be a JSON object")
        api_version, kind = body.get("apiVersion"), body.get("kind")
        if api_version not in (None, "", rtype.api_version):
            raise BadRequest(
                f"the API version in the data ({api_version}) does not match the expected API version ({rtype.api_version})"
            )
        if kind not in (None, "", rtype.kind):
            raise BadRequest(
                f"the kind in the data ({kind}) does not match the expected kind ({rtype.kind})"
            )
        obj = _private_copy(body, keep_nulls=rtype.schema is not None)
        metadata = obj.setdefault("metadata", {})
        if not isinstance(metadata, dict):
            raise BadRequest("metadata must be an object")
        obj["apiVersion"], obj["kind"] = rtype.api_version, rtype.kind
        if rtype.schema is not None:
            obj["metadata"] = _without_nulls(metadata)
            rtype.schema.prune(obj)
            rtype.schema.apply_defaults(obj)
        return obj

    @staticmethod
    def _own_namespace(
        rtype: ResourceType, namespace: str | None, metadata: dict[str, Any]
    ) -> str | None:
        if not rtype.namespaced:
            metadata.pop("namespace", None)
            return None
        if namespace is None:
            raise BadRequest(f"{rtype.group_resource} is namespaced: a namespace is required")
        given = metadata.get("namespace")
        if given and given != namespace:
            raise BadRequest(
                "the namespace of the provided object does not match the namespace sent on the request"
            )
        metadata["namespace"] = namespace
        return namespace


def parse_resource_version(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise BadRequest(f"invalid resource version: {text!r}") from None
    if value < 0:
        raise BadRequest(f"invalid resource version: {text!r}")
    return value


def _require_name(given: Any, name: str) -> None:
    """A body names the object of its URL: an update or a patch cannot rename."""
    if given != name:
        shown = "" if given is None else given
        raise BadRequest(
            f"the name of the object ({shown}) does not match the name on the URL ({name})"
        )


def _require_resource_version(rtype: ResourceType, name: str, wanted: Any, current: Entry) -> None:
    """A resourceVersion in the body is a precondition: 409 unless it is the stored one."""
    if wanted not in (None, "") and parse_resource_version(str(wanted)) != current.rv:
        raise Conflict.modified(rtype, name)


def _strategic_unsupported() -> UnsupportedMediaType:
    return UnsupportedMediaType(
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
    )


def _private_copy(body: dict[str, Any], *, keep_nulls: bool = False) -> dict[str, Any]:
    """A copy the registry owns (callers keep theirs). Without nulls, which decode to
    nothing in typed objects; a custom resource keeps them for its schema to settle
    (a nullable field keeps its null, another gets its default or goes)."""
    try:
        raw = orjson.dumps(body)
    except TypeError as error:
        raise BadRequest(f"the object is not JSON: {error}") from error
    copied: dict[str, Any] = orjson.loads(raw)
    return _without_nulls(copied) if b"null" in raw and not keep_nulls else copied


def _status_base(rtype: ResourceType, current: Entry, old: dict[str, Any]) -> dict[str, Any]:
    """What a /status write starts from: the stored object, whose status it then replaces.

    Without a defaulter for the kind (custom resources: an Hvpa's status write is the
    controller's most frequent), `old`'s own parts, in a new top level and metadata, rather
    than the stored bytes decoded a second time: below, only those two levels are changed
    (status, resourceVersion, managedFields), and nothing changes `old`'s parts, so `old`
    stays the version before for the comparisons. A kind with a defaulter gets its own
    copy: apply_defaults changes an object's parts in place."""
    if has_defaults(rtype):
        return current.load()
    return {**old, "metadata": dict(old["metadata"])}


def _set_or_drop(metadata: dict[str, Any], key: str, value: Any) -> None:
    if value:
        metadata[key] = value
    else:
        metadata.pop(key, None)


def _without_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(item) for item in value]
    return value


def _is_crd(rtype: ResourceType) -> bool:
    return rtype.group == CRD_GROUP and rtype.plural == "customresourcedefinitions"


def _spec_changed(rtype: ResourceType, new: dict[str, Any], old: dict[str, Any]) -> bool:
    """Built-ins count spec changes; a custom resource counts any change but metadata and status."""
    if rtype.custom:
        ignored = ("apiVersion", "kind", "metadata", "status")
        return {k: v for k, v in new.items() if k not in ignored} != {
            k: v for k, v in old.items() if k not in ignored
        }
    return new.get("spec") != old.get("spec")


def _graceful_pending(rtype: ResourceType, metadata: Mapping[str, Any]) -> bool:
    return bool(
        rtype.group == "" and rtype.plural == "pods" and metadata.get("deletionGracePeriodSeconds")
    )


def _get_path(obj: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    node: Any = obj
    for part in path:
        if not isinstance(node, Mapping):
            return None
        node = node.get(part)
    return node


def _set_path(obj: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    node = obj
    for part in path[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = node[part] = {}
        node = child
    node[path[-1]] = value


def _scale_of(rtype: ResourceType, entry: Entry) -> dict[str, Any]:
    paths = rtype.scale
    if paths is None:
        raise NotFound(f"the server could not find the requested resource ({rtype.plural}/scale)")
    obj = entry.load()
    metadata = obj["metadata"]
    selector_value = _get_path(obj, paths.selector) if paths.selector else None
    if paths.selector_is_string:
        selector = selector_value if isinstance(selector_value, str) else ""
    else:
        selector = selector_string(selector_value if isinstance(selector_value, Mapping) else None)
    status: dict[str, Any] = {"replicas": int(_get_path(obj, paths.status_replicas) or 0)}
    if selector:
        status["selector"] = selector
    scale_meta = {
        key: metadata[key]
        for key in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
        if key in metadata
    }
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": scale_meta,
        "spec": {"replicas": int(_get_path(obj, paths.spec_replicas) or 0)},
        "status": status,
    }
