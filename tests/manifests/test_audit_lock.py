"""`make audit`'s verdicts (tests/manifests/audit_lock.py), with a stand-in for pip-audit that
prints what the real one prints in each case: a clean audit passes; a known vulnerability
fails; an audit that could not run - the service unreachable, or every package skipped,
which pip-audit itself reports as "No known vulnerabilities found" - says NOT AUDITED."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from audit_lock import audit


def stand_in(tmp_path: Path, stdout: str, stderr: str = "", code: int = 0) -> Path:
    script = tmp_path / "pip-audit"
    script.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        f"sys.stdout.write({stdout!r})\n"
        f"sys.stderr.write({stderr!r})\n"
        f"sys.exit({code})\n"
    )
    script.chmod(0o755)
    return script


def report(*dependencies: dict[str, Any]) -> str:
    return json.dumps({"dependencies": list(dependencies), "fixes": []})


@pytest.fixture
def lock(tmp_path: Path) -> Path:
    path = tmp_path / "requirements.lock"
    path.write_text("aiohttp==3.14.5 --hash=sha256:" + "0" * 64 + "\n")
    return path


def test_clean(tmp_path: Path, lock: Path) -> None:
    out = report({"name": "aiohttp", "version": "3.14.5", "vulns": []})
    assert audit(lock, stand_in(tmp_path, out)) == (
        0,
        "audited: 1 dependencies, no known vulnerabilities",
    )


def test_vulnerable(tmp_path: Path, lock: Path) -> None:
    vulnerable = {"name": "aiohttp", "version": "3.14.5", "vulns": [{"id": "GHSA-xxxx"}]}
    code, message = audit(lock, stand_in(tmp_path, report(vulnerable), code=1))
    assert (code, message) == (1, "VULNERABLE: aiohttp 3.14.5: GHSA-xxxx")


def test_every_package_skipped_is_not_audited(tmp_path: Path, lock: Path) -> None:
    skipped = {"name": "aiohttp", "skip_reason": "Dependency not found on PyPI"}
    code, message = audit(lock, stand_in(tmp_path, report(skipped)))
    assert code == 0
    assert message.startswith("NOT AUDITED: 1 of 1 dependencies could not be checked")


def test_unreachable_service_is_not_audited(tmp_path: Path, lock: Path) -> None:
    error = "requests.exceptions.ConnectionError: pypi.org unreachable\n"
    code, message = audit(lock, stand_in(tmp_path, "", stderr=error, code=1))
    assert (code, message) == (
        0,
        "NOT AUDITED: pip-audit could not reach the vulnerability service "
        "(requests.exceptions.ConnectionError: pypi.org unreachable)",
    )


def test_a_missing_lock(tmp_path: Path) -> None:
    code, message = audit(tmp_path / "nothing.lock", tmp_path / "pip-audit")
    assert code == 2 and "make lock" in message
