"""Build the real control plane the end-to-end suite runs against, into a cache outside the repo.

Nothing third-party is vendored or committed: for each component this writes a go.mod of our
own into a cache directory, requiring the upstream module at a pinned version, and lets the go
command fetch the source from the module proxy and build the binaries there. A later run finds
the binaries and the version record beside them and builds nothing.

k8s.io/kubernetes is not meant to be required as a library: its own go.mod requires its staging
modules (k8s.io/api, k8s.io/client-go, ...) at v0.0.0 and points them at ./staging with
`replace`, which the go command ignores in a dependency. So the go.mod written here replaces
every staging module by its published v0.MINOR.PATCH release, the list of staging modules read
from the kubernetes module's own go.mod, not kept here by hand.

Run as a script (`python tests/e2e/e2e_build.py`, as `make e2e` does); the suite's fixtures
import `binaries()` to find what it built.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

# The pins. kube-apiserver 1.37.2 is the newest release the module proxy serves; its go.mod
# asks for go 1.26.0, which the machine's go1.26.8 satisfies (no GOTOOLCHAIN switch needed).
KUBERNETES_VERSION = "v1.37.2"
ETCD_VERSION = "v3.7.3"
KWOK_VERSION = "v0.8.0"


@dataclass(frozen=True)
class Binary:
    """One executable a component builds: its Go package and the file name it gets."""

    package: str
    name: str


@dataclass(frozen=True)
class Component:
    """A pinned upstream module and the binaries built from it.

    `staging` marks k8s.io/kubernetes, whose staging modules need `replace` lines (see the
    module docstring); `ldflags` stamp the version a binary reports, which a source build
    would otherwise leave as v0.0.0.
    """

    name: str
    module: str
    version: str
    binaries: tuple[Binary, ...]
    staging: bool = False
    ldflags: tuple[str, ...] = ()

    @property
    def directory_name(self) -> str:
        return f"{self.name}-{self.version}"


def _kubernetes_ldflags(version: str) -> tuple[str, ...]:
    major, minor = version.removeprefix("v").split(".")[:2]
    prefix = "k8s.io/component-base/version"
    return (
        f"-X {prefix}.gitVersion={version}",
        f"-X {prefix}.gitMajor={major}",
        f"-X {prefix}.gitMinor={minor}",
        f"-X {prefix}.gitTreeState=clean",
        f"-X {prefix}.buildDate=1970-01-01T00:00:00Z",
    )


KUBERNETES = Component(
    name="kubernetes",
    module="k8s.io/kubernetes",
    version=KUBERNETES_VERSION,
    binaries=(
        Binary("k8s.io/kubernetes/cmd/kube-apiserver", "kube-apiserver"),
        # Deployments -> ReplicaSets -> Pods, StatefulSets, garbage collection.
        Binary("k8s.io/kubernetes/cmd/kube-controller-manager", "kube-controller-manager"),
        # Binds the controllers' pods to the suite's kwok nodes.
        Binary("k8s.io/kubernetes/cmd/kube-scheduler", "kube-scheduler"),
        # kubectl at the server's version: the machine's packaged kubectl may be several minor
        # versions older, outside the one-minor skew kubectl supports.
        Binary("k8s.io/kubernetes/cmd/kubectl", "kubectl"),
    ),
    staging=True,
    ldflags=_kubernetes_ldflags(KUBERNETES_VERSION),
)
# etcd's server module is itself the `etcd` main package (server/main.go upstream).
ETCD = Component(
    name="etcd",
    module="go.etcd.io/etcd/server/v3",
    version=ETCD_VERSION,
    binaries=(Binary("go.etcd.io/etcd/server/v3", "etcd"),),
)
# kwok plays kubelet for fake nodes: it marks pods bound to them Running and Ready.
KWOK = Component(
    name="kwok",
    module="sigs.k8s.io/kwok",
    version=KWOK_VERSION,
    binaries=(Binary("sigs.k8s.io/kwok/cmd/kwok", "kwok"),),
)
COMPONENTS = (ETCD, KUBERNETES, KWOK)

# What the version record must say for a cached build to be reused; bump to force rebuilds
# after a change to how binaries are built.
RECORD_FORMAT = 1


def cache_root() -> Path:
    """The cache directory: $HVPA_E2E_CACHE, else $XDG_CACHE_HOME/hvpa-e2e, else ~/.cache/hvpa-e2e."""
    explicit = os.environ.get("HVPA_E2E_CACHE")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "hvpa-e2e"


def binaries(root: Path | None = None) -> dict[str, Path]:
    """Every built binary by name; a missing one is an error that says how to build it."""
    root = root or cache_root()
    found: dict[str, Path] = {}
    for component in COMPONENTS:
        directory = root / component.directory_name
        for binary in component.binaries:
            path = directory / "bin" / binary.name
            if not _is_current(component, directory):
                raise FileNotFoundError(
                    f"{path} is not built at {component.version}: run `make e2e` "
                    "(or python tests/e2e/e2e_build.py)"
                )
            found[binary.name] = path
    return found


def _record(component: Component) -> dict[str, object]:
    return {
        "format": RECORD_FORMAT,
        "module": component.module,
        "version": component.version,
        "binaries": [binary.name for binary in component.binaries],
        "ldflags": list(component.ldflags),
    }


def _is_current(component: Component, directory: Path) -> bool:
    record_path = directory / "version.json"
    try:
        record = json.loads(record_path.read_text())
    except (OSError, ValueError):
        return False
    if record != _record(component):
        return False
    return all((directory / "bin" / binary.name).is_file() for binary in component.binaries)


def _go(arguments: list[str], *, cwd: Path) -> str:
    """Run the go command under nice (the machine is shared); its stderr streams through."""
    command = ["nice", "-n", "10", "go", *arguments]
    environment = {**os.environ, "CGO_ENABLED": "0", "GOFLAGS": "-mod=mod"}
    result = subprocess.run(
        command, cwd=cwd, env=environment, stdout=subprocess.PIPE, text=True, check=False
    )
    if result.returncode != 0:
        raise SystemExit(f"`{' '.join(command)}` failed in {cwd} (exit {result.returncode})")
    return result.stdout


_STAGING_REPLACE = re.compile(r"^\s*(k8s\.io/[\w.-]+)\s+=>\s+\./staging/", re.MULTILINE)


def staging_modules(kubernetes_go_mod: str) -> list[str]:
    """The modules k8s.io/kubernetes's go.mod points at its own ./staging tree."""
    return sorted(set(_STAGING_REPLACE.findall(kubernetes_go_mod)))


