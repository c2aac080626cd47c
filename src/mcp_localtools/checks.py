"""The start-up check: every rule of the config that spans keys or needs the tool catalog.

``check(config, catalog, *, environ)`` returns *every* problem it finds, each with its key path
(``tools.enabled``, ``profiles.dev.token_file``, ``server.allowed_hosts``), so a user mends the
config in one pass instead of one restart per mistake. What it checks:

- ``[tools] enabled``/``disabled`` patterns that match no tool or group;
- ``[tools] rename``: an unknown tool, a malformed name, two served tools under one name;
- ``[approval] require``: an entry that is neither a tool nor a class;
- ``[profiles]``: a malformed name, overrides that do not validate, ``enabled``/``disabled``
  patterns that match none of the profile's served tools, a profile asked for that does not exist;
- with ``network`` (serving SSE or Streamable HTTP): the bearer token of ``[server]
  auth_token_file`` or ``MCP_LOCALTOOLS_TOKEN``, every ``[profiles.NAME] token_file`` (readable
  by its owner only, long enough, no token used twice), and the bind rules (a non-loopback
  ``host`` needs ``allowed_hosts``; no token only on a loopback address, on purpose).

One key's own value (a type, a range, an unknown key) is pydantic's job in ``config/``; what a
group's settings compile to (``denied_patterns`` as RE2, ``[index] languages``) is found while the
catalog is built and carried in ``Catalog.problems``. ``build_registry`` and ``build_server`` call
``check`` once and raise ``ConfigProblems`` (a ``ConfigError``) with all of them.

A new rule that spans keys goes here: a function ``_NAME_problems(config, catalog) ->
list[Problem]`` added to ``check``.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from mcp_localtools.config import APPROVAL_CLASSES, Config, ProfileConfig, ToolsConfig
from mcp_localtools.errors import ConfigError, Problem, raise_problems
from mcp_localtools.spec import ToolSpec
from mcp_localtools.tokens import check_token, read_token_file

__all__ = [
    "INDEX_TOOLS",
    "TOKEN_ENV",
    "Catalog",
    "Network",
    "Tokens",
    "bind_problems",
    "check",
    "chosen",
    "is_loopback",
    "matches",
    "read_tokens",
    "served",
    "unmatched",
]

INDEX_TOOLS = frozenset({"findsymbol", "repomap", "semanticsearch"})
"""The tools that need the code index (``[index] enabled``)."""
TOKEN_ENV = "MCP_LOCALTOOLS_TOKEN"  # noqa: S105 - a variable name, not a secret
_NAME = re.compile(r"^[a-z][a-z0-9]*$")
"""A tool name: lowercase letters and digits (``Registry.register`` refuses others too)."""


@dataclass(frozen=True, slots=True)
class Catalog:
    """Every tool the server knows, enabled or not (``tools.catalog(workspace)``).

    Attributes:
        specs: the tools whose spec could be built.
        names: ``(group, name)`` of every tool module, built or not.
        problems: what building the specs found (a ``denied_patterns`` entry that is not RE2, an
            ``[index] languages`` entry without a grammar, ...).
    """

    specs: tuple[ToolSpec[Any], ...]
    names: tuple[tuple[str, str], ...]
    problems: tuple[Problem, ...] = ()


@dataclass(frozen=True, slots=True)
class Network:
    """The server is to serve ``[server] transport`` (SSE or Streamable HTTP): its token and bind
    rules apply. ``unauthenticated_loopback``: ``--allow-unauthenticated-loopback`` was given."""

    unauthenticated_loopback: bool = False


@dataclass(frozen=True, slots=True)
class Tokens:
    """The bearer tokens of a network server: its own (``[server] auth_token_file`` or
    ``MCP_LOCALTOOLS_TOKEN``) and each profile's (token → profile name)."""

    server: str | None
    profiles: dict[str, str]


