"""Every private MCP SDK and uvicorn hook of ``mcp_localtools._sdk`` still exists.

An SDK or uvicorn upgrade that renames one fails here, naming the hook, instead of somewhere in
the HTTP edge or the stdio transport."""

from __future__ import annotations

import inspect

import pytest
from mcp import Client

from mcp_localtools import _sdk
from mcp_localtools.results import ToolResult
from mcp_localtools.server import create_server
from mcp_localtools.spec import CallContext
from mcp_localtools.transports import NetworkSettings, StaticTokenVerifier, http_app
from tests.test_registry import EchoArgs, EchoResult, spec

pytestmark = pytest.mark.anyio


async def test_every_private_hook_of_the_sdk_and_uvicorn_still_exists() -> None:
    from mcp.server.lowlevel import Server
    from mcp.server.streamable_http import StreamableHTTPServerTransport

    from mcp_localtools.registry import Registry

    registry = Registry()
    registry.register(spec())
    server = create_server(registry, bearer_token="t" * 40)
    checked: set[str] = set()

    assert isinstance(_sdk.lowlevel_server(server), Server)
    checked.add("MCPServer._lowlevel_server")
    assert isinstance(_sdk.token_verifier(server), StaticTokenVerifier)
    checked.add("MCPServer._token_verifier")

    seen: list[str] = []

    async def whoami(args: EchoArgs, ctx: CallContext) -> ToolResult:
        seen.append(ctx.session_id)
        return ToolResult.of(EchoResult(text=ctx.session_id))

    session_registry = Registry()
    session_registry.register(spec(handler=whoami))
    async with Client(create_server(session_registry), mode="legacy") as client:
        await client.call_tool("echo", {})
    assert seen == ["mcp-1"], "a handshake-era connection is a session (found through its Connection)"
    checked.add("ServerSession._connection")

    settings = NetworkSettings(transport="streamable-http", host="127.0.0.1", port=1, authenticated=False)
    http_app(server, settings)
    found = _sdk.idle_http_sessions(server.session_manager)
    assert found is not None and isinstance(found[0], dict) and inspect.iscoroutinefunction(found[1])
    checked.update(
        {"StreamableHTTPSessionManager._server_instances", "StreamableHTTPSessionManager._discard_session"}
    )
    assert "_requests_in_flight" in inspect.getsource(StreamableHTTPServerTransport.__init__)
    checked.add("StreamableHTTPServerTransport._requests_in_flight")

    send, receive = _sdk.create_context_streams[int](1)
    await send.aclose()
    await receive.aclose()
    checked.add("mcp.shared._context_streams.create_context_streams")

    protocol = _sdk.h11_protocol()
    source = inspect.getsource(protocol.__init__) + inspect.getsource(protocol.connection_made)
    assert all(f"self.{name}" in source for name in ("cycle", "transport", "loop"))
    checked.add("uvicorn H11Protocol (.cycle, .transport, .loop)")

    await _progress_hook_holds()
    checked.add("ServerSession._request_outbound (progress)")

    assert checked == set(_sdk.HOOKS), "every hook in _sdk.HOOKS is checked here, and no other"


async def _progress_hook_holds() -> None:
    """``_sdk.progress_requested``: its attributes exist, and a tool is given ``progress`` only
    when the caller asked, over JSON-RPC in memory and on 2026-07-28 (dispatched in process)."""
    from mcp.server.runner import _NoServerRequestsDispatchContext
    from mcp.server.session import ServerSession
    from mcp.shared.direct_dispatcher import _DirectDispatchContext
    from mcp.shared.jsonrpc_dispatcher import _JSONRPCDispatchContext

    from mcp_localtools.registry import Registry

    fields = {*_DirectDispatchContext.__dataclass_fields__, *_JSONRPCDispatchContext.__dataclass_fields__}
    assert {"_on_progress", "_progress_token"} <= fields
    assert "_inner" in _NoServerRequestsDispatchContext.__annotations__
    assert "self._request_outbound" in inspect.getsource(ServerSession.__init__)
    given: list[bool] = []

    async def asked(args: EchoArgs, ctx: CallContext) -> ToolResult:
        given.append(ctx.progress is not None)
        return ToolResult.of(EchoResult(text=""))

    progress_registry = Registry()
    progress_registry.register(spec(handler=asked))

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        pass

    for mode in ("legacy", "auto"):  # JSON-RPC in memory; 2026-07-28 dispatched in process
        async with Client(create_server(progress_registry), mode=mode) as client:
            await client.call_tool("echo", {})
            await client.call_tool("echo", {}, progress_callback=on_progress)
    assert given == [False, True] * 2, "a tool gets progress only when the caller asked for it"