def staging_version(kubernetes_version: str) -> str:
    """v1.37.2 -> v0.37.2: staging modules are published as v0.MINOR.PATCH of the release."""
    major, minor, patch = kubernetes_version.removeprefix("v").split(".")
    if major != "1":
        raise ValueError(f"no staging version scheme known for {kubernetes_version}")
    return f"v0.{minor}.{patch}"


def _go_mod(component: Component, replaces: list[str]) -> str:
    lines = [
        "// Generated by hvpa's tests/e2e/e2e_build.py to build a pinned upstream module.",
        f"module hvpa.invalid/e2e-build/{component.name}",
        "",
        "go 1.26.0",
        "",
        f"require {component.module} {component.version}",
    ]
    if replaces:
        lines += ["", "replace (", *(f"\t{line}" for line in replaces), ")"]
    return "\n".join(lines) + "\n"


def _staging_replaces(component: Component, directory: Path) -> list[str]:
    downloaded = json.loads(
        _go(["mod", "download", "-json", f"{component.module}@{component.version}"], cwd=directory)
    )
    go_mod = Path(downloaded["GoMod"]).read_text()
    version = staging_version(component.version)
    return [f"{module} => {module} {version}" for module in staging_modules(go_mod)]


def _go_binary_name(package: str) -> str:
    """The file name `go build -o DIR/` gives a main package: its last path element, or the
    one before when the last is a major-version suffix (go.etcd.io/etcd/server/v3 -> server)."""
    elements = package.split("/")
    if re.fullmatch(r"v[0-9]+", elements[-1]) and len(elements) > 1:
        return elements[-2]
    return elements[-1]


