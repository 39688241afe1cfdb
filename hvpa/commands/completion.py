"""`hvpa completion bash|zsh`: a shell completion script, generated from hvpa's own parser.

    source <(hvpa completion bash)                    # bash: this shell (or add it to ~/.bashrc)
    hvpa completion zsh > "${fpath[1]}/_hvpa"         # zsh: every new shell, after compinit

It completes the subcommands, each one's flags, a flag's choices (`-o json`),
`true`/`false` for the boolean flags, the names `hvpa sim` knows (scenarios,
traces, strategies), files and directories where a flag takes a path, and
for `hvpa explain` the Hvpa names `kubectl get hvpa` lists, in the namespace
and context typed so far (when kubectl is installed).

Why a generated script rather than argcomplete (the library that completes
argparse programs by running them at each Tab): it is how Kubernetes tools
do it (`kubectl completion bash`), so an operator already knows where it
goes; it needs no package beyond hvpa (argcomplete would join the
controller image's locked dependencies for a laptop feature, and its
`register-python-argcomplete` hook); and a Tab costs no Python start-up.
The script is written from the same parser `hvpa --help` reads, and a test
checks that every subcommand, flag and choice is in it, so it cannot drift.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Final

from hvpa.commands import OK

HELP = "print a shell completion script (bash or zsh) for hvpa"
SHELLS: Final = ("bash", "zsh")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("shell", choices=SHELLS, help="the shell to complete in: bash or zsh")


@dataclass(frozen=True, slots=True)
class Option:
    """One flag as a completion script needs it."""

    flags: tuple[str, ...]
    description: str
    value: str  # "" (no value), "required" or "optional" (`--flag[=BOOL]`)
    value_name: str = "value"
    words: tuple[str, ...] = ()
    paths: str = ""  # "", "file" or "dir"
    repeatable: bool = False


@dataclass(frozen=True, slots=True)
class Command:
    name: str
    description: str
    options: tuple[Option, ...]
    # What the positional argument completes to: its choices, or (`hvpa explain`) the Hvpa
    # names kubectl lists.
    positional: tuple[str, ...] = ()
    positional_name: str = ""
    positional_hvpas: bool = False


def commands(parser: argparse.ArgumentParser, known: dict[str, tuple[str, ...]]) -> list[Command]:
    """Every subcommand of `parser`; `known` maps `command --flag` to the words it takes
    beyond its choices (the names `hvpa sim` knows)."""
    (subparsers,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    helps = {choice.dest: choice.help or "" for choice in subparsers._choices_actions}
    found = []
    for name, sub in subparsers.choices.items():
        options = tuple(
            _option(action, known.get(f"{name} {action.option_strings[-1]}", ()))
            for action in sub._actions
            if action.option_strings
        )
        positional = next((a for a in sub._actions if not a.option_strings), None)
        found.append(
            Command(
                name=name,
                description=helps.get(name, ""),
                options=options,
                positional=tuple(positional.choices or ()) if positional is not None else (),
                positional_name=positional.dest if positional is not None else "",
                positional_hvpas=name == "explain",
            )
        )
    return found


def _option(action: argparse.Action, known: tuple[str, ...]) -> Option:
    metavar = str(action.metavar or "")
    if action.nargs == 0:
        value = ""
    elif action.nargs == "?":
        value = "optional"
    else:
        value = "required"
    words = tuple(str(choice) for choice in action.choices or ()) + known
    if value == "optional" and not words:
        words = ("true", "false")  # hvpa's boolean flags: --flag, --flag=false
    paths = "dir" if metavar == "DIR" else "file" if "FILE" in metavar or metavar == "PATH" else ""
    return Option(
        flags=tuple(action.option_strings),
        description=_first_clause(action.help or ""),
        value=value,
        value_name=(metavar or action.dest).lower(),
        words=words,
        paths=paths,
        repeatable=isinstance(action, argparse._AppendAction),
    )


def _first_clause(text: str) -> str:
    """The help text up to its first `;` or `(`: enough for a menu line."""
    for stop in (";", " ("):
        text = text.split(stop, 1)[0]
    return " ".join(text.split())


def _known_names() -> dict[str, tuple[str, ...]]:
    from hvpa.sim.scenarios import RUNNABLE, SCENARIO_NAMES
    from hvpa.sim.traces import TRACE_NAMES

    return {
        "sim --hvpa": tuple(SCENARIO_NAMES),
        "sim --trace": tuple(TRACE_NAMES),
        "sim --strategy": RUNNABLE,
        "sim --compare": RUNNABLE,
    }


# -- bash ----------------------------------------------------------------------------------

_BASH_HEAD: Final = """\
# bash completion for hvpa, written by `hvpa completion bash`: source it, e.g.
#   source <(hvpa completion bash)
_hvpa_hvpas() {
    # Hvpa names as kubectl lists them, in the namespace and context typed so far.
    command -v kubectl >/dev/null 2>&1 || return
    local args=() i
    for ((i = 2; i < COMP_CWORD; i++)); do
        case "${COMP_WORDS[i]}" in
            -n|--namespace|--context|--kubeconfig) args+=("${COMP_WORDS[i]}" "${COMP_WORDS[i+1]}") ;;
        esac
    done
    kubectl get hvpas.autoscaling.k8s.io "${args[@]}" -o name 2>/dev/null | sed 's|.*/||'
}

