"""The Dockerfile, without a Docker engine: hadolint passes; the base image is pinned by tag
and digest; the builder installs only what the lock files name, by hash, and the runtime
lock holds hvpa's dependencies and none of its extras; the final stage runs as the UID
the Deployment names, with `hvpa run` as entry point and the version as label; and the
builder stage's wheel, built from exactly what the Dockerfile copies, holds the package
and the example Hvpas, which `hvpa sim` then finds from the installed wheel alone."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path
from typing import Any, Final

import pytest
from manifest_kit import EXAMPLES, ROOT, find, install_objects

import hvpa

DOCKERFILE: Final = ROOT / "Dockerfile"


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined, comments dropped."""
    joined: list[str] = []
    pending = ""
    for raw in DOCKERFILE.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        pending += line[:-1] + " " if line.endswith("\\") else line
        if not line.endswith("\\"):
            joined.append(pending)
            pending = ""
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1]) for line in joined]


def stages() -> list[list[tuple[str, str]]]:
    found: list[list[tuple[str, str]]] = []
    for instruction in instructions():
        if instruction[0] == "FROM":
            found.append([])
        if found:
            found[-1].append(instruction)
    return found


def test_hadolint_passes(hadolint: str) -> None:
    linted = subprocess.run(
        [hadolint, "--no-color", str(DOCKERFILE)], capture_output=True, text=True
    )
    assert linted.returncode == 0, linted.stdout + linted.stderr


def test_final_stage() -> None:
    builder, final = stages()
    assert builder[0][1].endswith("AS builder")
    final_args = dict(final)
    deployment = find(install_objects(), "Deployment", "hvpa")
    uid = deployment["spec"]["template"]["spec"]["securityContext"]["runAsUser"]
    assert final_args["USER"] == f"{uid}:{uid}"
    assert json.loads(final_args["ENTRYPOINT"]) == ["hvpa"]
    assert json.loads(final_args["CMD"]) == ["run"]
    assert final_args["ARG"] == f"VERSION={hvpa.__version__}"
    assert 'org.opencontainers.image.version="${VERSION}"' in final_args["LABEL"]
    # Nothing is built or fetched in the final stage: it only copies the environment.
    assert [a for i, a in final if i == "COPY"] == ["--from=builder /opt/hvpa /opt/hvpa"]
    assert "install" not in " ".join(a for i, a in final if i == "RUN").replace("uninstall", "")


def test_base_image_is_pinned_by_tag_and_digest() -> None:
    (arg,) = [a for i, a in instructions()[:1] if i == "ARG"]
    image = arg.split("=", 1)[1]
    reference, _, digest = image.partition("@")
    name, _, tag = reference.partition(":")
    assert name == "python"
    version, _, variant = tag.partition("-")
    assert version.count(".") == 2 and variant.startswith("slim")
    # An OCI digest: the algorithm and 64 hexadecimal digits (a placeholder would not pass).
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", digest), digest


# -- the lock files -------------------------------------------------------------------

LOCKS: Final = {"runtime": ROOT / "requirements.lock", "build": ROOT / "requirements-build.lock"}


def locked(path: Path) -> dict[str, list[str]]:
    """name -> hashes of each `name==version` requirement of a lock file."""
    found: dict[str, list[str]] = {}
    name = ""
    for line in path.read_text(encoding="utf-8").splitlines():
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        if "==" in text:
            name = canonical(text.split("==", 1)[0])
            found[name] = []
        found[name] += re.findall(r"--hash=sha256:([0-9a-f]{64})", text)
    return found


def canonical(requirement: str) -> str:
    """A requirement's project name as PEP 503 normalises it."""
    name = re.split(r"[<>=!~;\[ ]", requirement.strip(), maxsplit=1)[0]
    return re.sub(r"[-_.]+", "-", name).lower()


def project() -> dict[str, Any]:
    loaded: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return loaded


@pytest.mark.parametrize("lock", LOCKS.values(), ids=LOCKS.keys())
def test_every_locked_requirement_is_pinned_with_hashes(lock: Path) -> None:
    requirements = locked(lock)
    assert requirements
    assert {name: len(hashes) > 0 for name, hashes in requirements.items()} == dict.fromkeys(
        requirements, True
    )


def test_the_runtime_lock_holds_the_dependencies_and_no_extra() -> None:
    names = set(locked(LOCKS["runtime"]))
    metadata = project()["project"]
    assert {canonical(r) for r in metadata["dependencies"]} <= names
    extras_only = {
        canonical(r) for group in metadata["optional-dependencies"].values() for r in group
    } - {canonical(r) for r in metadata["dependencies"]}
    # The simulator's, plotting's, benchmarks', tests' and tools' packages stay out of the image.
    assert {"looptime", "matplotlib", "kopf", "pytest"} <= extras_only
    assert names & extras_only == set()


