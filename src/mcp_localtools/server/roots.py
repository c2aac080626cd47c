"""MCP roots: the folders a client shares (``roots/list``) become the roots of its session.

Claude Code, VS Code and Cursor send their workspace folders as MCP roots. When a handshake-era
client declares the ``roots`` capability, the server asks for its roots (``roots/list``) at the
session's first call that needs them, and again after every ``notifications/roots/list_changed``;
a change applies to the next call. What the session then works in:

- no configured roots (the server was started without a root): the client's roots;
- configured roots: their intersection with the client's (a client root inside a configured root
  narrows to it; a configured root inside a client root stays whole); a client root outside every
  configured root is refused and logged. When nothing is left (the client shares no root, or only
  roots outside), the session works in the configured roots, and the log says so: they are the
  operator's bound, which a client reaches anyway by sharing a folder above them, so this widens
  nothing the configuration did not grant. The reference filesystem server keeps its directories
  when a client sends none, and the MCP Inspector declares roots and sends an empty list.

It fails closed: when the client does not answer after announcing a change (an error, an invalid
answer, no answer within 10 s), the session has no roots until it does, and it is asked again at
the next call; a root set whose route cannot be built as checked (a root vanished meanwhile, or
was swapped for a symlink, whose target must never become a root) also gives no roots. At most
``MAX_CLIENT_ROOTS`` roots of one answer are taken; the rest are refused and logged. A client
that never answered the first question keeps the configured roots (the ones the user chose), and
is not asked again until it announces a change.

The session's roots make a ``Route`` of their own: a workspace (``Workspace.sibling``) whose path
policy, command sandbox and search defaults are those roots, and its registry; routes are shared
by every session with the same roots (tools key their state by session). When a session's roots
change, what it kept under the old ones ends (its processes are stopped, their kept output
dropped): nothing keeps running in a folder the user took away. A call still running on the old
roots when they change ends what it started there when it returns (``settle``).

Roots are asked for on handshake-era sessions only. The 2026-07-28 revision deprecates the roots
capability (SEP-2577) and has no ``list_changed``: its requests work in the configured roots.
``[paths] client_roots = false`` (``--ignore-client-roots``) turns all of this off.

File URIs are decoded per RFC 8089: ``file:///abs/path`` or ``file://localhost/abs/path``,
percent-decoded; any other scheme or host is refused, and so is a UNC path (``file:////host/share``:
resolving it would contact that host). When nothing is configured, a client root that is the
whole filesystem, the home directory (or a directory above it) or a system directory is refused
and logged, as it is refused as the server's own default root (``policy/implicit_root.py``): a
client that shares ``file:///`` does not get the whole disk. With configured roots such a client
root only narrows them (to the configured roots inside it).

The question travels with the call that needs it (``related_request_id``), so over Streamable HTTP
it reaches a client on that call's response stream, without the optional GET stream.
"""

from __future__ import annotations

import logging
import os
import sys
import warnings
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import anyio
import anyio.to_thread
from mcp import MCPDeprecationWarning, MCPError
from mcp.server.mcpserver import Context
from mcp.shared.message import ServerMessageMetadata
from mcp.types import ListRootsRequest, ListRootsResult
from pydantic import ValidationError

from mcp_localtools._sdk import connection_of
from mcp_localtools.errors import ConfigError
from mcp_localtools.policy.implicit_root import implicit_root_refusal, user_home
from mcp_localtools.server.routes import Route
from mcp_localtools.server.sessions import Session
from mcp_localtools.tools import build_registry

__all__ = ["MAX_CLIENT_ROOTS", "ClientRoots", "build_route", "decode_file_uri", "session_roots"]

logger = logging.getLogger(__name__)

_STATE_KEY = "mcp-localtools/roots"
_ASK_SECONDS = 10.0
"""How long the server waits for a client's answer to ``roots/list``."""
_MAX_ROUTES = 64
"""Most root sets whose route is kept for reuse (routes in use by a session stay alive anyway)."""
MAX_CLIENT_ROOTS = 256
"""Most roots taken from one ``roots/list`` answer; the rest are refused and logged (building a
route costs time in the number of roots)."""


