"""mcp-localtools: safe, fast local tools (files, search, edits, images, shell) for LLM agents over MCP.

The public API::

    from mcp_localtools import Config, load_config, build_registry, build_server

    config = load_config("config.toml")           # or Config() for the embedded default
    registry = build_registry(config)              # the tools, usable without MCP
    result = await registry.call("readfile", {"path": "README.md", "limit": 20})
    server = build_server(config)                  # an mcp MCPServer; server.run() serves stdio

``build_server`` and ``create_server`` import the MCP SDK on first use, so the registry and the
JSON command line stay light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcp_localtools._version import __version__
from mcp_localtools.config import Config, load_config, parse_config
from mcp_localtools.errors import (
    ConfigError,
    ConfigProblems,
    LocalToolsError,
    OutsideAllowedRoots,
    PolicyViolation,
    Problem,
    SpecError,
    ToolError,
    UnknownToolError,
)
from mcp_localtools.policy.paths import PathPolicy, ResolvedPath
from mcp_localtools.registry import Registry
from mcp_localtools.results import ToolResult
from mcp_localtools.spec import ToolAnnotations, ToolSpec
from mcp_localtools.tools import build_registry
from mcp_localtools.workspace import Workspace

if TYPE_CHECKING:
    from mcp_localtools.server import build_server, create_server

__all__ = [
    "Config",
    "ConfigError",
    "ConfigProblems",
    "LocalToolsError",
    "OutsideAllowedRoots",
    "PathPolicy",
    "PolicyViolation",
    "Problem",
    "Registry",
    "ResolvedPath",
    "SpecError",
    "ToolAnnotations",
    "ToolError",
    "ToolResult",
    "ToolSpec",
    "UnknownToolError",
    "Workspace",
    "__version__",
    "build_registry",
    "build_server",
    "create_server",
    "load_config",
    "parse_config",
]


def __getattr__(name: str) -> Any:
    if name in ("build_server", "create_server"):
        from mcp_localtools import server

        return getattr(server, name)
    raise AttributeError(f"module 'mcp_localtools' has no attribute {name!r}")
