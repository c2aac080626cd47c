"""``mcp-localtools tools``: list the tools (a table, their manifests, or one provider's format)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from mcp_localtools.cli.options import (
    EXIT_OK,
    add_config_options,
    add_log_option,
    add_profile_option,
    config_from,
    profile_config,
)

if TYPE_CHECKING:
    from mcp_localtools.registry import Registry
    from mcp_localtools.spec import ToolSpec

__all__ = ["add_parser", "definitions", "run", "served_specs"]


def add_parser(commands: Any) -> None:
    """Register ``tools``."""
    parser = commands.add_parser("tools", help="list the tools")
    add_config_options(parser, suppress=True)
    add_profile_option(parser, suppress=True, help="only the tools of [profiles.NAME], under its policies")
    parser.add_argument("--json", action="store_true", help="print the manifests as JSON")
    parser.add_argument(
        "--format",
        choices=("mcp", "openai", "anthropic"),
        help="print the tool definitions as JSON in this provider's format",
    )
    add_log_option(parser, suppress=True)
    parser.set_defaults(run=run)


def served_specs(registry: Registry, config: Any, profile: str | None) -> list[ToolSpec[Any]]:
    """The specs of ``registry`` a client of ``profile`` gets (all of them for None), by name."""
    from mcp_localtools.tools import profile_specs

    if profile is None:
        return registry.specs()
    return profile_specs(registry, config.profiles[profile])


def run(ns: argparse.Namespace) -> int:
    """Print the tools.

    Raises:
        ConfigError: the config is invalid or ``--profile`` names no profile.
    """
    from mcp_localtools.tools import build_registry

    config = config_from(ns)
    registry = build_registry(profile_config(config, ns.profile))
    specs = served_specs(registry, config, ns.profile)
    if ns.format:
        sys.stdout.write(json.dumps(definitions(registry, specs, ns.format), indent=2) + "\n")
        return EXIT_OK
    if ns.json:
        manifests = [{**registry.manifest(spec.name), "group": spec.group} for spec in specs]
        sys.stdout.write(json.dumps(manifests, indent=2) + "\n")
        return EXIT_OK
    width = max((len(spec.name) for spec in specs), default=4)
    for spec in specs:
        kind = (
            "read-only"
            if spec.annotations.read_only
            else ("destructive" if spec.annotations.destructive else "writes")
        )
        sys.stdout.write(f"{spec.name:<{width}}  {spec.group:<5}  {kind:<11}  {spec.title}\n")
    return EXIT_OK


def definitions(registry: Registry, specs: list[ToolSpec[Any]], provider: str) -> list[dict[str, Any]]:
    """``specs`` of ``registry`` as one provider's tool definitions: ``mcp`` (the ``tools/list``
    entries), ``openai`` (Chat Completions ``{"type": "function", "function": {...}}``) or
    ``anthropic`` (Messages API ``{"name", "description", "input_schema"}``)."""
    out: list[dict[str, Any]] = []
    for spec in specs:
        manifest = registry.manifest(spec.name)
        if provider == "openai":
            function = {
                "name": spec.name,
                "description": spec.description,
                "parameters": manifest["inputSchema"],
            }
            out.append({"type": "function", "function": function})
        elif provider == "anthropic":
            out.append(
                {"name": spec.name, "description": spec.description, "input_schema": manifest["inputSchema"]}
            )
        else:
            out.append(manifest)
    return out
