"""`hvpa validate`: files, directories, stdin, mixed documents, unreadable input; exit codes 0 and 2."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from hvpa.cli import main

EXAMPLES = Path(__file__).parents[2] / "manifests" / "examples"

VALID = """\
apiVersion: autoscaling.k8s.io/v1alpha1
kind: Hvpa
metadata: {name: web}
spec:
  targetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  hpa:
    deploy: true
    template:
      spec: {minReplicas: 1, maxReplicas: 4}
"""
BROKEN = """\
apiVersion: autoscaling.k8s.io/v1alpha1
kind: Hvpa
metadata: {name: broken}
spec:
  targetRef: {kind: Deployment, name: web}
  hpa:
    deploy: true
    tempalte: {}
    template:
      spec: {minReplicas: 3, maxReplicas: 2}
"""
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec: {replicas: 1}
"""


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    code = main(["validate", *argv])
    return code, capsys.readouterr().out.splitlines()


def write(directory: Path, name: str, text: str) -> str:
    path = directory / name
    path.write_text(text)
    return str(path)


def test_valid_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "web.yaml", VALID)
    assert run(["-f", path], capsys) == (
        0,
        [f"{path}: Hvpa/web: valid", "1 valid, 0 invalid, 0 skipped"],
    )


def test_broken_file_names_every_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "broken.yaml", BROKEN)
    code, lines = run(["-f", path], capsys)
    assert code == 2
    assert lines == [
        f'{path}: Hvpa/broken: spec.hpa.tempalte: unknown field (did you mean "template"?)',
        f"{path}: Hvpa/broken: spec.hpa.template.spec.maxReplicas: must be >= minReplicas (3)",
        "0 valid, 1 invalid, 0 skipped",
    ]


def test_several_documents_and_other_kinds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "all.yaml", "---\n".join([DEPLOYMENT, VALID, BROKEN, ""]))
    code, lines = run(["-f", path], capsys)
    assert code == 2
    assert lines[0] == f"{path}: Deployment/web: skipped: not an Hvpa"
    assert lines[1] == f"{path}: Hvpa/web: valid"
    assert lines[-1] == "1 valid, 1 invalid, 1 skipped"


def test_directory_of_examples(capsys: pytest.CaptureFixture[str]) -> None:
    code, lines = run(["-f", str(EXAMPLES)], capsys)
    assert code == 0
    assert lines[-1] == f"{len(list(EXAMPLES.glob('*.yaml')))} valid, 0 invalid, 0 skipped"


def test_directory_takes_yaml_yml_json_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, "a.yaml", VALID)
    write(tmp_path, "b.yml", DEPLOYMENT)
    write(tmp_path, "c.json", json.dumps({"kind": "Hvpa", "metadata": {"name": "c"}, "spec": {}}))
    write(tmp_path, "notes.txt", "not a manifest")
    code, lines = run(["-f", str(tmp_path)], capsys)
    assert code == 2
    assert [line.split(": ", 1)[0] for line in lines[:-1]] == [
        str(tmp_path / "a.yaml"),
        str(tmp_path / "b.yml"),
        str(tmp_path / "c.json"),
        str(tmp_path / "c.json"),
    ]
    assert lines[2:4] == [
        f"{tmp_path / 'c.json'}: Hvpa/c: apiVersion: required",
        f"{tmp_path / 'c.json'}: Hvpa/c: spec.targetRef: required",
    ]


def test_repeated_files_and_stdin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(BROKEN))
    path = write(tmp_path, "web.yaml", VALID)
    code, lines = run(["-f", path, "-f", "-"], capsys)
    assert code == 2
    assert lines[0] == f"{path}: Hvpa/web: valid"
    assert lines[1].startswith("<stdin>: Hvpa/broken: spec.hpa.tempalte: unknown field")


