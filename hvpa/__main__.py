"""`python -m hvpa` is the `hvpa` command."""

from hvpa.cli import main

raise SystemExit(main())
