"""`hvpa explain NAME -n NAMESPACE`: what the controller would do now, against the live cluster.

It reads with plain GETs and LISTs (no informers) and writes nothing, then
runs the controller's own snapshot builder, metrics reader and `decide` at
the cluster's now (the API server's clock; the first line says so).
The Hvpa is named as kubectl names an object: NAME with `-n NAMESPACE`, else
the kubeconfig context's namespace (`default` without one); NAMESPACE/NAME
works too. `-o text` (default) prints the explanation; `-o json` and
`-o yaml` print the Decision in the shape `hvpa recommend` prints. Exit codes
(hvpa.commands): 0; 1 when the Hvpa is missing or invalid, an object its
decision reads cannot be read, or the cluster cannot be reached or answers
with an error; 2 for bad arguments or a kubeconfig that cannot be used. Each
failure is one line on stderr.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from hvpa.commands import BAD_INPUT, FAILED, OK, write_document

if TYPE_CHECKING:
    from hvpa.engine.decision import Decision

HELP = "print what the controller would do now for one Hvpa, and why (writes nothing)"
OUTPUTS = ("text", "json", "yaml")


def configure(parser: argparse.ArgumentParser) -> None:
    from hvpa.settings import ControllerSettings, add_engine_flags

    timeout = ControllerSettings().metrics_timeout_seconds

    parser.add_argument(
        "hvpa",
        metavar="NAME",
        help="the Hvpa to explain: NAME (in -n NAMESPACE), or NAMESPACE/NAME",
    )
    parser.add_argument(
        "-n",
        "--namespace",
        metavar="NAMESPACE",
        help="the Hvpa's namespace (default: the kubeconfig context's, else default)",
    )
    parser.add_argument(
        "--kubeconfig",
        metavar="PATH",
        help="kubeconfig file (default: as kubectl: $KUBECONFIG, else ~/.kube/config; in a pod, "
        "its service account)",
    )
    parser.add_argument(
        "--context",
        metavar="NAME",
        help="the kubeconfig context to use (default: its current-context)",
    )
    parser.add_argument(
        "-o",
        "--output",
        choices=OUTPUTS,
        default="text",
        help="text: the explanation; json or yaml: the Decision, as hvpa recommend prints it "
        "(default text)",
    )
    parser.add_argument(
        "--metrics-timeout",
        type=float,
        default=timeout,
        metavar="SECONDS",
        help=f"each metrics API read gives up after this long (default {timeout:g})",
    )
    add_engine_flags(parser)


def _named(argument: str, flag: str | None) -> tuple[str | None, str]:
    """(namespace, name) from NAME or NAMESPACE/NAME and -n; ValueError for what is neither."""
    namespace, separator, name = argument.rpartition("/")
    if not separator:
        return flag, argument
    if not namespace or not name or "/" in namespace:
        raise ValueError(f"{argument!r} is not NAME or NAMESPACE/NAME")
    if flag is not None and flag != namespace:
        raise ValueError(f"{argument!r} names namespace {namespace!r}, but -n says {flag!r}")
    return namespace, name


async def _explain(args: argparse.Namespace, namespace: str | None, name: str) -> int:
    import msgspec
    from prometheus_client import CollectorRegistry

    from hvpa.commands.kubeconfig import KubeconfigError, connect, default_namespace
    from hvpa.controller.explain import ExplainError, cluster_clock, explain
    from hvpa.kube.errors import KubeError, TransportError
    from hvpa.kube.metrics import KubeMetrics
    from hvpa.records import RecordError
    from hvpa.settings import engine_settings_from_args

    try:
        engine = engine_settings_from_args(args)
    except ValueError as error:
        sys.stderr.write(f"hvpa explain: {error}\n")
        return BAD_INPUT
    try:
        # The namespace first: a kubeconfig that fails here leaves no client to close.
        namespace = namespace or default_namespace(args.kubeconfig, args.context)
        client = await connect(
            metrics=KubeMetrics(CollectorRegistry()),
            kubeconfig=args.kubeconfig,
            context=args.context,
        )
    except KubeconfigError as error:
        sys.stderr.write(f"hvpa explain: {error}\n")
        return BAD_INPUT
    async with client:
        try:
            clock = await cluster_clock(client)
            decision = await explain(
                client=client,
                namespace=namespace,
                name=name,
                engine=engine,
                clock=clock.now,
                metrics_timeout_seconds=args.metrics_timeout,
                clock_source=clock.describe(),
            )
        except TransportError as error:
            sys.stderr.write(f"hvpa explain: cannot reach the API server: {error}\n")
            return FAILED
        except (ExplainError, KubeError) as error:
            sys.stderr.write(f"hvpa explain: {error}\n")
            return FAILED
        except RecordError as error:
            sys.stderr.write(f"hvpa explain: cannot decide: {error}\n")
            return FAILED
        except (msgspec.DecodeError, UnicodeDecodeError) as error:
            sys.stderr.write(f"hvpa explain: the API server's answer cannot be read: {error}\n")
            return FAILED
    _print(decision, args.output)
    return OK


def _print(decision: Decision, output: str) -> None:
    from hvpa.engine.decision import decision_to_dict

    out = sys.stdout
    if output == "text":
        out.write("\n".join(decision.explanation) + "\n")
    else:
        write_document(out, decision_to_dict(decision), output)
    out.flush()


def run(args: argparse.Namespace) -> int:
    import asyncio

    try:
        namespace, name = _named(args.hvpa, args.namespace)
    except ValueError as error:
        sys.stderr.write(f"hvpa explain: {error}\n")
        return BAD_INPUT
    return asyncio.run(_explain(args, namespace, name))
