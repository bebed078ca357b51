"""The fault links of graphmem.testing (used by the fault tests and benchmarks/faults/fault_soak.py) over
real loopback sockets: a link outlives its server going down, as a network path does when the
server behind it is killed and started again."""

from __future__ import annotations

import contextlib
import socket
import socketserver
import threading

import pytest

from graphmem.testing.links import CommitCut, Link, free_port


class _Echo(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        while data := self.request.recv(65536):
            self.request.sendall(data)


class _ReusableServer(socketserver.ThreadingTCPServer):
    # the test binds the same port again after its connections closed (TIME_WAIT on the server's
    # side would refuse it: "Address already in use", seen once in a full suite)
    allow_reuse_address = True


@contextlib.contextmanager
def _echo_server(port: int):
    server = _ReusableServer(("127.0.0.1", port), _Echo)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()


def _round_trip(port: int, payload: bytes) -> bytes:
    """What comes back through the link for ``payload`` (b"" when the link closes the connection)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
        try:
            conn.sendall(payload)
            return conn.recv(65536)
        except ConnectionResetError:
            return b""


@pytest.mark.parametrize("kind", [Link, CommitCut])
def test_a_link_closes_clients_while_its_server_is_down_and_serves_once_it_is_back(kind):
    upstream = free_port()
    link = kind("127.0.0.1", upstream)
    try:
        assert _round_trip(link.port, b"while down") == b""  # refused upstream: the client is closed
        assert _round_trip(link.port, b"still down") == b""  # and the link still accepts
        with _echo_server(upstream):
            assert _round_trip(link.port, b"hello") == b"hello"
        assert _round_trip(link.port, b"down again") == b""
        with _echo_server(upstream):
            assert _round_trip(link.port, b"back") == b"back"
    finally:
        link.cut()


def test_a_cut_link_refuses_until_restored():
    upstream = free_port()
    with _echo_server(upstream):
        link = Link("127.0.0.1", upstream)
        try:
            assert _round_trip(link.port, b"a") == b"a"
            link.cut()
            with pytest.raises(OSError):
                socket.create_connection(("127.0.0.1", link.port), timeout=5).close()
            link.restore()
            assert _round_trip(link.port, b"b") == b"b"
        finally:
            link.cut()
