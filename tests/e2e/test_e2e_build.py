"""The build script's rules, offline (these run in `make test`; the build itself in `make e2e`)."""

from __future__ import annotations

import json
from pathlib import Path

import e2e_build
import pytest

# An excerpt in the form of k8s.io/kubernetes's go.mod: staging modules point at ./staging,
# other replaces (a fork, a pinned version) do not and must be left alone.
GO_MOD = """
module k8s.io/kubernetes

require (
	k8s.io/api v0.0.0
	k8s.io/client-go v0.0.0
)

replace (
	k8s.io/api => ./staging/src/k8s.io/api
	k8s.io/client-go => ./staging/src/k8s.io/client-go
	k8s.io/kube-aggregator => ./staging/src/k8s.io/kube-aggregator
	github.com/example/fork => github.com/example/fork v1.2.3
)
"""


def test_staging_modules_are_read_from_the_replace_block() -> None:
    assert e2e_build.staging_modules(GO_MOD) == [
        "k8s.io/api",
        "k8s.io/client-go",
        "k8s.io/kube-aggregator",
    ]


@pytest.mark.parametrize(
    ("release", "staging"),
    [("v1.37.2", "v0.37.2"), ("v1.35.4", "v0.35.4"), ("v1.36.10", "v0.36.10")],
)
def test_staging_modules_are_published_as_v0_minor_patch(release: str, staging: str) -> None:
    assert e2e_build.staging_version(release) == staging


def test_an_unknown_major_version_is_refused() -> None:
    with pytest.raises(ValueError, match="no staging version scheme"):
        e2e_build.staging_version("v2.0.0")


@pytest.mark.parametrize(
    ("package", "binary"),
    [
        ("k8s.io/kubernetes/cmd/kube-apiserver", "kube-apiserver"),
        ("go.etcd.io/etcd/server/v3", "server"),
        ("sigs.k8s.io/kwok/cmd/kwok", "kwok"),
    ],
)
def test_the_binary_go_build_names(package: str, binary: str) -> None:
    assert e2e_build._go_binary_name(package) == binary


def test_a_build_is_reused_only_with_a_matching_record(tmp_path: Path) -> None:
    component = e2e_build.ETCD
    directory = tmp_path / component.directory_name
    (directory / "bin").mkdir(parents=True)
    (directory / "bin" / "etcd").write_text("")
    assert not e2e_build._is_current(component, directory), "no record yet"
    record = e2e_build._record(component)
    (directory / "version.json").write_text(json.dumps(record))
    assert e2e_build._is_current(component, directory)
    (directory / "version.json").write_text(json.dumps({**record, "version": "v3.6.0"}))
    assert not e2e_build._is_current(component, directory), "another version was built"


def test_the_cache_is_outside_the_repository(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("HVPA_E2E_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert e2e_build.cache_root() == tmp_path / "hvpa-e2e"
    monkeypatch.setenv("HVPA_E2E_CACHE", str(tmp_path / "elsewhere"))
    assert e2e_build.cache_root() == tmp_path / "elsewhere"