def decode_file_uri(uri: str) -> Path | None:
    """The local path of a ``file:`` URI (RFC 8089), or None for another scheme, a remote host,
    a relative path or a NUL byte.

    ``file:///home/a%20b`` → ``/home/a b``; ``file://localhost/srv`` → ``/srv``; on Windows
    ``file:///C:/work`` → ``C:\\work``.
    """
    parts = urlsplit(uri)
    if parts.scheme.lower() != "file" or parts.netloc.lower() not in ("", "localhost"):
        return None
    path = unquote(parts.path)
    if sys.platform == "win32" and len(path) >= 3 and path[0] == "/" and path[2] == ":":
        path = path[1:]  # /C:/work → C:/work
    if "\x00" in path or path.startswith(("//", "\\")) or not Path(path).is_absolute():
        return None  # a UNC path (//host/share) would reach out to that host
    if sys.platform == "win32" and Path(path).drive.startswith("\\"):  # pragma: no cover - Windows
        return None
    return Path(path)


def session_roots(configured: Sequence[Path], shared: Sequence[Path]) -> tuple[tuple[Path, ...], list[str]]:
    """The roots a session works in, from the configured roots and the client's (both canonical).

    Returns:
        ``(roots, refused)``: the roots (the client's when nothing is configured, else the
        intersection; empty when nothing is left), and a phrase for each client root refused.
    """
    if not configured:
        return tuple(dict.fromkeys(shared)), []
    kept: list[Path] = []
    refused: list[str] = []
    for root in shared:
        inside = [c for c in configured if root.is_relative_to(c)]
        below = [c for c in configured if c.is_relative_to(root)]
        if inside:
            kept.append(root)
        elif below:
            kept += below
        else:
            refused.append(f"{root} (outside the configured roots)")
    return tuple(dict.fromkeys(kept)), refused


def _canonical_dirs(uris: Iterable[str]) -> tuple[list[Path], list[str]]:
    """The client's roots as canonical existing directories, and a phrase per refused URI.
    Blocking (resolves and stats): run it in a worker thread."""
    found: list[Path] = []
    refused: list[str] = []
    for uri in uris:
        path = decode_file_uri(uri)
        if path is None:
            refused.append(f"{uri} (not a local file URI)")
            continue
        try:
            real = Path(os.path.realpath(path))
            if not real.is_dir():
                refused.append(f"{uri} (no such directory)")
                continue
        except OSError as exc:  # a name too long, or a link swapped in while it was read
            refused.append(f"{uri} (cannot be resolved: {exc.strerror or exc})")
            continue
        found.append(real)
    return found, refused


def _unprotected(dirs: list[Path], protected: Sequence[Path]) -> tuple[list[Path], list[str]]:
    """``dirs`` without a root inside a ``.git`` directory or inside (or at) a protected path of
    the route the session starts from, and a phrase for each refused: as a root, such a place
    would be the session's to change (its protection is anchored in the roots above it), and
    git's config and hooks run code on the host's next git command."""
    kept: list[Path] = []
    refused: list[str] = []
    for root in dirs:
        if ".git" in root.parts:
            refused.append(f"{root} (inside a .git directory)")
        elif any(root == path or root.is_relative_to(path) for path in protected):
            refused.append(f"{root} (inside a protected path)")
        else:
            kept.append(root)
    return kept, refused


def _not_broad(roots: Iterable[Path]) -> tuple[list[Path], list[str]]:
    """``roots`` less the filesystem root, the home directory, a directory above it and the system
    directories (``implicit_root_refusal``), and a phrase for each refused. Blocking (resolves
    each): run it in a worker thread."""
    home = user_home()
    kept: list[Path] = []
    refused: list[str] = []
    for root in roots:
        broad = implicit_root_refusal(root, home)
        if broad is None:
            kept.append(root)
        else:
            refused.append(
                f"{root} ({broad}: never a client root of a server without roots of its own; "
                "start it with --root to serve it)"
            )
    return kept, refused


@dataclass(eq=False)
class _SessionRoots:
    """What one session's roots are, as last asked (``route`` None: the base route, never moved)."""

    lock: anyio.Lock = field(default_factory=anyio.Lock)
    stale: bool = True
    roots: tuple[Path, ...] | None = None
    route: Route | None = None
    ending: bool = False  # the end of the current route's state is scheduled with the connection


