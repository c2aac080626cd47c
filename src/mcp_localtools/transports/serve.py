"""Serving over HTTP: ``http_app`` (the SDK's Starlette app with ``/healthz`` and ``EdgeGuard``
in front) and ``serve_network`` (bind, announce, then uvicorn on the bound socket, with a head
timeout, a connection cap, the open-file limit raised and accept errors logged at a rate)."""

from __future__ import annotations

import logging
import socket
import sys
import time
from collections.abc import Callable
from typing import Any

from mcp.server import MCPServer
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from mcp_localtools._sdk import h11_protocol, token_verifier
from mcp_localtools._version import __version__
from mcp_localtools.errors import ConfigError
from mcp_localtools.transports.auth import StaticTokenVerifier
from mcp_localtools.transports.edge import EdgeGuard, NetworkSettings

__all__ = [
    "ACCEPT_ERROR_LOG_SECONDS",
    "HEAD_TIMEOUT_SECONDS",
    "http_app",
    "raise_open_file_limit",
    "serve_network",
]

logger = logging.getLogger(__name__)

HEAD_TIMEOUT_SECONDS = 10.0
"""A connection that sends no complete request head within this is closed."""
ACCEPT_ERROR_LOG_SECONDS = 10.0
"""Repeated accept errors (no descriptors left) are logged at most once per this many seconds."""


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


async def _healthz(request: Request) -> Response:
    return JSONResponse({"status": "ok", "version": __version__})


def http_app(server: MCPServer[Any], settings: NetworkSettings) -> Starlette:
    """The Starlette app of ``server`` for ``settings.transport``, with ``/healthz`` and the
    ``EdgeGuard`` checks in front.

    The endpoint is ``/mcp`` for Streamable HTTP; ``/sse`` and ``/messages/`` for SSE.
    """
    app = _bare_app(server, settings)
    verifier = token_verifier(server)
    verifier = verifier if isinstance(verifier, StaticTokenVerifier) else None
    sessions = server.session_manager if settings.transport == "streamable-http" else None
    app.add_middleware(EdgeGuard, settings=settings, verifier=verifier, sessions=sessions)
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


def _head_timeout_protocol(seconds: float = HEAD_TIMEOUT_SECONDS) -> type[Any]:
    """uvicorn's h11 protocol that closes a connection whose first request head has not arrived
    within ``seconds`` (uvicorn's own keep-alive timeout starts only after a first response, and
    any byte cancels it, so a slow client could hold a descriptor for ever). Returns the class."""

    class HeadTimeoutProtocol(h11_protocol()):  # type: ignore[misc]
        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self.loop.call_later(seconds, self._head_timeout)

        def _head_timeout(self) -> None:
            if getattr(self, "cycle", None) is None and not self.transport.is_closing():
                self.transport.close()

    return HeadTimeoutProtocol
