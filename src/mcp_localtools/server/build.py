"""The composition root of the MCP server: from a config to a running ``MCPServer``.

``build_server(config)`` builds the audit log, the workspace and registry of the server and of each
profile with policies of its own, the routes, the approval policy and the pipeline, then
``create_server`` hands them to the SDK. ``instructions_for`` is what the model is told at
``initialize``.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio.to_thread
from mcp.server.context import CallNext, HandlerResult, ServerMiddleware, ServerRequestContext
from mcp.server.request_state import RequestStateSecurity

from mcp_localtools._version import __version__
from mcp_localtools.approval import ApprovalPolicy
from mcp_localtools.audit import AuditLog, Scrubber
from mcp_localtools.checks import Catalog, Network, check, read_tokens
from mcp_localtools.config import Config, LimitsConfig
from mcp_localtools.errors import ConfigError, Problem, raise_problems
from mcp_localtools.policy.paths import PathPolicy
from mcp_localtools.registry import Registry
from mcp_localtools.server.adapter import RegistryServer
from mcp_localtools.server.approval import Approver
from mcp_localtools.server.cached import refuse_second_initialize
from mcp_localtools.server.pipeline import Pipeline
from mcp_localtools.server.roots import ClientRoots
from mcp_localtools.server.routes import Route, Routes
from mcp_localtools.server.sessions import Sessions
from mcp_localtools.server.toolsets import ToolSets
from mcp_localtools.tools import (
    BuiltFn,
    builtin_names,
    catalog,
    deferred_registry,
    profile_tools,
    registry_of,
)
from mcp_localtools.workspace import Workspace

if TYPE_CHECKING:  # the rule is only passed on: its policy module is imported by the exec tools
    from mcp_localtools.policy.execution import CommandRule

__all__ = ["DEFAULT_STDIO_LINE_BYTES", "SERVER_NAME", "build_server", "create_server", "instructions_for"]

SERVER_NAME = "mcp-localtools"
DEFAULT_STDIO_LINE_BYTES = 2 * LimitsConfig().max_write_bytes
"""Longest stdio message line when the config says nothing: twice the default largest write."""


def instructions_for(paths: PathPolicy, *, per_profile: bool = False, client_roots: bool = True) -> str:
    """Server instructions for the model: where the tools may work and how paths resolve.
    ``per_profile``: some profiles have roots of their own, so the roots are not named (the
    instructions are the same for every client; a refusal names the roots that apply).
    ``client_roots``: the folders a client shares (MCP roots) become or narrow the roots
    (``[paths] client_roots``); they go out at initialization, before any client roots are
    known, so they state the rule rather than the session's roots."""
    if per_profile:
        return (
            "Local file, search, edit and command tools. Every path must lie inside the allowed roots of "
            "this client's profile; a path outside is refused with the roots named. "
            "Failed calls say what went wrong and what to do."
        )
    if not paths.roots and not client_roots:
        return (
            "Local file, search, edit and command tools. No folder is shared with them: every file and "
            "command tool is refused (no_roots) until the user restarts the server with --root DIR. "
            "Failed calls say what went wrong and what to do."
        )
    if not paths.roots:
        return (
            "Local file, search, edit and command tools. They work in the folders your client shares "
            "(its MCP roots, such as its workspace folders); while it shares none, every file and "
            "command tool is refused (no_roots) and the user can restart the server with --root DIR. "
            "Protocol revision 2026-07-28 carries no client roots: a client speaking it gets no folder "
            "unless the server is started with --root DIR or [paths] allowed_roots. "
            "Failed calls say what went wrong and what to do."
        )
    roots = ", ".join(str(root) for root in paths.roots)
    narrowed = " (narrowed to the folders your client shares, when it shares some)" if client_roots else ""
    return (
        f"Local file, search, edit and command tools. Every path must lie inside the allowed roots: {roots}"
        f"{narrowed}. Relative paths resolve against {paths.base_dir}. "
        "Failed calls say what went wrong and what to do."
    )