def _declares_roots(context: Context[Any, Any]) -> bool:
    params = context.session.client_params
    return params is not None and params.capabilities.roots is not None


class ClientRoots:
    """The routes of sessions whose client shares roots (see the module docstring).

    Args:
        enabled: ``[paths] client_roots``; False: every session keeps its route's roots.
        on_move: awaited with the session's id whenever its roots change: what was approved for
            the session (``ApprovalPolicy.forget``) was approved in the old roots, where the same
            relative path meant another file.
    """

    def __init__(
        self, *, enabled: bool = True, on_move: Callable[[str], Awaitable[None]] | None = None
    ) -> None:
        self.enabled = enabled
        self.on_move = on_move
        self._routes: OrderedDict[tuple[int, tuple[Path, ...]], Route] = OrderedDict()

    def changed(self, session: Session) -> None:
        """``notifications/roots/list_changed``: the session's roots are asked again at its next
        call."""
        state = session.state.get(_STATE_KEY)
        if isinstance(state, _SessionRoots):
            state.stale = True

    async def route(self, route: Route, session: Session, context: Context[Any, Any] | None) -> Route:
        """The route a call of ``session`` works on: ``route`` narrowed (or given roots) by the
        roots the client shares, asked for when they are not known or have changed. ``route``
        itself when client roots are off, the request is stateless, the client does not declare
        the capability, or it did not answer.
        """
        if not self.enabled or session.stateless or context is None or route.workspace is None:
            return route
        if not _declares_roots(context):
            return route
        state = session.state.setdefault(_STATE_KEY, _SessionRoots())
        assert isinstance(state, _SessionRoots)
        async with state.lock:
            if state.stale:
                try:
                    await self._refresh(state, route, session, context)
                except OSError as exc:  # the file system changed under the check: fail closed
                    logger.warning("cannot read session %s's roots, so none: %s", session.id, exc)
                    state.stale = True
                    await self._move(state, route, session, context, ())
                except BaseException:  # cancelled or failed mid-way: ask again at the next call
                    state.stale = True
                    raise
        return state.route or route

    async def settle(self, used: Route, session: Session) -> None:
        """After a call that ran on ``used``: when the session's roots changed meanwhile, end what
        the call started there (a background process started during the change), as the change
        itself ended everything else kept there."""
        state = session.state.get(_STATE_KEY)
        if not isinstance(state, _SessionRoots) or state.route is None:
            return
        if used.registry is not state.route.registry:
            with anyio.CancelScope(shield=True):
                await used.registry.end_session(session.id)

    async def _refresh(
        self, state: _SessionRoots, route: Route, session: Session, context: Context[Any, Any]
    ) -> None:
        state.stale = False  # a change announced while asking makes it stale again
        shared = await self._ask(context)
        if shared is None:
            if state.roots is not None:  # a change went unanswered: no roots until it is
                state.stale = True
                await self._move(state, route, session, context, ())
            return
        assert route.workspace is not None
        configured = route.workspace.paths.roots
        dirs, refused = await anyio.to_thread.run_sync(_canonical_dirs, shared[:MAX_CLIENT_ROOTS])
        dirs, inside = _unprotected(dirs, route.workspace.paths.protected)
        refused += inside
        if len(shared) > MAX_CLIENT_ROOTS:
            refused.append(f"{len(shared) - MAX_CLIENT_ROOTS} roots past the first {MAX_CLIENT_ROOTS}")
        if not configured:
            dirs, broad = await anyio.to_thread.run_sync(_not_broad, dirs)
            refused += broad
        roots, outside = session_roots(configured, dirs)
        refused += outside
        if refused:
            logger.warning("client roots refused for session %s: %s", session.id, "; ".join(refused))
        if not roots and configured:
            logger.warning(
                "session %s shares no root inside the configured ones: it works in all of them", session.id
            )
            roots = configured
        await self._move(state, route, session, context, roots)

    async def _move(
        self,
        state: _SessionRoots,
        route: Route,
        session: Session,
        context: Context[Any, Any],
        roots: tuple[Path, ...],
    ) -> None:
        """Make ``roots`` the session's, on ``route`` (the base) or a route of their own, and end
        what the session kept on the route it leaves."""
        if roots == state.roots:
            return
        assert route.workspace is not None
        previous = state.route or route  # before any move: the base route (configured roots)
        moved = route if roots == route.workspace.paths.roots else await self._route_for(route, roots)
        state.roots, state.route = roots, moved  # only once the route exists
        logger.info("session %s works in %s", session.id, ", ".join(map(str, roots)) or "no roots")
        with anyio.CancelScope(shield=True):  # a cancelled call still ends what the old roots kept
            if self.on_move is not None:
                await self.on_move(session.id)
            if previous.registry is not moved.registry:
                await previous.registry.end_session(session.id)  # nothing runs on in a folder taken away
        if not state.ending:  # once per session: ends whichever route is current at the end
            connection = connection_of(context.session)
            if connection is not None:
                state.ending = True
                connection.exit_stack.push_async_callback(_end_current, state, route, session.id)

    async def _ask(self, context: Context[Any, Any]) -> list[str] | None:
        """The URIs of the client's roots, or None when it did not answer in time or answered
        with something that is not a list of roots (logged)."""
        try:
            with anyio.fail_after(_ASK_SECONDS), warnings.catch_warnings():
                # roots are deprecated in 2026-07-28 (SEP-2577); handshake-era clients use them
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                answer = await context.session.send_request(
                    ListRootsRequest(),
                    ListRootsResult,
                    metadata=ServerMessageMetadata(related_request_id=context.request_id),
                )
        except (
            MCPError,
            ValidationError,
            TimeoutError,
            anyio.ClosedResourceError,
            anyio.BrokenResourceError,
        ) as exc:
            logger.warning("the client did not list its roots (%s: %s)", type(exc).__name__, exc)
            return None
        return [str(root.uri) for root in answer.roots]

    async def _route_for(self, base: Route, roots: tuple[Path, ...]) -> Route:
        """The route of ``base`` over ``roots`` (built once per base route and roots)."""
        key = (id(base), roots)
        found = self._routes.get(key)
        if found is not None:
            self._routes.move_to_end(key)
            return found
        made, built = await anyio.to_thread.run_sync(build_route, base, roots)
        if not built:
            return made  # not kept: the roots may exist at the next ask
        self._routes[key] = made
        while len(self._routes) > _MAX_ROUTES:
            self._routes.popitem(last=False)
        return made