def test_list_kind_is_checked_item_by_item(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import yaml

    items = [yaml.safe_load(VALID), yaml.safe_load(BROKEN)]
    path = write(
        tmp_path, "list.json", json.dumps({"apiVersion": "v1", "kind": "List", "items": items})
    )
    code, lines = run(["-f", path], capsys)
    assert code == 2
    assert lines[0] == f"{path}: Hvpa/web: valid"
    assert lines[-1] == "1 valid, 1 invalid, 0 skipped"


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        pytest.param(
            "bad.yaml",
            "spec: [unclosed\n",
            "cannot read YAML: while parsing a flow sequence",
            id="yaml",
        ),
        pytest.param("bad.json", '{"kind": "Hvpa",', "cannot read JSON: ", id="json"),
        pytest.param("bad.yaml", b"\xff\xfe\x00kind", "cannot read: ", id="not-utf8"),
    ],
)
def test_unreadable_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, text: str | bytes, message: str
) -> None:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    code, lines = run(["-f", str(path)], capsys)
    assert code == 2
    assert lines[0].startswith(f"{path}: {message}")
    assert lines[-1].endswith("1 unreadable")


def test_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nope.yaml"
    assert run(["-f", str(missing)], capsys) == (
        2,
        [
            f"{missing}: cannot read: No such file or directory",
            "0 valid, 0 invalid, 0 skipped, 1 unreadable",
        ],
    )


def test_document_without_kind_or_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "two.yaml", "spec: {}\n---\nkind: Hvpa\nspec: {}\n")
    code, lines = run(["-f", path], capsys)
    assert code == 2
    assert lines[:2] == [
        f"{path}: document 1: skipped: not an Hvpa",
        f"{path}: Hvpa (document 2): apiVersion: required",
    ]


def test_document_that_is_not_an_object(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "list.yaml", "- a\n- b\n")
    code, lines = run(["-f", path], capsys)
    assert (code, lines[0]) == (2, f"{path}: document 1: must be an object (a Kubernetes manifest)")


def test_no_traceback_from_the_command_line(tmp_path: Path) -> None:
    """Through a real process: bad YAML on stdin is a message and exit code 2."""
    result = subprocess.run(
        [sys.executable, "-m", "hvpa", "validate", "-f", "-"],
        input="kind: Hvpa\nspec: {targetRef: [\n",
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr + result.stdout
    assert result.stdout.startswith("<stdin>: cannot read YAML:")


def test_requires_a_file(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["validate"])
    assert exit_info.value.code == 2
    assert "-f" in capsys.readouterr().err


# -- issue 19: stricter where the API server is, machine-readable output, progress -----------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            VALID.replace("kind: Hvpa", "kind: hvpa"),
            ['Hvpa/web: kind: must be Hvpa (got "hvpa")'],
            id="kind-in-another-case",
        ),
        pytest.param(
            VALID.replace("kind: Hvpa\n", ""),
            ["Hvpa/web: kind: required"],
            id="no-kind-under-the-hvpa-api-version",
        ),
        pytest.param(
            VALID.replace("metadata: {name: web}", "metadata: {namespace: shop}"),
            ["Hvpa (document 1): metadata.name: required"],
            id="no-name",
        ),
        pytest.param(
            VALID.replace("metadata: {name: web}", "metadata: {name: Web_1}"),
            [
                "Hvpa/Web_1: metadata.name: must be a lowercase RFC 1123 subdomain: lower case "
                "alphanumeric characters, '-' or '.', starting and ending with an alphanumeric "
                'character, at most 253 characters (got "Web_1")'
            ],
            id="invalid-name",
        ),
        pytest.param(
            VALID.replace("metadata: {name: web}", "metadata: {name: web, label: {a: b}}"),
            ["Hvpa/web: metadata.label: unknown field"],
            id="unknown-metadata-field",
        ),
        pytest.param(
            VALID.replace("maxReplicas: 4", "maxReplicas: 2147483648"),
            [
                "Hvpa/web: spec.hpa.template.spec.maxReplicas: must be <= 2147483647 "
                "(got 2147483648)"
            ],
            id="beyond-int32",
        ),
        pytest.param(
            VALID.replace("metadata: {name: web}", "metadata: {generateName: web-}"),
            [],
            id="generate-name-is-a-name",
        ),
    ],
)
def test_strict_where_the_server_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, expected: list[str]
) -> None:
    path = write(tmp_path, "h.yaml", text)
    code, lines = run(["-f", path], capsys)
    problems = [line.removeprefix(f"{path}: ") for line in lines[:-1]]
    assert (code, [p for p in problems if not p.endswith(": valid")]) == (
        2 if expected else 0,
        expected,
    )


