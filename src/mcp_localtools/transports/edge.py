"""The HTTP edge: ``NetworkSettings`` (what is served where, and the Host/Origin rules) and
``EdgeGuard``, the ASGI middleware in front of the SDK's app (see the package docstring for every
check it makes)."""

from __future__ import annotations

import json
import logging
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

import anyio
from mcp.server.auth.provider import TokenVerifier
from mcp.server.transport_security import TransportSecuritySettings
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mcp_localtools import jsonrpc
from mcp_localtools._sdk import idle_http_sessions, requests_in_flight
from mcp_localtools.checks import bind_problems, is_loopback
from mcp_localtools.errors import raise_problems

__all__ = ["EdgeGuard", "NetworkSettings"]

logger = logging.getLogger(__name__)

_LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")


@dataclass(frozen=True, slots=True)
class NetworkSettings:
    """How to serve over the network.

    Attributes:
        transport: ``sse`` or ``streamable-http``.
        host, port: where to bind.
        authenticated: False only with ``--allow-unauthenticated-loopback``.
        allowed_hosts, allowed_origins: accepted in addition to the loopback names.
        max_request_body_bytes: larger bodies get 413.
        session_idle_timeout_seconds: Streamable HTTP sessions idle longer are closed.
        max_sessions: most concurrent Streamable HTTP sessions.
    """

    transport: Literal["sse", "streamable-http"]
    host: str
    port: int
    authenticated: bool
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    max_request_body_bytes: int = 4 * 1024 * 1024
    session_idle_timeout_seconds: float = 1800
    max_sessions: int = 100

    def check(self) -> list[str]:
        """Refuse unsafe combinations (``checks.bind_problems``, which the start-up check ran
        already); return the warnings to log at start-up.

        Raises:
            ConfigProblems: unauthenticated on a non-loopback address, or a non-loopback address
                without ``allowed_hosts``.
        """
        raise_problems(bind_problems(self.host, self.allowed_hosts, authenticated=self.authenticated))
        warnings: list[str] = []
        if not self.authenticated:
            warnings.append(
                "AUTHENTICATION IS OFF (--allow-unauthenticated-loopback): any local process or user can "
                "run tools, including commands, through this server"
            )
        if not is_loopback(self.host):
            warnings.append(
                f"listening on {self.host}:{self.port}: the server is reachable from the network, and "
                "without TLS the bearer token travels in clear text; put a TLS-terminating proxy in "
                "front or use an SSH tunnel"
            )
        return warnings

    def security(self) -> TransportSecuritySettings:
        """The Host/Origin allowlists: loopback names plus the configured ones, any port."""
        hosts: list[str] = []
        for name in (*_LOOPBACK_HOSTS, *self.allowed_hosts):
            hosts += [name] if name.endswith(":*") or _has_port(name) else [name, f"{name}:*"]
        origins = [f"http://{name}:*" for name in _LOOPBACK_HOSTS] + [
            f"https://{name}:*" for name in _LOOPBACK_HOSTS
        ]
        origins += list(self.allowed_origins)
        return TransportSecuritySettings(
            enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
        )

    def origin_allowed(self, origin: str) -> bool:
        """True when ``origin`` is exactly ``scheme://host[:port]`` (http or https, numeric port)
        with a loopback host (any port) or equal to an allowed origin (``:*`` for any port)."""
        parsed = _parse_origin(origin)
        if parsed is None:
            return False
        scheme, host, port = parsed
        if host in {name.strip("[]") for name in _LOOPBACK_HOSTS}:
            return True
        for allowed in self.allowed_origins:
            any_port = allowed.endswith(":*")
            wanted = _parse_origin(allowed[:-2] if any_port else allowed)
            if wanted is not None and wanted[:2] == (scheme, host) and (any_port or wanted[2] == port):
                return True
        return False