def test_the_build_lock_holds_the_build_backend() -> None:
    backend = {canonical(r) for r in project()["build-system"]["requires"]}
    assert backend <= set(locked(LOCKS["build"]))


def test_the_builder_installs_only_by_hash() -> None:
    (run,) = [a for i, a in stages()[0] if i == "RUN"]
    installs = [part for part in run.split("&&") if " install " in part]
    for install in installs:
        if install.strip().endswith(".whl"):
            assert "--no-deps" in install  # hvpa's own wheel, built from this source
        else:
            assert "--require-hashes" in install and "--only-binary=:all:" in install
    assert "-r requirements.lock" in run and "-r requirements-build.lock" in run
    assert "--no-build-isolation" in run  # the wheel is built by the locked backend


def _copies() -> list[tuple[list[str], str]]:
    """The builder stage's COPY lines: (sources in the build context, destination)."""
    copies: list[tuple[list[str], str]] = []
    for instruction, arguments in stages()[0]:
        if instruction == "COPY":
            *sources, destination = arguments.split()
            copies.append((sources, destination))
    return copies


def test_dockerignore_lets_in_what_the_builder_copies() -> None:
    lines = (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
    patterns = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    assert patterns[0] == "*"  # everything else stays out of the context
    let_in = {p.removeprefix("!").rstrip("/") for p in patterns if p.startswith("!")}
    assert {source for sources, _ in _copies() for source in sources} == let_in


def _build_context(into: Path) -> Path:
    """A directory holding what the builder stage copies, where it copies it."""
    for sources, destination in _copies():
        target = into / destination
        for source in sources:
            origin = ROOT / source
            if origin.is_dir():
                ignore = shutil.ignore_patterns("__pycache__", "*.py[co]")
                shutil.copytree(origin, target, dirs_exist_ok=True, ignore=ignore)
            else:
                target.mkdir(parents=True, exist_ok=True)
                shutil.copy2(origin, target / origin.name)
    return into


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel, built as the builder stage builds it (pip wheel), without a network."""
    context = _build_context(tmp_path_factory.mktemp("context"))
    out = tmp_path_factory.mktemp("dist")
    pip_wheel = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation"]
    subprocess.run(
        [*pip_wheel, "--no-cache-dir", "--quiet", "--wheel-dir", str(out), str(context)],
        check=True,
        capture_output=True,
    )
    (built,) = out.glob("hvpa-*.whl")
    return built


def test_wheel_holds_the_package_and_the_examples(wheel: Path) -> None:
    assert wheel.name.startswith(f"hvpa-{hvpa.__version__}-")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "hvpa/__init__.py" in names
    assert "hvpa/sim/apiserver/server.py" in names
    examples = {p.name for p in EXAMPLES.glob("*.yaml")}
    assert {n.removeprefix("hvpa/_examples/") for n in names if "/_examples/" in n} == examples
    assert not any(n.startswith(("tests/", "bench/", "manifests/")) for n in names)
    (entry_points,) = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
    assert "hvpa = hvpa.cli:main" in zipfile.ZipFile(wheel).read(entry_points).decode()


def test_installed_wheel_finds_its_examples(wheel: Path, tmp_path: Path) -> None:
    """The wheel unpacked is an installed hvpa with no source tree beside it."""
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    script = (
        "import hvpa, hvpa.sim.scenarios as s;"
        "print(hvpa.__file__); print(s.examples_directory());"
        "print(s.builtin_scenario('kube-apiserver').hvpa['metadata']['name'])"
    )
    env = {**os.environ, "PYTHONPATH": str(site)}
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    module, examples, name = done.stdout.split()
    assert Path(module) == site / "hvpa" / "__init__.py"
    assert Path(examples) == site / "hvpa" / "_examples"
    assert name


def test_source_tree_finds_its_examples() -> None:
    from hvpa.sim.scenarios import examples_directory

    assert examples_directory() == EXAMPLES


def test_hvpa_sim_names_its_extra_where_it_is_missing() -> None:
    """The image has no looptime (the sim extra): `hvpa sim` says what to install."""
    script = (
        "import sys; sys.modules['looptime'] = None\n"
        "from hvpa.cli import main\n"
        "sys.exit(main(['sim', '--no-plot']))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert "pip install 'hvpa[sim]'" in done.stderr
