"""cel-python's parser, built once per machine rather than once per process (lark's cache).

The grammar analysis (about a second) is kept in _parser_cache_dir() by the
first process; later ones load it. What is checked here, in fresh processes
(the parser is built once per process): the file is written, a later process
parses and evaluates as before with it, and a damaged file is rebuilt rather
than trusted.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("celpy")

# One rule of hvpa's CRD shape and a message expression that uses `format`.
PROBE = """
from hvpa.sim.apiserver.celvalidation import _celpy, _evaluate, _parser_cache_dir
celpy = _celpy()
self = celpy.json_to_cel({"name": "a/b", "replicas": 3})
print(_parser_cache_dir())
print(_evaluate("!self.name.contains('/')", {"self": self}))
print(_evaluate("'too many (%d)'.format([self.replicas])", {"self": self}))
"""


def probe(cache_home: Path) -> list[str]:
    environment = {**os.environ, "XDG_CACHE_HOME": str(cache_home)}
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        env=environment,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert done.stderr == ""
    return done.stdout.splitlines()


def test_the_first_process_writes_the_cache_and_the_next_parses_alike(tmp_path: Path) -> None:
    cache = tmp_path / "hvpa" / "cel-parser.lark"
    first = probe(tmp_path)
    assert first == [str(tmp_path / "hvpa"), "False", "too many (3)"]
    assert cache.stat().st_size > 0
    written = cache.read_bytes()
    assert probe(tmp_path) == first
    assert cache.read_bytes() == written  # loaded, not rebuilt


def test_a_damaged_cache_is_rebuilt(tmp_path: Path) -> None:
    cache = tmp_path / "hvpa" / "cel-parser.lark"
    cache.parent.mkdir()
    cache.write_bytes(b"not a cache\n")
    assert probe(tmp_path)[1:] == ["False", "too many (3)"]
    assert cache.read_bytes() != b"not a cache\n"


def test_no_home_means_no_cache_not_a_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    """Path.home() raises where HOME is unset and the user has no passwd entry (a container
    run as an arbitrary uid): the cache directory is then none (and the parser is built
    without a cache), not an exception."""
    from hvpa.sim.apiserver import celvalidation

    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setattr(Path, "home", staticmethod(no_home))
    assert celvalidation._parser_cache_dir() is None