def _parse_origin(origin: str) -> tuple[str, str, int] | None:
    """``(scheme, host, port)`` of a serialized origin, the default port filled in; None when it
    is not exactly ``http(s)://host[:digits]``."""
    try:
        parts = urlsplit(origin)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.username or parts.password:
        return None
    if parts.path or parts.query or parts.fragment or origin.endswith(":"):
        return None
    netloc = parts.netloc.rsplit(":", 1)[-1] if port is not None else ""
    if port is not None and not netloc.isdigit():
        return None
    return (
        parts.scheme,
        parts.hostname.lower(),
        port if port is not None else (443 if parts.scheme == "https" else 80),
    )


class EdgeGuard:
    """ASGI middleware in front of the SDK's app: the header, Origin, token and in-flight-id
    checks of the module docstring."""

    def __init__(
        self, app: ASGIApp, settings: NetworkSettings, verifier: TokenVerifier | None, sessions: Any = None
    ) -> None:
        self.app = app
        self.settings = settings
        self.verifier = verifier
        self.in_flight: set[tuple[str, str]] = set()
        self.sessions = sessions  # the SDK's StreamableHTTPSessionManager (None for SSE)
        self.recent: OrderedDict[str, None] = OrderedDict()  # session ids, least recently used first
        self.opening = anyio.Lock()  # one new session at a time, from the eviction to its answer

    async def _evict_idle_session(self) -> None:
        """At ``max_sessions``, end the least recently used session with no request in flight, so a
        new client is served instead of refused (abandoned sessions would otherwise hold every slot
        until their idle timeout). Only a session that has answered is a candidate (``recent``):
        one still being opened has no request in flight yet, and closing it answered its client
        404. Reads the SDK manager's session table (``_sdk.idle_http_sessions``)."""
        found = idle_http_sessions(self.sessions)
        if found is None or len(found[0]) < self.settings.max_sessions:
            return
        table, discard = found
        for session in list(self.recent):
            transport = table.get(session)
            if transport is not None and requests_in_flight(transport) == 0:
                logger.info(
                    "max_sessions (%d) reached: closing the least recently used idle session", len(table)
                )
                self.recent.pop(session, None)
                await discard(session, transport)
                return

    def _touch(self, session: str) -> None:
        self.recent[session] = None
        self.recent.move_to_end(session)
        while len(self.recent) > 4 * self.settings.max_sessions:
            self.recent.popitem(last=False)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers: list[tuple[bytes, bytes]] = scope["headers"]
        values = {name.lower(): value for name, value in headers}
        if not await self._admitted(scope, headers, values, send):
            return
        data: Any = None
        if scope["method"] == "POST":
            if not await self._announced_within_cap(values, send):
                return
            checked = await self._checked_body(scope, receive, send)
            if checked is None:
                return
            receive, data = checked
        session = values.get(b"mcp-session-id")
        if self.sessions is not None and session is None and scope["method"] == "POST":
            await self._new_session(scope, receive, send)
            return
        if session is not None:
            self._touch(session.decode("latin-1"))
        if session is None or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        await self._one_id_at_a_time(scope, receive, send, session.decode("latin-1"), data)

    async def _admitted(
        self, scope: Scope, headers: list[tuple[bytes, bytes]], values: dict[bytes, bytes], send: Send
    ) -> bool:
        """The header, Origin and token checks; False once a refusal was sent."""
        names = [name.lower() for name, _ in headers]
        for name in (b"host", b"authorization"):
            if names.count(name) > 1:
                await _plain(send, 400, f"Bad Request: more than one {name.decode().title()} header")
                return False
        if b"transfer-encoding" in names and b"content-length" in names:
            await _plain(send, 400, "Bad Request: Transfer-Encoding together with Content-Length")
            return False
        origin = values.get(b"origin")
        if origin is not None and not self.settings.origin_allowed(origin.decode("latin-1")):
            logger.warning("refused Origin %r", origin.decode("latin-1")[:200])
            await _plain(send, 403, "Invalid Origin header")
            return False
        authorization = values.get(b"authorization")
        if self.verifier is not None and authorization is not None and scope["path"] != "/healthz":
            kind, _, given = authorization.partition(b" ")
            if (
                kind.lower() == b"bearer"
                and await self.verifier.verify_token(given.strip().decode("latin-1")) is None
            ):
                await _invalid_token(send)
                return False
        return True

    async def _new_session(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A POST without a session id (a new session): make room at ``max_sessions``, and
        remember the id the SDK answers with. New sessions are opened one at a time, from the
        eviction to the end of the opening request (an ``initialize``, answered at once): opened
        together, each found every slot held by a session still being opened, none idle, and
        was refused 503."""

        async def remember(message: Message) -> None:
            if message["type"] == "http.response.start":
                for name, value in message.get("headers", []):
                    if name.lower() == b"mcp-session-id":
                        self._touch(value.decode("latin-1"))
            await send(message)

        async with self.opening:
            await self._evict_idle_session()
            await self.app(scope, receive, remember)

    async def _announced_within_cap(self, values: dict[bytes, bytes], send: Send) -> bool:
        """Answer 413 at once, from the head, to a POST whose ``Content-Length`` is over
        ``max_request_body_bytes`` (waiting for such a body held the request until the client gave
        up); False once it was answered."""
        announced = values.get(b"content-length", b"").strip()
        cap = self.settings.max_request_body_bytes
        if not (announced.isdigit() and int(announced) > cap):
            return True
        await _plain(
            send,
            413,
            f"Payload Too Large: the request announces {int(announced)} bytes of body; "
            f"[server] max_request_body_bytes is {cap}",
        )
        return False

    async def _checked_body(self, scope: Scope, receive: Receive, send: Send) -> tuple[Receive, Any] | None:
        """Read a POST body (within the body cap) and answer 400 with a JSON-RPC error, its id
        recovered where it can be, for a body ``jsonrpc.parse`` refuses (not UTF-8 or not JSON, an
        integer too long to convert, nesting past ``MAX_NESTING``: the SDK's parser raised
        ``RecursionError``, a 500 with a traceback) or a request id that is neither a string nor
        an integer (the SDK took it for a notification: 202 and no answer).

        Returns:
            ``(receive, data)``: a ``receive`` that replays the body to the app, and the parsed
            message (None when the body is over the cap, which the SDK answers 413); None when
            this answered the request.
        """
        body = bytearray()
        more = True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return receive, None
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > self.settings.max_request_body_bytes:
                break
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": bytes(body), "more_body": more}
            return await receive()

        if more:
            return replay, None
        data = jsonrpc.parse(bytes(body))
        refusal = data if isinstance(data, jsonrpc.Refusal) else jsonrpc.id_refusal(data)
        if refusal is None:
            return replay, data
        error = {"code": refusal.code, "message": refusal.message}
        response = JSONResponse({"jsonrpc": "2.0", "id": refusal.id, "error": error}, status_code=400)
        await response(scope, replay, send)
        return None

    async def _one_id_at_a_time(
        self, scope: Scope, receive: Receive, send: Send, session: str, data: Any
    ) -> None:
        """Refuse a request id already in flight on ``session``; ``data`` is the parsed body."""
        key = None
        if isinstance(data, dict) and "method" in data and isinstance(data.get("id"), str | int):
            key = (session, json.dumps(data["id"]))
            if key in self.in_flight:
                error = {
                    "code": -32600,
                    "message": f"Invalid Request: id {data['id']!r} is already used by a request still in "
                    "flight on this session; give every request its own id",
                }
                response = JSONResponse({"jsonrpc": "2.0", "id": data["id"], "error": error})
                await response(scope, receive, send)
                return
            self.in_flight.add(key)
        try:
            await self.app(scope, receive, send)
        finally:
            if key is not None:
                self.in_flight.discard(key)


async def _plain(send: Send, status: int, text: str) -> None:
    body = text.encode("utf-8")
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _invalid_token(send: Send) -> None:
    body = json.dumps({"error": "invalid_token", "error_description": "invalid bearer token"}).encode()
    challenge = b'Bearer error="invalid_token", error_description="invalid bearer token"'
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"www-authenticate", challenge),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _has_port(host: str) -> bool:
    return host.rsplit(":", 1)[-1].isdigit() and not host.endswith("]")
