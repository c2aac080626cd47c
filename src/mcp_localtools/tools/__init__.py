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
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from mcp_localtools.checks import INDEX_TOOLS, Catalog, check, chosen, pattern_problems, selected
from mcp_localtools.config import Config, ProfileConfig, ToolsConfig
from mcp_localtools.errors import ConfigError, Problem, raise_problems
from mcp_localtools.policy.execution import CommandRule
from mcp_localtools.registry import Registry
from mcp_localtools.results import ToolResult
from mcp_localtools.spec import CallContext, ToolArgs, ToolSpec
from mcp_localtools.tools import code, fs, image, text, web
from mcp_localtools.tools import exec as exec_tools
from mcp_localtools.tools.exec._declared import declared_spec, declared_specs
from mcp_localtools.workspace import Workspace

__all__ = [
    "GROUPS",
    "INDEX_TOOLS",
    "all_specs",
    "build_registry",
    "catalog",
    "profile_specs",
    "profile_tools",
    "registry_of",
    "select_tools",
    "spec_of",
]

logger = logging.getLogger(__name__)

GROUPS = (fs, text, exec_tools, image, web, code)
"""The tool groups; each lists its tool modules in ``MODULES``, and each module has ``spec(workspace)``."""


def all_specs(workspace: Workspace) -> list[ToolSpec[Any]]:
    """Every tool this server knows, enabled or not, bound to ``workspace``: the built-in tools,
    then the declared ones (``[tools.custom]``).

    Raises:
        ConfigError: a ``[exec]`` setting is invalid (a ``denied_patterns`` regex, an
            ``[exec.scripts]`` entry), ``[index] languages`` names a language without a grammar, or a
            ``[tools.custom]`` table is invalid (its key path named).
    """
    builtin = [spec_of(module, workspace) for group in GROUPS for module in group.MODULES]
    return [*builtin, *declared_specs(workspace, _builtin_names())]


def spec_of(module: Any, workspace: Workspace) -> ToolSpec[Any]:
    """The spec of tool ``module`` (``tools/<group>/<name>.py``) bound to ``workspace``, its group
    the name of the package it lives in: a tool module does not write it out."""
    return dataclasses.replace(module.spec(workspace), group=module.__name__.split(".")[-2])


def _builtin_names() -> frozenset[str]:
    return frozenset(module.__name__.rpartition(".")[2] for group in GROUPS for module in group.MODULES)


def catalog(workspace: Workspace) -> Catalog:
    """Every tool this server knows, bound to ``workspace``, for ``checks.check``: a spec that
    cannot be built (its group's settings are invalid) is left out and its ``ConfigError`` kept
    as a problem, so every problem of the config is reported at once."""
    specs: list[ToolSpec[Any]] = []
    names: list[tuple[str, str]] = []
    problems: list[Problem] = []
    for group in GROUPS:
        for module in group.MODULES:
            names.append((group.__name__.rpartition(".")[2], module.__name__.rpartition(".")[2]))
            try:
                specs.append(spec_of(module, workspace))
            except ConfigError as exc:
                problems.append(Problem.of(exc))
    try:
        declared = declared_specs(workspace, _builtin_names())
    except ConfigError as exc:  # the first table refused; the others are checked once it is mended
        problems.append(Problem.of(exc))
    else:
        specs += declared
        names += [(spec.group, spec.name) for spec in declared]
    return Catalog(tuple(specs), tuple(names), tuple(dict.fromkeys(problems)))


def select_tools(specs: Iterable[ToolSpec[Any]], tools: ToolsConfig) -> list[ToolSpec[Any]]:
    """Apply ``[tools]`` (or a profile's ``enabled``/``disabled``/``read_only``) to ``specs``.

    Raises:
        ConfigProblems: an ``enabled`` or ``disabled`` entry matches no tool or group.
    """
    known = list(specs)
    raise_problems(pattern_problems(tools, [(spec.group, spec.name) for spec in known], "tools."))
    return [spec for spec in known if selected(spec, tools)]


def build_registry(
    config: Config,
    *,
    environ: Mapping[str, str] | None = None,
    workspace: Workspace | None = None,
    command_rule: CommandRule | None = None,
) -> Registry:
    """A registry holding the tools ``config`` enables. A tool this platform cannot run
    (``ToolSpec.unsupported``) is left out, with a warning in the log that says why.

    Args:
        config: the whole configuration.
        environ: the server's environment; the exec tools pass an allowlisted part of it to
            commands. The command line passes ``os.environ``; None passes nothing.
        workspace: an already-built workspace of ``config`` (then ``environ`` and
            ``command_rule`` are not used), e.g. one with another search engine.
        command_rule: the host's own rule for commands, asked before the execution policy: True
            runs a command whatever the blocklist says, False refuses it, None leaves it to the
            policy (``ExecutionPolicy.host_rule``; jeevesagent's ``allow_pattern``).

    Raises:
        ConfigError: a bad root (found first: the tools are built in the workspace).
        ConfigProblems: what ``checks.check`` finds (a ``[tools]`` entry that matches nothing, a
            bad rename, an unknown ``[approval] require`` entry, a bad profile ...), all at once.
    """
    workspace = workspace or Workspace.from_config(config, environ=environ, command_rule=command_rule)
    known = catalog(workspace)
    raise_problems(check(config, known, environ=workspace.environ))
    return registry_of(config, workspace, known)


def registry_of(config: Config, workspace: Workspace, known: Catalog) -> Registry:
    """The registry of the tools ``config`` serves out of ``known`` (built in ``workspace``),
    for a config ``checks.check`` passed (``build_registry`` and ``build_server`` check first)."""
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
    for spec in chosen(known, config):
        if spec.unsupported is not None:
            left_out.setdefault(spec.unsupported, []).append(spec.name)
            continue
        if spec.name in rename:
            spec = dataclasses.replace(spec, name=rename[spec.name], builtin_name=spec.name)
        registry.register(_telling_changes(spec, workspace))
    for reason, names in left_out.items():
        logger.warning("not available on this platform: %s (%s)", ", ".join(sorted(names)), reason)
    return registry


def _telling_changes(spec: ToolSpec[Any], workspace: Workspace) -> ToolSpec[Any]:
    """``spec``, whose successful calls notify ``workspace.changes`` of what they changed as the
    spec declares it (``ToolSpec.changes``: paths, or None for anything); read-only tools as they are."""
    changes = spec.changes
    if changes is None:
        return spec
    handler = spec.handler
    base = workspace.paths.base_dir

    async def handle(args: ToolArgs, ctx: CallContext) -> ToolResult:
        result = await handler(args, ctx)
        if not result.is_error:
            named = changes(args)
            if named is None:
                workspace.changes.notify(None)
            elif named := [value.strip() for value in named if value.strip()]:
                workspace.changes.notify([Path(os.path.normpath(base / value)) for value in named])
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
