"""Which MCP session a request came on, and what happens when that session ends.

A handshake-era connection (protocol 2024-11-05 ... 2025-11-25: one stdio process, one Streamable
HTTP ``Mcp-Session-Id``, one SSE stream, one in-memory ``Client``) is one ``Session``: made at the
connection's first request that needs it, kept in the SDK's per-connection state, and ended (the
``on_end`` callbacks awaited with its id) when the SDK unwinds the connection's exit stack (stdio
EOF, Streamable HTTP DELETE or idle timeout, SSE disconnect, an in-memory client closing). The
2026-07-28 revision has no sessions: each of its requests gets a fresh ``Session`` keyed by who
sent it, ``STATELESS_SESSION/<principal>/<profile>``, which ends only when the server stops being
served (``Sessions.serving``: its last lifespan ends, e.g. an in-memory ``Client`` closes); the
principal is the bearer token's (``transports.token_principal``; ``stdio`` without one), so one
client never sees another's processes (``is_stateless`` tells such a key).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.connection import Connection
from mcp.server.mcpserver import Context
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcp_localtools._sdk import connection_of
from mcp_localtools.spec import SessionEndFn

__all__ = ["STATELESS_SESSION", "Session", "Sessions", "is_modern", "is_stateless", "stateless_key"]

STATELESS_SESSION = "mcp-stateless"
"""The prefix of the ``CallContext.session_id`` of every 2026-07-28-era request (that revision has
no sessions): ``mcp-stateless/<principal>/<profile>``, one per token and profile."""

_SESSION_KEY = "mcp-localtools/session"
"""Where a connection's ``Session`` is kept in the SDK's ``Connection.state``."""


@dataclass(eq=False)
class Session:
    """One MCP session as the server sees it.

    Attributes:
        id: an opaque key, unique for the server's lifetime (``mcp-1``, ``mcp-2``, ...), or
            ``STATELESS_SESSION``; tools key their per-session state by it.
        client_name: the client's ``clientInfo.name``, when it sent one.
        state: what the server keeps for this session besides the tools' own state (kept as
            long as the session; empty and per request for a stateless one).
    """

    id: str
    client_name: str | None = None
    state: dict[str, Any] = field(default_factory=dict)

    @property
    def stateless(self) -> bool:
        """True for a 2026-07-28 request (or one without a connection): nothing outlives it."""
        return is_stateless(self.id)


def is_stateless(session_id: str) -> bool:
    """Whether ``session_id`` keys 2026-07-28 requests (no MCP session: nothing ends it)."""
    return session_id == STATELESS_SESSION or session_id.startswith(STATELESS_SESSION + "/")


def stateless_key(profile: str | None) -> str:
    """The owner key of a 2026-07-28 request: ``STATELESS_SESSION/<principal>/<profile>``, the
    principal being the request's access token's ``client_id`` (``stdio`` without a token)."""
    token = get_access_token()
    principal = token.client_id if token is not None and token.client_id else "stdio"
    return f"{STATELESS_SESSION}/{principal}/{profile or '-'}"


def is_modern(context: Context[Any, Any] | None) -> bool:
    """True when the request speaks the 2026-07-28 revision (no handshake, no sessions)."""
    return context is not None and context.protocol_version in MODERN_PROTOCOL_VERSIONS


class Sessions:
    """Mints a ``Session`` per handshake-era connection and ends it with the connection.

    Args:
        on_end: awaited with a session's id when it ends (``Registry.end_session`` of each
            registry the server serves, and whatever else keeps per-session state).
    """

    def __init__(self, on_end: Sequence[SessionEndFn] = ()) -> None:
        self._on_end = list(on_end)
        self._minted = 0
        self._stateless: set[str] = set()
        self._serving = 0
        self._tasks: list[anyio.abc.TaskGroup] = []
        self._started: dict[tuple[str, int], anyio.CancelScope] = {}

    @asynccontextmanager
    async def serving(self) -> AsyncIterator[None]:
        """Around each time the server is served (its lifespan: a stdio process, an HTTP
        server's run, an in-memory ``Client``): when the last one ends, the 2026-07-28 keys it
        served end too, since nothing else ever ends them (an in-memory client speaks that
        revision, so its processes and sandboxes would outlive it)."""
        self._serving += 1
        try:
            async with anyio.create_task_group() as tasks:
                self._tasks.append(tasks)
                try:
                    yield
                finally:
                    self._tasks.remove(tasks)
                    tasks.cancel_scope.cancel()
        finally:
            self._serving -= 1
            if not self._serving:
                with anyio.CancelScope(shield=True):
                    await self.end_stateless()

    async def end_stateless(self) -> None:
        """End every 2026-07-28 key handed out so far (``on_end`` with each)."""
        keys, self._stateless = sorted(self._stateless), set()
        for key in keys:
            self._stop_started(key)
            for callback in self._on_end:
                await callback(key)

    @staticmethod
    def existing(connection: Connection | None) -> Session | None:
        """The session already made for ``connection``, if any."""
        found = connection.state.get(_SESSION_KEY) if connection is not None else None
        return found if isinstance(found, Session) else None

    def start(self, session: Session, key: int, start: Callable[[str], Awaitable[None]]) -> None:
        """Run ``start(session.id)`` in the background (``Registry.start_session``: the exec tools
        start the connection's sandbox), once per session and ``key`` (the route's registry);
        cancelled if the session ends first. Nothing when the server is not being served."""
        started = (session.id, key)
        if started in self._started or not self._tasks:
            return
        scope = self._started[started] = anyio.CancelScope()

        async def run() -> None:
            with scope:
                await start(session.id)

        self._tasks[-1].start_soon(run)

    def _stop_started(self, session_id: str) -> None:
        """Cancel what ``start`` runs for ``session_id`` (it ended) and forget it."""
        for started in [key for key in self._started if key[0] == session_id]:
            self._started.pop(started).cancel()

    def of(self, context: Context[Any, Any] | None, profile: str | None = None) -> Session:
        """The session of the request ``context`` belongs to, served under ``profile`` (a
        stateless one for None)."""
        if context is None:
            return self._stateless_session(profile, None)
        return self.of_request(context.session, profile)

    def of_request(self, session: Any, profile: str | None = None) -> Session:
        """The session of a request whose SDK server session is ``session`` (``ServerSession``),
        served under ``profile``."""
        connection = connection_of(session)
        # A handshake-era connection keeps its Session: found first, nothing else looked up.
        found = connection.state.get(_SESSION_KEY) if connection is not None else None
        if isinstance(found, Session):
            return found
        params = session.client_params
        client_name = params.client_info.name if params is not None else None
        if connection is None or session.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return self._stateless_session(profile, client_name)
        self._minted += 1
        made = Session(f"mcp-{self._minted}", client_name)
        connection.state[_SESSION_KEY] = made
        for callback in self._on_end:
            connection.exit_stack.push_async_callback(callback, made.id)
        connection.exit_stack.callback(self._stop_started, made.id)  # first: callbacks run last-in first
        return made

    def _stateless_session(self, profile: str | None, client_name: str | None) -> Session:
        made = Session(stateless_key(profile), client_name)
        self._stateless.add(made.id)
        return made
