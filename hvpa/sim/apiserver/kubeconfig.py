"""The kubeconfig that points clients (kubernetes_asyncio, kubectl) at the in-process server.

Plain HTTP with a dummy bearer token: the server authenticates nobody, but
clients still send credentials the way they would to a real cluster.
"""

from __future__ import annotations

from pathlib import Path

import yaml

__all__ = ["write_kubeconfig"]

_NAME = "hvpa-sim"


def write_kubeconfig(path: Path, *, server: str, token: str) -> Path:
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": _NAME, "cluster": {"server": server}}],
        "users": [{"name": _NAME, "user": {"token": token}}],
        "contexts": [
            {"name": _NAME, "context": {"cluster": _NAME, "user": _NAME, "namespace": "default"}}
        ],
        "current-context": _NAME,
        "preferences": {},
    }
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path
