"""The OpenAPI documents: /openapi/v3 (one per group-version) and /openapi/v2, from the table.

kubectl reads them for three things. `kubectl explain` renders a kind's
schema from the v3 document of its group-version (found by the
`x-kubernetes-group-version-kind` extension, its fields' descriptions from
the schema and the components it refers to). `kubectl apply`, `create`
and `edit` ask whether the server validates fields itself: a PATCH
operation of the kind that takes a `fieldValidation` query parameter says
so, and kubectl then sends `fieldValidation=Strict` instead of validating
on its own. And `kubectl apply` computes a strategic merge patch from the
schema when the PATCH operation accepts one.

Documents are built from the served resources (the built-in kinds'
schemas in builtin_schemas.py, a CRD's own schema with the standard
apiVersion, kind and metadata) and rebuilt when a CRD changes; the root
names each document with a hash of its content, so clients' caches keep a
document exactly as long as it stays the same.

What is approximated: the built-in kinds' PATCH operations accept JSON
merge and JSON patches but do not list strategic merge patches (which the
server takes): their schemas here are partial, and kubectl computes a
strategic merge patch better from its own compiled types. /openapi/v2 is
served as JSON only; client-go asks for it as protobuf, gets 406, and does
without (nothing in kubectl needs it when v3 is there).
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

import orjson

from hvpa.sim.apiserver.builtin_schemas import (
    COMPONENTS,
    META,
    builtin_schema,
    component_ref,
    schema_name,
)
from hvpa.sim.apiserver.resources import ResourceTable, ResourceType

__all__ = ["OpenApi"]

_JSON_PATCH: Final = "application/json-patch+json"
_MERGE_PATCH: Final = "application/merge-patch+json"
_STRATEGIC: Final = "application/strategic-merge-patch+json"
_SCALE: Final = "io.k8s.api.autoscaling.v1.Scale"
_STATUS: Final = f"{META}.Status"
_GVK: Final = "x-kubernetes-group-version-kind"
_QUERY_WRITE: Final = (
    ("dryRun", "All: check the request without persisting anything."),
    ("fieldManager", "The name of the actor making the change."),
    (
        "fieldValidation",
        "What to do with unknown fields: Ignore (drop them), Warn (drop them and say so in a "
        "Warning header; the default) or Strict (refuse the request).",
    ),
)
_QUERY_LIST: Final = (
    ("labelSelector", "Only objects whose labels match."),
    ("fieldSelector", "Only objects whose fields match."),
    ("limit", "At most this many objects; `continue` gets the rest."),
    ("continue", "Where the previous page ended."),
    ("resourceVersion", "Which version of the state to list or watch from."),
    ("resourceVersionMatch", "How resourceVersion applies: Exact or NotOlderThan."),
    ("timeoutSeconds", "How long a watch lasts."),
    ("watch", "Stream changes instead of listing."),
    ("allowWatchBookmarks", "Send BOOKMARK events."),
    ("sendInitialEvents", "Start a watch with the current objects."),
)


@dataclass(frozen=True, slots=True)
class Document:
    """A document as served: its JSON, and the hash its URL carries."""

    body: bytes
    hash: str

    @classmethod
    def of(cls, document: dict[str, Any]) -> Document:
        body = orjson.dumps(document)
        return cls(body, hashlib.sha512(body).hexdigest().upper())


class OpenApi:
    def __init__(self, table: ResourceTable, *, kubernetes_version: str) -> None:
        self._table = table
        self._version = kubernetes_version
        self._revision = -1
        self._v3: dict[str, Document] = {}
        self._v2: Document | None = None

    def _fresh(self) -> None:
        if self._revision != self._table.revision:
            self._revision = self._table.revision
            self._v3 = {}
            self._v2 = None

    # ------------------------------------------------------------------ v3

    def v3_root(self) -> dict[str, Any]:
        """/openapi/v3: where each group-version's document is, with its hash."""
        self._fresh()
        paths = {}
        for key in self._group_versions():
            document = self.v3(key)
            if document is not None:
                paths[key] = {"serverRelativeURL": f"/openapi/v3/{key}?hash={document.hash}"}
        return {"paths": paths}

    def v3(self, key: str) -> Document | None:
        """The document of `api/v1` or `apis/GROUP/VERSION`; None when nothing is served there."""
        self._fresh()
        cached = self._v3.get(key)
        if cached is not None:
            return cached
        served = [r for r in self._served() if _key(r) == key]
        if not served:
            return None
        document = Document.of(self._v3_document(served))
        self._v3[key] = document
        return document

    def _group_versions(self) -> list[str]:
        keys: list[str] = []
        for rtype in self._served():
            if _key(rtype) not in keys:
                keys.append(_key(rtype))
        return keys

    def _served(self) -> Iterator[ResourceType]:
        for rtype in self._table:
            if not rtype.metrics and _schema(rtype) is not None:
                yield rtype

    def _v3_document(self, served: list[ResourceType]) -> dict[str, Any]:
        schemas: dict[str, Any] = {**copy.deepcopy(COMPONENTS)}
        paths: dict[str, Any] = {}
        for rtype in served:
            name = schema_name(rtype)
            schemas[name] = _schema(rtype)
            schemas[f"{name}List"] = _list_schema(rtype, name)
            paths.update(_paths(rtype, name))
        return {
            "openapi": "3.0.0",
            "info": {"title": "Kubernetes", "version": self._version},
            "paths": paths,
            "components": {"schemas": schemas},
        }

    # ------------------------------------------------------------------ v2

    def v2(self) -> Document:
        """/openapi/v2 (Swagger 2.0): every served kind in one document."""
        self._fresh()
        if self._v2 is None:
            definitions: dict[str, Any] = {
                name: _to_v2(schema) for name, schema in COMPONENTS.items()
            }
            paths: dict[str, Any] = {}
            for rtype in self._served():
                name = schema_name(rtype)
                definitions[name] = _to_v2(_schema(rtype))
                definitions[f"{name}List"] = _to_v2(_list_schema(rtype, name))
                for path, item in _paths(rtype, name).items():
                    paths[path] = _path_to_v2(item)
            self._v2 = Document.of(
                {
                    "swagger": "2.0",
                    "info": {"title": "Kubernetes", "version": self._version},
                    "paths": paths,
                    "definitions": definitions,
                }
            )
        return self._v2


