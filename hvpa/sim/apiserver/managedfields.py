"""`metadata.managedFields`: who set which field, as the real API server records it.

The server keeps, per object, one entry per field manager and operation:
`{manager, operation, apiVersion, time, fieldsType: FieldsV1, fieldsV1,
subresource}`. `fieldsV1` is a field set written as a tree: `f:<name>` for a
field, `k:<json>` for an item of an associative list by its key fields,
`v:<json>` for an item of a set-like list, and `.` for a node that is itself
a member as well as the parent of members. These rules follow the upstream
field manager (structured-merge-diff as kube-apiserver 1.37 runs it):

- Update (create, PUT, merge/strategic/JSON patch): the fields the write
  added or changed move to the writer's entry, taken from every other
  manager (an update never conflicts); fields it removed leave every entry.
  An entry left empty goes. The writer's entry gets the time of the write
  when it took any field, except through `/scale`: the server converts the
  Scale's entries to the object's and keeps the object entry's time, so a
  /scale writer's entry has none (or the one a client gave it).
- Apply (`application/apply-patch+yaml`): the configuration is merged into
  the object; the applier's entry becomes exactly the configuration's
  fields; a field it applied before and leaves out now is removed from the
  object unless another manager owns it. A field the configuration changes
  that another manager owns is a conflict (409, every conflict named)
  unless `force=true`, which moves it to the applier; each conflict is a
  StatusCause `{reason: FieldManagerConflict, message, field}`. An apply
  that changes nothing leaves the applier's time as it was (none for a
  first apply).
- Writes to `/status` and `/scale` are recorded with that `subresource`;
  `/scale` owns `.spec.replicas` of the object. A main-resource write does
  not record status fields, nor `/status` anything else. What the server
  sets itself (name, uid, resourceVersion, generation, timestamps) is never
  owned.
- A client clears every entry by writing `managedFields: [{}]`; an empty
  or absent list keeps them, as upstream does so that clients unaware of
  the field cannot strip it.

Where this differs from upstream, for want of the Go types: lists are
associative where strategic merge keys them (patching.MERGE_KEYS; a
container's ports by containerPort and protocol), `finalizers` is a set,
every other list is atomic; a custom resource's lists outside its metadata
are atomic whatever their names (as upstream has them for a schema that
declares no x-kubernetes-list-type, which no CRD here does); maps whose keys are data (labels, annotations, requests,
limits, ...) are granular, every other object a struct; a workload's
`spec.selector` is atomic. A created object is compared with the kind's
zero value as the Go types have it for the kinds hvpa writes (Deployment,
StatefulSet, ReplicaSet, Pod); other kinds with an empty object.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Final

import orjson

from hvpa.sim.apiserver.errors import ApiError, BadRequest
from hvpa.sim.apiserver.patching import MERGE_KEYS

__all__ = [
    "APPLY",
    "UPDATE",
    "ApplyConflict",
    "ManagedEntry",
    "Write",
    "apply_merge",
    "decode_entries",
    "encode_entries",
    "field_path",
    "fields_of",
    "manager_from_user_agent",
    "record_apply",
    "record_update",
    "requested_entries",
]

UPDATE: Final = "Update"
APPLY: Final = "Apply"
# One path element in fieldsV1 spelling ("f:spec", 'k:{"name":"app"}', 'v:"x"').
Path = tuple[str, ...]
FieldSet = frozenset[Path]
# fieldManager: the API server refuses longer names, and defaults to the User-Agent's first
# segment cut to this length.
MAX_MANAGER_LENGTH: Final = 128
# Associative lists keyed by more than the strategic merge key (upstream's listMapKeys).
_COMPOSITE_KEYS: Final[Mapping[str, tuple[str, ...]]] = {"ports": ("containerPort", "protocol")}
_SET_LISTS: Final = frozenset({"finalizers"})
# Objects whose keys are data, not field names: each key is owned on its own.
_GRANULAR_MAPS: Final = frozenset(
    {
        "labels",
        "annotations",
        "requests",
        "limits",
        "nodeSelector",
        "data",
        "binaryData",
        "stringData",
        "capacity",
        "allocatable",
        "matchLabels",
    }
)
# What the server sets on every object: never owned by a manager.
_SERVER_METADATA: Final = frozenset(
    {
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "selfLink",
        "managedFields",
    }
)
# The zero values of the Go types: what a created object is compared with.
# A Go nil slice without omitempty is a present null: a list added there is not itself new.
_POD_SPEC_ZERO: Final[Mapping[str, Any]] = {"containers": []}
_TEMPLATE_ZERO: Final = {"metadata": {}, "spec": _POD_SPEC_ZERO}
_ZERO_OBJECTS: Final[Mapping[tuple[str, str], Mapping[str, Any]]] = {
    ("apps", "Deployment"): {
        "metadata": {},
        "spec": {"template": _TEMPLATE_ZERO, "strategy": {}},
        "status": {},
    },
    ("apps", "StatefulSet"): {
        "metadata": {},
        "spec": {"template": _TEMPLATE_ZERO, "updateStrategy": {}},
        "status": {},
    },
    ("apps", "ReplicaSet"): {"metadata": {}, "spec": {"template": _TEMPLATE_ZERO}, "status": {}},
    ("", "Pod"): {"metadata": {}, "spec": _POD_SPEC_ZERO, "status": {}},
}


class ApplyConflict(ApiError):
    """409: an apply would change fields other managers own (upstream's NewApplyConflict)."""

    code, reason = 409, "Conflict"


@dataclass(frozen=True, slots=True)
class ManagedEntry:
    manager: str
    operation: str
    api_version: str
    subresource: str
    time: str | None
    fields: FieldSet

    @property
    def key(self) -> tuple[str, str, str, str]:
        """Upstream's manager identifier: an applier's entry is one whatever the version."""
        version = "" if self.operation == APPLY else self.api_version
        return (self.manager, self.operation, version, self.subresource)

    def describe(self) -> str:
        """As a conflict names it: `"kubectl" using apps/v1`, `"flux" with subresource "scale"`."""
        text = orjson.dumps(self.manager).decode()
        if self.subresource:
            text += f' with subresource "{self.subresource}"'
        if self.operation == UPDATE:
            text += f" using {self.api_version}"
        return text


@dataclass(frozen=True, slots=True)
class Write:
    """Who writes, and where: the manager, the API version and the subresource ("" for the object)."""

    manager: str
    api_version: str
    subresource: str
    time: str
    has_status: bool
    # Served from a CustomResourceDefinition: its lists outside metadata are atomic.
    custom: bool = False


def manager_from_user_agent(user_agent: str) -> str:
    """The manager of a write that names none: the User-Agent up to its first '/', printable
    characters only, at most 128 bytes (upstream's prefixFromUserAgent)."""
    out = ""
    for char in user_agent.split("/", 1)[0]:
        if not char.isprintable():
            continue
        if len((out + char).encode()) > MAX_MANAGER_LENGTH:
            break
        out += char
    return out


# ---------------------------------------------------------------- paths and sets


def _field(name: str) -> str:
    return f"f:{name}"


def _json(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def _item_element(list_name: str, item: Any, index: int) -> str:
    """The path element of a list item: by its key fields, by its value, or by position."""
    if list_name in _SET_LISTS:
        return "v:" + _json(item)
    keys = _COMPOSITE_KEYS.get(list_name) or (
        (MERGE_KEYS[list_name],) if list_name in MERGE_KEYS else ()
    )
    if keys and isinstance(item, dict):
        found = {key: item[key] for key in keys if key in item}
        if "protocol" in keys and "protocol" not in found and "containerPort" in found:
            found["protocol"] = "TCP"
        return "k:" + _json(found)
    return f"i:{index}"


def _associative(list_name: str, path: Path = (), *, custom: bool = False) -> bool:
    """Whether the list at `path` (named `list_name`) is owned item by item."""
    if custom and (not path or path[0] != "f:metadata"):
        return False
    return list_name in _SET_LISTS or list_name in MERGE_KEYS


def _atomic_map(path: Path, name: str, api_group: str) -> bool:
    return api_group == "apps" and path == ("f:spec",) and name == "selector"


def field_path(path: Path) -> str:
    """A path as upstream prints it in a conflict: `.spec.template.spec.containers[name="app"]`."""
    out = ""
    for element in path:
        kind, _, rest = element.partition(":")
        if kind == "f":
            out += "." + rest
        elif kind == "k":
            keys = orjson.loads(rest)
            out += "[" + ",".join(f"{key}={_json(value)}" for key, value in keys.items()) + "]"
        elif kind == "v":
            out += f"[={rest}]"
        else:
            out += f"[{rest}]"
    return out


class _Walker:
    """Field sets of objects (apply configurations) and comparisons of two objects."""

    def __init__(self, api_group: str, *, custom: bool = False) -> None:
        self._group = api_group
        self._custom = custom

    # -- the fields an object sets (upstream's ToFieldSet) ---------------------

    def fields(self, obj: Any, path: Path = ()) -> set[Path]:
        found: set[Path] = set()
        if isinstance(obj, dict):
            for key, value in obj.items():
                child = (*path, _field(key))
                granular = bool(path) and path[-1][2:] in _GRANULAR_MAPS
                if value is None or value == {} or granular:
                    found.add(child)
                if isinstance(value, dict) and _atomic_map(path, key, self._group):
                    found.add(child)
                elif isinstance(value, list):
                    found |= self._list_fields(key, value, child)
                elif isinstance(value, dict):
                    found |= self.fields(value, child)
                else:
                    found.add(child)
        return found

    def _list_fields(self, name: str, items: list[Any], path: Path) -> set[Path]:
        if not _associative(name, path, custom=self._custom) or not items:
            return {path}
        found: set[Path] = set()
        for index, item in enumerate(items):
            child = (*path, _item_element(name, item, index))
            found.add(child)
            if isinstance(item, dict) and name not in _SET_LISTS:
                found |= self.fields(item, child)
        return found

    # -- what changed between two objects (upstream's Compare) ---------------

    def compare(self, old: Any, new: Any) -> tuple[set[Path], set[Path], set[Path]]:
        """(added, modified, removed) from `old` to `new`."""
        added: set[Path] = set()
        modified: set[Path] = set()
        removed: set[Path] = set()
        self._compare(old, new, (), "", added, modified, removed)
        return added, modified, removed

    def _compare(
        self,
        old: Any,
        new: Any,
        path: Path,
        name: str,
        added: set[Path],
        modified: set[Path],
        removed: set[Path],
    ) -> None:
        both_empty = old in (None, {}, []) and new in (None, {}, [])
        leaf = (
            both_empty
            or not isinstance(old if old is not None else new, dict | list)
            or (
                (isinstance(old, list) or isinstance(new, list))
                and not _associative(name, path, custom=self._custom)
            )
            or _atomic_map(path[:-1], name, self._group)
        )
        if leaf or (old is not None and new is not None and type(old) is not type(new)):
            if old is None:
                added.add(path)
            elif new is None:
                removed.add(path)
            elif old != new:
                modified.add(path)
            return
        if isinstance(old if old is not None else new, dict):
            left = old if isinstance(old, dict) else {}
            right = new if isinstance(new, dict) else {}
            for key in {**left, **right}:
                self._compare(
                    left.get(key),
                    right.get(key),
                    (*path, _field(key)),
                    key,
                    added,
                    modified,
                    removed,
                )
        else:
            left_items = self._keyed(name, old or [])
            right_items = self._keyed(name, new or [])
            for element in {**left_items, **right_items}:
                self._compare(
                    left_items.get(element),
                    right_items.get(element),
                    (*path, element),
                    "",
                    added,
                    modified,
                    removed,
                )
        if path and old is None:
            added.add(path)
        elif path and new is None:
            removed.add(path)

    @staticmethod
    def _keyed(name: str, items: list[Any]) -> dict[str, Any]:
        keyed: dict[str, Any] = {}
        for index, item in enumerate(items):
            element = _item_element(name, item, index)
            keyed.setdefault(element, item if name not in _SET_LISTS else {})
        return keyed


def _owned(paths: Iterable[Path], subresource: str, has_status: bool) -> FieldSet:
    """The paths a manager may own: never what the server sets; for a write to /status only
    status, for a write to the object (or /scale) no status where the kind has /status."""
    kept: set[Path] = set()
    for path in paths:
        if not path or path[0] in ("f:apiVersion", "f:kind"):
            continue
        if path[0] == "f:metadata" and (len(path) == 1 or path[1][2:] in _SERVER_METADATA):
            continue
        in_status = path[0] == "f:status"
        if subresource == "status" and not in_status:
            continue
        if subresource != "status" and in_status and has_status:
            continue
        kept.add(path)
    return frozenset(kept)


def fields_of(obj: Mapping[str, Any], api_group: str) -> FieldSet:
    """Every field an object sets, as an apply configuration is owned."""
    return frozenset(_Walker(api_group).fields(dict(obj)))


# ---------------------------------------------------------------- fieldsV1


def _encode_set(fields: FieldSet) -> dict[str, Any]:
    tree: dict[str, Any] = {}
    members: set[Path] = set(fields)
    for path in sorted(fields):
        node = tree
        for element in path:
            node = node.setdefault(element, {})
    return _mark(tree, (), members)


def _mark(tree: dict[str, Any], path: Path, members: set[Path]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for element in sorted(tree):
        child_path = (*path, element)
        children = _mark(tree[element], child_path, members)
        if children and child_path in members:
            out[element] = {".": {}, **children}
        else:
            out[element] = children
    return out


def _decode_set(tree: Any, path: Path = ()) -> set[Path]:
    if not isinstance(tree, dict):
        raise BadRequest(f"fieldsV1 at {field_path(path) or '.'} must be an object")
    found: set[Path] = set()
    if path and (not tree or "." in tree):
        found.add(path)
    for element, child in tree.items():
        if element == ".":
            continue
        if not isinstance(element, str) or element[:2] not in ("f:", "k:", "v:", "i:"):
            raise BadRequest(f"fieldsV1: {element!r} is not a path element")
        found |= _decode_set(child, (*path, element))
    return found


def decode_entries(raw: Any) -> list[ManagedEntry]:
    """The stored metadata.managedFields as entries (what this server wrote, or a client set)."""
    entries: list[ManagedEntry] = []
    for item in raw or ():
        if not isinstance(item, dict):
            raise BadRequest("metadata.managedFields: every entry must be an object")
        operation = item.get("operation")
        if operation not in (APPLY, UPDATE):
            raise BadRequest("metadata.managedFields: operation must be `Apply` or `Update`")
        if not item.get("apiVersion"):
            raise BadRequest("metadata.managedFields: apiVersion must not be empty")
        if item.get("fieldsType") != "FieldsV1":
            raise BadRequest(
                f"metadata.managedFields: invalid fieldsType {item.get('fieldsType')!r}"
            )
        entries.append(
            ManagedEntry(
                manager=str(item.get("manager") or ""),
                operation=str(operation),
                api_version=str(item["apiVersion"]),
                subresource=str(item.get("subresource") or ""),
                time=item.get("time"),
                fields=frozenset(_decode_set(item.get("fieldsV1") or {})),
            )
        )
    return entries


def encode_entries(entries: Iterable[ManagedEntry]) -> list[dict[str, Any]] | None:
    """Entries as metadata.managedFields, sorted as upstream sorts them; None when none."""
    ordered = sorted(
        entries,
        key=lambda e: (e.operation, e.time or "", e.manager, e.api_version, e.subresource),
    )
    out: list[dict[str, Any]] = []
    for entry in ordered:
        encoded: dict[str, Any] = {
            "manager": entry.manager,
            "operation": entry.operation,
            "apiVersion": entry.api_version,
        }
        if entry.time:
            encoded["time"] = entry.time
        encoded["fieldsType"] = "FieldsV1"
        encoded["fieldsV1"] = _encode_set(entry.fields)
        if entry.subresource:
            encoded["subresource"] = entry.subresource
        out.append(encoded)
    return out or None


def requested_entries(requested: Any, live: Any) -> list[ManagedEntry] | None:
    """What a write's own metadata.managedFields asks for: None keeps the live entries (absent,
    empty, or unchanged), [] clears them ([{}], upstream's way to reset), else the given ones."""
    if requested in (None, []) or requested == live:
        return None
    if requested == [{}]:
        return []
    if not isinstance(requested, list):
        raise BadRequest("metadata.managedFields must be a list")
    return decode_entries(requested)


# ---------------------------------------------------------------- recording writes


def _without_meta(obj: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(obj)
    metadata = dict(out.get("metadata") or {})
    metadata.pop("managedFields", None)
    out["metadata"] = metadata
    return out


def zero_object(api_group: str, kind: str) -> dict[str, Any]:
    """A fresh copy of the kind's zero value (what a created object is compared with)."""
    zero: dict[str, Any] = orjson.loads(
        orjson.dumps(_ZERO_OBJECTS.get((api_group, kind), {"metadata": {}}))
    )
    return zero


def record_update(
    entries: list[ManagedEntry],
    old: Mapping[str, Any] | None,
    new: Mapping[str, Any],
    write: Write,
    api_group: str,
) -> list[ManagedEntry]:
    """The entries after an Update by `write.manager` turned `old` (None: a create) into `new`."""
    before = _without_meta(old) if old is not None else zero_object(api_group, new.get("kind", ""))
    added, modified, removed = _Walker(api_group, custom=write.custom).compare(
        before, _without_meta(new)
    )
    taken = _owned(added | modified, write.subresource, write.has_status)
    gone = frozenset(removed)
    mine = ManagedEntry(
        write.manager, UPDATE, write.api_version, write.subresource, None, frozenset()
    )
    out: list[ManagedEntry] = []
    previous: ManagedEntry | None = None
    for entry in entries:
        if entry.key == mine.key:
            previous = entry
            continue
        kept = entry.fields - taken - gone
        if kept:
            out.append(replace(entry, fields=kept) if kept != entry.fields else entry)
    if previous is not None:
        mine = previous
    fields = (mine.fields - gone) | taken
    stamped = taken and write.subresource != "scale"
    if fields:
        out.append(replace(mine, fields=fields, time=write.time if stamped else mine.time))
    return out


def apply_merge(
    live: Any, config: Any, name: str = "", path: Path = (), *, custom: bool = False
) -> Any:
    """The configuration merged into the object: objects field by field, associative lists
    item by item (new items after the live ones), anything else replaced."""
    if isinstance(config, dict) and isinstance(live, dict):
        merged = dict(live)
        for key, value in config.items():
            if value is None:
                merged.pop(key, None)
            else:
                merged[key] = apply_merge(
                    live.get(key), value, key, (*path, _field(key)), custom=custom
                )
        return merged
    if (
        isinstance(config, list)
        and isinstance(live, list)
        and _associative(name, path, custom=custom)
    ):
        result = list(live)
        positions = {_item_element(name, item, i): i for i, item in enumerate(live)}
        for index, item in enumerate(config):
            element = _item_element(name, item, index)
            if element in positions:
                at = positions[element]
                result[at] = apply_merge(result[at], item, "", (*path, element), custom=custom)
            else:
                positions[element] = len(result)
                result.append(item)
        return result
    return config


def _remove(obj: Any, path: Path, list_name: str = "") -> bool:
    """Remove the field at `path` from `obj` (in place), if it is there; a map it leaves
    empty goes too (the Go types omit it). True when `obj` is left empty."""
    if not path:
        return False
    element, rest = path[0], path[1:]
    kind, _, name = element.partition(":")
    if kind == "f" and isinstance(obj, dict) and name in obj:
        if not rest or (_remove(obj[name], rest, name) and isinstance(obj[name], dict)):
            del obj[name]
        return not obj
    if isinstance(obj, list):
        for position, item in enumerate(obj):
            if _item_element(list_name, item, position) == element:
                if not rest:
                    del obj[position]
                else:
                    _remove(item, rest)
                break
    return False


def record_apply(
    entries: list[ManagedEntry],
    live: Mapping[str, Any] | None,
    config: Mapping[str, Any],
    write: Write,
    api_group: str,
    *,
    force: bool,
) -> tuple[dict[str, Any], list[ManagedEntry]]:
    """The object after `write.manager` applied `config` over `live` (None: it does not exist
    yet), and the entries after it. Raises ApplyConflict naming every field another manager
    owns that the apply would change, unless `force`."""
    walker = _Walker(api_group, custom=write.custom)
    applied = _owned(walker.fields(_without_meta(config)), write.subresource, write.has_status)
    base = (
        _without_meta(live) if live is not None else zero_object(api_group, config.get("kind", ""))
    )
    merged = apply_merge(base, _without_meta(config), custom=write.custom)
    mine = ManagedEntry(
        write.manager, APPLY, write.api_version, write.subresource, None, frozenset()
    )
    last = next((e for e in entries if e.key == mine.key), None)
    others = [e for e in entries if e.key != mine.key]
    if last is not None:
        owned_elsewhere = frozenset().union(*(e.fields for e in others))
        for path in sorted(last.fields - applied - owned_elsewhere, key=len, reverse=True):
            _remove(merged, path)
    added, modified, removed = walker.compare(base, merged)
    changed = _owned(added | modified, write.subresource, write.has_status)
    conflicts = [(entry, path) for entry in others for path in sorted(entry.fields & changed)]
    if conflicts and not force:
        raise _conflict_error(conflicts)
    out: list[ManagedEntry] = []
    for entry in others:
        kept = entry.fields - changed - frozenset(removed)
        if kept:
            out.append(replace(entry, fields=kept) if kept != entry.fields else entry)
    # Upstream stamps the applier's entry only when the apply changed the object.
    time = write.time if merged != base else (last.time if last is not None else None)
    if applied:
        out.append(replace(mine, fields=applied, time=time))
    return merged, out


def _conflict_error(conflicts: list[tuple[ManagedEntry, Path]]) -> ApplyConflict:
    causes = [
        {
            "reason": "FieldManagerConflict",
            "message": f"conflict with {entry.describe()}",
            "field": field_path(path),
        }
        for entry, path in conflicts
    ]
    if len(conflicts) == 1:
        entry, path = conflicts[0]
        message = (
            f"Apply failed with 1 conflict: conflict with {entry.describe()}: {field_path(path)}"
        )
    else:
        by_manager: dict[str, list[str]] = {}
        for entry, path in conflicts:
            by_manager.setdefault(entry.describe(), []).append(field_path(path))
        lines: list[str] = []
        for manager in sorted(by_manager):
            lines.append(f"conflicts with {manager}:")
            lines += [f"- {path}" for path in by_manager[manager]]
        message = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
    return ApplyConflict(message, details={"causes": causes})
