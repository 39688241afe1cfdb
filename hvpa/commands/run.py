"""`hvpa run`: the controller, with its health, metrics and debug listeners, until SIGTERM.

Exit codes (hvpa.commands): 0 after SIGTERM or SIGINT (in-flight reconciles
finished, the lease released); 1 when the leader lease is lost (client-go's
advice: exit and start over, so nothing of the old term keeps writing) or
the controller fails (a listener cannot bind, a background task dies); 2 for
flags that cannot be used, or a kubeconfig (or in-cluster service account)
that cannot be used, said in one log line.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from hvpa.commands import BAD_INPUT, FAILED, OK

if TYPE_CHECKING:
    from collections.abc import Callable

    from prometheus_client import CollectorRegistry

    from hvpa.settings import RunSettings

HELP = "run the controller: watch Hvpas and scale their targets"


def configure(parser: argparse.ArgumentParser) -> None:
    from hvpa.settings import add_flags

    add_flags(parser)


async def run_controller(
    settings: RunSettings,
    *,
    clock: Callable[[], float] | None = None,
    registry: CollectorRegistry | None = None,
) -> int:
    """Run until SIGTERM/SIGINT; the exit code. `registry` None: the process-wide registry."""
    import asyncio
    import logging
    import signal
    import time

    from prometheus_client import REGISTRY

    from hvpa.commands.kubeconfig import KubeconfigError, connect
    from hvpa.controller.manager import Manager
    from hvpa.kube.leader import LeadershipLost
    from hvpa.kube.metrics import KubeMetrics
    from hvpa.logs import fields
    from hvpa.server import Server
    from hvpa.server.certificates import CertificateError
    from hvpa.settings import describe

    logger = logging.getLogger("hvpa.run")
    kube_metrics = KubeMetrics(registry if registry is not None else REGISTRY)
    try:
        client = await connect(
            metrics=kube_metrics,
            kubeconfig=settings.kubeconfig,
            context=settings.context,
            settings=settings.client,
        )
    except KubeconfigError as error:
        logger.error("cannot connect", extra=fields(error=str(error)))
        return BAD_INPUT
    async with client:
        manager = Manager(
            client=client,
            kube_metrics=kube_metrics,
            settings=settings.controller,
            engine=settings.engine,
            leader_election=settings.leader_election if settings.leader_elect else None,
            clock=clock or time.time,
        )
        logger.info("starting", extra=fields(identity=manager.identity, **describe(settings)))
        loop = asyncio.get_running_loop()
        stop_signals = (signal.SIGTERM, signal.SIGINT)
        for number in stop_signals:
            loop.add_signal_handler(number, manager.stop)
        try:
            async with Server(manager=manager, settings=settings.server, client=client):
                await manager.run()
        except LeadershipLost as lost:
            logger.error("leader lease lost; exiting", extra=fields(error=str(lost)))
            return FAILED
        except (OSError, ValueError, CertificateError) as error:
            logger.error("cannot run", extra=fields(error=str(error)))
            return FAILED
        finally:
            for number in stop_signals:
                loop.remove_signal_handler(number)
    logger.info("stopped")
    return OK


def run(args: argparse.Namespace) -> int:
    import asyncio

    from hvpa import logs
    from hvpa.settings import settings_from_args

    try:
        settings = settings_from_args(args)
    except ValueError as error:
        sys.stderr.write(f"hvpa run: {error}\n")
        return BAD_INPUT
    logs.configure(settings.log_level, settings.log_format)
    return asyncio.run(_run_with_paced_collector(settings))


async def _run_with_paced_collector(settings: RunSettings) -> int:
    """run_controller with the controller process's collector (hvpa.controller.collector):
    here, not in run_controller, because only the process `hvpa run` starts chooses its
    collector (tests and the simulator run the controller in processes of their own)."""
    from hvpa.controller.collector import paced_collector

    async with paced_collector():
        return await run_controller(settings)