def test_empty_input_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """As kubectl: "error: no objects passed to apply"."""
    path = write(tmp_path, "empty.yaml", "# nothing here\n---\n")
    assert run(["-f", path], capsys) == (
        2,
        [f"{path}: no objects passed", "0 valid, 1 invalid, 0 skipped"],
    )
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    assert run(["-f", "-"], capsys)[0] == 2


def test_list_items_not_a_list(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "l.yaml", "apiVersion: v1\nkind: List\nitems: {a: b}\n")
    code, lines = run(["-f", path], capsys)
    assert (code, lines[0]) == (2, f"{path}: List (document 1): items: must be a list")


def test_list_items_named_by_index(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import yaml

    nameless = yaml.safe_load(VALID.replace("metadata: {name: web}\n", ""))
    items = [yaml.safe_load(VALID), "not an object", nameless]
    path = write(
        tmp_path, "l.json", json.dumps({"apiVersion": "v1", "kind": "List", "items": items})
    )
    code, lines = run(["-f", path], capsys)
    assert code == 2
    assert lines[:3] == [
        f"{path}: Hvpa/web: valid",
        f"{path}: items[1]: must be an object (a Kubernetes manifest)",
        f"{path}: Hvpa (items[2]): metadata.name: required",
    ]


@pytest.mark.parametrize("output", ["json", "yaml"])
def test_machine_readable_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], output: str
) -> None:
    import yaml

    path = write(tmp_path, "all.yaml", "---\n".join([DEPLOYMENT, VALID, BROKEN]))
    code = main(["validate", "-o", output, "-f", path])
    text = capsys.readouterr().out
    document = json.loads(text) if output == "json" else yaml.safe_load(text)
    assert code == 2
    assert document["summary"] == {"valid": 1, "invalid": 1, "skipped": 1, "unreadable": 0}
    assert document["results"] == [
        {
            "source": path,
            "status": "skipped",
            "document": 1,
            "kind": "Deployment",
            "name": "web",
            "note": "not an Hvpa",
        },
        {"source": path, "status": "valid", "document": 2, "kind": "Hvpa", "name": "web"},
        {
            "source": path,
            "status": "invalid",
            "document": 3,
            "kind": "Hvpa",
            "name": "broken",
            "problems": [
                {
                    "path": "spec.hpa.tempalte",
                    "message": 'unknown field (did you mean "template"?)',
                },
                {
                    "path": "spec.hpa.template.spec.maxReplicas",
                    "message": "must be >= minReplicas (3)",
                },
            ],
        },
    ]


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("terminal", [True, False])
def test_progress_only_on_a_terminal(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    terminal: bool,
) -> None:
    from hvpa.commands.validate import PROGRESS_EVERY

    path = write(tmp_path, "many.yaml", "---\n".join([VALID] * PROGRESS_EVERY))
    stderr = _Terminal() if terminal else io.StringIO()
    monkeypatch.setattr(sys, "stderr", stderr)
    assert run(["-f", path], capsys)[0] == 0
    shown = stderr.getvalue()
    assert shown == (f"\rchecked {PROGRESS_EVERY} documents\n" if terminal else "")


def test_progress_lines_in_a_log_once_the_check_is_slow() -> None:
    """Without a terminal: nothing for the first QUIET_SECONDS (log_progress), then a line every
    LOG_EVERY documents with the wall time spent."""
    from hvpa.commands.validate import LOG_EVERY, _Progress

    clock = [0.0]
    log = io.StringIO()
    progress = _Progress(log, wall=lambda: clock[0])
    for document in range(1, 3 * LOG_EVERY + 1):
        clock[0] = document / 1000  # a millisecond a document: 1 s per LOG_EVERY
        progress.step()
    progress.done()
    # at 1000 documents 1.0 s has passed (quiet); at 2000 and 3000, 2.0 and 3.0 s
    assert log.getvalue() == (
        f"hvpa validate: checked {2 * LOG_EVERY} documents in 2.0 s\n"
        f"hvpa validate: checked {3 * LOG_EVERY} documents in 3.0 s\n"
    )
