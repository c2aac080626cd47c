"""The MCP adapter: a registry served by the SDK's ``MCPServer``.

``tools/list`` comes from the registry's specs (the arguments model is the input schema, the
result model the output schema, plus title and annotations), and ``tools/call`` goes to
``Registry.call``. Results map onto MCP content: text → ``TextContent``, images →
``ImageContent``, files → an embedded ``BlobResourceContents``, the typed result →
``structuredContent``; failures → ``isError`` results whose ``_meta`` carries the error's stable
code (``ERROR_META_KEY``). An unknown tool name is a protocol error (-32602). This module and
``transports.py`` are the only ones that import ``mcp``.
"""

from __future__ import annotations

import base64
import itertools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from mcp import MCPError
from mcp.server import MCPServer
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import Context
from mcp.types import (
    INVALID_PARAMS,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    TextContent,
    Tool,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import AnyHttpUrl

from mcp_localtools._version import __version__
from mcp_localtools.config import Config
from mcp_localtools.policy.paths import PathPolicy
from mcp_localtools.registry import Registry
from mcp_localtools.results import Content, FileContent, ToolResult
from mcp_localtools.results import ImageContent as ImageItem
from mcp_localtools.results import TextContent as TextItem
from mcp_localtools.tools import build_registry
from mcp_localtools.transports import StaticTokenVerifier
from mcp_localtools.workspace import Workspace

__all__ = [
    "ERROR_META_KEY",
    "SERVER_NAME",
    "STATELESS_SESSION",
    "build_server",
    "create_server",
    "instructions_for",
    "to_call_tool_result",
]

SERVER_NAME = "mcp-localtools"


def _content_block(item: Content) -> TextContent | ImageContent | EmbeddedResource:
    if isinstance(item, TextItem):
        return TextContent(type="text", text=item.text)
    if isinstance(item, ImageItem):
        return ImageContent(
            type="image", data=base64.b64encode(item.data).decode("ascii"), mime_type=item.mime_type
        )
    assert isinstance(item, FileContent)
    blob = BlobResourceContents(
        uri=item.uri, mime_type=item.mime_type, blob=base64.b64encode(item.data).decode("ascii")
    )
    return EmbeddedResource(type="resource", resource=blob)


ERROR_META_KEY = "mcp-localtools/error"
"""The ``_meta`` key of an error result: ``{"code": ..., "message": ...}``, the error's stable code
(``errors.py``) and its message, for clients that act on failures without parsing prose.

The code travels in ``_meta`` rather than ``structuredContent`` because clients built on the
TypeScript SDK validate any ``structuredContent`` of a result, error or not, against the tool's
output schema, and would turn the error into a protocol exception."""


def to_call_tool_result(result: ToolResult) -> CallToolResult:
    """Map a registry result onto an MCP ``CallToolResult``: content items, ``structuredContent``
    for a success, and for a failure ``isError`` with the code and message under
    ``_meta[ERROR_META_KEY]``."""
    meta = None
    if result.error is not None:
        meta = {ERROR_META_KEY: {"code": result.error.code, "message": result.error.message}}
    return CallToolResult(
        content=[_content_block(item) for item in result.content],
        structured_content=result.structured,
        is_error=result.is_error,
        _meta=meta,
    )


class _RegistryServer(MCPServer[Any]):
    """``MCPServer`` whose tools are a registry's specs rather than decorated functions."""

    def __init__(self, registry: Registry, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._registry = registry
        self._tools = [Tool.model_validate(registry.manifest(name)) for name in registry.names()]

    async def list_tools(self) -> list[Tool]:
        return list(self._tools)

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult:
        if name not in self._registry:
            raise MCPError(code=INVALID_PARAMS, message=f"Unknown tool: {name}")

        async def progress(done: float, total: float | None, message: str | None) -> None:
            if context is not None:
                await context.report_progress(done, total, message)

        session_id, client_name = self._session_of(context)
        result = await self._registry.call(
            name, arguments, progress=progress, session_id=session_id, client_name=client_name
        )
        return to_call_tool_result(result)

    def _session_of(self, context: Context[Any, Any] | None) -> tuple[str, str | None]:
        """``(session_id, client_name)`` of the connection a request came on.

        A handshake-era (2024-11-05 ... 2025-11-25) connection is a session: its id is minted at
        its first tool call and kept in the SDK's per-connection ``Connection.state``, and
        ``Registry.end_session`` is scheduled on the connection's exit stack, which the SDK unwinds
        when the connection ends (stdio EOF, Streamable HTTP DELETE or idle timeout, SSE
        disconnect, an in-memory client closing). The 2026-07-28 revision has no sessions (every
        request stands alone): all its requests share ``STATELESS_SESSION``, whose state lives
        until the server exits and is otherwise bounded by each tool's own limits and TTLs."""
        if context is None:
            return STATELESS_SESSION, None
        session = context.session
        params = session.client_params
        client_name = params.client_info.name if params is not None else None
        connection = getattr(session, "_connection", None)
        if connection is None or session.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return STATELESS_SESSION, client_name
        key = connection.state.get(_SESSION_KEY)
        if key is None:
            key = f"mcp-{next(_session_numbers)}"
            connection.state[_SESSION_KEY] = key
            connection.exit_stack.push_async_callback(self._registry.end_session, key)
        return str(key), client_name


STATELESS_SESSION = "mcp-stateless"
"""The ``CallContext.session_id`` of every 2026-07-28-era request: that revision has no sessions."""

_SESSION_KEY = "mcp-localtools/session"
_session_numbers = itertools.count(1)


def instructions_for(paths: PathPolicy) -> str:
    """Server instructions for the model: where the tools may work and how paths resolve."""
    roots = ", ".join(str(root) for root in paths.roots)
    return (
        f"Local file, search, edit and command tools. Every path must lie inside the allowed roots: {roots}. "
        f"Relative paths resolve against {paths.base_dir}. Failed calls say what went wrong and what to do."
    )


def create_server(
    registry: Registry,
    *,
    instructions: str | None = None,
    log_level: str = "WARNING",
    bearer_token: str | None = None,
) -> MCPServer[Any]:
    """An ``MCPServer`` that serves ``registry``; run it with ``run()`` or a transport of
    ``transports.py``, or connect to it in memory with the SDK's ``Client(server)``.

    Args:
        registry: the tools.
        instructions: server instructions for the model.
        log_level: level of the SDK's loggers.
        bearer_token: when set, the HTTP transports require ``Authorization: Bearer <token>``
            (the SDK's resource-server auth with a static, constant-time token check; no OAuth
            metadata is published). stdio is unaffected.
    """
    auth: dict[str, Any] = {}
    if bearer_token is not None:
        auth = {
            "token_verifier": StaticTokenVerifier(bearer_token),
            # issuer_url is required by the SDK but published nowhere: no metadata routes are served.
            "auth": AuthSettings(issuer_url=AnyHttpUrl("http://127.0.0.1"), resource_server_url=None),
        }
    return _RegistryServer(
        registry,
        name=SERVER_NAME,
        title="mcp-localtools",
        version=__version__,
        instructions=instructions,
        subscriptions=False,
        log_level=log_level.upper(),
        **auth,
    )


def build_server(
    config: Config | None = None,
    *,
    log_level: str = "WARNING",
    bearer_token: str | None = None,
    environ: Mapping[str, str] | None = None,
    own_files: Sequence[str | Path] = (),
) -> MCPServer[Any]:
    """Build the policies, the registry and the MCP server from a config (default: ``Config()``,
    the current directory as the only root). ``bearer_token`` as in ``create_server``;
    ``environ`` is the server's environment for the exec tools (see ``build_registry``);
    ``own_files`` the server's config file, protected when it lies in a root (``Workspace``).

    Raises:
        ConfigError: the config cannot be used (bad root, unknown tool in ``[tools]``, ...).
    """
    config = config or Config()
    workspace = Workspace.from_config(config, environ=environ, own_files=own_files)
    registry = build_registry(config, workspace=workspace)
    return create_server(
        registry,
        instructions=instructions_for(workspace.paths),
        log_level=log_level,
        bearer_token=bearer_token,
    )
