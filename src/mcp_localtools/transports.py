"""Network transports: SSE and Streamable HTTP with a bearer token and DNS-rebinding protection.

What every HTTP request passes before a tool can run:

1. the bearer token (the SDK's ``BearerAuthBackend`` + ``RequireAuthMiddleware`` with a
   constant-time static-token verifier): missing or wrong → 401. The token is read only from the
   ``Authorization`` header, never from the URL, and never logged;
2. the Host and Origin checks (the SDK's ``TransportSecuritySettings``, always enabled and given
   explicitly, because the SDK turns them off for a non-loopback ``host``): foreign Host → 421,
   foreign Origin → 403;
3. the request-body cap (413), and for Streamable HTTP the session idle timeout and the session cap.

``/healthz`` answers ``{"status": "ok", "version": ...}`` without authentication and says nothing
else. The one way to run without a token is ``--allow-unauthenticated-loopback``, accepted only
when the server binds a loopback address.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from mcp.server import MCPServer
from mcp.server.auth.provider import AccessToken, TokenVerifier
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from mcp_localtools._version import __version__
from mcp_localtools.errors import ConfigError

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

MIN_TOKEN_CHARS = 32
"""Shortest token accepted; ``mcp-localtools token`` makes 43 characters (256 bits)."""
_LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (``127.0.0.0/8``, ``::1``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def read_token_file(path: str | Path) -> str:
    """Read a bearer token from a file that only its owner can read.

    Raises:
        ConfigError: the file is missing or unreadable (permission denied names the fix: run as
            the file's owner, in a container ``--user``), not a regular file, readable or writable
            by group or others, empty, or shorter than ``MIN_TOKEN_CHARS``.
    """
    file = Path(path).expanduser()
    try:
        info = file.stat()
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError(f"the auth token file {file} is not a regular file")
        if info.st_mode & 0o077:
            raise ConfigError(
                f"refusing the auth token file {file}: others can access it "
                f"(mode {stat.S_IMODE(info.st_mode):04o}); run: chmod 600 {file}"
            )
        text = file.read_text(encoding="utf-8")
    except PermissionError:
        getuid = getattr(os, "getuid", None)
        who = f" as uid {getuid()}" if getuid is not None else ""
        raise ConfigError(
            f"cannot read the auth token file {file}: permission denied to the server running{who}; "
            'run the server as the file\'s owner (in a container: --user "$(id -u):$(id -g)")'
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ConfigError(f"cannot read the auth token file {file}: {reason}") from None
    return check_token(text.strip(), f"the auth token file {file}")


def check_token(token: str, source: str) -> str:
    """Refuse an empty or short token.

    Raises:
        ConfigError: fewer than ``MIN_TOKEN_CHARS`` characters, or whitespace inside.
    """
    if len(token) < MIN_TOKEN_CHARS or any(ch.isspace() for ch in token):
        raise ConfigError(
            f"{source} holds no usable token: it needs at least {MIN_TOKEN_CHARS} characters and no spaces; "
            "make one with: mcp-localtools token --file PATH"
        )
    return token


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
                found = AccessToken(token="<redacted>", client_id="mcp-localtools-token", scopes=scopes)  # noqa: S106
        return found


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
        """Refuse unsafe combinations; return the warnings to log at start-up.

        Raises:
            ConfigError: unauthenticated on a non-loopback address, or a non-loopback address
                without ``allowed_hosts``.
        """
        warnings: list[str] = []
        if not self.authenticated:
            if not is_loopback(self.host):
                raise ConfigError(
                    f"--allow-unauthenticated-loopback works on loopback addresses only, not {self.host}"
                )
            warnings.append(
                "AUTHENTICATION IS OFF (--allow-unauthenticated-loopback): any local process or user can "
                "run tools, including commands, through this server"
            )
        if not is_loopback(self.host):
            if not self.allowed_hosts:
                raise ConfigError(
                    f"binding {self.host} makes the server reachable from the network; name the host names "
                    "clients use in [server] allowed_hosts (or --allowed-host), e.g. myhost.lan"
                )
            warnings.append(f"listening on {self.host}:{self.port}: the server is reachable from the network")
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


def _has_port(host: str) -> bool:
    return host.rsplit(":", 1)[-1].isdigit() and not host.endswith("]")


async def _healthz(request: Request) -> Response:
    return JSONResponse({"status": "ok", "version": __version__})


def http_app(server: MCPServer[Any], settings: NetworkSettings) -> Starlette:
    """The Starlette app of ``server`` for ``settings.transport``, with ``/healthz``.

    The endpoint is ``/mcp`` for Streamable HTTP; ``/sse`` and ``/messages/`` for SSE.
    """
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


def serve_network(server: MCPServer[Any], settings: NetworkSettings) -> None:
    """Serve ``server`` over HTTP until interrupted (blocks).

    Raises:
        ConfigError: the settings are unsafe (see ``NetworkSettings.check``).
    """
    import uvicorn

    for warning in settings.check():
        logger.warning(warning)
    app = http_app(server, settings)
    path = "/sse" if settings.transport == "sse" else "/mcp"
    logger.warning("serving %s on http://%s:%d%s", settings.transport, settings.host, settings.port, path)
    config = uvicorn.Config(
        app,
        host=settings.host.strip("[]"),
        port=settings.port,
        log_config=None,  # our handlers: stderr only
        access_log=False,  # URLs carry session ids
        server_header=False,
        timeout_graceful_shutdown=5,
    )
    uvicorn.Server(config).run()