_hvpa() {
    local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}"
    local command="" i equals=""
    # bash splits `--dry-run=false` at the `=`: the flag is then the word before it.
    if [[ "$cur" == "=" ]]; then
        cur="" equals=1
    elif [[ "$prev" == "=" ]]; then
        prev="${COMP_WORDS[COMP_CWORD-2]}" equals=1
    fi
    for ((i = 1; i < COMP_CWORD; i++)); do
        case "${COMP_WORDS[i]}" in
            %(names)s) command="${COMP_WORDS[i]}"; break ;;
        esac
    done
    if [[ -z "$command" ]]; then
        COMPREPLY=($(compgen -W %(top)s -- "$cur"))
        return
    fi
    case "$command" in
"""

_BASH_TAIL: Final = """\
    esac
}

complete -F _hvpa hvpa
"""


def bash_script(found: Sequence[Command], top_flags: Sequence[str]) -> str:
    names = "|".join(command.name for command in found)
    top = shlex.quote(" ".join([*(command.name for command in found), *top_flags]))
    parts = [_BASH_HEAD % {"names": names, "top": top}]
    for command in found:
        parts.extend(_bash_command(command))
    parts.append(_BASH_TAIL)
    return "".join(parts)


def _bash_command(command: Command) -> Iterator[str]:
    yield f"        {command.name})\n"
    yield '            case "$prev" in\n'
    for option in command.options:
        if not option.value:
            continue
        # An optional value is written `--flag=value`; after a space comes the next flag.
        when = ' [[ -n "$equals" ]] &&' if option.value == "optional" else ""
        flags = "|".join(option.flags)
        yield f"                {flags}){when} {{ {_bash_value(option)}; return; }} ;;\n"
    yield "            esac\n"
    every_flag = shlex.quote(" ".join(flag for option in command.options for flag in option.flags))
    yield '            if [[ "$cur" == -* ]]; then\n'
    yield f'                COMPREPLY=($(compgen -W {every_flag} -- "$cur"))\n'
    if command.positional_hvpas:
        yield "            else\n"
        yield '                COMPREPLY=($(compgen -W "$(_hvpa_hvpas)" -- "$cur"))\n'
    elif command.positional:
        yield "            else\n"
        choices = shlex.quote(" ".join(command.positional))
        yield f'                COMPREPLY=($(compgen -W {choices} -- "$cur"))\n'
    yield "            fi\n"
    yield "            ;;\n"


def _bash_value(option: Option) -> str:
    """The completions of the word after `option`."""
    found = []
    if option.words:
        found.append(f'compgen -W {shlex.quote(" ".join(option.words))} -- "$cur"')
    if option.paths:
        found.append(f'compgen -{"d" if option.paths == "dir" else "f"} -- "$cur"')
    if not found:
        return "COMPREPLY=()"
    setup = "compopt -o filenames 2>/dev/null; " if option.paths else ""
    return setup + "COMPREPLY=($(" + "; ".join(found) + "))"


# -- zsh -------------------------------------------------------------------------------------

_ZSH_HEAD: Final = """\
#compdef hvpa
# zsh completion for hvpa, written by `hvpa completion zsh`: put it on $fpath as _hvpa, e.g.
#   hvpa completion zsh > "${fpath[1]}/_hvpa"
# then start a new shell (compinit picks it up); or, for this shell only:
#   source <(hvpa completion zsh)

