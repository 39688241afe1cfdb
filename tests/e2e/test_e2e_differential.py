"""Differential tests: every probe of the corpus (e2e_corpus) sent to kube-apiserver and to the
in-repo API server, each in a fresh namespace; the answers must agree.

A difference either is fixed in the in-repo server or is listed below (KNOWN), each with what
the real server does, as a strict xfail: fixing it turns the xfail into a failure that says
to take the entry out.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import pytest
from e2e_api import Api
from e2e_cluster import Cluster
from e2e_corpus import PROBES, Probe
from e2e_inrepo import InRepoServer

pytestmark = pytest.mark.e2e

# Differences left, each with what the real server does (none since the in-repo server
# validates against CRD schemas, serves Tables with each type's columns and discovers CRDs
# from their definitions).
KNOWN: dict[str, str] = {}


# Probes that need both servers' histories compacted before they run.
COMPACTED_FIRST = {"watch_from_a_too_old_resource_version"}


@pytest.fixture(scope="session")
def in_repo_server() -> Iterator[InRepoServer]:
    # Bookmarks every second: the real server sends one 2 s before a watch's deadline, so a 3 s
    # watch gets one from each.
    server = InRepoServer(bookmark_interval_seconds=1.0)
    try:
        server.start()
        yield server
    finally:
        server.stop()


@pytest.fixture
def in_repo(in_repo_server: InRepoServer) -> Api:
    assert in_repo_server.api is not None
    return in_repo_server.api


def _fresh_namespace(api: Api) -> str:
    name = f"diff-{secrets.token_hex(4)}"
    api.create("/api/v1/namespaces", {"metadata": {"name": name}})
    return name


def _params() -> Iterator[object]:
    for name, function in PROBES.items():
        marks = [pytest.mark.xfail(strict=True, reason=KNOWN[name])] if name in KNOWN else []
        yield pytest.param(function, id=name, marks=marks)


@pytest.mark.parametrize("probe", list(_params()))
def test_both_servers_answer_alike(
    cluster: Cluster, in_repo_server: InRepoServer, in_repo: Api, probe: Probe
) -> None:
    if probe.__name__ in COMPACTED_FIRST:
        cluster.control_plane.advance_and_compact_etcd()
        in_repo_server.compact()
    real = probe(cluster.admin, _fresh_namespace(cluster.admin))
    ours = probe(in_repo, _fresh_namespace(in_repo))
    assert ours == real
