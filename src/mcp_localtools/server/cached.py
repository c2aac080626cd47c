"""The cached start: ``initialize`` and ``tools/list`` answered from the start-up cache, the real
server built at the first request that needs it.

A stdio server started with the same command line, environment and config as an earlier one that
passed the start-up check (``cli/startcache.py`` decides) serves a ``CachedServer``: the SDK's
low-level ``Server`` with the name, version and instructions the earlier server had, the same
request methods (so the same capabilities), and ``tools/list`` answered with the earlier server's
tool list. No tool module, policy, sandbox or index is imported for that. The first request of any
other method (``tools/call``, ``resources/read`` ...) builds the real ``RegistryServer`` exactly as
a start without the cache does (in a worker thread, once), and that request and every later one go
to the real server's own handlers on the same connection; ``tools/list`` does too from then on.
The build starts in the background once ``initialize`` has been answered, so the first call
usually finds the real server ready; its tools are built at their first call
(``tools.deferred_registry``), and the entry is checked against it (``verify``) once the first
request it serves has been answered (or the connection ended), so the first call never waits
for that.
The real server's lifespan (``Sessions.serving``) runs from its build until the connection ends.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread
from anyio.abc import TaskGroup, TaskStatus
from mcp import MCPError, types
from mcp.server import MCPServer
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity

from mcp_localtools._sdk import connection_of, lowlevel_server
from mcp_localtools.stdio import serve_stdio

if TYPE_CHECKING:
    from mcp_localtools.server.adapter import RegistryServer

__all__ = [
    "LAZY_NOTIFICATIONS",
    "LAZY_REQUESTS",
    "CachedServer",
    "answers",
    "listed_tool",
    "readable",
    "refuse_second_initialize",
]

logger = logging.getLogger(__name__)

LAZY_REQUESTS: Mapping[str, type[types.RequestParams]] = {
    "tools/call": types.CallToolRequestParams,
    "resources/list": types.PaginatedRequestParams,
    "resources/templates/list": types.PaginatedRequestParams,
    "resources/read": types.ReadResourceRequestParams,
    "resources/subscribe": types.SubscribeRequestParams,
    "resources/unsubscribe": types.UnsubscribeRequestParams,
    "subscriptions/listen": types.SubscriptionsListenRequestParams,
    "prompts/list": types.PaginatedRequestParams,
    "prompts/get": types.GetPromptRequestParams,
    "completion/complete": types.CompleteRequestParams,
    "logging/setLevel": types.SetLevelRequestParams,
}
"""Every request method a ``RegistryServer`` may serve besides ``initialize``, ``ping``,
``server/discover`` and ``tools/list``, with the params model the SDK parses it into
(``tests/test_startcache.py`` checks both against a real server)."""

LAZY_NOTIFICATIONS: Mapping[str, type[types.NotificationParams]] = {
    "notifications/roots/list_changed": types.NotificationParams,
}
"""The notifications a ``RegistryServer`` handles; before the real server is built there is no
session for one to change, so it is dropped."""

_AFTER_ANSWER_SECONDS = 0.1
"""How long after the first answer the entry is verified (the answer is on its way by then)."""


async def refuse_second_initialize(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """Server middleware: an ``initialize`` on a connection that was already initialized is a
    JSON-RPC error (-32600), not a renegotiation (the SDK accepts it and replaces the client's
    info and protocol version mid-session; the spec allows one handshake per connection)."""
    if ctx.method == "initialize":
        connection = connection_of(ctx.session)
        if connection is not None and connection.client_params is not None:
            raise MCPError(
                code=types.INVALID_REQUEST,
                message="already initialized: initialize is accepted once per connection; "
                "open a new connection to start over",
            )
    return await call_next(ctx)


def answers(server: RegistryServer) -> dict[str, Any]:
    """What a ``CachedServer`` needs of the real ``server`` (JSON): its ``info``, its ``tools/list``
    result for a session that selected nothing, its ``methods``, ``approval_ttl`` and
    ``max_line_bytes`` (a stdio server of ``build_server``: one route, no ``selecttools``)."""
    lowlevel = lowlevel_server(server)
    return {
        "info": {
            "name": lowlevel.name,
            "title": lowlevel.title,
            "version": lowlevel.version,
            "instructions": lowlevel.instructions,
        },
        "tools": types.ListToolsResult(tools=list(server.routes.default.tools)).model_dump(
            mode="json", by_alias=True, exclude_unset=True
        ),
        "methods": [method for method in LAZY_REQUESTS if lowlevel.get_request_handler(method)],
        "approval_ttl": server.request_state_ttl,
        "max_line_bytes": server.max_stdio_line_bytes,
    }


def listed_tool(manifest: dict[str, Any]) -> dict[str, Any]:
    """A tool's ``tools/list`` entry as ``answers`` writes it, from its manifest
    (``Registry.manifest``)."""
    return types.Tool.model_validate(manifest).model_dump(mode="json", by_alias=True, exclude_unset=True)


def readable(info: Mapping[str, Any], tools: Mapping[str, Any], methods: Sequence[str]) -> bool:
    """Whether an entry's ``info``, ``tools`` and ``methods`` make a ``CachedServer`` (a damaged
    entry is a start that builds everything, never a crash at every start)."""
    try:
        types.ListToolsResult.model_validate(tools)
    except ValueError:
        return False
    return isinstance(info.get("name"), str) and all(method in LAZY_REQUESTS for method in methods)


class CachedServer:
    """A server answering ``initialize`` and ``tools/list`` from a cached start, and everything
    else from the real server, built by ``build`` at the first request that needs it.

    Args:
        info: the real server's ``name``, ``title``, ``version`` and ``instructions``.
        tools: the real server's ``tools/list`` result as wire JSON.
        methods: the request methods of ``LAZY_REQUESTS`` the real server serves.
        approval_ttl: seconds the 2026-07-28 request state lives (``[approval]`` sets it on the
            real server); None: the SDK's default.
        build: builds the real server (blocking; run in a worker thread, once).
        verify: run (blocking, in a worker thread, beside the requests) once the real server is
            built and has answered a request (or the connection ended): whether the entry still
            tells what it would (``CachedStart.verify``).
    """

    def __init__(
        self,
        *,
        info: Mapping[str, str | None],
        tools: Mapping[str, Any],
        methods: Sequence[str],
        approval_ttl: float | None,
        build: Callable[[], RegistryServer],
        verify: Callable[[RegistryServer], object] | None = None,
    ) -> None:
        self._tools = types.ListToolsResult.model_validate(tools)
        self._build = build
        self._verify = verify
        self._real: RegistryServer | None = None
        self._building = anyio.Lock()
        self._tasks: TaskGroup | None = None
        self._done = anyio.Event()
        self._answered = anyio.Event()
        self._prebuilding = False
        self.lowlevel: Server[Any] = Server(
            str(info["name"]),
            title=info.get("title"),
            version=str(info.get("version") or ""),
            instructions=info.get("instructions"),
            on_list_tools=self._list_tools,
        )
        for method in methods:
            self.lowlevel.add_request_handler(method, LAZY_REQUESTS[method], self._forward_request(method))
        for method, params in LAZY_NOTIFICATIONS.items():
            self.lowlevel.add_notification_handler(method, params, self._forward_notification(method))
        security = (
            RequestStateSecurity.ephemeral()
            if approval_ttl is None
            else RequestStateSecurity.ephemeral(ttl=approval_ttl)
        )
        # As MCPServer orders them: the SDK's OpenTelemetry, the request-state boundary, then ours.
        self.lowlevel.middleware.append(RequestStateBoundary(security, default_audience=self.lowlevel.name))
        self.lowlevel.middleware.append(refuse_second_initialize)
        self.lowlevel.middleware.append(self._build_after_first_request)

    @property
    def real(self) -> RegistryServer | None:
        """The real server, once a request has built it."""
        return self._real

    async def serve_stdio(self, *, max_line_bytes: int) -> None:
        """Serve over stdin/stdout (``stdio.serve_stdio``) until the client leaves; the real
        server's lifespan, when it was built, ends after the connection."""
        async with anyio.create_task_group() as tasks:
            self._tasks = tasks
            try:
                await serve_stdio(self.lowlevel, max_line_bytes=max_line_bytes)
            finally:
                self._done.set()

    async def real_server(self) -> RegistryServer:
        """The real server, built now (in a worker thread) unless it was already.

        Raises:
            MCPError: the server could not be built (the reason; the log has it whole).
        """
        async with self._building:
            if self._real is None:
                # Shielded: a cancelled request must not throw away a server built for it.
                with anyio.CancelScope(shield=True):
                    try:
                        real = await anyio.to_thread.run_sync(self._build)
                    except Exception as exc:
                        logger.error("the server could not be built: %s", exc)
                        raise MCPError(
                            code=types.INTERNAL_ERROR, message=f"the server could not be built: {exc}"
                        ) from exc
                    if self._tasks is not None:
                        await self._tasks.start(self._live, real)
                        if self._verify is not None:
                            self._tasks.start_soon(self._verify_later, real)
                    self._real = real
        assert self._real is not None, "built above, or by an earlier request"
        return self._real

    async def _build_after_first_request(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        """Server middleware: after the first message that is not ``initialize`` (its
        ``notifications/initialized``, so the client has its answer; a 2026-07-28 client's first
        request) the real server is built in the background, so a client's first call, which
        usually comes after its model has read the tool list, finds it ready."""
        result = await call_next(ctx)
        if ctx.method != "initialize" and not self._prebuilding and self._tasks is not None:
            self._prebuilding = True
            self._tasks.start_soon(self._prebuild)
        return result

    async def _prebuild(self) -> None:
        try:
            await self.real_server()
        except MCPError:  # logged; the request that needs the server builds it again and answers why
            pass

    async def _verify_later(self, real: RegistryServer) -> None:
        """Run ``verify`` once the real server has answered a request (a moment later, so that
        its answer is written first), or the connection ended."""
        async with anyio.create_task_group() as waiting:

            async def wake(event: anyio.Event, then: float) -> None:
                await event.wait()
                await anyio.sleep(then)
                waiting.cancel_scope.cancel()

            waiting.start_soon(wake, self._answered, _AFTER_ANSWER_SECONDS)
            waiting.start_soon(wake, self._done, 0)
        assert self._verify is not None, "scheduled only with a verify"
        await anyio.to_thread.run_sync(self._verify, real)

    async def _live(self, real: MCPServer[Any], *, task_status: TaskStatus[None]) -> None:
        """Hold the real server's lifespan open until the connection ends."""
        lowlevel = lowlevel_server(real)
        async with lowlevel.lifespan(lowlevel):
            task_status.started()
            await self._done.wait()

    async def _list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        if self._real is None:
            return self._tools
        return await self._handler(self._real, "tools/list")(ctx, params)  # type: ignore[no-any-return]

    def _forward_request(self, method: str) -> Callable[[ServerRequestContext[Any], Any], Any]:
        async def forward(ctx: ServerRequestContext[Any], params: Any) -> Any:
            real = await self.real_server()
            try:
                return await self._handler(real, method)(ctx, params)
            finally:
                self._answered.set()

        return forward

    def _forward_notification(self, method: str) -> Callable[[ServerRequestContext[Any], Any], Any]:
        async def forward(ctx: ServerRequestContext[Any], params: Any) -> None:
            if self._real is not None:
                entry = lowlevel_server(self._real).get_notification_handler(method)
                if entry is not None:
                    await entry.handler(ctx, params)

        return forward

    @staticmethod
    def _handler(real: MCPServer[Any], method: str) -> Callable[..., Any]:
        entry = lowlevel_server(real).get_request_handler(method)
        if entry is None:  # the cache named a method the real server does not serve
            raise MCPError(code=types.METHOD_NOT_FOUND, message=f"Method not found: {method}")
        return functools.partial(entry.handler)