# ====================================================================== schemas


def _key(rtype: ResourceType) -> str:
    return f"apis/{rtype.group}/{rtype.version}" if rtype.group else f"api/{rtype.version}"


def _gvk(rtype: ResourceType, kind: str | None = None) -> dict[str, str]:
    return {"group": rtype.group, "version": rtype.version, "kind": kind or rtype.kind}


def _schema(rtype: ResourceType) -> dict[str, Any] | None:
    """The kind's schema with its group-version-kind; a CRD's with the standard fields added."""
    if rtype.custom:
        if rtype.raw_schema is None:
            return None
        schema = copy.deepcopy(dict(rtype.raw_schema))
        properties = schema.setdefault("properties", {})
        properties["apiVersion"] = {
            **properties.get("apiVersion", {}),
            "description": "The versioned schema of this object: GROUP/VERSION.",
            "type": "string",
        }
        properties["kind"] = {
            **properties.get("kind", {}),
            "description": "The kind of object, in CamelCase.",
            "type": "string",
        }
        properties["metadata"] = {
            "description": "The object's name, namespace, labels and other metadata.",
            "allOf": [component_ref(f"{META}.ObjectMeta")],
        }
    else:
        built = builtin_schema(rtype)
        if built is None:
            return None
        schema = built
    schema[_GVK] = [_gvk(rtype)]
    return schema


def _list_schema(rtype: ResourceType, name: str) -> dict[str, Any]:
    return {
        "description": f"{rtype.list_kind} is a list of {rtype.kind}.",
        "type": "object",
        "required": ["items"],
        "properties": {
            "apiVersion": {"description": "The versioned schema of this list.", "type": "string"},
            "items": {
                "description": f"The {rtype.plural}.",
                "type": "array",
                "items": component_ref(name),
            },
            "kind": {"description": "The kind of list.", "type": "string"},
            "metadata": {
                "description": "The list's resourceVersion and continue token.",
                "allOf": [component_ref(f"{META}.ListMeta")],
            },
        },
        _GVK: [_gvk(rtype, rtype.list_kind)],
    }


