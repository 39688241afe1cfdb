"""Credentials for `hvpa run` and `hvpa explain`: a kubeconfig that is missing, not YAML or
not shaped like a kubeconfig, and no kubeconfig at all, each give one line naming the file
and exit 2 (no traceback, nothing started); a usable one connects."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import prometheus_client
import pytest
from prometheus_client import CollectorRegistry

from hvpa.cli import main
from hvpa.commands import BAD_INPUT
from hvpa.commands.kubeconfig import connect
from hvpa.kube.metrics import KubeMetrics
from hvpa.sim.apiserver import ApiServer

BROKEN = [
    pytest.param(None, "no such file", id="missing"),
    pytest.param("clusters: [\n", "not valid YAML", id="not-yaml"),
    pytest.param("apiVersion: v1\nclusters: 5\n", "not a usable kubeconfig", id="not-a-kubeconfig"),
    pytest.param("apiVersion: v1\nkind: Config\n", "current-context", id="no-context"),
    pytest.param("- just\n- a list\n", "", id="a-list"),
]


def kubeconfig(tmp_path: Path, content: str | None) -> Path:
    path = tmp_path / "kubeconfig"
    if content is not None:
        path.write_text(content)
    return path


@pytest.fixture(autouse=True)
def outside_a_cluster(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)


@pytest.fixture
def root_logging() -> Iterator[None]:
    """`hvpa run` installs its own log handler on the root logger; put pytest's back after."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


@pytest.mark.parametrize(("content", "reason"), BROKEN)
def test_explain_says_why_in_one_line(
    content: str | None, reason: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = kubeconfig(tmp_path, content)
    assert main(["explain", "default/web", "--kubeconfig", str(path)]) == BAD_INPUT
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"hvpa explain: cannot use the kubeconfig {path}: ")
    assert reason in err


@pytest.mark.usefixtures("root_logging")
@pytest.mark.parametrize(("content", "reason"), BROKEN)
def test_run_says_why_in_one_log_line(
    content: str | None,
    reason: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # `hvpa run` registers its metrics in the process-wide registry, once per process.
    monkeypatch.setattr(prometheus_client, "REGISTRY", CollectorRegistry())
    path = kubeconfig(tmp_path, content)
    argv = ["run", "--kubeconfig", str(path), "--metrics-bind-address", "0"]
    assert main([*argv, "--health-probe-bind-address", "0", "--log-format", "json"]) == BAD_INPUT
    (line,) = capsys.readouterr().err.splitlines()
    assert '"cannot connect"' in line and str(path) in line and reason in line


def test_no_kubeconfig_anywhere_says_where_it_looked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    nowhere = tmp_path / "none"
    monkeypatch.setenv("KUBECONFIG", f"{nowhere}:{nowhere}-either")
    assert main(["explain", "default/web"]) == BAD_INPUT
    err = capsys.readouterr().err
    assert err == (
        f"hvpa explain: cannot use the kubeconfig {nowhere}:{nowhere}-either: no such file "
        "(pass --kubeconfig, or set KUBECONFIG)\n"
    )


async def test_a_usable_kubeconfig_connects() -> None:
    async with ApiServer(seed=1) as server:
        client = await connect(
            metrics=KubeMetrics(CollectorRegistry()), kubeconfig=str(server.kubeconfig_path)
        )
        async with client:
            assert b"APIVersions" in await client.get("/api")
