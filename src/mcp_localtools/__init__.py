"""mcp-localtools: safe, fast local tools (files, search, edits, images, shell) for LLM agents over MCP.

The public API::

    from mcp_localtools import Config, load_config, build_registry, build_server

    config = load_config("config.toml")           # or Config() for the embedded default
    registry = build_registry(config)              # the tools, usable without MCP
    result = await registry.call("readfile", {"path": "README.md", "limit": 20})
    server = build_server(config)                  # an mcp MCPServer; server.run() serves stdio

Every name is imported at its first use (``build_server`` and ``create_server`` bring the MCP SDK),
so the registry and the JSON command line stay light and a cached start loads none of them.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from mcp_localtools._version import __version__

if TYPE_CHECKING:
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
    from mcp_localtools.server import build_server, create_server
    from mcp_localtools.spec import ToolAnnotations, ToolSpec
    from mcp_localtools.tools import build_registry
    from mcp_localtools.workspace import Workspace

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

_HOME = {
    **dict.fromkeys(("Config", "load_config", "parse_config"), "config"),
    **dict.fromkeys(
        (
            "ConfigError",
            "ConfigProblems",
            "LocalToolsError",
            "OutsideAllowedRoots",
            "PolicyViolation",
            "Problem",
            "SpecError",
            "ToolError",
            "UnknownToolError",
        ),
        "errors",
    ),
    **dict.fromkeys(("PathPolicy", "ResolvedPath"), "policy.paths"),
    "Registry": "registry",
    "ToolResult": "results",
    **dict.fromkeys(("build_server", "create_server"), "server"),
    **dict.fromkeys(("ToolAnnotations", "ToolSpec"), "spec"),
    "build_registry": "tools",
    "Workspace": "workspace",
}
"""Each public name → the module it comes from, imported at its first use: ``python -m
mcp_localtools`` and a cached start (``cli/startcache.py``) load only what they use."""


def __getattr__(name: str) -> Any:
    if name in _HOME:
        return getattr(import_module(f"mcp_localtools.{_HOME[name]}"), name)
    raise AttributeError(f"module 'mcp_localtools' has no attribute {name!r}")
