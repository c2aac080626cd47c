"""``mcp-localtools call TOOL [ARGS]``: call one tool and print the result as JSON.

Prints ``{"success": true, "tool", "structuredContent", "content"}`` or ``{"success": false,
"tool", "error": {"code", "message"}}``; exits 0, 1 (bad input, a tool error) or 2 (refused by the
path or command policy).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys
from typing import Any

from mcp_localtools.cli.options import (
    EXIT_ERROR,
    EXIT_OK,
    EXIT_POLICY,
    add_config_options,
    add_log_option,
    add_profile_option,
    config_from,
    no_roots_message,
    own_files,
    profile_config,
)
from mcp_localtools.errors import ConfigError, UnknownToolError
from mcp_localtools.results import FileContent, ImageContent, LinkContent, TextContent, ToolResult

__all__ = ["add_parser", "run"]


def add_parser(commands: Any) -> None:
    """Register ``call``."""
    parser = commands.add_parser("call", help="call one tool and print the result as JSON")
    add_config_options(parser, suppress=True)
    add_profile_option(
        parser, suppress=True, help="call it as a client of [profiles.NAME]: its tools, under its policies"
    )
    add_log_option(parser, suppress=True)
    parser.add_argument("tool", help="tool name, e.g. readfile")
    parser.add_argument(
        "arguments", nargs="?", help="a JSON object of arguments; omitted or - reads it from stdin"
    )
    parser.set_defaults(run=run)


def _content_json(item: TextContent | ImageContent | FileContent | LinkContent) -> dict[str, Any]:
    if isinstance(item, TextContent):
        return {"type": "text", "text": item.text}
    if isinstance(item, LinkContent):
        return {"type": "resource_link", "uri": item.uri, "name": item.name, "size": item.size}
    if isinstance(item, ImageContent):
        return {
            "type": "image",
            "mimeType": item.mime_type,
            "data": base64.b64encode(item.data).decode("ascii"),
        }
    return {
        "type": "resource",
        "uri": item.uri,
        "mimeType": item.mime_type,
        "blob": base64.b64encode(item.data).decode("ascii"),
    }


def _print_json(data: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")


def _fail(tool: str, code: str, message: str, exit_code: int = EXIT_ERROR) -> int:
    _print_json({"success": False, "tool": tool, "error": {"code": code, "message": message}})
    return exit_code


def _arguments(ns: argparse.Namespace) -> dict[str, Any] | str:
    """The call's arguments (from the command line, or stdin for none or ``-``), or why not."""
    raw = sys.stdin.read() if ns.arguments in (None, "-") else ns.arguments
    try:
        arguments = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError as exc:
        return f"arguments are not valid JSON: {exc}"
    if not isinstance(arguments, dict):
        return 'arguments must be a JSON object such as \'{"path": "."}\''
    return arguments


def run(ns: argparse.Namespace) -> int:
    """Call the tool and print its result.

    Raises:
        ConfigError: there is no root to work in (one line on stderr, exit 1).
    """
    arguments = _arguments(ns)
    if isinstance(arguments, str):
        return _fail(ns.tool, "invalid_json", arguments)
    try:
        config = config_from(ns)
    except ConfigError as exc:
        return _fail(ns.tool, exc.code, exc.message)
    if not config.paths.allowed_roots:  # no client to send roots here: one line on stderr, exit 1
        raise ConfigError(no_roots_message(ns))
    try:
        result = _call(ns, config, arguments)
    except (ConfigError, UnknownToolError) as exc:
        return _fail(ns.tool, exc.code, exc.message)
    if result.error is not None:
        status = EXIT_POLICY if result.error.policy else EXIT_ERROR
        return _fail(ns.tool, result.error.code, result.error.message, status)
    content = [_content_json(item) for item in result.content]
    _print_json(
        {"success": True, "tool": ns.tool, "structuredContent": result.structured, "content": content}
    )
    return EXIT_OK


def _call(ns: argparse.Namespace, config: Any, arguments: dict[str, Any]) -> ToolResult:
    """Build the registry of the call's profile (the server's without one) and call the tool.

    Raises:
        ConfigError: the config cannot be used, or ``--profile`` names no profile.
        UnknownToolError: no such tool, or not one of the profile's.
    """
    import anyio

    from mcp_localtools.cli.tools import served_specs
    from mcp_localtools.tools import build_registry
    from mcp_localtools.workspace import Workspace

    chosen = profile_config(config, ns.profile)
    workspace = Workspace.from_config(chosen, environ=os.environ, own_files=own_files(ns))
    registry = build_registry(chosen, workspace=workspace)
    if ns.profile is not None and ns.tool not in {
        spec.name for spec in served_specs(registry, config, ns.profile)
    }:
        names = ", ".join(spec.name for spec in served_specs(registry, config, ns.profile))
        raise UnknownToolError(
            f"unknown tool: {ns.tool!r} is not a tool of profile {ns.profile!r}; its tools: {names}"
        )
    result: ToolResult = anyio.run(lambda: registry.call(ns.tool, arguments))
    return result
