"""Build the tool groups from a config and register the enabled tools.

``[tools] enabled`` / ``disabled`` entries are tool names, group names or ``group.tool``, with
shell-style globs (``"fs"``, ``"text.*"``, ``"readfile"``). ``read_only`` keeps only the tools
whose ``readOnlyHint`` is true. An entry that matches no known tool is a start-up error (a typo
must not silently enable or disable nothing).

The tool modules are listed in ``GROUPS`` and imported when a spec of theirs is built: a start
that builds everything (``catalog``) imports them all; a cached start's ``deferred_registry``
imports one at its tool's first call.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import logging
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from mcp_localtools.checks import INDEX_TOOLS, Catalog, check, chosen, pattern_problems, selected
from mcp_localtools.config import Config, ProfileConfig, ToolsConfig
from mcp_localtools.deferred import BuiltFn, DeferredRegistry
from mcp_localtools.errors import ConfigError, Problem, raise_problems
from mcp_localtools.registry import Registry
from mcp_localtools.results import ToolResult
from mcp_localtools.spec import CallContext, ToolArgs, ToolSpec
from mcp_localtools.workspace import Workspace

if TYPE_CHECKING:  # the rule is only passed on: its policy module is imported by the exec tools
    from mcp_localtools.policy.execution import CommandRule

__all__ = [
    "GROUPS",
    "INDEX_TOOLS",
    "BuiltFn",
    "all_specs",
    "build_registry",
    "builtin_names",
    "catalog",
    "deferred_registry",
    "profile_specs",
    "profile_tools",
    "registry_of",
    "select_tools",
    "spec_of",
    "tool_module",
]

logger = logging.getLogger(__name__)

GROUPS: Mapping[str, tuple[str, ...]] = {
    "fs": (
        "readfile",
        "listdirectory",
        "searchfiles",
        "globfiles",
        "directorytree",
        "statpath",
        "mimeforpath",
        "mimeforextension",
        "writefile",
        "deletefile",
        "makedirectory",
        "movepath",
        "copypath",
    ),
    "text": (
        "readtextrange",
        "findtext",
        "inserttextlines",
        "replacetextlines",
        "deletetextlines",
        "editfile",
        "replaceinfiles",
    ),
    "exec": (
        "shellcommand",
        "runscript",
        "startprocess",
        "processoutput",
        "waitprocess",
        "writeprocess",
        "stopprocess",
        "listprocesses",
    ),
    "image": ("readimage",),
    "web": ("httpget",),
    "code": ("symbols", "findsymbol", "repomap", "semanticsearch"),
}
"""The tool groups (the packages under ``tools/``) and their tools, in catalog order: tool ``NAME``
of group ``GROUP`` is the module ``tools/GROUP/NAME.py``, with ``spec(workspace)``. A module is
imported when a spec of it is first built (``tool_module``), not with this package."""


def tool_module(group: str, name: str) -> ModuleType:
    """The module of tool ``name`` of ``group`` (``GROUPS``), imported now unless it already was.

    Raises:
        ImportError: no such tool module.
    """
    return importlib.import_module(f"{__name__}.{group}.{name}")


def all_specs(workspace: Workspace) -> list[ToolSpec[Any]]:
    """Every tool this server knows, enabled or not, bound to ``workspace``: the built-in tools,
    then the declared ones (``[tools.custom]``).

    Raises:
        ConfigError: a ``[exec]`` setting is invalid (a ``denied_patterns`` regex, an
            ``[exec.scripts]`` entry), ``[index] languages`` names a language without a grammar, or a
            ``[tools.custom]`` table is invalid (its key path named).
    """
    from mcp_localtools.tools.exec._declared import declared_specs

    builtin = [
        spec_of(tool_module(group, name), workspace) for group, names in GROUPS.items() for name in names
    ]
    return [*builtin, *declared_specs(workspace, builtin_names())]


def spec_of(module: ModuleType, workspace: Workspace) -> ToolSpec[Any]:
    """The spec of tool ``module`` (``tools/<group>/<name>.py``) bound to ``workspace``, its group
    the name of the package it lives in: a tool module does not write it out.

    Raises:
        ConfigError: the group's settings are invalid.
    """
    return dataclasses.replace(module.spec(workspace), group=module.__name__.split(".")[-2])


def _imported(group: str, name: str) -> bool:
    return f"{__name__}.{group}.{name}" in sys.modules


def builtin_names() -> frozenset[str]:
    """The names of every built-in tool (``GROUPS``)."""
    return frozenset(name for names in GROUPS.values() for name in names)


def catalog(workspace: Workspace) -> Catalog:
    """Every tool this server knows, bound to ``workspace``, for ``checks.check``: a spec that
    cannot be built (its group's settings are invalid) is left out and its ``ConfigError`` kept
    as a problem, so every problem of the config is reported at once."""
    specs: list[ToolSpec[Any]] = []
    names: list[tuple[str, str]] = []
    problems: list[Problem] = []
    for group, tools in GROUPS.items():
        for name in tools:
            names.append((group, name))
            try:
                specs.append(spec_of(tool_module(group, name), workspace))
            except ConfigError as exc:
                problems.append(Problem.of(exc))
    from mcp_localtools.tools.exec._declared import declared_specs

    try:
        declared = declared_specs(workspace, builtin_names())
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
    like: Registry | None = None,
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
        like: the registry of the route this one narrows (``server/roots.py``): when it holds
            its tools until their first use (a cached start's ``DeferredRegistry``), so does
            this one, from the same entries, and the config (checked then) is not checked again.

    Raises:
        ConfigError: a bad root (found first: the tools are built in the workspace).
        ConfigProblems: what ``checks.check`` finds (a ``[tools]`` entry that matches nothing, a
            bad rename, an unknown ``[approval] require`` entry, a bad profile ...), all at once.
    """
    workspace = workspace or Workspace.from_config(config, environ=environ, command_rule=command_rule)
    if isinstance(like, DeferredRegistry):
        return deferred_registry(config, workspace, like.listed, built=like.built)
    known = catalog(workspace)
    raise_problems(check(config, known, environ=workspace.environ))
    return registry_of(config, workspace, known)


def registry_of(config: Config, workspace: Workspace, known: Catalog) -> Registry:
    """The registry of the tools ``config`` serves out of ``known`` (built in ``workspace``),
    for a config ``checks.check`` passed (``build_registry`` and ``build_server`` check first)."""
    registry = Registry(**_registry_settings(config, workspace))
    left_out: dict[str, list[str]] = {}
    for spec in chosen(known, config):
        if spec.unsupported is not None:
            left_out.setdefault(spec.unsupported, []).append(spec.name)
            continue
        registry.register(_served(spec, config.tools.rename, workspace))
    for reason, names in left_out.items():
        logger.warning("not available on this platform: %s (%s)", ", ".join(sorted(names)), reason)
    return registry


def deferred_registry(
    config: Config,
    workspace: Workspace,
    listed: Sequence[Mapping[str, Any]],
    *,
    built: BuiltFn | None = None,
) -> DeferredRegistry:
    """The registry of a cached start (``cli/startcache.py``): the tools of ``listed``, the
    ``tools/list`` entries of an earlier start with this ``config`` that passed ``checks.check``,
    each held unbuilt (``DeferredRegistry.defer``) until its first use, when its module alone is
    imported and its spec built in ``workspace`` as ``registry_of`` builds it; ``built(name,
    manifest)`` is called then (the start-up cache compares the manifest with the entry's;
    None: the build failed). An entry that
    names no built-in tool is left out, as a full start would not serve it."""
    registry = DeferredRegistry(**_registry_settings(config, workspace), listed=tuple(listed), built=built)
    rename = config.tools.rename
    own_name = {served: own for own, served in rename.items()}
    group_of = {name: group for group, names in GROUPS.items() for name in names}
    for tool in listed:
        name = own_name.get(str(tool["name"]), str(tool["name"]))
        if name in group_of:
            build = functools.partial(_deferred_spec, group_of[name], name, workspace, rename)
            registry.defer(tool, build)
    return registry


def _deferred_spec(group: str, name: str, workspace: Workspace, rename: Mapping[str, str]) -> ToolSpec[Any]:
    """The served spec of tool ``name`` of ``group`` (``deferred_registry``).

    Raises:
        ConfigError: the group's settings are invalid, or the tool does not run on this platform
            (an entry that no longer holds).
    """
    spec = spec_of(tool_module(group, name), workspace)
    if logger.isEnabledFor(logging.DEBUG):  # what a cached start imported so far, for whoever checks
        loaded = [
            f"{kind}.{tool}" for kind, tools in GROUPS.items() for tool in tools if _imported(kind, tool)
        ]
        logger.debug("built the tool %s; tool modules imported: %s", name, ", ".join(loaded))
    if spec.unsupported is not None:
        raise ConfigError(f"{name} is not available on this platform ({spec.unsupported})")
    return _served(spec, rename, workspace)


def _registry_settings(config: Config, workspace: Workspace) -> dict[str, Any]:
    """A registry's settings: ``config``'s result budget and renames, and declaring tools in
    ``workspace`` (``Registry.register_map``)."""

    def declare(name: str, table: Mapping[str, Any]) -> ToolSpec[Any]:
        from mcp_localtools.tools.exec._declared import declared_spec

        where = f"register_map({name!r})"
        return _telling_changes(
            declared_spec(workspace, name, table, taken=builtin_names(), where=where), workspace
        )

    return {
        "max_result_chars": config.limits.max_result_chars,
        "renamed": config.tools.rename,
        "declare": declare,
    }


def _served(spec: ToolSpec[Any], rename: Mapping[str, str], workspace: Workspace) -> ToolSpec[Any]:
    """``spec`` as the server serves it: under its ``[tools] rename`` name, telling ``workspace``
    what its calls change (``_telling_changes``)."""
    if spec.name in rename:
        spec = dataclasses.replace(spec, name=rename[spec.name], builtin_name=spec.name)
    return _telling_changes(spec, workspace)


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
