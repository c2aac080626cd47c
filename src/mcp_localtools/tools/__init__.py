"""Build the tool groups from a config and register the enabled tools.

``[tools] enabled`` / ``disabled`` entries are tool names, group names or ``group.tool``, with
shell-style globs (``"fs"``, ``"text.*"``, ``"readfile"``). ``read_only`` keeps only the tools
whose ``readOnlyHint`` is true. An entry that matches no known tool is a start-up error (a typo
must not silently enable or disable nothing).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from mcp_localtools.config import Config, ProfileConfig, ToolsConfig
from mcp_localtools.errors import ConfigError
from mcp_localtools.policy.execution import CommandRule
from mcp_localtools.policy.paths import PathPolicy
from mcp_localtools.registry import CallContext, Registry, ToolArgs, ToolSpec
from mcp_localtools.results import ToolResult
from mcp_localtools.tools import code, fs, image, text, web
from mcp_localtools.tools import exec as exec_tools
from mcp_localtools.tools.exec._declared import declared_spec, declared_specs
from mcp_localtools.workspace import Workspace

__all__ = ["GROUPS", "all_specs", "build_registry", "profile_specs", "profile_tools", "select_tools"]

logger = logging.getLogger(__name__)

_NAME = re.compile(r"^[a-z][a-z0-9]*$")
"""A tool name: lowercase letters and digits (``Registry.register`` refuses others too)."""

GROUPS = (fs, text, exec_tools, image, web, code)
INDEX_TOOLS = frozenset({"findsymbol", "repomap", "semanticsearch"})
"""The tools that need the code index (``[index] enabled``)."""
"""The tool groups; each lists its tool modules in ``MODULES``, and each module has ``spec(workspace)``."""


def all_specs(workspace: Workspace) -> list[ToolSpec[Any]]:
    """Every tool this server knows, enabled or not, bound to ``workspace``: the built-in tools,
    then the declared ones (``[tools.custom]``).

    Raises:
        ConfigError: a ``[exec]`` setting is invalid (a ``denied_patterns`` regex, an
            ``[exec.scripts]`` entry), or a ``[tools.custom]`` table is (its key path named).
    """
    builtin = [module.spec(workspace) for group in GROUPS for module in group.MODULES]
    return [*builtin, *declared_specs(workspace, _builtin_names())]


def _builtin_names() -> frozenset[str]:
    return frozenset(module.__name__.rpartition(".")[2] for group in GROUPS for module in group.MODULES)


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
    config: Config,
    *,
    paths: PathPolicy | None = None,
    environ: Mapping[str, str] | None = None,
    workspace: Workspace | None = None,
    command_rule: CommandRule | None = None,
) -> Registry:
    """A registry holding the tools ``config`` enables. A tool this platform cannot run
    (``ToolSpec.unsupported``) is left out, with a warning in the log that says why.

    Args:
        config: the whole configuration.
        paths: an already-built PathPolicy for ``config.paths`` (built here when omitted).
        environ: the server's environment; the exec tools pass an allowlisted part of it to
            commands. The command line passes ``os.environ``; None passes nothing.
        workspace: an already-built workspace of ``config`` (then ``paths``, ``environ`` and
            ``command_rule`` are not used), e.g. one with another search engine.
        command_rule: the host's own rule for commands, asked before the execution policy: True
            runs a command whatever the blocklist says, False refuses it, None leaves it to the
            policy (``ExecutionPolicy.host_rule``; jeevesagent's ``allow_pattern``).

    Raises:
        ConfigError: a bad root, a ``[tools]`` entry that matches nothing, or a duplicate tool.
    """
    workspace = workspace or Workspace.from_config(
        config, paths=paths, environ=environ, command_rule=command_rule
    )
    rename = config.tools.rename
    registry = Registry(
        max_result_chars=config.limits.max_result_chars,
        renamed=rename,
        declare=lambda name, table: _telling_changes(
            declared_spec(workspace, name, table, taken=_builtin_names(), where=f"register_map({name!r})"),
            workspace,
        ),
    )
    left_out: dict[str, list[str]] = {}
    catalog = all_specs(workspace)
    unknown = sorted(set(rename) - {spec.name for spec in catalog})
    if unknown:
        raise ConfigError(f"tools.rename: no tool named {', '.join(unknown)}")
    served: list[ToolSpec[Any]] = []
    for spec in select_tools(catalog, config.tools):
        if not _served_here(spec, config):
            continue
        if spec.unsupported is not None:
            left_out.setdefault(spec.unsupported, []).append(spec.name)
            continue
        served.append(spec)
    for spec in _renamed(served, rename):
        registry.register(_telling_changes(spec, workspace))
    for reason, names in left_out.items():
        logger.warning("not available on this platform: %s (%s)", ", ".join(sorted(names)), reason)
    return registry


def _served_here(spec: ToolSpec[Any], config: Config) -> bool:
    """False for a tool the config switches off outside ``[tools] enabled``/``disabled``."""
    if spec.group == "exec" and not config.exec.enabled:
        return False
    if spec.name in INDEX_TOOLS and not config.index.enabled:
        return False  # symbols stays: it outlines single files without the index
    # read-only: no fetches to any host (a way out for file contents) unless allowlisted
    return not (spec.annotations.open_world and config.tools.read_only and not config.web.allowed_hosts)


def _renamed(specs: Sequence[ToolSpec[Any]], rename: Mapping[str, str]) -> list[ToolSpec[Any]]:
    """``specs`` under the names ``[tools] rename`` gives them (``builtin_name`` keeps the own name).

    Raises:
        ConfigError: a new name is malformed, or two served tools would share a name (two renamed
            to one name, or one renamed to the name of a tool still served under it); two tools
            may swap names, and a tool left out frees its name.
    """
    for old, new in rename.items():
        if not _NAME.match(new):
            raise ConfigError(f"tools.rename: {old} = {new!r}: a tool name is lowercase letters and digits")
    by_name: dict[str, str] = {}
    for spec in specs:
        name = rename.get(spec.name, spec.name)
        other = by_name.setdefault(name, spec.name)
        if other == spec.name:
            continue
        if other in rename and spec.name in rename:
            first, second = sorted((other, spec.name))
            raise ConfigError(f"tools.rename: {first} and {second} are both renamed to {name!r}")
        renamed = other if other in rename else spec.name
        raise ConfigError(
            f"tools.rename: {renamed} = {name!r} would serve two tools as {name}: {name} is served under "
            f"its own name; rename {name} too, disable it, or pick another name"
        )
    return [
        dataclasses.replace(spec, name=rename[spec.name], builtin_name=spec.name)
        if spec.name in rename
        else spec
        for spec in specs
    ]


_PATH_FIELDS = ("path", "source", "destination", "root")
"""Arguments that name what a writing tool changed (writefile, editfile, movepath, replaceinfiles ...)."""


def _changed_paths(spec: ToolSpec[Any], args: ToolArgs, base: Path) -> Sequence[Path] | None:
    if spec.group == "exec":
        return None  # a command may change anything
    named = [getattr(args, name) for name in _PATH_FIELDS if isinstance(getattr(args, name, None), str)]
    if not named:
        return None
    return [Path(os.path.normpath(base / value.strip())) for value in named if value.strip()]


def _telling_changes(spec: ToolSpec[Any], workspace: Workspace) -> ToolSpec[Any]:
    """``spec``, whose successful calls notify ``workspace.changes`` of the paths they named when
    the tool may write (not ``readOnlyHint``; fetching a URL changes no file)."""
    if spec.annotations.read_only or spec.group == "web":
        return spec
    handler = spec.handler
    base = workspace.paths.base_dir

    async def handle(args: ToolArgs, ctx: CallContext) -> ToolResult:
        result = await handler(args, ctx)
        if not result.is_error:
            workspace.changes.notify(_changed_paths(spec, args, base))
        return result

    return dataclasses.replace(spec, handler=handle)


def profile_tools(
    registry: Registry, config: Config, own: Mapping[str, Registry] | None = None
) -> dict[str, frozenset[str]]:
    """The tool names each ``[profiles.NAME]`` of ``config`` gets out of ``registry``, or out of
    its own registry in ``own`` (``build_server`` builds one from ``config.for_profile(NAME)``
    for every profile with policy overrides).

    Raises:
        ConfigError: a profile name is not lowercase letters, digits, ``-`` or ``_``, or an
            ``enabled``/``disabled`` entry of a profile matches no served tool.
    """
    own = own or {}
    sets: dict[str, frozenset[str]] = {}
    for name, profile in config.profiles.items():
        if not name or not all(ch.isascii() and (ch.isalnum() or ch in "-_") for ch in name):
            raise ConfigError(f"profiles.{name}: a profile name is letters, digits, '-' and '_'")
        try:
            chosen = profile_specs(own.get(name, registry), profile)
        except ConfigError as exc:
            raise ConfigError(f"profiles.{name}: {exc.message}") from exc
        sets[name] = frozenset(spec.name for spec in chosen)
    return sets


def profile_specs(registry: Registry, profile: ProfileConfig) -> list[ToolSpec[Any]]:
    """The specs of ``registry`` that ``profile``'s ``enabled``/``disabled``/``read_only`` select.

    Raises:
        ConfigError: an entry matches no tool of ``registry``.
    """
    return select_tools(registry.specs(), _as_tools(profile))


def _as_tools(profile: ProfileConfig) -> ToolsConfig:
    return ToolsConfig(enabled=profile.enabled, disabled=profile.disabled, read_only=profile.read_only)
