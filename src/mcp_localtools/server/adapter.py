"""The MCP adapter: an ``MCPServer`` whose tools and resources are a registry's.

``tools/list`` is the request's route's tool list (``routes.py``); ``tools/call`` sends the call
through the pipeline (``pipeline.py``: audit gate, approval, run, audit line) and an unknown or
hidden tool is a protocol error (-32602); ``resources/templates/list`` and ``resources/read`` come
from the route's registry, read as the request's session (``sessions.py``); a second
``initialize`` on a connection is refused (``refuse_second_initialize``). Over stdio the server
runs on our bounded transport (``stdio.serve_stdio``).
"""

from __future__ import annotations

from typing import Any

from mcp import MCPError
from mcp.server import MCPServer
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ResourceNotFoundError
from mcp.types import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    CallToolResult,
    InputRequiredResult,
    NotificationParams,
    ResourceTemplate,
    Tool,
)

from mcp_localtools._sdk import connection_of, lowlevel_server
from mcp_localtools.errors import NotFound
from mcp_localtools.server.call import Call
from mcp_localtools.server.pipeline import Pipeline
from mcp_localtools.server.roots import ClientRoots
from mcp_localtools.server.routes import Routes
from mcp_localtools.server.sessions import Sessions
from mcp_localtools.spec import render_names
from mcp_localtools.stdio import serve_stdio

__all__ = ["RegistryServer", "refuse_second_initialize"]


async def refuse_second_initialize(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """Server middleware: an ``initialize`` on a connection that was already initialized is a
    JSON-RPC error (-32600), not a renegotiation (the SDK accepts it and replaces the client's
    info and protocol version mid-session; the spec allows one handshake per connection)."""
    if ctx.method == "initialize":
        connection = connection_of(ctx.session)
        if connection is not None and connection.client_params is not None:
            raise MCPError(
                code=INVALID_REQUEST,
                message="already initialized: initialize is accepted once per connection; "
                "open a new connection to start over",
            )
    return await call_next(ctx)


class RegistryServer(MCPServer[Any]):
    """``MCPServer`` serving ``routes`` through ``pipeline``.

    Args:
        routes: which tools each request sees.
        pipeline: what a call goes through.
        sessions: session identity (made from ``routes``' registries when omitted).
        max_stdio_line_bytes: over stdio, longer message lines are refused (-32600) unbuffered.
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
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.routes = routes
        self.pipeline = pipeline
        self.sessions = sessions
        self.roots = roots or ClientRoots(enabled=False)
        self.max_stdio_line_bytes = max_stdio_line_bytes
        lowlevel_server(self).add_notification_handler(
            "notifications/roots/list_changed", NotificationParams, self._roots_changed
        )

    async def _roots_changed(self, ctx: ServerRequestContext[Any, Any], params: NotificationParams) -> None:
        """The client's roots changed: its session asks for them again at its next call."""
        connection = connection_of(ctx.session)
        session = self.sessions.existing(connection)
        if session is not None:
            self.roots.changed(session)

    async def run_stdio_async(self) -> None:
        """Serve over stdin/stdout with our bounded reader (``stdio.serve_stdio``)."""
        await serve_stdio(lowlevel_server(self), max_line_bytes=self.max_stdio_line_bytes)

    async def list_tools(self) -> list[Tool]:
        return list(self.routes.current().tools)

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        call = await self._call(name, arguments, context)
        try:
            return await self.pipeline(call)
        finally:
            await self.roots.settle(call.route, call.session)

    async def _call(self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None) -> Call:
        """The call of this request, on its session's route (the client's roots, ``roots.py``).

        Raises:
            MCPError: -32602 for a tool the request's route does not serve.
        """
        route = self.routes.current()
        if not route.serves(name):
            raise MCPError(code=INVALID_PARAMS, message=f"Unknown tool: {name}")
        session = self.sessions.of(context, route.profile)
        return Call(name, arguments, await self.roots.route(route, session, context), session, context)

    async def list_resource_templates(self) -> list[ResourceTemplate]:
        registry = self.routes.current().registry
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
        try:
            page = route.registry.read_resource(str(uri), session.id)
        except NotFound as exc:
            raise ResourceNotFoundError(exc.message) from None
        content: str | bytes = page.text if page.text is not None else (page.data or b"")
        return [ReadResourceContents(content=content, mime_type=page.mime_type)]
