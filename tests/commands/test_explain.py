"""`hvpa explain NAME -n NAMESPACE` against the in-repo API server: the explanation (text) or the
Decision (JSON or YAML, the shape `hvpa recommend` prints), nothing written, the Hvpa named as
kubectl names an object (NAMESPACE/NAME, -n, the context's namespace, --context), the
cluster's clock, and its exit codes, each failure in one line (a missing Hvpa, an unreachable
cluster, an unreadable quantity)."""

from __future__ import annotations

import asyncio
import re
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from hvpa.cli import build_parser, main
from hvpa.commands import FAILED
from hvpa.commands import explain as explain_command
from hvpa.controller.explain import ClusterClock
from hvpa.sim.apiserver import ApiServer


def hvpa(min_replicas: int = 1) -> dict[str, Any]:
    return {
        "apiVersion": "autoscaling.k8s.io/v1alpha1",
        "kind": "Hvpa",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "hpa": {
                "deploy": True,
                "template": {
                    "spec": {
                        "minReplicas": min_replicas,
                        "maxReplicas": 3,
                        "metrics": [
                            {
                                "type": "Resource",
                                "resource": {
                                    "name": "cpu",
                                    "target": {"type": "Utilization", "averageUtilization": 50},
                                },
                            }
                        ],
                    }
                },
            },
        },
    }


@pytest.fixture
async def server() -> AsyncIterator[ApiServer]:
    async with ApiServer(seed=1) as running:
        labels = {"app": "web"}
        running.objects.create(
            "deployments.apps",
            {
                "metadata": {"name": "web"},
                "spec": {
                    "replicas": 2,
                    "selector": {"matchLabels": labels},
                    "template": {
                        "metadata": {"labels": labels},
                        "spec": {
                            "containers": [
                                {
                                    "name": "app",
                                    "image": "app",
                                    "resources": {"requests": {"cpu": "100m"}},
                                }
                            ]
                        },
                    },
                },
            },
        )
        yield running


async def explain(server: ApiServer, *args: str) -> int:
    """The command, run as from a shell (its own event loop, in a thread)."""
    argv = ["explain", "--kubeconfig", str(server.kubeconfig_path), *args]
    return await asyncio.to_thread(main, argv)


async def test_text_and_json(server: ApiServer, capsys: pytest.CaptureFixture[str]) -> None:
    server.objects.create("hvpas", hvpa())
    server.clear_requests()
    assert await explain(server, "default/web") == 0
    text = capsys.readouterr().out
    assert text.startswith("Hvpa default/web at ")
    assert "target Deployment default/web: 2 replicas" in text
    assert await explain(server, "default/web", "-o", "json") == 0
    decision = orjson.loads(capsys.readouterr().out)
    assert list(decision)[:3] == ["replicas", "containers", "horizontal"]
    assert decision["replicas"]["current"] == 2
    assert decision["explanation"][0].startswith("Hvpa default/web at ")
    assert {r.method for r in server.requests} == {"GET"}


@pytest.mark.parametrize(
    ("create", "argument", "code", "message"),
    [
        pytest.param(False, "default/web", 1, "Hvpa default/web not found", id="missing"),
        pytest.param(True, "default/web", 1, "is invalid", id="invalid"),
        # NAME alone is in the context's namespace, as kubectl reads it
        pytest.param(False, "web", 1, "Hvpa default/web not found", id="name-alone"),
        pytest.param(False, "a/b/c", 2, "is not NAME or NAMESPACE/NAME", id="too-many-parts"),
        pytest.param(False, "/web", 2, "is not NAME or NAMESPACE/NAME", id="empty-namespace"),
    ],
)
async def test_refusals(
    server: ApiServer,
    capsys: pytest.CaptureFixture[str],
    create: bool,
    argument: str,
    code: int,
    message: str,
) -> None:
    if create:
        # The CRD's rules refuse it too: stored as an Hvpa written before them would be.
        server.objects.create("hvpas", hvpa(min_replicas=5), validate=False)
    assert await explain(server, argument) == code
    assert message in capsys.readouterr().err


@pytest.mark.looptime
async def test_an_unreachable_cluster_reads_as_a_sentence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One line, exit 1; aiohttp's own message, not a ClientConnectorError(ConnectionKey(...))
    repr (issue 19). In virtual time: the client's retries back off for seconds."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    # The socket is closed: nothing listens on the port now.
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\n"
        f"clusters: [{{name: c, cluster: {{server: 'http://127.0.0.1:{port}'}}}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
        "contexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n"
    )
    args = build_parser().parse_args(["explain", "default/web", "--kubeconfig", str(kubeconfig)])
    assert await explain_command._explain(args, "default", "web") == FAILED
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("hvpa explain: cannot reach the API server: GET http://127.0.0.1:")
    assert f"Cannot connect to host 127.0.0.1:{port}" in err
    assert "ClientConnectorError" not in err and "ConnectionKey" not in err


async def test_an_unreadable_quantity_in_what_it_reads_is_named(
    server: ApiServer, capsys: pytest.CaptureFixture[str]
) -> None:
    server.objects.create("hvpas", hvpa())
    server.objects.patch(
        "deployments.apps",
        "web",
        {
            "spec": {
                "template": {
                    "spec": {
                        "containers": [
                            {
                                "name": "app",
                                "image": "app",
                                "resources": {"requests": {"cpu": "1e51"}},
                            }
                        ]
                    }
                }
            }
        },
        namespace="default",
    )
    assert await explain(server, "default/web") == FAILED
    err = capsys.readouterr().err
    assert err.startswith("hvpa explain: cannot decide: Deployment default/web ")
    assert "requests.cpu: 1e51 is beyond the largest quantity hvpa reads" in err


