"""Session tool sets: a client narrows the tools of its own MCP session (llm_toolkit's
SessionTools), and the server tells it with ``notifications/tools/list_changed``.

With ``[server] select_tools = true`` every handshake-era session also lists ``selecttools``. Its
call names what the session keeps: a ``[profiles]`` name (that profile's tools), tool or group
names (globs allowed, as in ``[tools] enabled``), or both (the tools in both); no argument gives
back everything the connection's route serves. A selection only ever narrows: it is cut to the
tools the request's route (its token's profile, or the profile chosen at start) serves, so a
token never reaches a tool it could not call before; ``selecttools`` itself stays. The selection
lives in the session (``Session.state``) and ends with it; ``tools/list`` and ``tools/call`` of
the session see only the kept tools (another tool is an unknown tool, -32602). The 2026-07-28
revision has no sessions: its requests neither list nor call ``selecttools``.

``selecttools`` is served by the MCP server only (the JSON command line and the Python API have
no session to narrow); its call is logged, not audited (it reaches no file, command or URL).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from fnmatch import fnmatchcase
from typing import Any

from mcp.types import CallToolResult, TextContent, Tool, ToolListChangedNotification
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mcp_localtools.registry import READ_ONLY, Registry
from mcp_localtools.server.results import ERROR_META_KEY
from mcp_localtools.server.routes import Route, Routes
from mcp_localtools.server.sessions import Session
from mcp_localtools.spec import tool_meta

__all__ = ["SELECT_TOOL", "ToolSets"]

logger = logging.getLogger(__name__)

SELECT_TOOL = "selecttools"
"""The name of the tool that narrows a session's tool set."""

_STATE_KEY = "mcp-localtools/tools"
"""Where a session's selection (a frozenset of tool names) is kept in ``Session.state``."""


class _SelectArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    profile: str | None = Field(None, description="Keep this [profiles] entry's tools.")
    tools: list[str] = Field(
        default_factory=list, description="Keep these tools or groups (globs: `fs`, `text.*`, `readfile`)."
    )


_TOOL = Tool(
    name=SELECT_TOOL,
    title="Select this session's tools",
    description=(
        "Narrow the tools of this session to a profile's or to named tools and groups (both: the tools "
        "in both); no argument: every tool again. Never adds a tool the connection could not call. "
        "tools/list changes (notifications/tools/list_changed)."
    ),
    input_schema=_SelectArgs.model_json_schema(),
    annotations={"title": "Select this session's tools", "readOnlyHint": True, "idempotentHint": True},
    _meta=tool_meta("session", READ_ONLY),
)


def _matches(registry: Registry, name: str, pattern: str) -> bool:
    group = registry.get(name).group
    return any(fnmatchcase(candidate, pattern) for candidate in (name, group, f"{group}.{name}"))


def _refusal(message: str) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=message)],
        is_error=True,
        _meta={ERROR_META_KEY: {"code": "invalid_arguments", "message": message}},
    )


class ToolSets:
    """The per-session selections of one server (see the module docstring).

    Args:
        routes: the server's routes (a named profile's tools come from its route).
        enabled: ``[server] select_tools``; False: no session lists or calls ``selecttools``.
    """

    def __init__(self, routes: Routes, *, enabled: bool) -> None:
        self.routes = routes
        self.enabled = enabled

    @staticmethod
    def kept(session: Session | None) -> frozenset[str] | None:
        """The tools ``session`` kept, or None when it selected nothing (all its route's)."""
        found = session.state.get(_STATE_KEY) if session is not None else None
        return found if isinstance(found, frozenset) else None

    def listed(self, route: Route, session: Session | None, *, has_sessions: bool) -> list[Tool]:
        """The ``tools/list`` of a request on ``route`` in ``session`` (None: not made yet);
        ``has_sessions``: the request is handshake-era (it may call ``selecttools``)."""
        kept = self.kept(session)
        tools = [tool for tool in route.tools if kept is None or tool.name in kept]
        return [*tools, _TOOL] if self.enabled and has_sessions else tools

    def serves(self, route: Route, session: Session, name: str) -> bool:
        """True when ``session`` may call the route's tool ``name``."""
        kept = self.kept(session)
        return route.serves(name) and (kept is None or name in kept)

    def is_select(self, name: str, session: Session) -> bool:
        """True when ``name`` is ``selecttools`` and ``session`` may call it."""
        return self.enabled and name == SELECT_TOOL and not session.stateless

    def select(
        self, route: Route, session: Session, arguments: Mapping[str, Any]
    ) -> tuple[CallToolResult, bool]:
        """``selecttools``: narrow ``session`` to what ``arguments`` name within ``route``.

        Returns:
            ``(result, changed)``: the tools now served (or an ``invalid_arguments`` error for an
            unknown profile, an entry that matches nothing, or a selection left empty), and
            whether the session's tool set changed (then the caller notifies the client).
        """
        names = {tool.name for tool in route.tools}
        wanted = self._wanted(route, names, arguments)
        if isinstance(wanted, str):
            return _refusal(wanted), False
        kept = None if wanted == names else frozenset(wanted)
        changed = kept != self.kept(session)
        if kept is None:
            session.state.pop(_STATE_KEY, None)
        else:
            session.state[_STATE_KEY] = kept
        shown = sorted(wanted)
        logger.info("session %s now serves %d tools: %s", session.id, len(shown), ", ".join(shown))
        text = (
            f"This session now serves {len(shown)} of {len(names)} tools: {', '.join(shown)} "
            f"(and {SELECT_TOOL}). " + ("tools/list has changed." if changed else "Unchanged.")
        )
        structured = {"tools": shown, "changed": changed}
        return CallToolResult(
            content=[TextContent(type="text", text=text)], structured_content=structured
        ), changed

    def _wanted(self, route: Route, names: set[str], arguments: Mapping[str, Any]) -> set[str] | str:
        """The tools of ``names`` (the route's) that ``arguments`` keep, or why none can be kept."""
        try:
            args = _SelectArgs.model_validate(dict(arguments))
        except ValidationError as exc:
            fields = sorted({".".join(map(str, error["loc"])) or "arguments" for error in exc.errors()})
            return (
                f"invalid arguments for {SELECT_TOOL}: {', '.join(fields)} (profile: a name; tools: a list)"
            )
        wanted = set(names)
        if args.profile is not None:
            other = self.routes.profiles.get(args.profile)
            if other is None:
                known = ", ".join(sorted(self.routes.profiles)) or "none configured"
                return f"unknown profile {args.profile!r}; profiles: {known}"
            wanted &= {tool.name for tool in other.tools}
        for pattern in args.tools:
            if not any(_matches(route.registry, name, pattern) for name in names):
                return f"{pattern!r} matches no tool or group this connection serves"
        if args.tools:
            wanted = {name for name in wanted if any(_matches(route.registry, name, p) for p in args.tools)}
        return wanted or "that selection keeps no tool; name tools this connection serves"

    @staticmethod
    def notification() -> ToolListChangedNotification:
        """What the server sends after a change: ``notifications/tools/list_changed``."""
        return ToolListChangedNotification()
