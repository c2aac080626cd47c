"""The filtering proxy between the connections' sandboxes and the network.

With ``[exec.sandbox] network = false`` a connection's sandbox has a network of its own with only a
loopback. When ``allowed_domains`` is not empty, the session's supervisor opens a listener on
``127.0.0.1:PROXY_PORT`` of that loopback and hands it to the server, which serves this proxy on it
(so nothing inside the sandbox relays bytes, and no socket file is bound in); commands get
``HTTP_PROXY``/``HTTPS_PROXY`` (and the lower-case, npm and pip spellings) pointing at it, so
proxy-aware programs (pip, uv, npm, git over https, curl) reach the allowed hosts and nothing else.

Each request, ``CONNECT host:port`` (https, and anything tunnelled) or an absolute-form ``GET
http://...`` (plain http; the connection is closed after it, so a second request on it cannot
reach an unchecked host), is checked like an httpget URL, by host and port
(``policy/network.py`` ``ProxyPolicy``): the host must match an ``allowed_domains`` entry and not
``[web] blocked_hosts``, and the port must be one that entry opens (80 and 443, or the one it
names: ``allowed.test:8443``); it is resolved here, every address is checked (a loopback, private
or link-local address only through an entry naming it exactly, by name or address, never through
a wildcard; a cloud metadata address only when the address itself is listed), and the connection
goes to the first checked address, so a second DNS answer cannot slip another in. A refusal answers
403 with a reason that names the setting to change, and is recorded for the session
(``refusals``) so the command's result can say so.

The proxy runs its own asyncio loop in one thread per server (``ProxyServer``); the exec tools'
event loop never waits for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from mcp_localtools.config import WebConfig
from mcp_localtools.errors import PolicyViolation
from mcp_localtools.policy.network import ProxyPolicy, parse_ip

__all__ = ["PROXY_PORT", "ProxyServer", "proxy_environment"]

logger = logging.getLogger(__name__)

PROXY_PORT = 3128
"""The port of the proxy on each sandbox's own loopback."""
_HEAD_BYTES = 64 * 1024
_CONNECT_SECONDS = 15.0
_COPY_CHUNK = 64 * 1024
_MAX_REFUSALS = 20


def proxy_environment(port: int = PROXY_PORT) -> dict[str, str]:
    """The variables that send proxy-aware programs to the proxy (loopback goes direct)."""
    url = f"http://127.0.0.1:{port}"
    direct = "localhost,127.0.0.1,::1"
    return {
        "HTTP_PROXY": url,
        "HTTPS_PROXY": url,
        "http_proxy": url,
        "https_proxy": url,
        "NO_PROXY": direct,
        "no_proxy": direct,
        "npm_config_proxy": url,
        "npm_config_https_proxy": url,
        "PIP_PROXY": url,
    }


@dataclass(frozen=True, slots=True)
class Refusal:
    """One request the proxy refused: ``host:port`` and why."""

    target: str
    reason: str


