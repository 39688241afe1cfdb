"""`hvpa completion bash|zsh`: every subcommand, flag and choice of the parser is in both
scripts, and each completes in its shell as a person would press Tab: bash through its
completion function, zsh through its completion system in a pseudo-terminal."""

from __future__ import annotations

import argparse
import subprocess
import textwrap
from pathlib import Path

import pytest

from hvpa.cli import build_parser, main


def script(shell: str, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["completion", shell]) == 0
    return capsys.readouterr().out


def every_word() -> list[str]:
    """Subcommands, every flag of every subcommand, every choice of every flag."""
    parser = build_parser()
    (subparsers,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    words = [*subparsers.choices, "--version"]
    for sub in subparsers.choices.values():
        for action in sub._actions:
            words += action.option_strings
            words += [str(choice) for choice in action.choices or ()]
    return words


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_the_script_holds_every_command_flag_and_choice(
    shell: str, capsys: pytest.CaptureFixture[str]
) -> None:
    text = script(shell, capsys)
    missing = [word for word in every_word() if word not in text]
    assert missing == []


# -- bash ------------------------------------------------------------------------------------

KUBECTL = """\
#!/bin/sh
# kubectl as the completion calls it: records its arguments, lists two Hvpas
echo "$@" > "$(dirname "$0")/kubectl.args"
printf 'hvpa.autoscaling.k8s.io/web\\nhvpa.autoscaling.k8s.io/api\\n'
"""


def complete_in_bash(source: Path, words: list[str], path: str = "/usr/bin:/bin") -> list[str]:
    """What Tab offers for `words` (the last one is the word being completed)."""
    quoted = " ".join(f"'{word}'" for word in words)
    program = textwrap.dedent(
        f"""\
        PATH={path}
        source {source}
        COMP_WORDS=({quoted}); COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1)); COMPREPLY=()
        _hvpa
        printf '%s\\n' "${{COMPREPLY[@]}}"
        """
    )
    done = subprocess.run(["bash", "-c", program], capture_output=True, text=True, check=True)
    return [line for line in done.stdout.splitlines() if line]


@pytest.fixture
def bash_script(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    path = tmp_path / "hvpa.bash"
    path.write_text(script("bash", capsys))
    return path


@pytest.mark.parametrize(
    ("words", "offered"),
    [
        pytest.param(["hvpa", "ex"], ["explain"], id="subcommand"),
        pytest.param(["hvpa", "--v"], ["--version"], id="top-level-flag"),
        pytest.param(["hvpa", "sim", "--tr"], ["--trace"], id="flag"),
        pytest.param(["hvpa", "explain", "-o", ""], ["text", "json", "yaml"], id="choices"),
        pytest.param(["hvpa", "sim", "--strategy", "Hpa"], ["HpaPreferred", "HpaBiased"], id="strategy"),
        pytest.param(["hvpa", "sim", "--trace", "sp"], ["spike"], id="trace-names"),
        pytest.param(["hvpa", "sim", "--hvpa", "core"], ["coredns"], id="scenario-names"),
        # a boolean flag takes its value after `=`; after a space the next flag comes
        pytest.param(["hvpa", "run", "--dry-run", "=", "f"], ["false"], id="boolean-value"),
        pytest.param(["hvpa", "run", "--dry-run", "--con"], ["--context", "--concurrency"], id="after-a-boolean"),
        pytest.param(["hvpa", "completion", ""], ["bash", "zsh"], id="positional-choices"),
    ],
)  # fmt: skip
def test_bash_completes(bash_script: Path, words: list[str], offered: list[str]) -> None:
    assert complete_in_bash(bash_script, words) == offered


def test_bash_completes_paths(bash_script: Path, tmp_path: Path) -> None:
    (tmp_path / "trace.csv").touch()
    (tmp_path / "dir").mkdir()
    prefix = str(tmp_path) + "/"
    assert sorted(complete_in_bash(bash_script, ["hvpa", "validate", "-f", prefix])) == sorted(
        [prefix + "dir", prefix + "hvpa.bash", prefix + "trace.csv"]
    )
    assert complete_in_bash(bash_script, ["hvpa", "sim", "-o", prefix]) == [prefix + "dir"]


def test_bash_completes_hvpa_names_from_kubectl(bash_script: Path, tmp_path: Path) -> None:
    """In the namespace and context typed so far; nothing when kubectl is not there."""
    tools = tmp_path / "bin"
    tools.mkdir()
    kubectl = tools / "kubectl"
    kubectl.write_text(KUBECTL)
    kubectl.chmod(0o755)
    words = ["hvpa", "explain", "-n", "shop", "--context", "prod", "w"]
    assert complete_in_bash(bash_script, words, path=f"{tools}:/usr/bin:/bin") == ["web"]
    args = (tools / "kubectl.args").read_text().split()
    assert args == [
        "get",
        "hvpas.autoscaling.k8s.io",
        "-n",
        "shop",
        "--context",
        "prod",
        "-o",
        "name",
    ]
    kubectl.unlink()
    assert complete_in_bash(bash_script, words, path=f"{tools}:/usr/bin:/bin") == []


# -- zsh -------------------------------------------------------------------------------------

# Completes each command line once, as Tab would, in an interactive zsh on a pseudo-terminal,
# and appends the resulting line to a file: a line whose completion is unique is the answer.
ZSH_DRIVER = r"""
zmodload zsh/zpty
dir=$1 out=$2; shift 2
: > $out
zpty z 'zsh -f -i'
zpty -w z "fpath=($dir \$fpath); autoload -U compinit; compinit -u -D; setopt nobeep"
zpty -w z "zle -C hvpa-test-complete complete-word _main_complete"
zpty -w z "hvpa-test() { zle hvpa-test-complete; print -r -- \"\$BUFFER\" >> $out; BUFFER=''; }"
zpty -w z "zle -N hvpa-test; bindkey '^T' hvpa-test"
for input in "$@"; do
  zpty -w -n z "$input"$'\C-t'
done
n=0
while (( $(wc -l < $out) < $# && n < 600 )); do sleep 0.1; (( n++ )); zpty -r -t z junk; done
zpty -d z
"""

ZSH_CASES = {
    "hvpa comp": "hvpa completion ",
    "hvpa --vers": "hvpa --version ",
    "hvpa sim --tr": "hvpa sim --trace ",
    "hvpa sim --trace sp": "hvpa sim --trace spike ",
    "hvpa sim --strategy Cap": "hvpa sim --strategy Capacity ",
    "hvpa explain -o y": "hvpa explain -o yaml ",
    "hvpa run --dry-run=f": "hvpa run --dry-run=false ",
    "hvpa validate --filen": "hvpa validate --filename ",
    "hvpa completion z": "hvpa completion zsh ",
}


def test_zsh_parses_the_script(
    zsh: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "_hvpa"
    path.write_text(script("zsh", capsys))
    subprocess.run([zsh, "-n", str(path)], check=True)


def test_zsh_completes(zsh: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "_hvpa").write_text(script("zsh", capsys))
    driver, out = tmp_path / "driver.zsh", tmp_path / "completed"
    driver.write_text(ZSH_DRIVER)
    subprocess.run(
        [zsh, "-f", str(driver), str(tmp_path), str(out), *ZSH_CASES],
        check=True,
        timeout=90,
        cwd=tmp_path,
    )
    assert out.read_text().splitlines() == [f"{line}" for line in ZSH_CASES.values()]
