"""The command proxy by host and port: an ``allowed_domains`` entry opens 80 and 443 of its hosts,
or the one port it names (``host:port``); a wildcard entry never reaches a loopback, private or
link-local address (only an exact name or an address may). A real proxy and two echo services on
127.0.0.1 (``localhost`` resolves there); nothing leaves the machine."""

from __future__ import annotations

import socket
import socketserver
import threading
from collections.abc import Iterator

import pytest

from mcp_localtools.config import WebConfig
from mcp_localtools.errors import ConfigError
from mcp_localtools.sandbox.proxy import ProxyServer, Refusal
from tests.helpers import config_for


class _Echo(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        while data := self.request.recv(4096):
            self.request.sendall(data)


@pytest.fixture(scope="module")
def services() -> Iterator[tuple[int, int]]:
    """Two echo services on 127.0.0.1: the port an entry opens, and another port of that host."""
    servers = [socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Echo) for _ in range(2)]
    for server in servers:
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    yield servers[0].server_address[1], servers[1].server_address[1]
    for server in servers:
        server.shutdown()
        server.server_close()


def _connect(allowed_domains: list[str], target: str) -> tuple[str, list[Refusal]]:
    """``CONNECT target`` through a proxy allowing ``allowed_domains``: the proxy's answer, and
    what came back through the tunnel (``ping`` echoed) when it was opened."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    refusals: list[Refusal] = []
    stop = ProxyServer(allowed_domains, WebConfig()).serve(listener, refusals.append)
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
            connection.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
            answer = connection.recv(4096).decode("latin-1")
            if answer.startswith("HTTP/1.1 200"):
                connection.sendall(b"ping")
                answer += "|" + connection.recv(4096).decode("latin-1")
            else:  # a refusal: the proxy closes the connection after its body
                while chunk := connection.recv(4096):
                    answer += chunk.decode("latin-1")
    finally:
        stop()
    return answer, refusals


def test_an_entry_with_a_port_opens_that_port_and_no_other(services: tuple[int, int]) -> None:
    opened, other = services
    answer, _ = _connect([f"localhost:{opened}"], f"localhost:{opened}")
    assert answer.startswith("HTTP/1.1 200") and answer.endswith("|ping"), answer
    answer, refusals = _connect([f"localhost:{opened}"], f"localhost:{other}")
    assert answer.startswith("HTTP/1.1 403"), answer
    assert f"port {other}" in answer and "allowed_domains" in answer and f"localhost:{other}" in answer
    assert refusals and refusals[0].target == f"localhost:{other}"


def test_an_entry_without_a_port_opens_only_80_and_443(services: tuple[int, int]) -> None:
    """``allowed_domains = ["allowed.test"]`` reached a raw TCP service on another port."""
    opened, _ = services
    answer, _ = _connect(["localhost"], f"localhost:{opened}")
    assert answer.startswith("HTTP/1.1 403"), answer
    assert "80 and 443" in answer and f"localhost:{opened}" in answer, answer


def test_an_address_entry_with_a_port_reaches_that_port(services: tuple[int, int]) -> None:
    opened, other = services
    answer, _ = _connect([f"127.0.0.1:{opened}"], f"127.0.0.1:{opened}")
    assert answer.startswith("HTTP/1.1 200") and answer.endswith("|ping"), answer
    answer, _ = _connect([f"127.0.0.1:{opened}"], f"127.0.0.1:{other}")
    assert answer.startswith("HTTP/1.1 403"), answer


@pytest.mark.parametrize(
    ("entry", "target"),
    [
        ("local*", "localhost"),
        ("*host", "localhost"),
        ("localhos?", "localhost"),
        ("*", "localhost"),
        ("*", "127.0.0.1"),
        ("127.0.0.*", "127.0.0.1"),
    ],
)
def test_a_wildcard_entry_never_reaches_a_loopback_address(
    services: tuple[int, int], entry: str, target: str
) -> None:
    """A wildcard whose name resolved to 127.0.0.1 reached the host's loopback services."""
    opened, _ = services
    answer, refusals = _connect([f"{entry}:{opened}"], f"{target}:{opened}")
    assert answer.startswith("HTTP/1.1 403"), answer
    assert "loopback" in answer and f"wildcard entry '{entry}:{opened}'" in answer, answer
    assert refusals and "loopback" in refusals[0].reason
    answer, _ = _connect([f"{target}:{opened}"], f"{target}:{opened}")  # the exact name reaches it
    assert answer.startswith("HTTP/1.1 200") and answer.endswith("|ping"), answer


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ("pypi.org:0", "port"),
        ("pypi.org:65536", "port"),
        ("pypi.org:https", "port"),
        ("pypi.org:", "port"),
        ("[::1]:x", "port"),
        ("[::1", "']'"),
        (":443", "host"),
        ("", "empty"),
        ("10.0.0.0/33:22", "network"),
    ],
)
def test_a_bad_entry_stops_the_server_at_start_naming_the_key(
    tmp_path: object, entry: str, problem: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        config_for(tmp_path, exec={"sandbox": {"allowed_domains": ["pypi.org", entry]}})  # type: ignore[arg-type]
    message = caught.value.message
    assert "exec.sandbox.allowed_domains[1]" in message and problem in message, message


@pytest.mark.parametrize(
    "entries",
    [["pypi.org:8443"], ["*.example.com:22"], ["[::1]:8080", "::1", "fd00::/8"], ["10.0.0.0/8:5432"]],
)
def test_good_entries_are_taken(tmp_path: object, entries: list[str]) -> None:
    config = config_for(tmp_path, exec={"sandbox": {"allowed_domains": entries}})  # type: ignore[arg-type]
    assert config.exec.sandbox.allowed_domains == entries


def test_stopping_the_proxy_ends_the_tunnels_it_serves(services: tuple[int, int]) -> None:
    # stop() closed only the listener: an open tunnel lived on in the proxy's thread, and its task
    # was later destroyed pending with its sockets unclosed (a ResourceWarning failed CI once).
    opened, _ = services
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    stop = ProxyServer([f"localhost:{opened}"], WebConfig()).serve(listener, lambda refusal: None)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        connection.sendall(f"CONNECT localhost:{opened} HTTP/1.1\r\nHost: localhost\r\n\r\n".encode())
        assert connection.recv(4096).startswith(b"HTTP/1.1 200")
        connection.sendall(b"ping")
        assert connection.recv(4096) == b"ping"
        stop()
        connection.settimeout(5)
        assert connection.recv(4096) == b"", "the tunnel is closed when the proxy stops"
