"""Fixtures of the end-to-end suite (`make e2e`): one real control plane per session, one
namespace per test, and the rule that hvpa is never refused.

The suite runs only when asked for by marker (`-m e2e`): `make test` deselects it, since it
needs the binaries `make e2e` builds and takes minutes of wall-clock time.
"""

from __future__ import annotations

import re
import secrets
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from e2e_audit import AuditLog, logged_refusal, refusals
from e2e_build import binaries
from e2e_cluster import HVPA_USER, Cluster
from suite_tiers import deselect_unless_named

E2E_DIRECTORY = Path(__file__).parent


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "e2e: needs the real control plane `make e2e` builds (deselected otherwise)"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect the e2e tests unless the marker expression asks for them."""
    deselect_unless_named(config, items, "e2e")


_FAILED = pytest.StashKey[bool]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    report = yield
    if report.failed:
        item.session.stash[_FAILED] = True
    return report


@pytest.fixture(scope="session")
def cluster(request: pytest.FixtureRequest) -> Iterator[Cluster]:
    """The control plane and hvpa, up for the whole session.

    Its directory (certificates, kubeconfigs, etcd's data, every component's log, the audit
    log) is made outside pytest's temporary directories, which other pytest runs on the same
    machine prune: it is removed after a clean session and kept, and named, after a failure.
    """
    directory = Path(tempfile.mkdtemp(prefix="hvpa-e2e-"))
    made = Cluster(directory, binaries=binaries())
    try:
        try:
            made.up()
        except Exception as error:
            # Every test would fail the same way: say it once, with what the server said.
            made.down()
            pytest.exit(f"e2e: the cluster could not be set up ({directory} kept): {error}", 1)
        timings = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in made.timings.items())
        print(f"\ne2e phase: cluster up ({timings})")
        yield made
    finally:
        made.down()
        if request.session.stash.get(_FAILED, False) or request.session.testsfailed:
            print(f"\ne2e: every component's log and the audit log are kept in {directory}")
        else:
            shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def namespace(cluster: Cluster, request: pytest.FixtureRequest) -> Iterator[str]:
    """A namespace of the test's own, deleted afterwards (without waiting for it to go)."""
    stem = re.sub(r"[^a-z0-9]+", "-", request.node.name.lower()).strip("-")[:40].strip("-")
    name = f"{stem}-{secrets.token_hex(3)}"
    cluster.admin.create("/api/v1/namespaces", {"metadata": {"name": name}})
    yield name
    cluster.set_usage(name, None)
    cluster.admin.delete(f"/api/v1/namespaces/{name}")


@pytest.fixture(autouse=True)
def hvpa_never_forbidden(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fail the test during which hvpa got a 403: the shipped RBAC must allow all it does.

    Read from both sides: the audit log, which holds every request hvpa made as its
    ServiceAccount, and hvpa's own logs, with the exceptions `refusals` names (a namespace
    being deleted, an API server starting).
    """
    if "cluster" not in request.fixturenames:
        yield
        return
    cluster: Cluster = request.getfixturevalue("cluster")
    audit = AuditLog(cluster.control_plane.audit_log)
    since = audit.offset()
    logged_since = {c.name: len(c.log_records()) for c in cluster.controllers}
    yield
    excused = cluster.control_plane.restarts
    refused = refusals(audit.events(since), user=HVPA_USER, excused=excused)
    assert not refused, "hvpa was refused:\n" + "\n".join(f"{e} {e.message}" for e in refused[:20])
    logged = [
        record
        for controller in cluster.controllers
        for record in controller.log_records()[logged_since.get(controller.name, 0) :]
        if logged_refusal(record, excused=excused)
    ]
    assert not logged, "hvpa logged a 403:\n" + "\n".join(map(str, logged[:20]))


@pytest.fixture(autouse=True)
def controllers_kept_running(request: pytest.FixtureRequest) -> Iterator[None]:
    """After a test that stopped a controller (and failed before starting it again), start it
    again, as its pod's kubelet would: the next test gets a leader and a standby."""
    yield
    if "cluster" in request.fixturenames:
        cluster: Cluster = request.getfixturevalue("cluster")
        cluster.restart_exited_controllers()