# ====================================================================== paths


def _paths(rtype: ResourceType, name: str) -> dict[str, Any]:
    """The operations on a kind, its collection and its subresources, as the real documents
    list them (each with x-kubernetes-action and x-kubernetes-group-version-kind)."""
    prefix = f"/{_key(rtype)}"
    scope = (
        f"{prefix}/namespaces/{{namespace}}/{rtype.plural}"
        if rtype.namespaced
        else f"{prefix}/{rtype.plural}"
    )
    operation_name = _operation_name(rtype)
    namespaced = "Namespaced" if rtype.namespaced else ""
    paths: dict[str, Any] = {}
    collection: dict[str, Any] = {
        "parameters": _scope_parameters(rtype, named=False),
        "get": _operation(
            rtype,
            "list",
            f"list{operation_name}{namespaced}{rtype.kind}",
            f"{name}List",
            list_query=True,
        ),
        "post": _operation(
            rtype,
            "post",
            f"create{operation_name}{namespaced}{rtype.kind}",
            name,
            body=name,
            created=True,
        ),
    }
    if "deletecollection" in rtype.verbs:
        collection["delete"] = _operation(
            rtype,
            "deletecollection",
            f"deleteCollection{operation_name}{namespaced}{rtype.kind}",
            _STATUS,
            list_query=True,
        )
    paths[scope] = collection
    if rtype.namespaced:
        paths[f"{prefix}/{rtype.plural}"] = {
            "parameters": [],
            "get": _operation(
                rtype,
                "list",
                f"list{operation_name}{rtype.kind}ForAllNamespaces",
                f"{name}List",
                list_query=True,
            ),
        }
    paths[f"{scope}/{{name}}"] = {
        "parameters": _scope_parameters(rtype, named=True),
        "get": _operation(rtype, "get", f"read{operation_name}{namespaced}{rtype.kind}", name),
        "put": _operation(
            rtype, "put", f"replace{operation_name}{namespaced}{rtype.kind}", name, body=name
        ),
        "patch": _operation(
            rtype, "patch", f"patch{operation_name}{namespaced}{rtype.kind}", name, patch=True
        ),
        "delete": _operation(
            rtype, "delete", f"delete{operation_name}{namespaced}{rtype.kind}", _STATUS
        ),
    }
    for sub in rtype.subresources:
        if sub == "binding":
            continue
        schema = _SCALE if sub == "scale" else name
        suffix = sub.capitalize()
        gvk = {"group": "autoscaling", "version": "v1", "kind": "Scale"} if sub == "scale" else None
        paths[f"{scope}/{{name}}/{sub}"] = {
            "parameters": _scope_parameters(rtype, named=True),
            "get": _operation(
                rtype,
                "get",
                f"read{operation_name}{namespaced}{rtype.kind}{suffix}",
                schema,
                gvk=gvk,
            ),
            "put": _operation(
                rtype,
                "put",
                f"replace{operation_name}{namespaced}{rtype.kind}{suffix}",
                schema,
                body=schema,
                gvk=gvk,
            ),
            "patch": _operation(
                rtype,
                "patch",
                f"patch{operation_name}{namespaced}{rtype.kind}{suffix}",
                schema,
                patch=True,
                gvk=gvk,
            ),
        }
    return paths


def _operation_name(rtype: ResourceType) -> str:
    """`Core`, `Apps`, `AutoscalingV1alpha1`...: the group (without .k8s.io) and version."""
    group = rtype.group.removesuffix(".k8s.io") if rtype.group else "core"
    words = group.replace("-", ".").split(".")
    return "".join(w[:1].upper() + w[1:] for w in words) + rtype.version.capitalize()


def _parameter(
    name: str, where: str, description: str, kind: str = "string", *, required: bool = False
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": name,
        "in": where,
        "description": description,
        "schema": {"type": kind, "uniqueItems": True},
    }
    if required:
        out["required"] = True
    return out


def _scope_parameters(rtype: ResourceType, *, named: bool) -> list[dict[str, Any]]:
    parameters = []
    if named:
        parameters.append(
            _parameter("name", "path", f"The name of the {rtype.kind}.", required=True)
        )
    if rtype.namespaced:
        parameters.append(_parameter("namespace", "path", "The namespace.", required=True))
    parameters.append(_parameter("pretty", "query", "Indent the output."))
    return parameters


