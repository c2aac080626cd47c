"""The MCP edge: the registry served by the SDK's ``MCPServer``.

``build.py`` composes the server from a config; ``adapter.py`` is the ``MCPServer`` (list, call,
resources); a call goes through ``pipeline.py``'s steps (audit gate → approval → run → audit line)
over one ``call.Call``; ``routes.py`` picks a request's tools by its profile token, ``sessions.py``
its session, ``approval.py`` asks the person, ``results.py`` maps the result onto MCP. The private
SDK hooks all of this relies on are in ``mcp_localtools._sdk``.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp_localtools.server.build import SERVER_NAME, build_server, create_server, instructions_for
    from mcp_localtools.server.results import ERROR_META_KEY, to_call_tool_result
    from mcp_localtools.server.sessions import STATELESS_SESSION, is_stateless

__all__ = [
    "ERROR_META_KEY",
    "SERVER_NAME",
    "STATELESS_SESSION",
    "build_server",
    "create_server",
    "instructions_for",
    "is_stateless",
    "to_call_tool_result",
]

_HOME = {
    "ERROR_META_KEY": "results",
    "SERVER_NAME": "build",
    "STATELESS_SESSION": "sessions",
    "build_server": "build",
    "create_server": "build",
    "instructions_for": "build",
    "is_stateless": "sessions",
    "to_call_tool_result": "results",
}
"""Each public name → its module, imported at first use: a cached start (``cached.py``) imports
this package without building a server."""


def __getattr__(name: str) -> Any:
    if name in _HOME:
        return getattr(import_module(f"mcp_localtools.server.{_HOME[name]}"), name)
    raise AttributeError(f"module 'mcp_localtools.server' has no attribute {name!r}")
