"""`hvpa validate -f FILE`: check Hvpa manifests offline, reporting every problem with its path.

Files may hold several YAML documents (or one JSON document); a `List` or
`HvpaList` is checked item by item, each item named by its index. Documents
of other kinds are skipped with a note, so a directory of mixed manifests can
be checked as it is; a document that means to be an Hvpa (kind `hvpa` in
another case, or no kind under the Hvpa's apiVersion) is checked and its kind
reported. Besides the spec, the manifest's own envelope is checked as the API
server would: a name (or generateName), known metadata fields only. Exit code
0 when every Hvpa is valid, 2 when one is not, a file cannot be read, or there
is nothing to check (kubectl: "no objects passed").

`-o json` and `-o yaml` print one document for machines instead of lines
(the schema is in the README's CLI reference).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, TextIO

from hvpa.commands import write_document
from hvpa.commands.log_progress import LogProgress

HELP = "check Hvpa manifests (YAML or JSON) and print every problem with its path"

SUFFIXES: Final = (".yaml", ".yml", ".json")
_LIST_KINDS: Final = ("List", "HvpaList")
OUTPUTS: Final = ("text", "json", "yaml")
# Progress is drawn on a terminal's stderr once this many documents were checked.
PROGRESS_EVERY: Final = 100
# Without a terminal (a CI log) a line every this many documents, once the check has taken
# log_progress's quiet seconds: a quick check prints nothing, a long one shows it still moves.
LOG_EVERY: Final = 1000


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
    parser.add_argument(
        "-o",
        "--output",
        choices=OUTPUTS,
        default="text",
        help="text (default): a line per problem; json or yaml: one document with every result",
    )


@dataclass
class Result:
    """What became of one document (or List item): valid, invalid, skipped or unreadable."""

    source: str
    status: str
    document: int | None = None
    item: int | None = None
    kind: str | None = None
    name: str | None = None
    problems: list[tuple[str, str]] = field(default_factory=list)
    note: str | None = None

    def label(self) -> str:
        where = f"document {self.document}" if self.document is not None else ""
        if self.item is not None:
            where = f"items[{self.item}]"
        if not self.kind:
            return where
        if self.name:
            return f"{self.kind}/{self.name}"
        return f"{self.kind} ({where})" if where else self.kind

    def lines(self) -> list[str]:
        head = f"{self.source}: {self.label()}: " if self.label() else f"{self.source}: "
        if self.status == "valid":
            return [head + "valid"]
        if self.status == "skipped":
            return [head + f"skipped: {self.note}"]
        if self.note is not None and not self.problems:
            return [head + self.note]
        return [
            head + (f"{path}: {message}" if path else message) for path, message in self.problems
        ]

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"source": self.source, "status": self.status}
        for key in ("document", "item", "kind", "name", "note"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        if self.problems:
            out["problems"] = [
                {"path": path, "message": message} for path, message in self.problems
            ]
        return out


@dataclass
class _Progress:
    """A count on stderr: redrawn on a terminal, a line now and then in a log."""

    stream: TextIO
    wall: Callable[[], float] = time.monotonic
    checked: int = 0
    shown: bool = False
    log: LogProgress = field(init=False)

    def __post_init__(self) -> None:
        self.log = LogProgress(self.stream, wall=self.wall)

    def step(self) -> None:
        self.checked += 1
        if self.stream.isatty():
            if self.checked % PROGRESS_EVERY == 0:
                self.stream.write(f"\rchecked {self.checked} documents")
                self.stream.flush()
                self.shown = True
        elif self.checked % LOG_EVERY == 0:
            spent = self.log.spent()
            if spent is not None:
                self.log.write(f"hvpa validate: checked {self.checked} documents in {spent:.1f} s")

    def done(self) -> None:
        if self.shown:
            self.stream.write("\n")


def run(args: argparse.Namespace) -> int:
    progress = _Progress(sys.stderr)
    results: list[Result] = []
    for source in _sources(args.files, results):
        results.extend(_check_source(source, progress))
    progress.done()
    if not any(r.document is not None or r.status == "unreadable" for r in results):
        results.append(
            Result(source=_names(args.files), status="invalid", note="no objects passed")
        )
    _print(results, getattr(args, "output", "text"))
    failed = any(r.status in ("invalid", "unreadable") for r in results)
    return 2 if failed else 0


def _names(files: list[str]) -> str:
    return ", ".join("<stdin>" if name == "-" else name for name in files)


def _print(results: list[Result], output: str) -> None:
    counts = {status: sum(r.status == status for r in results) for status in _STATUSES}
    if output == "text":
        for result in results:
            sys.stdout.writelines(line + "\n" for line in result.lines())
        sys.stdout.write(
            f"{counts['valid']} valid, {counts['invalid']} invalid, {counts['skipped']} skipped"
            + (f", {counts['unreadable']} unreadable" if counts["unreadable"] else "")
            + "\n"
        )
        return
    document = {"summary": counts, "results": [r.as_json() for r in results]}
    write_document(sys.stdout, document, output)


_STATUSES: Final = ("valid", "invalid", "skipped", "unreadable")


def _sources(names: list[str], results: list[Result]) -> Iterator[str]:
    for name in names:
        path = Path(name)
        if name != "-" and path.is_dir():
            found = sorted(p for p in path.iterdir() if p.is_file() and p.suffix in SUFFIXES)
            if not found:
                results.append(
                    Result(
                        source=name, status="skipped", note="no *.yaml, *.yml or *.json files here"
                    )
                )
            yield from (str(p) for p in found)
        else:
            yield name


def _check_source(name: str, progress: _Progress) -> list[Result]:
    where = "<stdin>" if name == "-" else name
    try:
        text = sys.stdin.read() if name == "-" else Path(name).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or error
        return [Result(source=where, status="unreadable", note=f"cannot read: {reason}")]
    try:
        documents = _documents(text, as_json=name.endswith(".json"))
    except ValueError as error:
        return [Result(source=where, status="unreadable", note=str(error))]
    results: list[Result] = []
    for index, document in enumerate(documents, start=1):
        results.extend(_check_document(document, where, index, None, progress))
    return results


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


def _check_document(
    document: Any, where: str, index: int, item: int | None, progress: _Progress
) -> list[Result]:
    from hvpa.api import API_VERSION, KIND, InvalidHvpa, parse_hvpa
    from hvpa.api.metadata import metadata_problems

    progress.step()
    result = Result(source=where, status="invalid", document=index, item=item)
    if not isinstance(document, dict):
        result.note = "must be an object (a Kubernetes manifest)"
        return [result]
    kind = document.get("kind")
    metadata = document.get("metadata")
    result.kind = kind if isinstance(kind, str) and kind else None
    name = metadata.get("name") if isinstance(metadata, dict) else None
    result.name = name if isinstance(name, str) and name else None
    if kind in _LIST_KINDS and item is None:
        items = document.get("items")
        if not isinstance(items, list):
            result.problems.append(("items", "must be a list"))
            return [result]
        return [
            r
            for position, entry in enumerate(items)
            for r in _check_document(entry, where, index, position, progress)
        ]
    means_hvpa = (isinstance(kind, str) and kind.lower() == KIND.lower()) or (
        not kind and document.get("apiVersion") == API_VERSION
    )
    if not means_hvpa:
        result.status, result.note = "skipped", f"not an {KIND}"
        return [result]
    result.kind = KIND
    if not kind:
        result.problems.append(("kind", "required"))
    if "apiVersion" not in document:
        # The API server reads objects that always have one; a manifest needs it to be applied.
        result.problems.append(("apiVersion", "required"))
    result.problems.extend((p.path, p.message) for p in metadata_problems(metadata))
    try:
        parse_hvpa(document)
    except InvalidHvpa as error:
        result.problems.extend(
            (p.path, p.message)
            for p in error.problems
            if (p.path, p.message) not in result.problems
        )
    if not result.problems:
        result.status = "valid"
    return [result]