# Flags of every `go build`: no cgo (set in _go), no local paths in the binaries, no symbol
# table or DWARF at link (-s -w). -gcflags=all=-dwarf=false (no DWARF at compile time
# either: -w drops it only at link) was measured on a cold build of etcd, twice each way:
# 95.6 and 95.2 CPU seconds with DWARF, 90.0 and 96.7 without, inside the noise of a shared
# machine, so it is not worth a flag. -p stays at its default, the number of CPUs.
BUILD_FLAGS = ("-trimpath",)
LINK_FLAGS = ("-s", "-w")


def fetch(component: Component, root: Path) -> float:
    """Write the component's go.mod and download what building it needs (the network part
    of a build, which `main` runs for every component at once); returns its seconds."""
    directory = root / component.directory_name
    started = time.monotonic()
    print(f"e2e build: fetching {component.directory_name} into {directory}", flush=True)
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    (directory / "go.mod").write_text(_go_mod(component, []))
    replaces = _staging_replaces(component, directory) if component.staging else []
    (directory / "go.mod").write_text(_go_mod(component, replaces))
    packages = [binary.package for binary in component.binaries]
    _go(["get", *(f"{package}@{component.version}" for package in packages)], cwd=directory)
    seconds = time.monotonic() - started
    print(f"e2e build: {component.directory_name} fetched in {seconds:.0f} s", flush=True)
    return seconds


def compile_binaries(component: Component, root: Path) -> float:
    """Build a fetched component's binaries and record the build; returns its seconds."""
    directory = root / component.directory_name
    started = time.monotonic()
    packages = [binary.package for binary in component.binaries]
    # One go build for all of a component's binaries: they share most packages, and one
    # invocation compiles those once with both cores busy.
    (directory / "bin").mkdir(exist_ok=True)
    flags = " ".join((*LINK_FLAGS, *component.ldflags))
    _go(
        ["build", *BUILD_FLAGS, "-ldflags", flags, "-o", f"{directory / 'bin'}/", *packages],
        cwd=directory,
    )
    for binary in component.binaries:
        built = directory / "bin" / _go_binary_name(binary.package)
        if built.name != binary.name:
            built.rename(directory / "bin" / binary.name)
    (directory / "version.json").write_text(json.dumps(_record(component), indent=2) + "\n")
    seconds = time.monotonic() - started
    print(f"e2e build: {component.directory_name} built in {seconds:.0f} s", flush=True)
    return seconds


def build_all(components: Sequence[Component], root: Path) -> None:
    """Build every component whose cached build is not current.

    The downloads run at once, one thread per component: they wait on the network, not the
    CPU, and a fresh machine downloads a gigabyte of modules. The compiles run one after
    another: each `go build` already keeps both cores busy. Concurrent go commands share the
    module cache safely (the go command locks it)."""
    stale = []
    for component in components:
        directory = root / component.directory_name
        if _is_current(component, directory):
            print(f"e2e build: {component.directory_name} is cached in {directory}", flush=True)
        else:
            stale.append(component)
    with ThreadPoolExecutor(max_workers=max(len(stale), 1)) as pool:
        # list(): wait for every download and re-raise the first failure.
        list(pool.map(lambda component: fetch(component, root), stale))
    for component in stale:
        compile_binaries(component, root)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    names = [component.name for component in COMPONENTS]
    parser.add_argument("components", nargs="*", help=f"build only these of {names} (default: all)")
    arguments = parser.parse_args(argv)
    unknown = set(arguments.components) - set(names)
    if unknown:
        parser.error(f"unknown components {sorted(unknown)}; known: {names}")
    if shutil.which("go") is None:
        raise SystemExit("e2e build: the go command is needed (Go 1.26 or newer)")
    root = cache_root()
    chosen = [c for c in COMPONENTS if not arguments.components or c.name in arguments.components]
    build_all(chosen, root)
    return 0


if __name__ == "__main__":
    sys.exit(main())