def check(
    config: Config,
    catalog: Catalog,
    *,
    environ: Mapping[str, str],
    profiles: Iterable[str] = (),
    network: Network | None = None,
) -> list[Problem]:
    """Every problem of ``config`` that spans keys or needs ``catalog`` (what building the
    catalog found first, then ``[tools]``, ``[approval]``, ``[audit]``, ``[profiles]``,
    ``[server]``); an empty list when the config can be served.

    Args:
        config: the whole configuration.
        catalog: every tool the server knows, and what building it found.
        environ: the server's environment (``MCP_LOCALTOOLS_TOKEN``).
        profiles: profile names asked for (``--profile``, the profiles of given tokens).
        network: serving over the network: check the tokens and the bind rules too.
    """
    problems = [*catalog.problems]
    problems += _tools_problems(config.tools, catalog)
    problems += _rename_problems(config, catalog)
    problems += _approval_problems(config, catalog)
    problems += _audit_problems(config)
    problems += _profile_problems(config, catalog, profiles)
    problems += _sandbox_problems(config, network=network is not None)
    if network is not None:
        problems += _network_problems(config, environ, network)
    return list(dict.fromkeys(problems))  # one group's failure is found once per tool of it


def matches(spec: ToolSpec[Any], pattern: str) -> bool:
    """True when ``pattern`` (a glob) names ``spec``'s name, group or ``group.name``."""
    return _named(spec.group, spec.name, pattern)


def _named(group: str, name: str, pattern: str) -> bool:
    return any(fnmatchcase(text, pattern) for text in (name, group, f"{group}.{name}"))


def unmatched(patterns: Iterable[str], names: Iterable[tuple[str, str]]) -> list[str]:
    """The ``patterns`` that name none of ``names`` (``(group, name)`` pairs)."""
    known = list(names)
    return [p for p in patterns if not any(_named(group, name, p) for group, name in known)]


def _known(names: Iterable[tuple[str, str]]) -> str:
    pairs = list(names)
    return ", ".join(sorted({group for group, _ in pairs} | {name for _, name in pairs}))


def pattern_problems(tools: ToolsConfig, names: Sequence[tuple[str, str]], where: str) -> list[Problem]:
    """A problem (under ``where`` + ``enabled``/``disabled``) for each pattern of ``tools`` that
    names none of ``names`` (``(group, name)`` pairs)."""
    return [
        Problem(f"{where}{key}", f"{pattern!r} matches no tool or group; known: {_known(names)}")
        for key, patterns in (("enabled", tools.enabled), ("disabled", tools.disabled))
        for pattern in unmatched(patterns, names)
    ]


def _tools_problems(tools: ToolsConfig, catalog: Catalog) -> list[Problem]:
    return pattern_problems(tools, catalog.names, "tools.")


def served(catalog: Catalog | Iterable[ToolSpec[Any]], config: Config) -> list[ToolSpec[Any]]:
    """The specs ``config`` serves, under their own names: ``chosen`` and runnable on this
    platform (``ToolSpec.unsupported`` is None)."""
    return [spec for spec in chosen(catalog, config) if spec.unsupported is None]


def chosen(catalog: Catalog | Iterable[ToolSpec[Any]], config: Config) -> list[ToolSpec[Any]]:
    """The specs ``config`` asks for: selected by ``[tools]`` and switched on (``[exec]
    enabled``, ``[index] enabled``, no fetching in read-only mode without a ``[web]`` allowlist)."""
    specs = catalog.specs if isinstance(catalog, Catalog) else tuple(catalog)
    tools = config.tools
    return [spec for spec in specs if selected(spec, tools) and _switched_on(spec, config)]


def selected(spec: ToolSpec[Any], tools: ToolsConfig) -> bool:
    """True when ``[tools]`` (or a profile's ``enabled``/``disabled``/``read_only``) takes ``spec``."""
    return (
        any(matches(spec, p) for p in tools.enabled)
        and not any(matches(spec, p) for p in tools.disabled)
        and (spec.annotations.read_only or not tools.read_only)
    )