class ProxyServer:
    """Serves the filtering proxy on the listeners handed to it, in a thread of its own.

    Args:
        allowed_domains: ``[exec.sandbox] allowed_domains`` (host globs, addresses, networks,
            each with an optional ``:port``).
        web: ``[web]``, whose ``blocked_hosts`` are refused here too.

    Raises:
        ConfigError: an entry is malformed (``ProxyPolicy.from_config``).
    """

    def __init__(self, allowed_domains: list[str], web: WebConfig) -> None:
        self.policy = ProxyPolicy.from_config(allowed_domains, web)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._guard = threading.Lock()
        self._ready = threading.Event()

    def _thread(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            loop.close()

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        with self._guard:
            if self._loop is None:
                threading.Thread(target=self._thread, name="exec-proxy", daemon=True).start()
                self._ready.wait()
        assert self._loop is not None
        return self._loop

    def serve(self, listener: socket.socket, record: Callable[[Refusal], None]) -> Callable[[], None]:
        """Serve the proxy on ``listener`` (a listening TCP socket; taken over) until the returned
        function is called; ``record`` receives each refusal (called in the proxy's thread)."""
        loop = self._running_loop()
        listener.setblocking(False)
        holder: dict[str, asyncio.base_events.Server] = {}
        live: set[asyncio.Task[None]] = set()  # connections being served, ended by stop()

        async def start() -> None:
            async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
                task = asyncio.current_task()
                assert task is not None
                live.add(task)
                try:
                    await self._handle(reader, writer, record)
                finally:
                    live.discard(task)

            holder["server"] = await asyncio.start_server(handle, sock=listener, limit=_HEAD_BYTES)

        asyncio.run_coroutine_threadsafe(start(), loop).result(timeout=10)

        def close() -> None:
            server = holder.get("server")
            if server is not None:
                server.close()
            for task in list(live):  # each closes its sockets as it ends
                task.cancel()

        def stop() -> None:
            if not loop.is_closed():
                loop.call_soon_threadsafe(close)

        return stop

    async def _handle(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, record: Callable[[Refusal], None]
    ) -> None:
        upstream: asyncio.StreamWriter | None = None
        try:
            try:
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
            except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError):
                return
            method, target, version, rest = _parse_head(head)
            if method is None:
                await _answer(writer, 400, "not an HTTP proxy request")
                return
            host, port, forward = _target(method, target, rest)
            if host is None:
                await _answer(writer, 400, "give an absolute http:// URL or CONNECT host:port")
                return
            try:
                address = await self._check(host, port)
            except PolicyViolation as exc:
                record(Refusal(f"{host}:{port}", exc.message))
                await _answer(writer, 403, exc.message)
                return
            except OSError as exc:
                await _answer(writer, 502, f"cannot resolve {host}: {exc}")
                return
            try:
                up_reader, up_writer = await asyncio.wait_for(
                    asyncio.open_connection(str(address), port, limit=_HEAD_BYTES), _CONNECT_SECONDS
                )
            except (OSError, TimeoutError) as exc:
                await _answer(writer, 502, f"cannot connect to {host}:{port}: {exc}")
                return
            upstream = up_writer
            if method == "CONNECT":
                writer.write(f"{version} 200 Connection established\r\n\r\n".encode())
                await writer.drain()
            else:
                up_writer.write(forward)
            await _relay(reader, writer, up_reader, up_writer)
        except (ConnectionError, OSError):
            pass
        finally:
            for stream in (writer, upstream):
                if stream is not None:
                    stream.close()

    async def _check(self, host: str, port: int) -> object:
        """The address to connect to: ``host`` and ``port`` checked, the host resolved, every
        address checked.

        Raises:
            PolicyViolation: refused, with the setting to change.
            OSError: the name does not resolve.
        """
        self.policy.check_target(host, port)
        literal = parse_ip(host)
        if literal is not None:
            addresses = [literal]
        else:
            loop = asyncio.get_running_loop()
            infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            addresses = list(
                dict.fromkeys(ip for ip in (parse_ip(str(i[4][0])) for i in infos) if ip is not None)
            )
            if not addresses:
                raise OSError(f"{host} has no address")
        for ip in addresses:
            self.policy.check_address(host, port, ip)
        return addresses[0]


def _parse_head(head: bytes) -> tuple[str | None, str, str, list[bytes]]:
    lines = head.split(b"\r\n")
    parts = lines[0].decode("latin-1").split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/"):
        return None, "", "", []
    return parts[0].upper(), parts[1], parts[2], [line for line in lines[1:] if line]


def _target(method: str, target: str, headers: list[bytes]) -> tuple[str | None, int, bytes]:
    """``(host, port, the request to send upstream)``; host None when the target is not usable."""
    if method == "CONNECT":
        host, _, port = target.rpartition(":")
        host = host.strip("[]")
        return (host or None), int(port) if port.isdigit() else 443, b""
    if not target.lower().startswith("http://"):
        return None, 0, b""
    rest = target[len("http://") :]
    authority, slash, path = rest.partition("/")
    host, colon, port = authority.rpartition(":") if "]" not in authority.rpartition(":")[2] else ("", "", "")
    if not colon or not port.isdigit():
        host, port = authority, "80"
    host = host.strip("[]")
    kept = [
        line for line in headers if not line.lower().startswith((b"proxy-", b"connection:", b"keep-alive:"))
    ]
    request = f"{method} {slash or '/'}{path} HTTP/1.1\r\n".encode()
    request += b"\r\n".join([*kept, b"Connection: close"]) + b"\r\n\r\n"
    return (host or None), int(port), request


async def _answer(writer: asyncio.StreamWriter, status: int, reason: str) -> None:
    phrase = {400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway"}[status]
    body = f"mcp-localtools sandbox proxy: {reason}\n".encode()
    short = reason.replace("\r", " ").replace("\n", " ")[:300]
    writer.write(
        f"HTTP/1.1 {status} {phrase}: {short}\r\nContent-Type: text/plain\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
        + body
    )
    with contextlib.suppress(ConnectionError, OSError):
        await writer.drain()


async def _relay(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    up_reader: asyncio.StreamReader,
    upstream: asyncio.StreamWriter,
) -> None:
    async def copy(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
        try:
            while data := await source.read(_COPY_CHUNK):
                sink.write(data)
                await sink.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            with contextlib.suppress(OSError, RuntimeError):
                if sink.can_write_eof():
                    sink.write_eof()

    await asyncio.gather(copy(reader, upstream), copy(up_reader, writer))


class RefusalLog:
    """The proxy's recent refusals for one session (thread-safe, bounded)."""

    def __init__(self) -> None:
        self._items: deque[Refusal] = deque(maxlen=_MAX_REFUSALS)
        self._lock = threading.Lock()

    def record(self, refusal: Refusal) -> None:
        with self._lock:
            self._items.append(refusal)

    def take(self) -> list[Refusal]:
        with self._lock:
            items = list(self._items)
            self._items.clear()
        return items
