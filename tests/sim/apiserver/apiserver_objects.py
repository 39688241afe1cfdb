"""Small manifests the API server tests create."""

from __future__ import annotations

from typing import Any


def deployment(name: str = "web", replicas: int | None = None, **labels: str) -> dict[str, Any]:
    labels = labels or {"app": name}
    spec: dict[str, Any] = {
        "selector": {"matchLabels": labels},
        "template": {
            "metadata": {"labels": labels},
            "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}]},
        },
    }
    if replicas is not None:
        spec["replicas"] = replicas
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name}, "spec": spec}


def pod(name: str, node: str | None = None, **labels: str) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "app", "image": "nginx:1.25"}]}
    if node is not None:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels},
        "spec": spec,
    }


# A CRD with one of each schema rule, subresource and printer column type. The expected
# answers the tests check for it (messages, causes, table cells) were read off a real
# kube-apiserver v1.37.2 given this same CRD (branch e2e builds one; see its README).
WIDGET_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {
        "group": "example.com",
        "names": {
            "kind": "Widget",
            "listKind": "WidgetList",
            "plural": "widgets",
            "singular": "widget",
            "shortNames": ["wd"],
            "categories": ["all"],
        },
        "scope": "Namespaced",
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {
                    "status": {},
                    "scale": {
                        "specReplicasPath": ".spec.size",
                        "statusReplicasPath": ".status.replicas",
                        "labelSelectorPath": ".status.selector",
                    },
                },
                "additionalPrinterColumns": [
                    {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
                    {"name": "Ratio", "type": "number", "jsonPath": ".spec.ratio"},
                    {
                        "name": "Mode",
                        "type": "string",
                        "jsonPath": ".spec.mode",
                        "description": "the mode",
                    },
                    {"name": "Enabled", "type": "boolean", "jsonPath": ".spec.enabled"},
                    {"name": "When", "type": "date", "jsonPath": ".spec.when"},
                    {"name": "Tag", "type": "string", "jsonPath": ".spec.tags", "priority": 1},
                    {"name": "Free", "type": "string", "jsonPath": ".spec.free"},
                    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
                ],
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "description": "A widget for tests.",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "description": "What the widget should be.",
                                "required": ["size"],
                                "x-kubernetes-validations": [
                                    {
                                        "rule": "self.size <= 5 || self.mode == 'B'",
                                        "message": "sizes above 5 need mode B",
                                    },
                                    {"rule": "!has(self.name) || self.name != 'bad'"},
                                ],
                                "properties": {
                                    "size": {
                                        "type": "integer",
                                        "minimum": 1,
                                        "maximum": 10,
                                        "description": "How big.",
                                    },
                                    "ratio": {
                                        "type": "number",
                                        "minimum": 0,
                                        "exclusiveMinimum": True,
                                        "multipleOf": 0.5,
                                    },
                                    "name": {
                                        "type": "string",
                                        "minLength": 2,
                                        "maxLength": 5,
                                        "pattern": "^[a-z]+$",
                                    },
                                    "mode": {"type": "string", "enum": ["A", "B"]},
                                    "enabled": {"type": "boolean"},
                                    "when": {"type": "string", "format": "date-time"},
                                    "tags": {
                                        "type": "array",
                                        "items": {"type": "string"},
                                        "maxItems": 2,
                                        "minItems": 1,
                                        "x-kubernetes-list-type": "set",
                                    },
                                    "labels": {
                                        "type": "object",
                                        "additionalProperties": {"type": "string"},
                                        "maxProperties": 2,
                                    },
                                    "maybe": {"type": "string", "nullable": True},
                                    "quantity": {
                                        "x-kubernetes-int-or-string": True,
                                        "anyOf": [{"type": "integer"}, {"type": "string"}],
                                        "pattern": "^[0-9]+m?$",
                                    },
                                    "free": {
                                        "type": "object",
                                        "x-kubernetes-preserve-unknown-fields": True,
                                    },
                                    "defaulted": {"type": "string", "default": "dflt"},
                                    "nested": {
                                        "type": "object",
                                        "default": {},
                                        "properties": {
                                            "inner": {"type": "integer", "default": 7},
                                            "other": {"type": "string"},
                                        },
                                    },
                                    "ports": {
                                        "type": "array",
                                        "x-kubernetes-list-type": "map",
                                        "x-kubernetes-list-map-keys": ["name"],
                                        "items": {
                                            "type": "object",
                                            "required": ["name"],
                                            "properties": {
                                                "name": {"type": "string"},
                                                "port": {"type": "integer", "format": "int32"},
                                            },
                                        },
                                    },
                                    "embedded": {
                                        "type": "object",
                                        "x-kubernetes-embedded-resource": True,
                                        "x-kubernetes-preserve-unknown-fields": True,
                                    },
                                },
                            },
                            "status": {
                                "type": "object",
                                "properties": {
                                    "replicas": {"type": "integer"},
                                    "selector": {"type": "string"},
                                },
                            },
                        },
                    }
                },
            }
        ],
    },
}
WIDGETS = "/apis/example.com/v1/namespaces/default/widgets"


def widget(name: str = "w", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": name},
        "spec": {"size": 1, **spec},
    }