def kubeconfig_with(
    path: Path, server: ApiServer, contexts: dict[str, str | None], current: str
) -> Path:
    """A kubeconfig whose contexts (name -> namespace) all point at `server`, but `broken`,
    which points at a port nothing listens on."""
    import yaml

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{sock.getsockname()[1]}"
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": "sim", "cluster": {"server": server.url}},
            {"name": "nowhere", "cluster": {"server": closed}},
        ],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [
            {
                "name": name,
                "context": {
                    "cluster": "nowhere" if name == "broken" else "sim",
                    "user": "u",
                    **({"namespace": namespace} if namespace else {}),
                },
            }
            for name, namespace in contexts.items()
        ],
        "current-context": current,
    }
    path.write_text(yaml.safe_dump(config))
    return path


async def run_explain(*args: str) -> int:
    return await asyncio.to_thread(main, ["explain", *args])


async def test_named_as_kubectl_names_it(
    server: ApiServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """NAME -n NAMESPACE, NAMESPACE/NAME, or NAME in the current context's namespace."""
    server.objects.create("namespaces", {"metadata": {"name": "shop"}})
    server.objects.create("hvpas", {**hvpa(), "metadata": {"name": "web", "namespace": "shop"}})
    config = str(kubeconfig_with(tmp_path / "config", server, {"sim": "shop"}, "sim"))
    for args in (["web", "-n", "shop"], ["shop/web"], ["web"], ["shop/web", "-n", "shop"]):
        assert await run_explain(*args, "--kubeconfig", config) == 0, args
        assert capsys.readouterr().out.startswith("Hvpa shop/web at "), args
    assert await run_explain("shop/web", "-n", "default", "--kubeconfig", config) == 2
    assert "names namespace 'shop', but -n says 'default'" in capsys.readouterr().err


async def test_context_picks_the_cluster_and_its_namespace(
    server: ApiServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server.objects.create("hvpas", hvpa())
    contexts = {"broken": "default", "sim": None}
    config = str(kubeconfig_with(tmp_path / "config", server, contexts, "broken"))
    # a context without a namespace means `default`, as in kubectl
    assert await run_explain("web", "--kubeconfig", config, "--context", "sim") == 0
    assert capsys.readouterr().out.startswith("Hvpa default/web at ")
    assert await run_explain("web", "--kubeconfig", config, "--context", "nope") == 2
    err = capsys.readouterr().err
    assert err.startswith("hvpa explain: cannot use the kubeconfig ") and "nope" in err
    assert err.count("\n") == 1


async def test_yaml_is_the_json_decision(
    server: ApiServer, capsys: pytest.CaptureFixture[str]
) -> None:
    import yaml

    server.objects.create("hvpas", hvpa())
    assert await explain(server, "default/web", "-o", "json") == 0
    as_json = orjson.loads(capsys.readouterr().out)
    assert await explain(server, "default/web", "-o", "yaml") == 0
    as_yaml = yaml.safe_load(capsys.readouterr().out)
    # the same Decision but the time the API server stamped on each answer (the explanation's
    # first line, a condition's lastTransitionTime: a second may pass between the two calls)
    assert untimed(as_yaml) == untimed(as_json)


TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")


def untimed(document: Any) -> Any:
    """`document` without its explanation, every RFC 3339 time replaced by `<time>`."""
    if isinstance(document, dict):
        return {k: untimed(v) for k, v in document.items() if k != "explanation"}
    if isinstance(document, list):
        return [untimed(v) for v in document]
    if isinstance(document, str) and TIMESTAMP.match(document):
        return "<time>"
    return document


SIMULATED_NOW = 1_735_689_600.0  # 2025-01-01T00:00:00Z, a year the machine has left behind


@pytest.fixture
async def server_in_2025() -> AsyncIterator[ApiServer]:
    async with ApiServer(seed=1, clock=lambda: SIMULATED_NOW) as running:
        yield running


async def test_it_decides_at_the_clusters_now_and_says_so(
    server_in_2025: ApiServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """A cluster whose clock is not this machine's (`hvpa sim` in virtual time): the history
    is read at the cluster's now, and the first line says which clock that is."""
    server = server_in_2025
    server.objects.create(
        "deployments.apps",
        {
            "metadata": {"name": "web"},
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "app", "image": "app"}]},
                },
            },
        },
    )
    server.objects.create("hvpas", hvpa())
    assert await explain(server, "default/web") == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("Hvpa default/web at 2025-01-01T00:00:0")
    assert "(the API server's clock, from its Date header; this machine's clock is " in first
    # The 2025 server is a year and more behind this machine: days (under two years), else
    # years and days, as kubectl writes an age.
    assert re.search(r"this machine's clock is \d+(d|y|y\d+d) ahead\)$", first), first


@pytest.mark.parametrize(
    ("offset_seconds", "said"),
    [
        pytest.param(4, "", id="under-the-notable-skew"),
        pytest.param(-(689 * 86400), "; this machine's clock is 689d ahead", id="ahead"),
        pytest.param(3 * 3600 + 60, "; this machine's clock is 3h1m behind", id="behind"),
    ],
)
def test_the_clock_difference_reads_as_an_age(offset_seconds: float, said: str) -> None:
    """The same words for a span as `kubectl get` uses for an age (one formatter for both)."""
    clock = ClusterClock(offset_seconds, "the API server's clock", local=lambda: 0.0)
    assert clock.describe() == f"the API server's clock{said}"
