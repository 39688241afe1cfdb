"""Reading manifests/ as kustomize would, and Kubernetes RBAC's rule matching.

The RBAC matching follows k8s.io/apiserver's rbac/v1 helpers (VerbMatches,
APIGroupMatches, ResourceMatches, ResourceNameMatches): `*` matches every
verb, group or resource (a resource `*` matches subresources too), a
`*/sub` rule matches that subresource of every resource, a request for a
subresource is named `resource/sub`, and `resourceNames` restrict a rule to
those object names (so never a list, watch or create, which have no name).
A Role's rules, and a ClusterRole's bound by a RoleBinding, hold only in
the binding's namespace; a ClusterRoleBinding's hold everywhere.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import yaml

ROOT: Final = Path(__file__).resolve().parents[2]
MANIFESTS: Final = ROOT / "manifests"
EXAMPLES: Final = MANIFESTS / "examples"
KUSTOMIZATIONS: Final = (MANIFESTS, MANIFESTS / "monitoring")


# libyaml's loader where PyYAML was built with it: the manifests are read while the suite is
# collected, in every pytest process, and the pure-Python loader took about a second there.
_LOADER: Final = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def documents(path: Path) -> list[dict[str, Any]]:
    text = path.read_text(encoding="utf-8")
    return [d for d in yaml.load_all(text, Loader=_LOADER) if d is not None]


def kustomization(directory: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((directory / "kustomization.yaml").read_text())
    return loaded


def resource_files(directory: Path) -> list[Path]:
    """The files a kustomization lists, in order (these kustomizations list files only)."""
    return [directory / name for name in kustomization(directory)["resources"]]


def install_objects() -> list[dict[str, Any]]:
    """Every object `kubectl apply -k` applies from manifests/ and manifests/monitoring/."""
    return [
        doc
        for directory in KUSTOMIZATIONS
        for f in resource_files(directory)
        for doc in documents(f)
    ]


def find(objects: Iterable[dict[str, Any]], kind: str, name: str | None = None) -> dict[str, Any]:
    found = [o for o in objects if o["kind"] == kind and name in (None, o["metadata"]["name"])]
    assert len(found) == 1, f"expected one {kind} {name or ''}, found {len(found)}"
    return found[0]


# -- RBAC ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Request:
    """The attributes an authorizer sees (hvpa.sim.apiserver's RequestRecord carries them)."""

    verb: str
    api_group: str
    resource: str
    subresource: str = ""
    namespace: str = ""
    name: str = ""

    def __str__(self) -> str:
        resource = f"{self.resource}/{self.subresource}" if self.subresource else self.resource
        where = f" in {self.namespace}" if self.namespace else ""
        named = f" {self.name}" if self.name else ""
        return f"{self.verb} {self.api_group or 'core'} {resource}{named}{where}"


@dataclass(frozen=True)
class Grant:
    """One rule of a role as bound: `namespace` None when it holds in every namespace."""

    role: str
    api_groups: tuple[str, ...]
    resources: tuple[str, ...]
    verbs: tuple[str, ...]
    resource_names: tuple[str, ...]
    namespace: str | None

    def allows(self, request: Request) -> bool:
        if self.namespace is not None and request.namespace != self.namespace:
            return False
        return (
            _verb_matches(self.verbs, request.verb)
            and _group_matches(self.api_groups, request.api_group)
            and _resource_matches(self.resources, request.resource, request.subresource)
            and (not self.resource_names or request.name in self.resource_names)
        )

    def triples(self) -> Iterator[tuple[str, str, str]]:
        """(group, resource, verb) for every combination this rule names."""
        for group in self.api_groups:
            for resource in self.resources:
                for verb in self.verbs:
                    yield group, resource, verb


def _verb_matches(verbs: tuple[str, ...], verb: str) -> bool:
    return "*" in verbs or verb in verbs


def _group_matches(groups: tuple[str, ...], group: str) -> bool:
    return "*" in groups or group in groups


def _resource_matches(resources: tuple[str, ...], resource: str, subresource: str) -> bool:
    combined = f"{resource}/{subresource}" if subresource else resource
    for rule in resources:
        if rule in ("*", combined):
            return True
        if subresource and rule == f"*/{subresource}":
            return True
    return False


def grants_for(
    objects: Iterable[dict[str, Any]], *, service_account: str, namespace: str
) -> list[Grant]:
    """Every rule bound to the service account, with the namespace it holds in."""
    objects = list(objects)
    roles = {
        (o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]): o
        for o in objects
        if o["kind"] in ("Role", "ClusterRole")
    }
    subject = {"kind": "ServiceAccount", "name": service_account, "namespace": namespace}
    grants: list[Grant] = []
    for binding in objects:
        if binding["kind"] not in ("RoleBinding", "ClusterRoleBinding"):
            continue
        if subject not in binding.get("subjects", []):
            continue
        ref = binding["roleRef"]
        scope = binding["metadata"].get("namespace") if binding["kind"] == "RoleBinding" else None
        role_namespace = scope if ref["kind"] == "Role" else None
        role = roles.get((ref["kind"], role_namespace, ref["name"]))
        assert role is not None, f"{binding['kind']} {binding['metadata']['name']}: no {ref}"
        for rule in role.get("rules", []):
            assert "nonResourceURLs" not in rule, "the controller needs no non-resource URLs"
            grants.append(
                Grant(
                    role=f"{ref['kind']}/{ref['name']}",
                    api_groups=tuple(rule.get("apiGroups", ())),
                    resources=tuple(rule.get("resources", ())),
                    verbs=tuple(rule["verbs"]),
                    resource_names=tuple(rule.get("resourceNames", ())),
                    namespace=scope,
                )
            )
    return grants


def allowed(grants: Iterable[Grant], request: Request) -> bool:
    return any(grant.allows(request) for grant in grants)
