"""Build the tool groups from a config and register the enabled tools.

``[tools] enabled`` / ``disabled`` entries are tool names, group names or ``group.tool``, with
shell-style globs (``"fs"``, ``"text.*"``, ``"readfile"``). ``read_only`` keeps only the tools
whose ``readOnlyHint`` is true. An entry that matches no known tool is a start-up error (a typo
must not silently enable or disable nothing).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fnmatch import fnmatchcase
from typing import Any

from mcp_localtools.config import Config, ToolsConfig
from mcp_localtools.errors import ConfigError
from mcp_localtools.fswrite import FileLocks
from mcp_localtools.parsers import ParserRunner
from mcp_localtools.policy.paths import PathPolicy
from mcp_localtools.registry import Registry, ToolSpec
from mcp_localtools.tools.exec import exec_specs
from mcp_localtools.tools.fs import fs_specs
from mcp_localtools.tools.image import image_specs
from mcp_localtools.tools.text import text_specs

__all__ = ["all_specs", "build_registry", "path_policy", "select_tools"]


def path_policy(config: Config) -> PathPolicy:
    """The PathPolicy of ``[paths]``.

    Raises:
        ConfigError: a root is missing or not a directory, or the base directory is outside the roots.
    """
    paths = config.paths
    return PathPolicy.create(
        paths.allowed_roots, base_dir=paths.work_base_dir, block_symlinks=paths.block_symlinks
    )


def all_specs(
    config: Config, paths: PathPolicy, *, environ: Mapping[str, str] | None = None
) -> list[ToolSpec[Any]]:
    """Every tool this server knows, enabled or not, bound to its policies.

    Args:
        environ: the server's environment, for the exec tools (None: empty).
    """
    parsers = ParserRunner()  # one per server: it bounds how many parser processes run at once
    locks = FileLocks()  # one per server: read-modify-write calls on one file take turns
    return [
        *fs_specs(paths, config.limits, parsers, locks),
        *image_specs(paths, config.limits, parsers),
        *exec_specs(config.exec, paths, config.limits, environ or {}),
        *text_specs(paths, config.limits, locks),
    ]


def _matches(spec: ToolSpec[Any], pattern: str) -> bool:
    return any(fnmatchcase(name, pattern) for name in (spec.name, spec.group, f"{spec.group}.{spec.name}"))


def select_tools(specs: Iterable[ToolSpec[Any]], tools: ToolsConfig) -> list[ToolSpec[Any]]:
    """Apply ``[tools]`` to ``specs``.

    Raises:
        ConfigError: an ``enabled`` or ``disabled`` entry matches no tool or group.
    """
    catalog = list(specs)
    for key, patterns in (("enabled", tools.enabled), ("disabled", tools.disabled)):
        for pattern in patterns:
            if not any(_matches(spec, pattern) for spec in catalog):
                known = sorted({s.group for s in catalog} | {s.name for s in catalog})
                raise ConfigError(
                    f"tools.{key}: {pattern!r} matches no tool or group; known: {', '.join(known)}"
                )
    return [
        spec
        for spec in catalog
        if any(_matches(spec, p) for p in tools.enabled)
        and not any(_matches(spec, p) for p in tools.disabled)
        and (spec.annotations.read_only or not tools.read_only)
    ]


def build_registry(
    config: Config, *, paths: PathPolicy | None = None, environ: Mapping[str, str] | None = None
) -> Registry:
    """A registry holding the tools ``config`` enables.

    Args:
        config: the whole configuration.
        paths: an already-built PathPolicy for ``config.paths`` (built here when omitted).
        environ: the server's environment; the exec tools pass an allowlisted part of it to
            commands. The command line passes ``os.environ``; None passes nothing.

    Raises:
        ConfigError: a bad root, a ``[tools]`` entry that matches nothing, or a duplicate tool.
    """
    policy = paths or path_policy(config)
    registry = Registry()
    for spec in select_tools(all_specs(config, policy, environ=environ), config.tools):
        if spec.group != "exec" or config.exec.enabled:
            registry.register(spec)
    return registry
