"""The command proxy refuses what httpget refuses: the special IPv6 ranges (NAT64, 6to4,
IPv4-compatible, site-local, Teredo, ...) and the private IPv4 ranges, even with a bare ``"*"`` in
``allowed_domains``, naming the range. The proxy is served on a 127.0.0.1 listener and every
address asked for is refused before any connection is made: nothing leaves the machine."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from mcp_localtools.config import WebConfig
from mcp_localtools.sandbox.proxy import ProxyServer

REFUSED = [
    ("64:ff9b::7f00:1", "NAT64"),
    ("64:ff9b:1::a00:1", "local-use NAT64"),
    ("2002:7f00:1::1", "6to4"),
    ("::7f00:1", "IPv4-compatible"),
    ("::ffff:0:7f00:1", "IPv4-translated"),
    ("fec0::1", "site-local"),
    ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"),
    ("::1", "loopback"),
    ("10.1.2.3", "private"),
    ("192.88.99.1", "6to4 relay anycast"),
]


@pytest.fixture(scope="module")
def proxy_port() -> Iterator[int]:
    listener = socket.create_server(("127.0.0.1", 0))
    port: int = listener.getsockname()[1]
    refusals: list[object] = []
    stop = ProxyServer(["*"], WebConfig()).serve(listener, refusals.append)
    yield port
    stop()


def _ask(port: int, request: bytes) -> str:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        connection.sendall(request)
        answer = b""
        while chunk := connection.recv(4096):
            answer += chunk
    return answer.decode("latin-1")


@pytest.mark.parametrize(("address", "range_name"), REFUSED)
@pytest.mark.parametrize("method", ["CONNECT", "GET"])
def test_the_proxy_refuses_a_special_range_and_names_it(
    proxy_port: int, address: str, range_name: str, method: str
) -> None:
    host = f"[{address}]" if ":" in address else address
    request = (
        f"CONNECT {host}:443 HTTP/1.1\r\nHost: {host}:443\r\n\r\n"
        if method == "CONNECT"
        else f"GET http://{host}/ HTTP/1.1\r\nHost: {host}\r\n\r\n"
    )
    answer = _ask(proxy_port, request.encode())
    assert answer.startswith("HTTP/1.1 403 Forbidden"), answer[:300]
    assert range_name in answer and "allowed_domains" in answer, answer[:400]
