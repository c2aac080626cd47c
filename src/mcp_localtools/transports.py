"""Network transports: SSE and Streamable HTTP with a bearer token and DNS-rebinding protection.

What every HTTP request passes before a tool can run:

1. the bearer token (the SDK's ``BearerAuthBackend`` + ``RequireAuthMiddleware`` with a
   constant-time static-token verifier): missing or wrong → 401. The token is read only from the
   ``Authorization`` header, never from the URL, and never logged;
2. the Host and Origin checks (the SDK's ``TransportSecuritySettings``, always enabled and given
   explicitly, because the SDK turns them off for a non-loopback ``host``): foreign Host → 421,
   foreign Origin → 403;
3. the request-body cap (413), and for Streamable HTTP the session idle timeout and the session cap.

In front of those, ``_EdgeGuard`` answers 400 to a request with two ``Host`` or two
``Authorization`` headers or with both ``Transfer-Encoding`` and ``Content-Length``; 403 to an
``Origin`` whose scheme, host and numeric port do not exactly match an allowed one (no prefix
match); 401 "invalid bearer token" to a wrong token (a missing one keeps the SDK's "Authentication
required"); 400 with a JSON-RPC error (its id recovered where it can be) to a POST body that
``jsonrpc.parse`` refuses (nesting past ``jsonrpc.MAX_NESTING``, an integer too long to convert,
broken JSON) or whose request id is neither a string nor an integer; and a JSON-RPC error to a
second request whose id is still in flight on the same Streamable HTTP session (the first is
still answered); at ``max_sessions`` a new session evicts the
least recently used idle one instead of getting 503. uvicorn closes a connection that sends no
complete request head within ``HEAD_TIMEOUT_SECONDS``, answers 503 beyond ``limit_concurrency``
connections, and runs with the soft ``RLIMIT_NOFILE`` raised to the hard limit; repeated accept
errors are logged once per ``ACCEPT_ERROR_LOG_SECONDS``.

``/healthz`` answers ``{"status": "ok", "version": ...}`` without authentication and says nothing
else. The one way to run without a token is ``--allow-unauthenticated-loopback``, accepted only
when the server binds a loopback address.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import socket
import sys
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

from mcp.server import MCPServer
from mcp.server.auth.provider import AccessToken, TokenVerifier
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mcp_localtools import jsonrpc
from mcp_localtools._sdk import h11_protocol, idle_http_sessions, requests_in_flight, token_verifier
from mcp_localtools._version import __version__
from mcp_localtools.checks import bind_problems, is_loopback, raise_problems
from mcp_localtools.errors import ConfigError
from mcp_localtools.tokens import MIN_TOKEN_CHARS, read_token_file

__all__ = [
    "MIN_TOKEN_CHARS",
    "PROFILE_SCOPE",
    "NetworkSettings",
    "StaticTokenVerifier",
    "http_app",
    "is_loopback",
    "read_token_file",
    "serve_network",
]

logger = logging.getLogger(__name__)

_LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")


PROFILE_SCOPE = "mcp-localtools-profile:"
"""Scope prefix of a profile token's ``AccessToken``: the profile's name follows it."""


class StaticTokenVerifier(TokenVerifier):
    """Accepts the server's bearer token and each profile's token, compared in constant time.

    Args:
        token: the server's token (every tool), or None.
        profile_tokens: more tokens, each mapped to a ``[profiles]`` name; the access token of
            one carries the scope ``PROFILE_SCOPE + name``.

    Raises:
        ConfigError: the same token is given twice.
    """

    def __init__(self, token: str | None, profile_tokens: Mapping[str, str] | None = None) -> None:
        self._tokens: list[tuple[bytes, str | None]] = []
        if token is not None:
            self._tokens.append((token.encode("utf-8"), None))
        for secret, profile in (profile_tokens or {}).items():
            if secret == token:
                raise ConfigError(f"profile {profile!r} uses the server's own bearer token; give it its own")
            self._tokens.append((secret.encode("utf-8"), profile))

    async def verify_token(self, token: str) -> AccessToken | None:
        given = token.encode("utf-8")
        found: AccessToken | None = None
        for secret, profile in self._tokens:  # every comparison runs: no early exit to time
            if hmac.compare_digest(given, secret) and found is None:
                scopes = [] if profile is None else [PROFILE_SCOPE + profile]
                found = AccessToken(token="<redacted>", client_id=token_principal(secret), scopes=scopes)  # noqa: S106
        return found


def token_principal(secret: bytes) -> str:
    """Who presented a bearer token, as the owner of what its requests keep (exec sessions,
    processes, kept outputs): ``token-`` and 16 hex digits of the token's SHA-256, which names the
    token without revealing it (audit lines carry it)."""
    return "token-" + hashlib.sha256(secret).hexdigest()[:16]


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


HEAD_TIMEOUT_SECONDS = 10.0
"""A connection that sends no complete request head within this is closed."""
ACCEPT_ERROR_LOG_SECONDS = 10.0
"""Repeated accept errors (no descriptors left) are logged at most once per this many seconds."""


class _EdgeGuard:
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

    async def _evict_idle_session(self) -> None:
        """At ``max_sessions``, end the least recently used session with no request in flight, so a
        new client is served instead of refused (abandoned sessions would otherwise hold every slot
        until their idle timeout). Reads the SDK manager's session table (``_sdk.idle_http_sessions``)."""
        found = idle_http_sessions(self.sessions)
        if found is None or len(found[0]) < self.settings.max_sessions:
            return
        table, discard = found
        for session in [*self.recent, *(key for key in table if key not in self.recent)]:
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
        remember the id the SDK answers with."""
        await self._evict_idle_session()

        async def remember(message: Message) -> None:
            if message["type"] == "http.response.start":
                for name, value in message.get("headers", []):
                    if name.lower() == b"mcp-session-id":
                        self._touch(value.decode("latin-1"))
            await send(message)

        await self.app(scope, receive, remember)

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


class _RateLimitedAcceptErrors(logging.Filter):
    """Lets one accept-error record through per ``ACCEPT_ERROR_LOG_SECONDS`` and counts the rest."""

    def __init__(self) -> None:
        super().__init__()
        self.last = -ACCEPT_ERROR_LOG_SECONDS
        self.dropped = 0

    def filter(self, record: logging.LogRecord) -> bool:
        if "accept" not in str(record.msg):
            return True
        now = time.monotonic()
        if now - self.last < ACCEPT_ERROR_LOG_SECONDS:
            self.dropped += 1
            return False
        self.last = now
        if self.dropped:
            record.msg = (
                f"{record.msg} ({self.dropped} more like it in the last {ACCEPT_ERROR_LOG_SECONDS:.0f} s)"
            )
            self.dropped = 0
        record.exc_info = None  # one line, not a traceback per refused connection
        return True


if sys.platform == "win32":  # pragma: no cover - Windows

    def raise_open_file_limit() -> tuple[int, int] | None:
        """None: Windows has no ``RLIMIT_NOFILE``."""
        return None

else:
    import resource

    def raise_open_file_limit() -> tuple[int, int] | None:
        """Raise the soft ``RLIMIT_NOFILE`` to the hard limit; returns ``(before, after)``, None
        when it cannot be changed."""
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
        if soft != resource.RLIM_INFINITY and soft >= target:
            return soft, soft
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError):
            return None
        return soft, target


def _has_port(host: str) -> bool:
    return host.rsplit(":", 1)[-1].isdigit() and not host.endswith("]")


async def _healthz(request: Request) -> Response:
    return JSONResponse({"status": "ok", "version": __version__})


def http_app(server: MCPServer[Any], settings: NetworkSettings) -> Starlette:
    """The Starlette app of ``server`` for ``settings.transport``, with ``/healthz`` and the
    ``_EdgeGuard`` checks in front.

    The endpoint is ``/mcp`` for Streamable HTTP; ``/sse`` and ``/messages/`` for SSE.
    """
    app = _bare_app(server, settings)
    verifier = token_verifier(server)
    verifier = verifier if isinstance(verifier, StaticTokenVerifier) else None
    sessions = server.session_manager if settings.transport == "streamable-http" else None
    app.add_middleware(_EdgeGuard, settings=settings, verifier=verifier, sessions=sessions)
    return app


def _bare_app(server: MCPServer[Any], settings: NetworkSettings) -> Starlette:
    server.custom_route("/healthz", methods=["GET"])(_healthz)
    if settings.transport == "sse":
        return server.sse_app(
            max_request_body_size=settings.max_request_body_bytes,
            transport_security=settings.security(),
            host=settings.host,
        )
    return server.streamable_http_app(
        max_request_body_size=settings.max_request_body_bytes,
        session_idle_timeout=settings.session_idle_timeout_seconds,
        max_sessions=settings.max_sessions,
        transport_security=settings.security(),
        host=settings.host,
    )


def serve_network(
    server: MCPServer[Any], settings: NetworkSettings, *, on_listening: Callable[[], object] | None = None
) -> None:
    """Serve ``server`` over HTTP until interrupted (blocks). The address is bound first, then
    ``on_listening`` is called (the start-up line), then uvicorn serves on the bound socket.

    Raises:
        ConfigError: the settings are unsafe (see ``NetworkSettings.check``), or the address cannot
            be bound (in use, not an address of this host, a privileged port).
    """
    import uvicorn

    for warning in settings.check():
        logger.warning(warning)
    limits = raise_open_file_limit()
    if limits is not None and limits[0] != limits[1]:
        logger.info("raised the open-file limit from %d to %d", *limits)
    logging.getLogger("asyncio").addFilter(_RateLimitedAcceptErrors())
    app = http_app(server, settings)
    listener = _bind(settings.host.strip("[]"), settings.port)
    if on_listening is not None:
        on_listening()
    config = uvicorn.Config(
        app,
        host=settings.host.strip("[]"),
        port=settings.port,
        log_config=None,  # our handlers: stderr only
        access_log=False,  # URLs carry session ids
        server_header=False,
        timeout_graceful_shutdown=5,
        http=_head_timeout_protocol(),
        timeout_keep_alive=5,
        limit_concurrency=min(4096, max(64, (limits[1] if limits else 1024) // 2)),
    )
    uvicorn.Server(config).run(sockets=[listener])


def _bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (IPv6 when ``host`` is an IPv6 address).

    Raises:
        ConfigError: the address cannot be bound; the message names it and the reason.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host, port), family=family, backlog=2048)
    except OSError as exc:
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc


def _head_timeout_protocol() -> type[Any]:
    """uvicorn's h11 protocol that closes a connection whose first request head has not arrived
    within ``HEAD_TIMEOUT_SECONDS`` (uvicorn's own keep-alive timeout starts only after a first
    response, and any byte cancels it, so a slow client could hold a descriptor for ever)."""

    class HeadTimeoutProtocol(h11_protocol()):  # type: ignore[misc]
        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self.loop.call_later(HEAD_TIMEOUT_SECONDS, self._head_timeout)

        def _head_timeout(self) -> None:
            if getattr(self, "cycle", None) is None and not self.transport.is_closing():
                self.transport.close()

    return HeadTimeoutProtocol