_PROBE_WAIT_SECONDS = 5.0
"""How long ``initialize`` waits for the sandbox probe (about 10 ms) to name the sandbox."""


def tell_the_sandbox(routes: Routes) -> ServerMiddleware[Any]:
    """Server middleware: the instructions of ``initialize`` (and ``server/discover``) end with
    what the request's route says of its command sandbox when it is weaker than bubblewrap
    (``tools.exec.sandbox_notice``): the start-up line says it on stderr, which clients such as
    Claude Code never show. The probe is waited for in a worker thread (up to
    ``_PROBE_WAIT_SECONDS``), never on the event loop."""

    async def middleware(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        result = await call_next(ctx)
        if ctx.method not in ("initialize", "server/discover") or not isinstance(result, dict):
            return result
        route = routes.current()
        if route.workspace is None or not any(
            spec.group == "exec" and route.serves(spec.name) for spec in route.registry.specs()
        ):
            return result
        # Imported here, not with this module: a cached start's build imports no command tool.
        from mcp_localtools.tools.exec import sandbox_notice

        notice = await anyio.to_thread.run_sync(
            functools.partial(sandbox_notice, route.workspace, timeout=_PROBE_WAIT_SECONDS)
        )
        if notice is None:
            return result
        said = result.get("instructions")
        return {**result, "instructions": f"{said} {notice}" if said else notice}

    return middleware


def _sdk_security(
    bearer_token: str | None, profile_tokens: Mapping[str, str] | None, approval: ApprovalPolicy | None
) -> dict[str, Any]:
    """``MCPServer``'s auth and request-state keyword arguments (and ``RegistryServer``'s
    ``request_state_ttl``)."""
    settings: dict[str, Any] = {"request_state_ttl": None}
    if bearer_token is not None or profile_tokens:  # a network server: its modules imported now
        from mcp.server.auth.settings import AuthSettings
        from pydantic import AnyHttpUrl

        from mcp_localtools.transports.auth import StaticTokenVerifier

        settings["token_verifier"] = StaticTokenVerifier(bearer_token, profile_tokens)
        # issuer_url is required by the SDK but published nowhere: no metadata routes are served.
        settings["auth"] = AuthSettings(issuer_url=AnyHttpUrl("http://127.0.0.1"), resource_server_url=None)
    if approval is not None and approval.active:
        # The 2026-07-28 question round-trips through the client; its sealed state must outlive
        # the approval timeout.
        ttl = max(600.0, approval.config.timeout_seconds + 60.0)
        settings["request_state_security"] = RequestStateSecurity.ephemeral(ttl=ttl)
        settings["request_state_ttl"] = ttl
    return settings


def create_server(
    tools: Registry | Routes,
    *,
    instructions: str | None = None,
    log_level: str = "WARNING",
    bearer_token: str | None = None,
    profile_tokens: Mapping[str, str] | None = None,
    approval: ApprovalPolicy | None = None,
    audit: AuditLog | None = None,
    max_stdio_line_bytes: int = DEFAULT_STDIO_LINE_BYTES,
    client_roots: bool = True,
    select_tools: bool = False,
) -> RegistryServer:
    """An ``MCPServer`` that serves ``tools``; run it with ``run()`` or a transport of
    ``transports.py``, or connect to it in memory with the SDK's ``Client(server)``.

    Args:
        tools: a registry (every tool to every client), or the routes of ``build_server``
            (a tool set per profile, chosen by the bearer token).
        instructions: server instructions for the model.
        log_level: level of the SDK's loggers.
        bearer_token: when set, the HTTP transports require ``Authorization: Bearer <token>``
            (the SDK's resource-server auth with a static, constant-time token check; no OAuth
            metadata is published). stdio is unaffected.
        profile_tokens: more bearer tokens, each mapped to the name of a profile of ``tools``;
            a client that presents one sees and calls only that profile's tools.
        approval: the ``[approval]`` policy: calls it names are asked about through MCP
            elicitation before they run.
        audit: the ``[audit]`` log: one line per call.
        max_stdio_line_bytes: over stdio, longer message lines are refused (-32600) unbuffered.
        client_roots: use the roots a client shares (``roots.py``; needs routes with workspaces).
        select_tools: serve ``selecttools``, with which a session narrows its tool set
            (``toolsets.py``).
    """
    routes = tools if isinstance(tools, Routes) else Routes(Route.of(tools, base_dir=""))
    policy = approval if approval is not None and approval.active else None
    approver = Approver(policy) if policy is not None else None
    on_end = [registry.end_session for registry in routes.registries()]
    return RegistryServer(
        routes,
        Pipeline.of(audit=audit, approver=approver),
        sessions=Sessions([*on_end, policy.forget] if policy is not None else on_end),
        max_stdio_line_bytes=max_stdio_line_bytes,
        roots=ClientRoots(enabled=client_roots, on_move=policy.forget if policy is not None else None),
        tool_sets=ToolSets(routes, enabled=select_tools),
        name=SERVER_NAME,
        title="mcp-localtools",
        version=__version__,
        instructions=instructions,
        subscriptions=False,
        middleware=[refuse_second_initialize, tell_the_sandbox(routes)],
        log_level=log_level.upper(),
        **_sdk_security(bearer_token, profile_tokens, approval),
    )


def _profile_workspaces(
    config: Config, workspace: Workspace, protected: Sequence[str | Path], problems: list[Problem]
) -> dict[str, tuple[Workspace, Catalog]]:
    """The workspace and catalog of each profile with policies of its own; what they find goes
    to ``problems`` under ``profiles.NAME``."""
    own: dict[str, tuple[Workspace, Catalog]] = {}
    found = set(problems)  # the server's own: a profile inheriting them is not told again
    for name, settings in config.profiles.items():
        if not settings.overrides:
            continue
        try:
            space = workspace.sibling(config.for_profile(name), own_files=protected)
        except ConfigError as exc:  # an override check() reports itself, or a bad root
            if not exc.message.startswith(f"profiles.{name}."):
                problems.append(Problem.of(exc, under=f"profiles.{name}"))
            continue
        known = catalog(space)
        problems += [p.under(f"profiles.{name}") for p in known.problems if p not in found]
        own[name] = (space, known)
    return own


def _routes(
    registry: Registry,
    workspace: Workspace,
    config: Config,
    own: Mapping[str, tuple[Registry, Workspace]],
    profile: str | None,
) -> Routes:
    """The server's route and one per profile; ``profile`` (chosen at start) is the default."""
    visible = profile_tools(registry, config, {name: reg for name, (reg, _) in own.items()})
    server_route = Route.of(registry, base_dir=str(workspace.paths.base_dir), workspace=workspace)
    routes = {
        name: Route.of(
            own[name][0] if name in own else registry,
            base_dir=str((own[name][1] if name in own else workspace).paths.base_dir),
            profile=name,
            visible=names,
            workspace=own[name][1] if name in own else workspace,
        )
        for name, names in visible.items()
    }
    return Routes(routes[profile] if profile is not None else server_route, routes)


def _roots_vary(default: Workspace, others: Sequence[Workspace]) -> bool:
    """True when a profile token's workspace has other roots or another base directory than
    ``default`` (the workspace of requests without a profile token)."""

    def where(space: Workspace) -> tuple[object, ...]:
        return (space.paths.roots, space.paths.base_dir)

    return any(where(space) != where(default) for space in others)


def build_server(
    config: Config | None = None,
    *,
    log_level: str = "WARNING",
    bearer_token: str | None = None,
    environ: Mapping[str, str] | None = None,
    own_files: Sequence[str | Path] = (),
    profile_tokens: Mapping[str, str] | None = None,
    profile: str | None = None,
    command_rule: CommandRule | None = None,
    network: Network | None = None,
    listed: Sequence[Mapping[str, Any]] | None = None,
    built: BuiltFn | None = None,
) -> RegistryServer:
    """Build the policies, the registry and the MCP server from a config (default: ``Config()``,
    the current directory as the only root). ``bearer_token`` and ``profile_tokens`` (token →
    ``[profiles]`` name) as in ``create_server``; ``profile`` is the one chosen at start (the tools
    of requests without a profile token); ``environ`` is the server's environment for the exec
    tools (see ``build_registry``); ``own_files`` the server's config file, protected when it lies
    in a root (``Workspace``), as is the ``[audit]`` log (its default location, from ``environ``,
    lies outside the roots); ``command_rule`` a host's own rule for commands (``build_registry``).
    ``listed``: a cached start's ``tools/list`` entries (``cli/startcache.py``; no profiles), whose
    config passed this check before: it is not checked again and each tool is built at its first
    use (``tools.deferred_registry``, telling ``built``).

    Raises:
        ConfigError: the config cannot be used (bad root, unknown tool in ``[tools]``,
            ``[approval] require`` or a profile, a token for an unknown profile, no home
            directory for the default audit log, ...).
    """
    config = config or Config()
    audit = AuditLog.from_config(config.audit, environ or {}) if config.audit.enabled else None
    protected = [*own_files, *(audit.files if audit is not None else ())]
    workspace = Workspace.from_config(config, environ=environ, own_files=protected, command_rule=command_rule)
    if listed is not None and not config.profiles and profile is None:
        held = deferred_registry(config, workspace, listed, built=built)
        route = Route.of(held, base_dir=str(workspace.paths.base_dir), workspace=workspace)
        return _server(Routes(route), config, workspace, audit, builtin_names(), log_level=log_level)
    known = catalog(workspace)
    problems = check(
        config,
        known,
        environ=environ or {},
        profiles=[*(profile_tokens or {}).values(), *([profile] if profile else [])],
        network=network,
    )
    profile_spaces = _profile_workspaces(config, workspace, protected, problems)
    raise_problems(problems)
    if network is not None and bearer_token is None and profile_tokens is None:
        tokens = read_tokens(config, environ or {})
        bearer_token, profile_tokens = tokens.server, tokens.profiles
    registry = registry_of(config, workspace, known)
    own = {
        name: (registry_of(config.for_profile(name), space, own_known), space)
        for name, (space, own_known) in profile_spaces.items()
    }
    routes = _routes(registry, workspace, config, own, profile)
    spaces = {name: space for name, (_, space) in own.items()}
    default = spaces.get(profile, workspace) if profile is not None else workspace
    roots_vary = _roots_vary(
        default, [spaces.get(name, workspace) for name in (profile_tokens or {}).values()]
    )
    tool_names = [name for _, name in known.names]  # declared tools too (approval.require may name them)
    return _server(
        routes,
        config,
        default,
        audit,
        tool_names,
        log_level=log_level,
        bearer_token=bearer_token,
        profile_tokens=profile_tokens,
        per_profile=roots_vary,
    )


def _server(
    routes: Routes,
    config: Config,
    default: Workspace,
    audit: AuditLog | None,
    tool_names: Iterable[str],
    *,
    log_level: str,
    bearer_token: str | None = None,
    profile_tokens: Mapping[str, str] | None = None,
    per_profile: bool = False,
) -> RegistryServer:
    """The server of ``build_server``: ``routes`` served with ``config``'s approval policy (over
    ``tool_names``, every tool the server knows), ``audit`` log and limits; ``default`` is the
    workspace of requests without a profile token."""
    return create_server(
        routes,
        instructions=instructions_for(
            default.paths, per_profile=per_profile, client_roots=config.paths.client_roots
        ),
        log_level=log_level,
        bearer_token=bearer_token,
        profile_tokens=profile_tokens,
        approval=ApprovalPolicy.create(config.approval, tool_names, scrubber=Scrubber.of(config.audit)),
        audit=audit,
        max_stdio_line_bytes=config.server.max_stdio_line_bytes or 2 * default.config.limits.max_write_bytes,
        client_roots=config.paths.client_roots,
        select_tools=config.server.select_tools,
    )
