"""The three patch formats a Kubernetes API server accepts on PATCH.

- JSON merge patch (RFC 7386): maps merge, null deletes, lists are replaced.
- JSON patch (RFC 6902): a list of operations on JSON pointers.
- Strategic merge patch: a merge patch that merges some lists by a key
  (containers by name, env by name, ports by containerPort, ...) as the Go
  types' `patchStrategy`/`patchMergeKey` tags say, with the `$patch`,
  `$retainKeys`, `$setElementOrder/` and `$deleteFromPrimitiveList/`
  directives kubectl's client-side apply sends.

Strategic merge keys are looked up by field name. That is exact for every
kind this server serves (where a name means the same list everywhere), and
keeps the table short enough to read against the upstream types.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from enum import Enum
from typing import Any, Final

from hvpa.sim.apiserver.errors import BadRequest, Invalid, UnsupportedMediaType

__all__ = ["MERGE_KEYS", "PatchType", "apply_patch"]


class PatchType(Enum):
    MERGE = "application/merge-patch+json"
    JSON = "application/json-patch+json"
    STRATEGIC = "application/strategic-merge-patch+json"

    @classmethod
    def from_content_type(cls, content_type: str) -> PatchType:
        media = content_type.split(";", 1)[0].strip().lower()
        for patch_type in cls:
            if patch_type.value == media:
                return patch_type
        raise UnsupportedMediaType(
            f"the body of the request was in an unknown format - accepted media types include: "
            f"{PatchType.JSON.value}, {PatchType.MERGE.value}, {PatchType.STRATEGIC.value}"
        )


# Lists merged element by element, keyed by the named field (patchMergeKey in the Go types).
MERGE_KEYS: Final[dict[str, str]] = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "env": "name",
    "ports": "containerPort",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
    "volumes": "name",
    "imagePullSecrets": "name",
    "hostAliases": "ip",
    "conditions": "type",
    "ownerReferences": "uid",
    "addresses": "type",
    "podIPs": "ip",
    "hostIPs": "ip",
    "topologySpreadConstraints": "topologyKey",
    "resourceClaims": "name",
    "schedulingGates": "name",
}
# Lists of scalars with patchStrategy=merge: a patch adds to them instead of replacing them.
_MERGED_SCALAR_LISTS: Final = frozenset({"finalizers"})

_SET_ORDER: Final = "$setElementOrder/"
_DELETE_FROM: Final = "$deleteFromPrimitiveList/"


def apply_patch(original: dict[str, Any], patch: Any, patch_type: PatchType) -> dict[str, Any]:
    """Return the patched object; `original` may be modified (callers pass a fresh copy)."""
    if patch_type is PatchType.JSON:
        return _json_patch(original, patch)
    if not isinstance(patch, dict):
        raise BadRequest("the patch is not a JSON object")
    if patch_type is PatchType.MERGE:
        result = _merge_patch(original, patch)
    else:
        result = _strategic_map(original, patch)
    if not isinstance(result, dict):
        raise BadRequest("the patch deleted the whole object")
    return result


def _merge_patch(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return patch
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = _merge_patch(result.get(key), value)
    return result


def _strategic_map(original: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any] | None:
    """Merge `patch` into `original`; None means `$patch: delete` removed the map."""
    directive = patch.get("$patch")
    if directive == "delete":
        return None
    if directive == "replace":
        replaced: dict[str, Any] = _strip({k: v for k, v in patch.items() if k != "$patch"})
        return replaced
    if directive not in (None, "merge"):
        raise BadRequest(f"Unknown patch type: {directive}")
    result = dict(original)
    for key, value in patch.items():
        if key in ("$patch", "$retainKeys") or key.startswith(_SET_ORDER):
            continue
        if key.startswith(_DELETE_FROM):
            name = key[len(_DELETE_FROM) :]
            if not isinstance(value, list):
                raise BadRequest(f"{key} must be a list")
            current = result.get(name)
            if isinstance(current, list):
                result[name] = [item for item in current if item not in value]
            continue
        if value is None:
            result.pop(key, None)
            continue
        current = result.get(key)
        if isinstance(value, dict):
            merged = _strategic_map(current if isinstance(current, dict) else {}, value)
            if merged is None:
                result.pop(key, None)
            else:
                result[key] = merged
        elif isinstance(value, list):
            result[key] = _strategic_list(key, current if isinstance(current, list) else [], value)
        else:
            result[key] = value
    for key, order in patch.items():
        if key.startswith(_SET_ORDER):
            name = key[len(_SET_ORDER) :]
            if isinstance(result.get(name), list) and isinstance(order, list):
                result[name] = _ordered(name, result[name], order)
    retain = patch.get("$retainKeys")
    if retain is not None:
        if not isinstance(retain, list):
            raise BadRequest("$retainKeys must be a list")
        for key in retain:
            if key not in result and key in patch:
                raise Invalid("the patch has fields that are not in $retainKeys")
        result = {k: v for k, v in result.items() if k in retain}
    return result


def _strategic_list(name: str, original: list[Any], patch: list[Any]) -> list[Any]:
    if any(isinstance(item, dict) and item.get("$patch") == "replace" for item in patch):
        return [_strip(item) for item in patch if not (isinstance(item, dict) and "$patch" in item)]
    merge_key = MERGE_KEYS.get(name)
    if merge_key is None:
        if name in _MERGED_SCALAR_LISTS:
            return [*original, *(item for item in patch if item not in original)]
        return [_strip(item) for item in patch]
    result = list(original)
    for item in patch:
        if not isinstance(item, dict):
            # A list with a merge key holding scalars is not what the types allow.
            raise BadRequest(f"{name}: elements must be objects with the merge key {merge_key}")
        if merge_key not in item:
            raise BadRequest(f"map: {item} does not contain declared merge key: {merge_key}")
        wanted = item[merge_key]
        position = _find(result, merge_key, wanted)
        directive = item.get("$patch")
        if directive == "delete":
            result = [r for r in result if not (isinstance(r, dict) and r.get(merge_key) == wanted)]
        elif directive == "replace":
            replacement = _strip({k: v for k, v in item.items() if k != "$patch"})
            if position is None:
                result.append(replacement)
            else:
                result[position] = replacement
        elif position is None:
            added = _strategic_map({}, item)
            if added is not None:
                result.append(added)
        else:
            current = result[position]
            merged = _strategic_map(current if isinstance(current, dict) else {}, item)
            if merged is None:
                del result[position]
            else:
                result[position] = merged
    return result


def _find(items: list[Any], key: str, value: Any) -> int | None:
    for index, item in enumerate(items):
        if isinstance(item, dict) and item.get(key) == value:
            return index
    return None


def _ordered(name: str, items: list[Any], order: list[Any]) -> list[Any]:
    """Items named in `$setElementOrder` first, in that order; the rest keep their order."""
    merge_key = MERGE_KEYS.get(name)

    def identity(item: Any) -> Any:
        if merge_key is not None and isinstance(item, dict):
            return item.get(merge_key)
        return item

    wanted = [identity(entry) for entry in order]
    rank = {value: index for index, value in enumerate(wanted) if _hashable(value)}
    first = sorted(
        (item for item in items if _hashable(identity(item)) and identity(item) in rank),
        key=lambda item: rank[identity(item)],
    )
    rest = [item for item in items if not (_hashable(identity(item)) and identity(item) in rank)]
    return [*first, *rest]


def _hashable(value: Any) -> bool:
    return isinstance(value, str | int | float | bool) or value is None


def _strip(value: Any) -> Any:
    """A value with directives and nulls removed, as it is stored."""
    if isinstance(value, dict):
        return {
            k: _strip(v)
            for k, v in value.items()
            if v is not None
            and not (k.startswith("$") and (k in ("$patch", "$retainKeys") or "/" in k))
        }
    if isinstance(value, list):
        return [_strip(item) for item in value]
    return value


# ----------------------------------------------------------------- RFC 6902


def _json_patch(document: dict[str, Any], operations: Any) -> dict[str, Any]:
    if not isinstance(operations, list):
        raise BadRequest("json patch must be a list of operations")
    root: Any = document
    for index, operation in enumerate(operations):
        if not isinstance(operation, dict) or "op" not in operation or "path" not in operation:
            raise BadRequest(f"json patch operation {index} needs op and path")
        op = operation["op"]
        handler = _OPERATIONS.get(op)
        if handler is None:
            raise BadRequest(f"Unexpected kind: {op}")
        try:
            root = handler(root, operation)
        except _PointerError as error:
            raise Invalid(f"json patch {op} operation does not apply: {error}") from error
    if not isinstance(root, dict):
        raise Invalid("json patch replaced the object with a non-object")
    return root


class _PointerError(Exception):
    pass


def _tokens(pointer: Any) -> list[str]:
    if not isinstance(pointer, str) or (pointer and not pointer.startswith("/")):
        raise _PointerError(f"invalid pointer {pointer!r}")
    if pointer == "":
        return []
    return [part.replace("~1", "/").replace("~0", "~") for part in pointer[1:].split("/")]


def _parent(root: Any, pointer: Any) -> tuple[Any, str]:
    tokens = _tokens(pointer)
    if not tokens:
        raise _PointerError("the root has no parent")
    node = root
    for token in tokens[:-1]:
        node = _child(node, token)
    return node, tokens[-1]


def _child(node: Any, token: str) -> Any:
    if isinstance(node, dict):
        if token not in node:
            raise _PointerError(f"missing key {token!r}")
        return node[token]
    if isinstance(node, list):
        return node[_index(node, token, allow_end=False)]
    raise _PointerError(f"cannot descend into a scalar at {token!r}")


def _index(items: list[Any], token: str, *, allow_end: bool) -> int:
    if token == "-" and allow_end:
        return len(items)
    if not token.isdigit() or (len(token) > 1 and token[0] == "0"):
        raise _PointerError(f"invalid array index {token!r}")
    index = int(token)
    limit = len(items) if allow_end else len(items) - 1
    if index > limit:
        raise _PointerError(f"array index {index} out of bounds")
    return index


def _get(root: Any, pointer: Any) -> Any:
    node = root
    for token in _tokens(pointer):
        node = _child(node, token)
    return node


def _add(root: Any, operation: dict[str, Any]) -> Any:
    if "value" not in operation:
        raise _PointerError("add needs a value")
    return _put(root, operation["path"], operation["value"], insert=True)


def _put(root: Any, pointer: Any, value: Any, *, insert: bool) -> Any:
    if not _tokens(pointer):
        return value
    parent, token = _parent(root, pointer)
    if isinstance(parent, dict):
        if not insert and token not in parent:
            raise _PointerError(f"missing key {token!r}")
        parent[token] = value
    elif isinstance(parent, list):
        if insert:
            parent.insert(_index(parent, token, allow_end=True), value)
        else:
            parent[_index(parent, token, allow_end=False)] = value
    else:
        raise _PointerError("cannot set a field of a scalar")
    return root


def _remove(root: Any, operation: dict[str, Any]) -> Any:
    _take(root, operation["path"])
    return root


def _take(root: Any, pointer: Any) -> Any:
    parent, token = _parent(root, pointer)
    if isinstance(parent, dict):
        if token not in parent:
            raise _PointerError(f"missing key {token!r}")
        return parent.pop(token)
    if isinstance(parent, list):
        return parent.pop(_index(parent, token, allow_end=False))
    raise _PointerError("cannot remove a field of a scalar")


def _replace(root: Any, operation: dict[str, Any]) -> Any:
    if "value" not in operation:
        raise _PointerError("replace needs a value")
    return _put(root, operation["path"], operation["value"], insert=False)


def _move(root: Any, operation: dict[str, Any]) -> Any:
    value = _take(root, operation.get("from"))
    return _put(root, operation["path"], value, insert=True)


def _copy(root: Any, operation: dict[str, Any]) -> Any:
    value = copy.deepcopy(_get(root, operation.get("from")))
    return _put(root, operation["path"], value, insert=True)


def _test(root: Any, operation: dict[str, Any]) -> Any:
    if _get(root, operation["path"]) != operation.get("value"):
        raise _PointerError(f"testing value {operation['path']} failed")
    return root


_OPERATIONS: Final[dict[str, Callable[[Any, dict[str, Any]], Any]]] = {
    "add": _add,
    "remove": _remove,
    "replace": _replace,
    "move": _move,
    "copy": _copy,
    "test": _test,
}
