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

__all__ = ["KubeconfigError", "connect", "default_namespace"]

# Where a pod's service account namespace is mounted (kubectl's in-cluster default).
SERVICE_ACCOUNT_NAMESPACE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"


class KubeconfigError(Exception):
    """The kubeconfig (or the in-cluster service account) cannot be used; the message says why."""


async def connect(
    *,
    metrics: KubeMetrics,
    kubeconfig: str | None,
    context: str | None = None,
    settings: ClientSettings | None = None,
) -> KubeClient:
    """A client as `load_client` makes it (`context`: the kubeconfig's context to use, default
    its current-context); KubeconfigError for credentials that cannot be used."""
    from hvpa.kube.client import load_client

    in_cluster = _in_cluster(kubeconfig, context)
    source = "the in-cluster service account" if in_cluster else _kubeconfig_paths(kubeconfig)
    if not in_cluster and not _any_file(source):
        hint = "" if kubeconfig else " (pass --kubeconfig, or set KUBECONFIG)"
        raise KubeconfigError(f"cannot use the kubeconfig {source}: no such file{hint}")
    try:
        return await load_client(
            metrics=metrics,
            # A context names a kubeconfig's entry, even in a pod.
            kubeconfig=None if in_cluster else _kubeconfig_paths(kubeconfig),
            context=context,
            settings=settings,
        )
    except Exception as error:
        # Whatever the loader raises means this kubeconfig cannot be used (see the module
        # docstring); CancelledError and KeyboardInterrupt are no Exceptions and pass.
        raise KubeconfigError(
            f"cannot use {_named(source, in_cluster)}: {_reason(error)}"
        ) from error


def default_namespace(kubeconfig: str | None, context: str | None = None) -> str:
    """The namespace kubectl would use without -n: the context's `namespace`, else `default`;
    in a pod without a kubeconfig, the service account's. KubeconfigError as `connect`."""
    if _in_cluster(kubeconfig, context):
        path = Path(SERVICE_ACCOUNT_NAMESPACE)
        return (path.read_text().strip() if path.is_file() else "") or "default"
    from kubernetes_asyncio.config.kube_config import KubeConfigLoader, KubeConfigMerger

    source = _kubeconfig_paths(kubeconfig)
    try:
        merged = KubeConfigMerger(source)
        loader = KubeConfigLoader(config_dict=merged.config, active_context=context)
        current = loader.current_context or {}
        namespace = (current.get("context") or {}).get("namespace")
    except Exception as error:
        # As in connect: whatever the loader raises means the kubeconfig cannot be used.
        raise KubeconfigError(f"cannot use {_named(source, False)}: {_reason(error)}") from error
    return str(namespace) if namespace else "default"


def _in_cluster(kubeconfig: str | None, context: str | None) -> bool:
    """In a pod, without a kubeconfig or a context to name one, the service account is used."""
    return (
        kubeconfig is None and context is None and bool(os.environ.get("KUBERNETES_SERVICE_HOST"))
    )


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
