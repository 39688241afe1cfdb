"""The build script's rules, offline (these run in `make test`; the build itself in `make e2e`)."""

from __future__ import annotations

import json
import threading
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


class FakeGo:
    """The go command as build_all drives it, without the network or a compiler: `get` waits
    until every component's `get` has started (so downloads run one at a time only by
    breaking the barrier), `build` writes the files go build would."""

    def __init__(self, tmp_path: Path, downloads: int) -> None:
        self.calls: list[tuple[str, str]] = []
        self.commands: list[list[str]] = []
        self._tmp_path = tmp_path
        # A timeout, not a sleep: reached only when the downloads do not overlap.
        self._barrier = threading.Barrier(downloads, timeout=10)
        self._lock = threading.Lock()

    def __call__(self, arguments: list[str], *, cwd: Path) -> str:
        with self._lock:
            self.calls.append((arguments[0], cwd.name))
            self.commands.append(arguments)
        if arguments[:2] == ["mod", "download"]:
            go_mod = self._tmp_path / "kubernetes.go.mod"
            go_mod.write_text(GO_MOD)
            return json.dumps({"GoMod": str(go_mod)})
        if arguments[0] == "get":
            self._barrier.wait()
        if arguments[0] == "build":
            for package in arguments[arguments.index("-o") + 2 :]:
                (cwd / "bin" / e2e_build._go_binary_name(package)).write_text("")
        return ""


def test_downloads_run_at_once_and_compiles_one_after_another(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    components = e2e_build.COMPONENTS
    fake = FakeGo(tmp_path, downloads=len(components))
    monkeypatch.setattr(e2e_build, "_go", fake)
    e2e_build.build_all(components, tmp_path)
    steps = [step for step, _ in fake.calls]
    assert steps.count("get") == len(components)
    last_get = max(i for i, step in enumerate(steps) if step == "get")
    first_build = steps.index("build")
    assert last_get < first_build, "every download before the first compile"
    assert [where for step, where in fake.calls if step == "build"] == [
        c.directory_name for c in components
    ]
    assert e2e_build.binaries(tmp_path).keys() == {b.name for c in components for b in c.binaries}

    fake.calls.clear()
    e2e_build.build_all(components, tmp_path)
    assert fake.calls == [], "a second run reuses every build"


def test_the_build_flags(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No symbols nor DWARF, no local paths, the version stamped."""
    fake = FakeGo(tmp_path, downloads=1)
    monkeypatch.setattr(e2e_build, "_go", fake)
    e2e_build.build_all([e2e_build.KUBERNETES], tmp_path)
    (build,) = [c for c in fake.commands if c[0] == "build"]
    assert "-trimpath" in build
    ldflags = build[build.index("-ldflags") + 1]
    assert ldflags.startswith("-s -w ")
    assert "-X k8s.io/component-base/version.gitVersion=v1.37.2" in ldflags
