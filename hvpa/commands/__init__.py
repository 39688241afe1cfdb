"""One module per `hvpa` subcommand, and the exit codes they share.

Each module defines `HELP` (one line), `configure(parser)` to add its flags,
and `run(args) -> int` (the exit code). Modules import heavy dependencies
inside `run`, so building the parser for `hvpa --help` or `hvpa recommend`
never loads a Kubernetes client. `kubeconfig.py` is no subcommand: it loads
the cluster credentials `run` and `explain` share.

Every command exits with one of these codes (the README's CLI reference
lists them; a test keeps the two in step).
"""

from typing import Any, Final, TextIO

# Done.
OK: Final = 0
# The input was fine but the work failed: the cluster could not be reached or refused a
# request, the Hvpa to explain is missing or cannot be decided, the controller stopped on
# an error or lost its lease, a simulation failed or its report could not be written.
FAILED: Final = 1
# Bad input or usage: a flag or argument, or a file named on the command line (a scenario,
# a manifest, a kubeconfig, a trace, an Hvpa) that cannot be read or used, an output
# directory that cannot be created. argparse exits with 2 for usage errors too.
BAD_INPUT: Final = 2
# Interrupted (Ctrl-C) where stopping is not the normal end (`run` and `sim --keep-running`
# stop cleanly with 0): 128 + SIGINT, as a shell reports it.
INTERRUPTED: Final = 130
# The reader of the output went away (`| head`): stop quietly, with what a shell reports for
# a tool ended by SIGPIPE (128 + 13).
PIPE_CLOSED: Final = 141

EXIT_CODES: Final = {
    OK: "OK",
    FAILED: "FAILED",
    BAD_INPUT: "BAD_INPUT",
    INTERRUPTED: "INTERRUPTED",
    PIPE_CLOSED: "PIPE_CLOSED",
}


def write_document(out: TextIO, document: Any, output: str, *, several: bool = False) -> None:
    """A command's result for machines, in the one spelling every `-o json|yaml` shares:
    indented JSON (a compact line each when `several` follow one another) or a YAML
    document (`---` before each of `several`)."""
    if output == "yaml":
        import yaml

        if several:
            out.write("---\n")
        out.write(yaml.safe_dump(document, sort_keys=False, allow_unicode=True))
        return
    import orjson

    option = 0 if several else orjson.OPT_INDENT_2
    out.write(orjson.dumps(document, option=option).decode() + "\n")
