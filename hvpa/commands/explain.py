"""`hvpa explain NAMESPACE/NAME`: what the controller would do now, against the live cluster.

It reads with plain GETs and LISTs (no informers) and writes nothing, then
runs the controller's own snapshot builder, metrics reader and `decide`.
`-o text` (default) prints the explanation; `-o json` prints the Decision in
the shape `hvpa recommend` prints. Exit codes (hvpa.commands): 0; 1 when the
Hvpa is missing or invalid, an object its decision reads cannot be read, or
the cluster cannot be reached or answers with an error; 2 for bad arguments
or a kubeconfig that cannot be used. Each failure is one line on stderr.
"""

from __future__ import annotations

import argparse
import sys

from hvpa.commands import BAD_INPUT, FAILED, OK

HELP = "print what the controller would do now for one Hvpa, and why (writes nothing)"


def configure(parser: argparse.ArgumentParser) -> None:
    from hvpa.settings import ControllerSettings, add_engine_flags

    timeout = ControllerSettings().metrics_timeout_seconds

    parser.add_argument("hvpa", metavar="NAMESPACE/NAME", help="the Hvpa to explain")
    parser.add_argument(
        "--kubeconfig", metavar="PATH", help="kubeconfig file (default: as kubectl)"
    )
    parser.add_argument(
        "-o",
        "--output",
        choices=("text", "json"),
        default="text",
        help="text: the explanation (default); json: the Decision, as hvpa recommend prints it",
    )
    parser.add_argument(
        "--metrics-timeout",
        type=float,
        default=timeout,
        metavar="SECONDS",
        help=f"each metrics API read gives up after this long (default {timeout:g})",
    )
    add_engine_flags(parser)


async def _explain(args: argparse.Namespace, namespace: str, name: str) -> int:
    import time

    import msgspec
    import orjson
    from prometheus_client import CollectorRegistry

    from hvpa.commands.kubeconfig import KubeconfigError, connect
    from hvpa.controller.explain import ExplainError, explain
    from hvpa.engine.decision import decision_to_dict
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
        client = await connect(metrics=KubeMetrics(CollectorRegistry()), kubeconfig=args.kubeconfig)
    except KubeconfigError as error:
        sys.stderr.write(f"hvpa explain: {error}\n")
        return BAD_INPUT
    async with client:
        try:
            decision = await explain(
                client=client,
                namespace=namespace,
                name=name,
                engine=engine,
                clock=time.time,
                metrics_timeout_seconds=args.metrics_timeout,
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
    out = sys.stdout
    if args.output == "json":
        out.write(orjson.dumps(decision_to_dict(decision), option=orjson.OPT_INDENT_2).decode())
        out.write("\n")
    else:
        out.write("\n".join(decision.explanation) + "\n")
    out.flush()
    return OK


def run(args: argparse.Namespace) -> int:
    import asyncio

    namespace, separator, name = args.hvpa.partition("/")
    if not separator or not namespace or not name or "/" in name:
        sys.stderr.write(f"hvpa explain: {args.hvpa!r} is not NAMESPACE/NAME\n")
        return BAD_INPUT
    return asyncio.run(_explain(args, namespace, name))
