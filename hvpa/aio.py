"""Background tasks started and stopped through one guarded helper.

A task created with bare `asyncio.create_task` and forgotten can die with
an exception no one sees, or outlive the component that started it. Every
long-running task of hvpa (reflectors, workers, the elector) is started by a
`Tasks` group instead, which

- keeps a strong reference to each task (the loop only keeps weak ones),
- logs a task that ends with an exception, at once, and remembers the first
  such error so the owner can exit non-zero (`join` re-raises it),
- on `stop`, cancels every task, waits up to a timeout, and logs by name
  each task that refuses to stop (it swallowed the cancellation or is stuck
  in a blocking call) instead of hanging the shutdown;
- `cancel` does the cancelling part at once, from synchronous code (a
  callback that must stop the work before anything else runs); `stop`
  still waits for the tasks afterwards.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from types import TracebackType
from typing import Any, TypeVar

from hvpa.logs import fields

__all__ = ["Tasks"]

T = TypeVar("T")
_logger = logging.getLogger(__name__)


class Tasks:
    """A named group of background tasks with one owner."""

    def __init__(self, *, name: str, logger: logging.Logger | None = None) -> None:
        self.name = name
        self._logger = logger or _logger
        self._tasks: set[asyncio.Task[Any]] = set()
        # Done when a task fails; made by `join`, on the running loop. A plain future, not
        # a task waiting on an event: a helper task cancelled in join's own cancellation
        # could swallow that cancellation, and join would wait on.
        self._failed: asyncio.Future[None] | None = None
        self.error: BaseException | None = None
        self._stopping = False

    def __len__(self) -> int:
        return len(self._tasks)

    @property
    def names(self) -> list[str]:
        return sorted(task.get_name() for task in self._tasks)

    def start(self, coro: Coroutine[Any, Any, T], *, name: str) -> asyncio.Task[T]:
        """Run a coroutine as a task of this group; `name` is what logs call it."""
        if self._stopping:
            coro.close()
            raise RuntimeError(f"task group {self.name} is stopping; cannot start {name}")
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._on_done)
        return task

    def _on_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        error = task.exception()
        if error is None:
            if not self._stopping:
                self._logger.debug(
                    "background task finished", extra=fields(group=self.name, task=task.get_name())
                )
            return
        self._logger.error(
            "background task failed",
            exc_info=error,
            extra=fields(group=self.name, task=task.get_name()),
        )
        if self.error is None:
            self.error = error
        if self._failed is not None and not self._failed.done():
            self._failed.set_result(None)

    async def join(self) -> None:
        """Wait until a task fails (and re-raise its error) or every task has finished."""
        if self._failed is None:
            self._failed = asyncio.get_running_loop().create_future()
        while self.error is None and self._tasks:
            await asyncio.wait({self._failed, *self._tasks}, return_when=asyncio.FIRST_COMPLETED)
        if self.error is not None:
            raise self.error

    def cancel(self) -> None:
        """Cancel every task now and start no more; each ends at its next await."""
        self._stopping = True
        for task in self._tasks:
            task.cancel()

    async def stop(self, *, grace_seconds: float = 5.0) -> None:
        """Cancel every task and wait for them, at most `grace_seconds`.

        A task still running after that is logged and left behind: the
        caller is shutting down and must not hang on it.
        """
        self._stopping = True
        tasks = set(self._tasks)
        for task in tasks:
            task.cancel()
        if not tasks:
            return
        _, pending = await asyncio.wait(tasks, timeout=grace_seconds)
        for task in pending:
            self._logger.error(
                "background task refuses to stop",
                extra=fields(group=self.name, task=task.get_name(), grace_seconds=grace_seconds),
            )

    async def __aenter__(self) -> Tasks:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.stop()