def _switched_on(spec: ToolSpec[Any], config: Config) -> bool:
    """False for a tool the config switches off outside ``[tools] enabled``/``disabled``."""
    if spec.group == "exec" and not config.exec.enabled:
        return False
    if spec.name in INDEX_TOOLS and not config.index.enabled:
        return False  # symbols stays: it outlines single files without the index
    # read-only: no fetches to any host (a way out for file contents) unless allowlisted
    return not (spec.annotations.open_world and config.tools.read_only and not config.web.allowed_hosts)


def _rename_problems(config: Config, catalog: Catalog) -> list[Problem]:
    """``[tools] rename``: unknown tools, malformed names, and two served tools under one name
    (two tools may swap names, and a tool left out frees its name)."""
    rename = config.tools.rename
    problems = []
    unknown = sorted(set(rename) - {name for _, name in catalog.names} - set(config.tools.custom))
    if unknown:
        problems.append(Problem("tools.rename", f"no tool named {', '.join(unknown)}"))
    for old, new in rename.items():
        if not _NAME.match(new):
            problems.append(
                Problem("tools.rename", f"{old} = {new!r}: a tool name is lowercase letters and digits")
            )
    by_name: dict[str, str] = {}
    for spec in served(catalog, config):
        name = rename.get(spec.name, spec.name)
        other = by_name.setdefault(name, spec.name)
        if other == spec.name:
            continue
        if other in rename and spec.name in rename:
            first, second = sorted((other, spec.name))
            problems.append(Problem("tools.rename", f"{first} and {second} are both renamed to {name!r}"))
            continue
        renamed = other if other in rename else spec.name
        problems.append(
            Problem(
                "tools.rename",
                f"{renamed} = {name!r} would serve two tools as {name}: {name} is served under its own "
                f"name; rename {name} too, disable it, or pick another name",
            )
        )
    return problems


def _approval_problems(config: Config, catalog: Catalog) -> list[Problem]:
    known = {name for _, name in catalog.names} | set(config.tools.custom)  # declared too
    return [
        Problem("approval.require", f"{entry!r} is neither a tool nor one of {', '.join(APPROVAL_CLASSES)}")
        for entry in config.approval.require
        if entry not in known and entry not in APPROVAL_CLASSES
    ]


def _audit_problems(config: Config) -> list[Problem]:
    """``[audit] required`` without ``enabled`` would promise a log that is never written; so
    would ``path`` when ``enabled`` is not given at all (``enabled = false`` beside a path says the
    log is off on purpose)."""
    audit = config.audit
    problems = []
    if audit.required and not audit.enabled:
        problems.append(
            Problem(
                "audit.required",
                "required = true needs enabled = true (no log is written without it); "
                "set [audit] enabled = true",
            )
        )
    if audit.path and "enabled" not in audit.model_fields_set:
        problems.append(
            Problem(
                "audit.path",
                "a path alone writes no log: the log is off unless enabled = true; set [audit] "
                "enabled = true to write it there (or enabled = false to keep it off)",
            )
        )
    return problems


def _profile_problems(config: Config, catalog: Catalog, asked: Iterable[str]) -> list[Problem]:
    """Each profile's name, overrides and ``enabled``/``disabled`` patterns (which name the
    tools the profile's config serves, under their served names); every profile asked for exists."""
    problems = []
    defined = ", ".join(sorted(config.profiles)) or "none"
    for name in dict.fromkeys(asked):
        if name not in config.profiles:
            problems.append(Problem("", f"no profile {name!r}: [profiles] defines {defined}"))
    rename = config.tools.rename
    for name, profile in config.profiles.items():
        where = f"profiles.{name}"
        if not name or not all(ch.isascii() and (ch.isalnum() or ch in "-_") for ch in name):
            problems.append(Problem(where, "a profile name is letters, digits, '-' and '_'"))
            continue
        try:
            own = config.for_profile(name)
        except ConfigError as exc:
            problems += [Problem.of(ConfigError(part)) for part in exc.message.split("; ")]
            continue
        names = [(spec.group, rename.get(spec.name, spec.name)) for spec in served(catalog, own)]
        problems += pattern_problems(_as_tools(profile), names, f"{where}.")
    return problems


