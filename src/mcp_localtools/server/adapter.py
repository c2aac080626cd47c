"""The MCP adapter: an ``MCPServer`` whose tools and resources are a registry's.

``tools/list`` is the request's route's tool list (``routes.py``); ``tools/call`` sends the call
through the pipeline (``pipeline.py``: audit gate, approval, run, audit line) and an unknown or
hidden tool is a protocol error (-32602); ``resources/templates/list`` and ``resources/read`` come
from the route's registry, read as the request's session (``sessions.py``); a second
``initialize`` on a connection is refused (``refuse_second_initialize``). A session may narrow its
own tool set (``toolsets.py``: ``selecttools``, then ``notifications/tools/list_changed``). Over
stdio the server runs on our bounded transport (``stdio.serve_stdio``).
"""

from __future__ import annotations

from typing import Any

from mcp import MCPError
from mcp.server import MCPServer
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import NotificationOptions
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ResourceNotFoundError
from mcp.types import (
    INVALID_PARAMS,
    CallToolResult,
    InputRequiredResult,
    ListToolsResult,
    NotificationParams,
    PaginatedRequestParams,
    ResourceTemplate,
    Tool,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcp_localtools import compat
from mcp_localtools._sdk import connection_of, lowlevel_server
from mcp_localtools.errors import NotFound
from mcp_localtools.server.call import Call
from mcp_localtools.server.pipeline import Pipeline
from mcp_localtools.server.roots import ClientRoots
from mcp_localtools.server.routes import Route, Routes
from mcp_localtools.server.sessions import Session, Sessions
from mcp_localtools.server.toolsets import ToolSets
from mcp_localtools.stdio import serve_stdio
from mcp_localtools.toolnames import render_names

__all__ = ["RegistryServer"]


class RegistryServer(MCPServer[Any]):
    """``MCPServer`` serving ``routes`` through ``pipeline``.

    Args:
        routes: which tools each request sees.
        pipeline: what a call goes through.
        sessions: session identity (made from ``routes``' registries when omitted).
        max_stdio_line_bytes: over stdio, longer message lines are refused (-32600) unbuffered.
        roots: the sessions' client roots (``roots.py``).
        tool_sets: the sessions' own tool sets (``toolsets.py``); None: off.
        request_state_ttl: seconds the 2026-07-28 request state lives when ``[approval]`` set it
            (kwargs then hold its ``request_state_security``); None: the SDK's default.
        kwargs: ``MCPServer``'s own (name, instructions, auth, ...).
    """

    def __init__(
        self,
        routes: Routes,
        pipeline: Pipeline,
        *,
        sessions: Sessions,
        max_stdio_line_bytes: int,
        roots: ClientRoots | None = None,
        tool_sets: ToolSets | None = None,
        request_state_ttl: float | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(lifespan=lambda _server: sessions.serving(), **kwargs)
        self.routes = routes
        self.pipeline = pipeline
        self.sessions = sessions
        self.roots = roots or ClientRoots(enabled=False)
        self.tool_sets = tool_sets or ToolSets(routes, enabled=False)
        self.max_stdio_line_bytes = max_stdio_line_bytes
        self.request_state_ttl = request_state_ttl
        lowlevel = lowlevel_server(self)
        lowlevel.add_notification_handler(
            "notifications/roots/list_changed", NotificationParams, self._roots_changed
        )
        lowlevel.add_request_handler("tools/list", PaginatedRequestParams, self._tools_of_session)
        if self.tool_sets.enabled:  # handshake-era clients learn that tools/list may change
            plain = lowlevel.create_initialization_options

            def announcing(
                notification_options: NotificationOptions | None = None, *args: Any, **kwargs: Any
            ) -> Any:
                return plain(notification_options or NotificationOptions(tools_changed=True), *args, **kwargs)

            lowlevel.create_initialization_options = announcing  # type: ignore[method-assign]

    async def _roots_changed(self, ctx: ServerRequestContext[Any, Any], params: NotificationParams) -> None:
        """The client's roots changed: its session asks for them again at its next call."""
        connection = connection_of(ctx.session)
        session = self.sessions.existing(connection)
        if session is not None:
            self.roots.changed(session)

    async def run_stdio_async(self) -> None:
        """Serve over stdin/stdout with our bounded reader (``stdio.serve_stdio``); commands'
        processes are waited for through pidfds (``compat.watch_children_by_pidfd``)."""
        compat.watch_children_by_pidfd()
        await serve_stdio(lowlevel_server(self), max_line_bytes=self.max_stdio_line_bytes)

    async def list_tools(self) -> list[Tool]:
        """The tools of the request's route (what a session that selected nothing lists)."""
        return list(self.routes.current().tools)

    async def _tools_of_session(
        self, ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams
    ) -> ListToolsResult:
        """``tools/list``: the route's tools as the request's session kept them (``toolsets.py``)."""
        route = self.routes.current()
        session = self.sessions.existing(connection_of(ctx.session))
        if not self._moves_with_roots(ctx.session):
            # The connection's sandbox starts now, in the background, unless the client's roots
            # (asked at its first call) may give it another route: then at that call.
            seen = self.sessions.of_request(ctx.session, route.profile)
            self.sessions.start(seen, id(route.registry), route.registry.start_session)
        has_sessions = ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS
        tools = self.tool_sets.listed(route, session, has_sessions=has_sessions)
        return ListToolsResult(tools=tools)

    def _moves_with_roots(self, server_session: Any) -> bool:
        """Whether a session of this connection may work in a route of its own (its client
        declares roots, client roots are on and the request is of the handshake era)."""
        params = server_session.client_params
        return (
            self.roots.enabled
            and params is not None
            and params.capabilities.roots is not None
            and server_session.protocol_version not in MODERN_PROTOCOL_VERSIONS
        )

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        route = self.routes.current()
        session = self.sessions.of(context, route.profile)
        if self.tool_sets.is_select(name, session):
            return await self._select(route, session, arguments, context)
        call = await self._call(name, arguments, context, route, session)
        await call.route.registry.ready(call.name)  # a cached start's tool: built at its first call
        self.sessions.start(session, id(call.route.registry), call.route.registry.start_session)
        try:
            return await self.pipeline(call)
        finally:
            await self.roots.settle(call.route, call.session)

    async def _select(
        self, route: Route, session: Session, arguments: dict[str, Any], context: Context[Any, Any] | None
    ) -> CallToolResult:
        """``selecttools`` (``toolsets.py``); a change is told on the request's own stream, so a
        Streamable HTTP client without the GET stream gets it too."""
        result, changed = self.tool_sets.select(route, session, arguments)
        if changed and context is not None:
            await context.session.send_notification(
                self.tool_sets.notification(), related_request_id=context.request_context.request_id
            )
        return result

    async def _call(
        self,
        name: str,
        arguments: dict[str, Any],
        context: Context[Any, Any] | None,
        route: Route,
        session: Session,
    ) -> Call:
        """The call of this request, on its session's route (the client's roots, ``roots.py``).

        Raises:
            MCPError: -32602 for a tool the request's route does not serve, or that the session
                left out of its tool set (``toolsets.py``).
        """
        if not self.tool_sets.serves(route, session, name):
            raise MCPError(code=INVALID_PARAMS, message=f"Unknown tool: {name}")
        return Call(name, arguments, await self.roots.route(route, session, context), session, context)

    async def list_resource_templates(self) -> list[ResourceTemplate]:
        registry = self.routes.current().registry
        await registry.ready()  # every tool's resources (a cached start builds its tools first)
        return [
            ResourceTemplate(
                uri_template=source.uri_template,
                name=source.prefix,
                description=render_names(source.description, registry.renamed),
            )
            for source in registry.resource_sources()
        ]

    async def read_resource(
        self, uri: Any, context: Context[Any, Any] | None = None
    ) -> list[ReadResourceContents]:
        """A resource a tool result linked to (``resource_link``), as the connection's session
        sees it; an unknown, expired or other session's URI is a -32602 "not found" error."""
        route = self.routes.current()
        session = self.sessions.of(context, route.profile)
        route = await self.roots.route(route, session, context)
        await route.registry.ready()
        try:
            page = route.registry.read_resource(str(uri), session.id)
        except NotFound as exc:
            raise ResourceNotFoundError(exc.message) from None
        content: str | bytes = page.text if page.text is not None else (page.data or b"")
        return [ReadResourceContents(content=content, mime_type=page.mime_type)]
