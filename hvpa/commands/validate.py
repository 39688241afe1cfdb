"""`hvpa validate -f FILE`: check Hvpa manifests offline, reporting every problem with its path.

Files may hold several YAML documents (or one JSON document); a `List` or
`HvpaList` is checked item by item. Documents of other kinds are skipped with
a note, so a directory of mixed manifests can be checked as it is. Exit code
0 when every Hvpa is valid, 2 when one is not or a file cannot be read.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

HELP = "check Hvpa manifests (YAML or JSON) and print every problem with its path"

SUFFIXES: Final = (".yaml", ".yml", ".json")
_LIST_KINDS: Final = ("List", "HvpaList")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-f",
        "--filename",
        dest="files",
        action="append",
        required=True,
        metavar="FILE",
        help="a manifest file, a directory (its *.yaml, *.yml and *.json files), or - for stdin; repeatable",
    )


@dataclass
class _Tally:
    valid: int = 0
    invalid: int = 0
    skipped: int = 0
    unreadable: int = 0
    lines: list[str] = field(default_factory=list)

    def say(self, where: str, text: str) -> None:
        self.lines.append(f"{where}: {text}")


def run(args: argparse.Namespace) -> int:
    tally = _Tally()
    for source in _sources(args.files, tally):
        _check_source(source, tally)
    sys.stdout.writelines(line + "\n" for line in tally.lines)
    sys.stdout.write(
        f"{tally.valid} valid, {tally.invalid} invalid, {tally.skipped} skipped"
        + (f", {tally.unreadable} unreadable" if tally.unreadable else "")
        + "\n"
    )
    return 2 if tally.invalid or tally.unreadable else 0


def _sources(names: list[str], tally: _Tally) -> Iterator[str]:
    for name in names:
        path = Path(name)
        if name != "-" and path.is_dir():
            found = sorted(p for p in path.iterdir() if p.is_file() and p.suffix in SUFFIXES)
            if not found:
                tally.say(name, "note: no *.yaml, *.yml or *.json files here")
            yield from (str(p) for p in found)
        else:
            yield name


def _check_source(name: str, tally: _Tally) -> None:
    where = "<stdin>" if name == "-" else name
    try:
        text = sys.stdin.read() if name == "-" else Path(name).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        tally.unreadable += 1
        tally.say(where, f"cannot read: {getattr(error, 'strerror', None) or error}")
        return
    try:
        documents = _documents(text, as_json=name.endswith(".json"))
    except ValueError as error:
        tally.unreadable += 1
        tally.say(where, str(error))
        return
    for index, document in enumerate(documents, start=1):
        _check_document(document, index, where, tally)


def _documents(text: str, *, as_json: bool) -> list[Any]:
    """Every document of a file; raise ValueError saying where it cannot be read."""
    import orjson
    import yaml

    if as_json:
        try:
            return [orjson.loads(text)]
        except orjson.JSONDecodeError as error:
            raise ValueError(f"cannot read JSON: {error}") from error
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        return [document for document in yaml.load_all(text, Loader=loader) if document is not None]
    except yaml.YAMLError as error:
        raise ValueError(f"cannot read YAML: {' '.join(str(error).split())}") from error


def _check_document(document: Any, index: int, where: str, tally: _Tally) -> None:
    from hvpa.api import KIND, InvalidHvpa, parse_hvpa

    if not isinstance(document, dict):
        tally.invalid += 1
        tally.say(where, f"document {index}: must be an object (a Kubernetes manifest)")
        return
    kind = document.get("kind")
    if kind in _LIST_KINDS and isinstance(document.get("items"), list):
        for item in document["items"]:
            _check_document(item, index, where, tally)
        return
    metadata = document.get("metadata")
    name = metadata.get("name") if isinstance(metadata, dict) else None
    if not kind:
        label = f"document {index}"
    else:
        label = f"{kind}/{name}" if name else f"{kind} (document {index})"
    if kind != KIND:
        tally.skipped += 1
        tally.say(where, f"{label}: skipped: not an {KIND}")
        return
    problems: list[object] = []
    if "apiVersion" not in document:
        # The API server reads objects that always have one; a manifest needs it to be applied.
        problems.append("apiVersion: required")
    try:
        parse_hvpa(document)
    except InvalidHvpa as error:
        problems.extend(error.problems)
    if problems:
        tally.invalid += 1
        for problem in problems:
            tally.say(where, f"{label}: {problem}")
        return
    tally.valid += 1
    tally.say(where, f"{label}: valid")