def _as_tools(profile: ProfileConfig) -> ToolsConfig:
    return ToolsConfig(enabled=profile.enabled, disabled=profile.disabled, read_only=profile.read_only)


def _sandbox_problems(config: Config, *, network: bool) -> list[Problem]:
    """Over the network, fewer sandboxes than sessions: each connection has a sandbox, so commands
    would be refused to connections the server accepts."""
    boxes, sessions = config.exec.sandbox.max_sandboxes, config.server.max_sessions
    if not (network and config.exec.enabled and boxes < sessions):
        return []
    why = f"{boxes} is below [server] max_sessions ({sessions}): each connection has a sandbox"
    return [Problem("exec.sandbox.max_sandboxes", f"{why}; set it to at least {sessions}")]


def _network_problems(config: Config, environ: Mapping[str, str], network: Network) -> list[Problem]:
    problems: list[Problem] = []
    tokens = _read_tokens(config, environ, problems)
    server = config.server
    has_token = tokens.server is not None or bool(tokens.profiles)
    if not has_token and not network.unauthenticated_loopback and not problems:
        problems.append(
            Problem(
                "server.auth_token_file",
                f"no auth token for the {server.transport} transport: make one with "
                "'mcp-localtools token --file PATH' and set [server] auth_token_file = PATH, "
                f"or set {TOKEN_ENV}",
            )
        )
    unauthenticated = not has_token and network.unauthenticated_loopback
    return problems + bind_problems(server.host, server.allowed_hosts, authenticated=not unauthenticated)


def bind_problems(host: str, allowed_hosts: Sequence[str], *, authenticated: bool) -> list[Problem]:
    """The bind rules: serving without a token is for loopback addresses only, and a non-loopback
    ``host`` needs ``allowed_hosts`` (the Host names clients use)."""
    problems = []
    if not authenticated and not is_loopback(host):
        problems.append(
            Problem(
                "server.host",
                f"--allow-unauthenticated-loopback works on loopback addresses only, not {host}",
            )
        )
    if not is_loopback(host) and not allowed_hosts:
        problems.append(
            Problem(
                "server.allowed_hosts",
                f"binding {host} makes the server reachable from the network; name the host names "
                "clients use in [server] allowed_hosts (or --allowed-host), e.g. myhost.lan",
            )
        )
    return problems


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (``127.0.0.0/8``, ``::1``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def read_tokens(config: Config, environ: Mapping[str, str]) -> Tokens:
    """The server's and the profiles' bearer tokens.

    Raises:
        ConfigProblems: a token file or ``MCP_LOCALTOOLS_TOKEN`` holds no usable token, or a
            token is used twice (``check`` with ``network`` reports the same).
    """
    problems: list[Problem] = []
    tokens = _read_tokens(config, environ, problems)
    raise_problems(problems)
    return tokens


def _read_tokens(config: Config, environ: Mapping[str, str], problems: list[Problem]) -> Tokens:
    """The tokens that could be read; what could not goes to ``problems``."""
    server: str | None = None
    try:
        if config.server.auth_token_file:
            server = read_token_file(config.server.auth_token_file)
        elif environ.get(TOKEN_ENV):
            server = check_token(environ[TOKEN_ENV].strip(), TOKEN_ENV)
    except ConfigError as exc:
        key = "server.auth_token_file" if config.server.auth_token_file else ""
        problems.append(Problem(key, exc.message))
    profiles: dict[str, str] = {}
    for name, profile in config.profiles.items():
        if not profile.token_file:
            continue
        key = f"profiles.{name}.token_file"
        try:
            token = read_token_file(profile.token_file)
        except ConfigError as exc:
            problems.append(Problem(key, exc.message))
            continue
        if token == server:
            problems.append(Problem(key, "holds the server's own bearer token; give the profile its own"))
        elif token in profiles:
            problems.append(
                Problem(key, f"holds the token of profile {profiles[token]!r}; give each its own")
            )
        else:
            profiles[token] = name
    return Tokens(server, profiles)
