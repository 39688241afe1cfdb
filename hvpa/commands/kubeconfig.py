"""The cluster credentials of `hvpa run` and `hvpa explain`, or one line saying why not.

kubernetes_asyncio's loader has no error contract: a missing file ends in
"Expected key current-context", a file that is not a kubeconfig in a
TypeError or KeyError from inside the loader, broken YAML in a YAMLError.
`connect` turns all of them into a KubeconfigError whose message names the
file and the reason, so the commands print one line and exit 2 (input that
cannot be used), never a traceback.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hvpa.kube.client import KubeClient
    from hvpa.kube.metrics import KubeMetrics
    from hvpa.kube.settings import ClientSettings

__all__ = ["KubeconfigError", "connect"]


class KubeconfigError(Exception):
    """The kubeconfig (or the in-cluster service account) cannot be used; the message says why."""


async def connect(
    *, metrics: KubeMetrics, kubeconfig: str | None, settings: ClientSettings | None = None
) -> KubeClient:
    """A client as `load_client` makes it; KubeconfigError for credentials that cannot be used."""
    from hvpa.kube.client import load_client

    in_cluster = kubeconfig is None and bool(os.environ.get("KUBERNETES_SERVICE_HOST"))
    source = "the in-cluster service account" if in_cluster else _kubeconfig_paths(kubeconfig)
    if not in_cluster and not _any_file(source):
        hint = "" if kubeconfig else " (pass --kubeconfig, or set KUBECONFIG)"
        raise KubeconfigError(f"cannot use the kubeconfig {source}: no such file{hint}")
    try:
        return await load_client(metrics=metrics, kubeconfig=kubeconfig, settings=settings)
    except Exception as error:
        # Whatever the loader raises means this kubeconfig cannot be used (see the module
        # docstring); CancelledError and KeyboardInterrupt are no Exceptions and pass.
        raise KubeconfigError(
            f"cannot use {_named(source, in_cluster)}: {_reason(error)}"
        ) from error


def _kubeconfig_paths(kubeconfig: str | None) -> str:
    """What the loader reads: --kubeconfig, else $KUBECONFIG (a list), else ~/.kube/config."""
    if kubeconfig is not None:
        return kubeconfig
    return os.environ.get("KUBECONFIG") or str(Path("~/.kube/config"))


def _any_file(paths: str) -> bool:
    """Whether one of the listed paths is a file (the loader skips the missing ones silently)."""
    return any(Path(path).expanduser().is_file() for path in paths.split(os.pathsep) if path)


def _named(source: str, in_cluster: bool) -> str:
    return source if in_cluster else f"the kubeconfig {source}"


def _reason(error: Exception) -> str:
    import yaml
    from kubernetes_asyncio.config import ConfigException

    if isinstance(error, yaml.YAMLError):
        return "not valid YAML: " + " ".join(str(error).split())
    if isinstance(error, OSError) and error.strerror:
        return f"{error.strerror}: {error.filename}" if error.filename else error.strerror
    text = " ".join(str(error).split())
    if isinstance(error, ConfigException):
        return text
    # A TypeError, KeyError... from inside the loader: the file is not shaped like a kubeconfig.
    return f"not a usable kubeconfig ({type(error).__name__}: {text})"
