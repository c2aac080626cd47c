"""Session tool sets: a client narrows the tools of its own MCP session (llm_toolkit's
SessionTools), and the server tells it with ``notifications/tools/list_changed``.

With ``[server] select_tools = true`` every handshake-era session also lists ``selecttools``. Its
call names what the session keeps: a ``[profiles]`` name (that profile's tools), tool or group
names (globs allowed, as in ``[tools] enabled``), or both (the tools in both); no argument gives
back everything the connection's route serves (``tools``: at most 256 entries of at most 200
characters; an unknown profile's refusal names only the profiles whose tools the route serves
all of, so a token learns no other profile's name). A selection only ever narrows: it is cut to the
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
from typing import Annotated, Any

from mcp.types import CallToolResult, TextContent, Tool, ToolListChangedNotification
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mcp_localtools.errors import printable
from mcp_localtools.registry import Registry
from mcp_localtools.schemas import input_schema
from mcp_localtools.server.results import ERROR_META_KEY
from mcp_localtools.server.routes import Route, Routes
from mcp_localtools.server.sessions import Session
from mcp_localtools.spec import READ_ONLY, tool_meta

__all__ = ["SELECT_TOOL", "ToolSets"]

logger = logging.getLogger(__name__)

SELECT_TOOL = "selecttools"
"""The name of the tool that narrows a session's tool set."""

_STATE_KEY = "mcp-localtools/tools"
"""Where a session's selection (a frozenset of tool names) is kept in ``Session.state``."""


_MAX_TOOLS = 256
"""At most this many entries in ``tools`` (each is matched against every tool, on the event loop)."""
_MAX_NAME = 200
"""At most this many characters in a profile name or a ``tools`` entry."""


class _SelectArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    profile: str | None = Field(None, max_length=_MAX_NAME, description="Keep this [profiles] entry's tools.")
    tools: list[Annotated[str, Field(max_length=_MAX_NAME)]] = Field(
        default_factory=list,
        max_length=_MAX_TOOLS,
        description="Keep these tools or groups (globs: `fs`, `text.*`, `readfile`).",
    )


_TOOL = Tool(
    name=SELECT_TOOL,
    title="Select this session's tools",
    description=(
        "Narrow the tools of this session to a profile's or to named tools and groups (both: the tools "
        "in both); no argument: every tool again. Never adds a tool the connection could not call. "
        "tools/list changes (notifications/tools/list_changed)."
    ),
    input_schema=input_schema(_SelectArgs),  # portable as every tool's: no boolean additionalProperties
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


def _invalid(exc: ValidationError) -> str:
    """What was wrong with ``selecttools``'s arguments (the first three problems) and their shape."""
    problems = sorted(
        {f"{error['loc'][0] if error['loc'] else 'arguments'}: {error['msg']}" for error in exc.errors()}
    )
    return (
        f"invalid arguments for {SELECT_TOOL}: {'; '.join(problems[:3])} (profile: a name; tools: a list of "
        f"at most {_MAX_TOOLS} names or globs of at most {_MAX_NAME} characters)"
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
        try:  # null means the default, as for every tool (mcp-use sends null for each optional)
            args = _SelectArgs.model_validate(
                {key: value for key, value in arguments.items() if value is not None}
            )
        except ValidationError as exc:
            return _invalid(exc)
        wanted = set(names)
        if args.profile is not None:
            other = self.routes.profiles.get(args.profile)
            if other is None:
                return f"unknown profile {printable(args.profile)!r}; profiles: {self._choosable(names)}"
            wanted &= {tool.name for tool in other.tools}
        patterns = list(dict.fromkeys(args.tools))
        for pattern in patterns:
            if not any(_matches(route.registry, name, pattern) for name in names):
                return f"{printable(pattern)!r} matches no tool or group this connection serves"
        if patterns:
            wanted = {name for name in wanted if any(_matches(route.registry, name, p) for p in patterns)}
        return wanted or "that selection keeps no tool; name tools this connection serves"

    def _choosable(self, names: set[str]) -> str:
        """The profiles a connection serving ``names`` may be told of: those whose tools it
        serves all of (a token of one profile learns no other profile's name)."""
        known = [
            name
            for name, other in sorted(self.routes.profiles.items())
            if {t.name for t in other.tools} <= names
        ]
        return ", ".join(known) or "none this connection may choose"

    @staticmethod
    def notification() -> ToolListChangedNotification:
        """What the server sends after a change: ``notifications/tools/list_changed``."""
        return ToolListChangedNotification()