def _operation(
    rtype: ResourceType,
    action: str,
    operation_id: str,
    response: str,
    *,
    body: str | None = None,
    patch: bool = False,
    created: bool = False,
    list_query: bool = False,
    gvk: dict[str, str] | None = None,
) -> dict[str, Any]:
    content = {
        media: {"schema": component_ref(response)}
        for media in ("application/json", "application/yaml")
    }
    responses: dict[str, Any] = {"200": {"description": "OK", "content": content}}
    if created:
        responses["201"] = {"description": "Created", "content": content}
    responses["401"] = {"description": "Unauthorized"}
    operation: dict[str, Any] = {
        "description": f"{action} {rtype.kind}",
        "operationId": operation_id,
        "parameters": [],
        "responses": responses,
        "x-kubernetes-action": action,
        _GVK: gvk or _gvk(rtype),
    }
    if list_query:
        kinds = {
            "limit": "integer",
            "timeoutSeconds": "integer",
            "watch": "boolean",
            "allowWatchBookmarks": "boolean",
            "sendInitialEvents": "boolean",
        }
        operation["parameters"] = [
            _parameter(n, "query", d, kinds.get(n, "string")) for n, d in _QUERY_LIST
        ]
    if body is not None or patch:
        operation["parameters"] = [_parameter(n, "query", d) for n, d in _QUERY_WRITE]
    if body is not None:
        operation["requestBody"] = {
            "content": {"application/json": {"schema": component_ref(body)}},
            "required": True,
        }
    if patch:
        media = [_JSON_PATCH, _MERGE_PATCH]
        operation["requestBody"] = {
            "content": {m: {"schema": component_ref(f"{META}.Patch")} for m in media},
            "required": True,
        }
    return operation


# ====================================================================== v2


def _to_v2(schema: Any) -> Any:
    """An OpenAPI v3 schema in Swagger 2.0's subset: references to #/definitions, a single
    allOf reference inlined, no anyOf/oneOf/not/nullable (int-or-string keeps its format)."""
    if isinstance(schema, list):
        return [_to_v2(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "$ref" and isinstance(value, str):
            out[key] = value.replace("#/components/schemas/", "#/definitions/")
        elif key == "allOf" and isinstance(value, list) and len(value) == 1 and "$ref" in value[0]:
            out["$ref"] = _to_v2(value[0])["$ref"]
        elif key in ("anyOf", "oneOf", "not", "nullable"):
            continue
        elif key in (
            "properties",
            "additionalProperties",
            "items",
            "x-kubernetes-group-version-kind",
        ):
            out[key] = (
                {k: _to_v2(v) for k, v in value.items()} if key == "properties" else _to_v2(value)
            )
        else:
            out[key] = value
    if schema.get("x-kubernetes-int-or-string"):
        out.pop("type", None)
        out["format"] = "int-or-string"
    return out


def _path_to_v2(item: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"parameters": [_parameter_to_v2(p) for p in item.get("parameters", [])]}
    for method, operation in item.items():
        if method == "parameters":
            continue
        converted = {
            k: v
            for k, v in operation.items()
            if k not in ("requestBody", "responses", "parameters")
        }
        converted["parameters"] = [_parameter_to_v2(p) for p in operation.get("parameters", [])]
        body = operation.get("requestBody")
        if body is not None:
            media = list(body["content"])
            converted["consumes"] = media
            schema = next(iter(body["content"].values()))["schema"]
            converted["parameters"].insert(
                0, {"name": "body", "in": "body", "required": True, "schema": _to_v2(schema)}
            )
        converted["produces"] = ["application/json", "application/yaml"]
        converted["responses"] = {
            code: {
                "description": answer["description"],
                **(
                    {"schema": _to_v2(answer["content"]["application/json"]["schema"])}
                    if "content" in answer
                    else {}
                ),
            }
            for code, answer in operation["responses"].items()
        }
        out[method] = converted
    return out


def _parameter_to_v2(parameter: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in parameter.items() if k != "schema"}
    out.update(parameter.get("schema", {}))
    return out
