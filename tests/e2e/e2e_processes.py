"""Child processes of the suite: each with its own log file, stopped by signal, never left behind.

Every component (etcd, kube-apiserver, the controllers, hvpa) runs as one `Process`. Its
stdout and stderr go to `<name>.log` in the session's directory, which is kept when a test
fails, so the log of whatever misbehaved is there to read.
"""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

__all__ = ["Process", "free_port", "wait_until"]


_PR_SET_PDEATHSIG = 1


def _die_with_the_suite() -> None:
    """In the child before exec: SIGKILL it when the suite's process dies, however it dies
    (a killed pytest runs no teardown, and the components would outlive it)."""
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def free_port() -> int:
    """A TCP port on loopback that nothing listens on now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until(
    check: Callable[[], bool], *, timeout_seconds: float, what: str, interval_seconds: float = 0.2
) -> None:
    """Poll `check` until it holds; raise TimeoutError naming `what` at the deadline.

    A real control plane runs on the wall clock, so the suite waits by polling with a deadline,
    never by a fixed sleep; a check that raises counts as not yet.
    """
    deadline = time.monotonic() + timeout_seconds
    last_error: Exception | None = None
    while True:
        try:
            if check():
                return
        except Exception as error:
            last_error = error
        if time.monotonic() > deadline:
            suffix = f" (last error: {last_error})" if last_error else ""
            raise TimeoutError(f"{what}: not within {timeout_seconds:.0f} s{suffix}")
        time.sleep(interval_seconds)


class Process:
    """One child process, logging to a file, that can be signalled, stopped and started again."""

    def __init__(
        self,
        name: str,
        command: Sequence[str],
        *,
        log_directory: Path,
        environment: Mapping[str, str] | None = None,
        cwd: Path | None = None,
    ) -> None:
        self.name = name
        self.command = list(command)
        self.log_path = log_directory / f"{name}.log"
        self._environment = dict(environment) if environment is not None else None
        self._cwd = cwd
        self._popen: subprocess.Popen[bytes] | None = None
        self.starts = 0

    @property
    def pid(self) -> int:
        if self._popen is None:
            raise RuntimeError(f"{self.name} is not running")
        return self._popen.pid

    def start(self) -> None:
        if self.running():
            raise RuntimeError(f"{self.name} is already running")
        self.starts += 1
        with self.log_path.open("ab") as log:
            log.write(f"\n=== start {self.starts}: {' '.join(self.command)}\n".encode())
            log.flush()
            self._popen = subprocess.Popen(
                self.command,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=self._environment,
                cwd=self._cwd,
                # Its own process group: a signal to the suite (Ctrl-C) reaches it only
                # through stop(), in the order teardown chooses.
                start_new_session=True,
                preexec_fn=_die_with_the_suite,
            )

    def running(self) -> bool:
        return self._popen is not None and self._popen.poll() is None

    def exit_code(self) -> int | None:
        return None if self._popen is None else self._popen.poll()

    def signal(self, number: signal.Signals) -> None:
        if self._popen is not None and self._popen.poll() is None:
            os.kill(self._popen.pid, number)

    def wait(self, timeout_seconds: float) -> int:
        if self._popen is None:
            raise RuntimeError(f"{self.name} was never started")
        return self._popen.wait(timeout=timeout_seconds)

    def stop(self, *, timeout_seconds: float = 15.0) -> None:
        """SIGTERM, then SIGKILL if it has not exited within the timeout."""
        if self._popen is None or self._popen.poll() is not None:
            return
        self._popen.terminate()
        try:
            self._popen.wait(timeout=timeout_seconds)
        except subprocess.TimeoutExpired:
            self._popen.kill()
            self._popen.wait(timeout=timeout_seconds)

    def kill(self) -> None:
        if self._popen is not None and self._popen.poll() is None:
            self._popen.kill()
            self._popen.wait(timeout=15)

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def tail(self, lines: int = 40) -> str:
        return "\n".join(self.log().splitlines()[-lines:])
