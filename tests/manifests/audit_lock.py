"""`make audit`: known vulnerabilities in what the image installs (requirements.lock).

pip-audit checks each pinned version against PyPI's advisory data, over the network. Two
ways it can fail to audit, both said plainly and neither a pass: the service cannot be
reached (pip-audit stops with a connection error), or it answers without the packages
(pip-audit then skips each one and still prints "No known vulnerabilities found", which
this turns into NOT AUDITED). Exit codes: 0 when audited clean or not audited (the
message says which: an audit that cannot run must not fail a build that has no network),
1 when a vulnerability is known, 2 for a lock file that cannot be read.

    python tests/manifests/audit_lock.py requirements.lock
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

PIP_AUDIT = Path(sys.executable).with_name("pip-audit")


def audit(lock: Path, pip_audit: Path = PIP_AUDIT) -> tuple[int, str]:
    """(exit code, what to print) for the lock file `lock`."""
    if not lock.is_file():
        return 2, f"NOT AUDITED: {lock} does not exist (make lock)"
    if not pip_audit.exists():
        return 0, f"NOT AUDITED: {pip_audit} is not installed (make audit installs it)"
    done = subprocess.run(
        [
            str(pip_audit),
            "--requirement",
            str(lock),
            "--require-hashes",
            "--disable-pip",
            "--vulnerability-service",
            "pypi",
            "--progress-spinner",
            "off",
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    try:
        report: dict[str, Any] = json.loads(done.stdout)
    except json.JSONDecodeError:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return 0, f"NOT AUDITED: pip-audit could not reach the vulnerability service ({last})"
    dependencies = report.get("dependencies", [])
    skipped = [d for d in dependencies if "skip_reason" in d]
    found = [(d["name"], d["version"], v["id"]) for d in dependencies for v in d.get("vulns", [])]
    lines = [f"VULNERABLE: {name} {version}: {advisory}" for name, version, advisory in found]
    if skipped:
        lines.append(
            f"NOT AUDITED: {len(skipped)} of {len(dependencies)} dependencies could not be "
            f"checked, e.g. {skipped[0]['skip_reason']}"
        )
    if found:
        return 1, "\n".join(lines)
    if not skipped:
        lines.append(f"audited: {len(dependencies)} dependencies, no known vulnerabilities")
    return 0, "\n".join(lines)


def main() -> int:
    code, message = audit(Path(sys.argv[1] if len(sys.argv) > 1 else "requirements.lock"))
    print(message)
    return code


if __name__ == "__main__":
    sys.exit(main())