def build_route(base: Route, roots: tuple[Path, ...]) -> tuple[Route, bool]:
    """The route of ``base`` (which has a workspace) over ``roots``, canonical directories already
    checked against the configured roots; blocking (resolves every root): run it in a worker thread.

    Building resolves each root again. A root that is no longer the directory that was checked
    (it vanished, or was swapped for a symlink meanwhile, which would make the symlink's target
    the root: anywhere, ``/`` included) gives a route with no roots instead.

    Returns:
        ``(route, built)``: ``built`` False when the route has no roots because ``roots`` could
        not be served as checked (it must not be kept: the roots may be fine at the next ask).
    """
    workspace = base.workspace
    assert workspace is not None
    config = workspace.config.with_roots([str(root) for root in roots])
    try:
        space = workspace.sibling(config)
        if space.paths.roots != roots:
            changed = ", ".join(str(root) for root in roots if root not in space.paths.roots)
            raise ConfigError(f"{changed or roots} changed while it was checked (replaced by a link?)")
    except (ConfigError, OSError) as exc:
        logger.warning("cannot serve the client's roots, so none: %s", getattr(exc, "message", exc))
        config = workspace.config.with_roots([])
        space = workspace.sibling(config)
        built = False
    else:
        built = True
    route = Route.of(
        build_registry(config, workspace=space, like=base.registry),
        base_dir=str(space.paths.base_dir),
        profile=base.profile,
        visible=base.visible,
        workspace=space,
    )
    return route, built


async def _end_current(state: _SessionRoots, base: Route, session_id: str) -> None:
    """The connection ended: end the session's state on the route it works on last (the routes
    it left were ended when it left them; the base route's ends with the session anyway)."""
    if state.route is not None and state.route.registry is not base.registry:
        await state.route.registry.end_session(session_id)
