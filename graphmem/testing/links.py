"""TCP links to a real server that a test or benchmark cuts as a network, a restart or a crash
would (tests/test_server_manners.py, tests/test_faults.py, benchmarks/faults/fault_soak.py). Loopback only:
``Link(host, port)`` listens on a free 127.0.0.1 port and forwards to ``host:port``."""

from __future__ import annotations

import contextlib
import socket
import threading
import time


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Link:
    """A TCP link to a real server that a test can cut and restore, as a network or a restart
    would: ``cut()`` closes the listening port and every connection through it (new ones are
    refused), ``restore()`` listens on the same port again."""

    def __init__(self, host: str, port: int) -> None:
        self.upstream = (host, port)
        self.port = free_port()
        self._sockets: list[socket.socket] = []
        self._listener: socket.socket | None = None
        self._stalled = threading.Event()
        self.restore()

    def stall(self) -> None:
        """Keep every connection open but pass nothing either way (a server that accepts and does not
        answer: one busy starting, or a network that drops packets); ``unstall()`` lets it flow again."""
        self._stalled.set()

    def unstall(self) -> None:
        self._stalled.clear()

    def restore(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", self.port))  # SO_REUSEADDR: the same port again
        threading.Thread(target=self._accept, args=(self._listener,), daemon=True).start()

    def cut(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)  # wakes the accepting thread
            listener.close()
        for s in self._sockets:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()
        self._sockets.clear()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            if listener is not self._listener:
                client.close()
                return
            try:
                upstream = socket.create_connection(self.upstream)
            except OSError:  # the server is down (killed, restarting): this client is refused, the link stays
                client.close()
                continue
            self._sockets += [client, upstream]
            self._connect(client, upstream)

    def _connect(self, client: socket.socket, upstream: socket.socket) -> None:
        """Start moving bytes both ways between one accepted client and its upstream connection."""
        for a, b in ((client, upstream), (upstream, client)):
            threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while chunk := source.recv(65536):
                while self._stalled.is_set():
                    time.sleep(0.02)
                sink.sendall(chunk)
        except OSError:
            pass
        finally:
            for s in (source, sink):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)


#: A Bolt COMMIT message as the driver sends it: one chunk of two bytes (tiny struct, signature 0x12), then the end marker.
BOLT_COMMIT = b"\x00\x02\xb0\x12\x00\x00"


class CommitCut(Link):
    """A Link that, once ``arm()``-ed, lets the next Bolt COMMIT reach Neo4j, swallows Neo4j's answer
    and cuts every connection (the port stays closed until ``restore()``): the client sent COMMIT
    and never learns whether it happened, as when Neo4j or the network dies at that moment."""

    def __init__(self, host: str, port: int) -> None:
        self.armed = threading.Event()
        self.fired = threading.Event()
        self._swallow = False
        self.marker = b""
        self._listener = None
        super().__init__(host, port)

    def arm(self, marker: bytes = b"CREATE (:ImportKey") -> None:
        """Cut at the next COMMIT of a transaction that sent ``marker`` (default: a statement of
        write_graph.cypher), so reads and other transactions pass."""
        self.fired.clear()
        self._swallow = False
        self.marker = marker
        self.armed.set()

    def restore(self) -> None:
        self._swallow = False
        if self._listener is None:  # restoring a live link is a no-op
            super().restore()

    def _connect(self, client: socket.socket, upstream: socket.socket) -> None:
        threading.Thread(target=self._outbound, args=(client, upstream), daemon=True).start()
        threading.Thread(target=self._inbound, args=(upstream, client), daemon=True).start()

    def _outbound(self, source: socket.socket, sink: socket.socket) -> None:
        seen = False  # this connection sent the marker since its last COMMIT
        try:
            while chunk := source.recv(65536):
                seen = seen or (bool(self.marker) and self.marker in chunk)
                if BOLT_COMMIT in chunk and not (self.armed.is_set() and seen):
                    seen = False
                elif self.armed.is_set() and BOLT_COMMIT in chunk:
                    self.armed.clear()
                    self._swallow = True  # before the COMMIT leaves: its answer must not come back
                    sink.sendall(chunk)
                    time.sleep(0.5)  # Neo4j commits meanwhile
                    self.fired.set()
                    self.cut()
                    return
                sink.sendall(chunk)
        except OSError:
            pass
        finally:
            for s in (source, sink):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def _inbound(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while chunk := source.recv(65536):
                if not self._swallow:
                    sink.sendall(chunk)
        except OSError:
            pass
        finally:
            for s in (source, sink):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)
