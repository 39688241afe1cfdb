"""A TCP proxy between hvpa and the API server, so a test can cut hvpa's connections; and the
one between the API server and hvpa's admission webhook, on the port the webhook's Service
reference names.

hvpa's watches last minutes; to make one resume from an old resourceVersion now (after the
test compacted etcd), the test cuts every connection and holds new ones off until it is done.
TLS passes through untouched: hvpa still verifies the API server's certificate and the
server still sees hvpa's token. Blocking threads, two per connection: a few dozen at most.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable, Sequence

__all__ = ["TcpProxy"]


class TcpProxy:
    def __init__(
        self, upstream: int | Callable[[], Sequence[int]], *, listen_port: int = 0
    ) -> None:
        """`upstream`: a port on loopback, or a function of the ports to try in turn (the
        first that accepts serves the connection); `listen_port` 0: any free one."""
        self._upstreams = upstream if callable(upstream) else lambda: (upstream,)
        self._listener = socket.create_server(("127.0.0.1", listen_port))
        self.port = int(self._listener.getsockname()[1])
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self._blocked = False
        self._closed = False
        self.connections = 0
        self._thread = threading.Thread(target=self._accept, name="e2e-proxy", daemon=True)

    def start(self) -> None:
        self._thread.start()

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    def cut(self) -> None:
        """Close every open connection; new ones are served as before."""
        with self._lock:
            sockets, self._open = self._open, set()
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def block(self) -> None:
        """Cut every connection and refuse new ones (accepted, then closed at once)."""
        with self._lock:
            self._blocked = True
        self.cut()

    def unblock(self) -> None:
        with self._lock:
            self._blocked = False

    def close(self) -> None:
        self._closed = True
        self._listener.close()
        self.cut()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                blocked = self._blocked
            if blocked:
                client.close()
                continue
            upstream = self._connect()
            if upstream is None:
                client.close()
                continue
            upstream.settimeout(None)
            with self._lock:
                self._open.update((client, upstream))
                self.connections += 1
            pair = _Pair(client, upstream)
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(pair, source, sink), daemon=True).start()

    def _connect(self) -> socket.socket | None:
        for port in self._upstreams():
            try:
                return socket.create_connection(("127.0.0.1", port), timeout=5)
            except OSError:
                continue
        return None

    def _pump(self, pair: _Pair, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                sink.shutdown(socket.SHUT_WR)
            if pair.one_direction_done():
                with self._lock:
                    self._open.difference_update((pair.client, pair.upstream))
                pair.client.close()
                pair.upstream.close()


class _Pair:
    """The two sockets of one proxied connection; closed when both directions have ended."""

    def __init__(self, client: socket.socket, upstream: socket.socket) -> None:
        self.client = client
        self.upstream = upstream
        self._lock = threading.Lock()
        self._done = 0

    def one_direction_done(self) -> bool:
        """Note one direction's end; true for the second."""
        with self._lock:
            self._done += 1
            return self._done == 2