_hvpa_hvpas() {
    # Hvpa names as kubectl lists them, in the namespace and context typed so far.
    (( $+commands[kubectl] )) || return
    local -a args names
    local i
    for ((i = 2; i < CURRENT; i++)); do
        case "${words[i]}" in
            -n|--namespace|--context|--kubeconfig) args+=("${words[i]}" "${words[i+1]}") ;;
        esac
    done
    names=(${${(f)"$(kubectl get hvpas.autoscaling.k8s.io $args -o name 2>/dev/null)"}##*/})
    compadd -a names
}

%(helpers)s_hvpa() {
    local curcontext="$curcontext" state line
    typeset -A opt_args
    _arguments -C \\
%(top)s        '1:command:->command' \\
        '*::argument:->argument'
    case $state in
        command)
            local -a subcommands
            subcommands=(
%(subcommands)s            )
            _describe -t commands 'hvpa command' subcommands
            ;;
        argument)
            case $line[1] in
"""

_ZSH_TAIL: Final = """\
            esac
            ;;
    esac
}

if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
    _hvpa "$@"
else
    compdef _hvpa hvpa
fi
"""


def zsh_script(found: Sequence[Command], top: Sequence[Option]) -> str:
    top_specs = "".join(f"        {spec} \\\n" for spec in _zsh_specs(top, "top"))
    subcommands = "".join(
        f"                {_zsh_quote(f'{c.name}:{c.description}')}\n" for c in found
    )
    helpers = "".join(
        _zsh_helper(_helper_name(command.name, option), option)
        for command in found
        for option in command.options
        if option.words and option.paths
    )
    parts = [_ZSH_HEAD % {"helpers": helpers, "top": top_specs, "subcommands": subcommands}]
    for command in found:
        parts.append(f"                {command.name})\n")
        parts.append("                    _arguments \\\n")
        specs = list(_zsh_specs(command.options, command.name))
        if command.positional_hvpas:
            specs.append("'1:Hvpa:_hvpa_hvpas'")
        elif command.positional:
            choices = " ".join(command.positional)
            specs.append(_zsh_quote(f"1:{command.positional_name}:({choices})"))
        parts.append("".join(f"                        {spec} \\\n" for spec in specs))
        parts.append("                    ;;\n")
    parts.append(_ZSH_TAIL)
    return "".join(parts)


def _zsh_specs(options: Sequence[Option], command: str) -> Iterator[str]:
    for option in options:
        description = _zsh_text(option.description)
        action = _zsh_action(option, _helper_name(command, option))
        for flag in option.flags:
            exclusive = "" if len(option.flags) == 1 else f"({' '.join(option.flags)})"
            if option.repeatable:
                exclusive = "*"
            if flag in ("-h", "--help", "--version"):
                exclusive = "(- *)"
            separator = "=-" if option.value == "optional" else ""
            spec = f"{exclusive}{flag}{separator}[{description}]"
            if option.value:
                spec += f":{_zsh_text(option.value_name).replace(':', ' ')}:{action}"
            yield _zsh_quote(spec)


def _zsh_text(text: str) -> str:
    """Text inside an _arguments spec: no brackets or backslashes, which it reads."""
    return text.replace("\\", "").replace("[", "(").replace("]", ")")


def _helper_name(command: str, option: Option) -> str:
    return f"_hvpa_{command}_{option.flags[-1].lstrip('-').replace('-', '_')}"


def _zsh_helper(name: str, option: Option) -> str:
    """A function completing a flag that takes a name or a path (`--hvpa NAME|FILE`)."""
    names = _zsh_quote(f"names:name:({' '.join(option.words)})")
    files = "'files:file:_files'" if option.paths == "file" else "'dirs:directory:_files -/'"
    return f"{name}() {{\n    _alternative {names} {files}\n}}\n\n"


def _zsh_action(option: Option, helper: str) -> str:
    if option.words and option.paths:
        return helper
    if option.words:
        return f"({' '.join(option.words)})"
    if option.paths:
        return "_files -/" if option.paths == "dir" else "_files"
    return " "


def _zsh_quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def run(args: argparse.Namespace) -> int:
    parser: argparse.ArgumentParser = args.parser  # hvpa.cli's, set for this subcommand
    found = commands(parser, _known_names())
    top = [_option(action, ()) for action in parser._actions if action.option_strings]
    if args.shell == "bash":
        script = bash_script(found, [flag for option in top for flag in option.flags])
    else:
        script = zsh_script(found, top)
    sys.stdout.write(script)
    return OK
