"""Every private hook of the MCP SDK and uvicorn this package uses, each behind one function.

The SDK's public API does not cover six things the server needs: the low-level server an
``MCPServer`` wraps (our stdio transport drives it), the per-connection state and exit stack of a
session (session identity and its end), the token verifier an ``MCPServer`` was given (the HTTP
edge checks tokens before the SDK does), the Streamable HTTP session table (evicting an idle
session at ``max_sessions``), the stream pair the SDK's own transports use, and whether a request
asked for progress (a command's output is streamed only then). uvicorn's h11
protocol is subclassed for the request-head timeout. ``tests/test_sdk_hooks.py`` checks that each
hook still exists, so an SDK or uvicorn upgrade that removes one fails there, by name.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from mcp.server import MCPServer
from mcp.server.auth.provider import TokenVerifier
from mcp.server.connection import Connection
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import Context
from mcp.shared._context_streams import create_context_streams

if TYPE_CHECKING:
    from mcp.server.session import ServerSession

__all__ = [
    "HOOKS",
    "connection_of",
    "create_context_streams",
    "h11_protocol",
    "idle_http_sessions",
    "lowlevel_server",
    "progress_requested",
    "token_verifier",
]

HOOKS: dict[str, str] = {
    "MCPServer._lowlevel_server": "stdio: our bounded transport drives the low-level server",
    "MCPServer._token_verifier": "HTTP edge: a wrong token gets its own 401 before the SDK's",
    "ServerSession._connection": "sessions: the connection's state and exit stack",
    "StreamableHTTPSessionManager._server_instances": "HTTP edge: the session table, for eviction",
    "StreamableHTTPSessionManager._discard_session": "HTTP edge: end an evicted session",
    "StreamableHTTPServerTransport._requests_in_flight": "HTTP edge: only idle sessions are evicted",
    "mcp.shared._context_streams.create_context_streams": "stdio: the SDK's stream pair",
    "ServerSession._request_outbound (progress)": "calls: output streamed only when the client asked",
    "uvicorn H11Protocol (.cycle, .transport, .loop)": "HTTP: close a connection with no request head",
}
"""Each private hook → why the package needs it (``docs/ARCHITECTURE.md`` lists them too)."""


def lowlevel_server(server: MCPServer[Any]) -> Server[Any]:
    """The low-level ``Server`` an ``MCPServer`` wraps (``MCPServer._lowlevel_server``)."""
    lowlevel: Server[Any] = server._lowlevel_server
    return lowlevel


def token_verifier(server: MCPServer[Any]) -> TokenVerifier | None:
    """The token verifier ``server`` was built with, or None (``MCPServer._token_verifier``)."""
    verifier: TokenVerifier | None = getattr(server, "_token_verifier", None)
    return verifier


def connection_of(session: ServerSession) -> Connection | None:
    """The connection a handshake-era session runs on (``ServerSession._connection``): its
    ``state`` dict lives as long as the connection, and its ``exit_stack`` unwinds when it ends.
    None when the session has none (a 2026-07-28 request in some SDK paths)."""
    connection = getattr(session, "_connection", None)
    return connection if isinstance(connection, Connection) else None


def idle_http_sessions(manager: Any) -> tuple[dict[str, Any], Callable[[str, Any], Awaitable[None]]] | None:
    """``(table, discard)`` of a ``StreamableHTTPSessionManager``: its sessions (id → transport)
    and the coroutine function that ends one (``_server_instances``, ``_discard_session``); None
    when ``manager`` has neither (an SDK that changed them: eviction is then skipped)."""
    table = getattr(manager, "_server_instances", None)
    discard = getattr(manager, "_discard_session", None)
    if not isinstance(table, dict) or discard is None:
        return None
    return table, discard


def requests_in_flight(transport: Any) -> int:
    """Requests a Streamable HTTP session's transport is serving now
    (``StreamableHTTPServerTransport._requests_in_flight``); 1 when unknown (never idle)."""
    count = getattr(transport, "_requests_in_flight", 1)
    return count if isinstance(count, int) else 1


def progress_requested(context: Context[Any, Any]) -> bool:
    """Whether the request behind ``context`` can receive progress: its ``_meta`` carries a
    ``progressToken`` (public), or its dispatch context holds one or an in-process caller's
    callback (``ServerSession._request_outbound``, unwrapped from ``._inner`` on 2026-07-28:
    ``_progress_token`` on JSON-RPC, ``_on_progress`` in process; the in-process dispatcher puts
    no token in ``_meta``). True when it cannot be told (another dispatcher, or an SDK that
    renamed them): progress is then sent and the SDK drops it if nobody asked."""
    try:
        request = context.request_context
    except ValueError:  # no request context: nobody to send progress to
        return False
    meta: Mapping[str, Any] = request.meta or {}
    if meta.get("progress_token") is not None:
        return True
    dispatch = getattr(request.session, "_request_outbound", None)
    dispatch = getattr(dispatch, "_inner", dispatch)
    for name in ("_progress_token", "_on_progress"):
        if hasattr(dispatch, name):
            return getattr(dispatch, name) is not None
    return True


def h11_protocol() -> type[Any]:
    """uvicorn's h11 protocol class (``uvicorn.protocols.http.h11_impl.H11Protocol``), whose
    instances have ``cycle`` (None until a first request head), ``transport`` and ``loop``."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    return H11Protocol
