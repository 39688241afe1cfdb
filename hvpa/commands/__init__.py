"""One module per `hvpa` subcommand.

Each module defines `HELP` (one line), `configure(parser)` to add its flags,
and `run(args) -> int` (the exit code). Modules import heavy dependencies
inside `run`, so building the parser for `hvpa --help` or `hvpa recommend`
never loads a Kubernetes client.
"""
