"""The MCP adapter: a registry served by the SDK's ``MCPServer``.

``tools/list`` comes from the registry's specs (the arguments model is the input schema, the
result model the output schema, plus title and annotations), and ``tools/call`` goes to
``Registry.call``. Results map onto MCP content: text → ``TextContent``, images →
``ImageContent``, files → an embedded ``BlobResourceContents``, the typed result →
``structuredContent``; failures → ``isError`` results whose ``_meta`` carries the error's stable
code (``ERROR_META_KEY``). An unknown tool name is a protocol error (-32602). This module and
``transports.py`` are the only ones that import ``mcp``.
"""

from __future__ import annotations

import base64
import itertools
import json
import logging
import secrets
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import anyio
from mcp import MCPError
from mcp.server import MCPServer
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.settings import AuthSettings
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ResourceNotFoundError
from mcp.server.request_state import RequestStateSecurity
from mcp.types import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    BlobResourceContents,
    CallToolResult,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    EmbeddedResource,
    ImageContent,
    InputRequiredResult,
    ResourceLink,
    ResourceTemplate,
    TextContent,
    Tool,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import AnyHttpUrl

from mcp_localtools._version import __version__
from mcp_localtools.approval import ApprovalPolicy, read_answer
from mcp_localtools.audit import AuditLog, Scrubber
from mcp_localtools.config import Config, LimitsConfig
from mcp_localtools.errors import (
    ApprovalDenied,
    ApprovalTimeout,
    ApprovalUnavailable,
    AuditUnavailable,
    ConfigError,
    NotFound,
)
from mcp_localtools.policy.paths import PathPolicy
from mcp_localtools.registry import Registry
from mcp_localtools.results import Content, FileContent, LinkContent, ToolResult
from mcp_localtools.results import ImageContent as ImageItem
from mcp_localtools.results import TextContent as TextItem
from mcp_localtools.stdio import serve_stdio
from mcp_localtools.tools import GROUPS, build_registry, profile_tools
from mcp_localtools.transports import PROFILE_SCOPE, StaticTokenVerifier
from mcp_localtools.workspace import Workspace

__all__ = [
    "ERROR_META_KEY",
    "SERVER_NAME",
    "STATELESS_SESSION",
    "build_server",
    "create_server",
    "instructions_for",
    "is_stateless",
    "to_call_tool_result",
]

SERVER_NAME = "mcp-localtools"
logger = logging.getLogger(__name__)
DEFAULT_STDIO_LINE_BYTES = 2 * LimitsConfig().max_write_bytes
"""Longest stdio message line when the config says nothing: twice the default largest write."""


def _content_block(item: Content) -> TextContent | ImageContent | EmbeddedResource | ResourceLink:
    if isinstance(item, TextItem):
        return TextContent(type="text", text=item.text)
    if isinstance(item, LinkContent):
        return ResourceLink(
            type="resource_link",
            uri=item.uri,
            name=item.name,
            description=item.description,
            mime_type=item.mime_type,
            size=item.size,
        )
    if isinstance(item, ImageItem):
        return ImageContent(
            type="image", data=base64.b64encode(item.data).decode("ascii"), mime_type=item.mime_type
        )
    assert isinstance(item, FileContent)
    blob = BlobResourceContents(
        uri=item.uri, mime_type=item.mime_type, blob=base64.b64encode(item.data).decode("ascii")
    )
    return EmbeddedResource(type="resource", resource=blob)


ERROR_META_KEY = "mcp-localtools/error"
"""The ``_meta`` key of an error result: ``{"code": ..., "message": ...}``, the error's stable code
(``errors.py``) and its message, for clients that act on failures without parsing prose.

The code travels in ``_meta`` rather than ``structuredContent`` because clients built on the
TypeScript SDK validate any ``structuredContent`` of a result, error or not, against the tool's
output schema, and would turn the error into a protocol exception."""


def to_call_tool_result(result: ToolResult) -> CallToolResult:
    """Map a registry result onto an MCP ``CallToolResult``: content items, ``structuredContent``
    for a success, and for a failure ``isError`` with the code and message under
    ``_meta[ERROR_META_KEY]``."""
    meta = None
    if result.error is not None:
        meta = {ERROR_META_KEY: {"code": result.error.code, "message": result.error.message}}
    return CallToolResult(
        content=[_content_block(item) for item in result.content],
        structured_content=result.structured,
        is_error=result.is_error,
        _meta=meta,
    )


async def refuse_second_initialize(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """Server middleware: an ``initialize`` on a connection that was already initialized is a
    JSON-RPC error (-32600), not a renegotiation (the SDK accepts it and replaces the client's
    info and protocol version mid-session; the spec allows one handshake per connection)."""
    if ctx.method == "initialize":
        connection = getattr(ctx.session, "_connection", None)
        if connection is not None and connection.client_params is not None:
            raise MCPError(
                code=INVALID_REQUEST,
                message="already initialized: initialize is accepted once per connection; "
                "open a new connection to start over",
            )
    return await call_next(ctx)


class _RegistryServer(MCPServer[Any]):
    """``MCPServer`` whose tools are a registry's specs rather than decorated functions; it asks
    for ``[approval]`` through MCP elicitation and writes the ``[audit]`` log."""

    def __init__(
        self,
        registry: Registry,
        *,
        approval: ApprovalPolicy | None = None,
        audit: AuditLog | None = None,
        base_dir: str = "",
        profiles: Mapping[str, frozenset[str]] | None = None,
        profile: str | None = None,
        profile_registries: Mapping[str, tuple[Registry, str]] | None = None,
        max_stdio_line_bytes: int = DEFAULT_STDIO_LINE_BYTES,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self._registry = registry
        self._registries = {name: reg for name, (reg, _) in (profile_registries or {}).items()}
        self._base_dirs = {id(reg): where for reg, where in (profile_registries or {}).values()}
        self._base_dirs[id(registry)] = base_dir
        self._max_stdio_line_bytes = max_stdio_line_bytes
        self._tools = {
            id(reg): [Tool.model_validate(reg.manifest(name)) for name in reg.names()]
            for reg in [registry, *self._registries.values()]
        }
        self._approval = approval if approval is not None and approval.active else None
        self._audit = audit
        self._answered: OrderedDict[str, float] = OrderedDict()
        if self._approval is not None:
            registry.on_session_end(self._approval.forget)
        self._profiles = dict(profiles or {})
        self._profile = profile
        self._default = None if profile is None else self._profiles[profile]

    def _route(self) -> tuple[Registry, frozenset[str] | None, str | None]:
        """``(registry, visible, profile)`` of this request: the profile its bearer token names
        in a ``PROFILE_SCOPE`` scope (``transports.StaticTokenVerifier``), else the profile chosen
        at start (None: none); the tool names it may see and call (None: all); and the registry
        it works with: the profile's own when it has policy overrides (its roots, exec and web
        policies), else the server's."""
        token = get_access_token()
        name = self._profile
        for scope in token.scopes if token is not None else ():
            if scope.startswith(PROFILE_SCOPE):
                name = scope[len(PROFILE_SCOPE) :]
                return self._registries.get(name, self._registry), self._profiles.get(name, frozenset()), name
        registry = self._registries.get(name, self._registry) if name is not None else self._registry
        return registry, self._default, name

    async def run_stdio_async(self) -> None:
        """Serve over stdin/stdout with our bounded reader (``stdio.serve_stdio``)."""
        await serve_stdio(self._lowlevel_server, max_line_bytes=self._max_stdio_line_bytes)

    async def list_tools(self) -> list[Tool]:
        registry, visible, _ = self._route()
        return [tool for tool in self._tools[id(registry)] if visible is None or tool.name in visible]

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        registry, visible, profile = self._route()
        if name not in registry or (visible is not None and name not in visible):
            raise MCPError(code=INVALID_PARAMS, message=f"Unknown tool: {name}")

        async def progress(done: float, total: float | None, message: str | None) -> None:
            if context is not None:
                await context.report_progress(done, total, message)

        began = time.monotonic()
        session_id, client_name = self._session_of(context)
        result: ToolResult | None = None
        approval, rule = "not_required", None
        if (
            self._audit is not None
            and self._audit.required
            and not await anyio.to_thread.run_sync(self._audit.ready)
        ):
            result = ToolResult.failure(
                AuditUnavailable.code,
                f"{name} was not run: the audit log cannot be written ({self._audit.failure}) and "
                "[audit] required = true refuses every call until it can; tell the user",
                policy=True,
            )
        try:
            if result is None and self._approval is not None:
                rule = self._approval_rule(registry, name, arguments)
                if rule is not None:
                    # The policy first: nobody is asked about a call it will refuse.
                    result = await registry.check(
                        name, arguments, session_id=session_id, client_name=client_name
                    )
                if rule is None:
                    pass
                elif result is not None:
                    approval = "not_asked"
                elif await self._approval.trusted(
                    registry.get(name),
                    arguments,
                    partial(registry.locate, name, arguments, session_id=session_id),
                ):
                    approval = "trusted_commands"
                else:
                    asked = await self._ask(registry, name, arguments, rule, context, session_id)
                    if isinstance(asked, InputRequiredResult):
                        approval = "asked"  # a question round, not a call: no line
                        return asked
                    approval, result = asked
            if result is None:
                result = await registry.call(
                    name, arguments, progress=progress, session_id=session_id, client_name=client_name
                )
        finally:
            if self._audit is not None and approval != "asked":
                # A call the client cancelled gets its line too.
                done = result or ToolResult.failure("cancelled", f"{name} was cancelled by the client")
                line = self._audit.record(
                    session=session_id,
                    client=client_name,
                    tool=name,
                    arguments=arguments,
                    result=done,
                    approval=approval,
                    approval_rule=rule,
                    refused_by=done.error.code if done.error and done.error.policy else None,
                    began=began,
                    profile=profile,
                )
                with anyio.CancelScope(shield=True):
                    await anyio.to_thread.run_sync(self._audit.write, line)
        assert result is not None
        return to_call_tool_result(result)

    def _approval_rule(self, registry: Registry, name: str, arguments: Mapping[str, Any]) -> str | None:
        """The ``[approval] require`` entry this call falls under; a dry run needs none."""
        assert self._approval is not None
        spec = registry.get(name)
        if "dry_run" in spec.args_model.model_fields and arguments.get("dryRun") is True:
            return None
        return self._approval.rule_for(spec)

    async def _ask(
        self,
        registry: Registry,
        name: str,
        arguments: dict[str, Any],
        rule: str,
        context: Context[Any, Any] | None,
        session_id: str,
    ) -> InputRequiredResult | tuple[str, ToolResult | None]:
        """Ask the person about a call that needs approval.

        Returns an ``InputRequiredResult`` (the 2026-07-28 revision: the client asks and calls
        again with the answer), or ``(outcome, refusal)``: the audit's approval outcome and the
        error result when the call must not run (None: run it)."""
        assert self._approval is not None
        policy = self._approval
        spec = registry.get(name)
        key = policy.session_key(spec, arguments)
        if policy.approved_for_session(session_id, key):
            return "session", None
        timeout = policy.config.timeout_seconds
        capabilities = context.client_capabilities if context is not None else None
        elicitation = capabilities.elicitation if capabilities is not None else None
        modern = context is not None and context.protocol_version in MODERN_PROTOCOL_VERSIONS
        if (
            context is None
            or elicitation is None
            or (elicitation.form is None and elicitation.url is not None)
            or (not modern and not context.session.can_send_request)
        ):
            return self._unsupported(name, rule, "it does not support MCP elicitation (form mode)")
        answer: ElicitResult | None = None
        if modern:
            answer, expired = self._modern_answer(context)
            if expired:
                return "timeout", _timeout_result(name, timeout)
        if answer is None:
            sessions = not is_stateless(session_id)
            message, refusal = await self._question(registry, name, arguments, rule, session_id)
            if refusal is not None:
                return "not_asked", refusal
            schema = policy.form_schema(sessions=sessions)
            if modern:
                nonce = secrets.token_urlsafe(16)
                request = ElicitRequest(
                    params=ElicitRequestFormParams(message=message, requested_schema=schema)
                )
                state = json.dumps({"approval": nonce, "asked": time.time()})
                return InputRequiredResult(input_requests={_APPROVAL_INPUT: request}, request_state=state)
            try:
                with anyio.fail_after(timeout):
                    answer = await context.session.elicit_form(
                        message, schema, related_request_id=context.request_id
                    )
            except TimeoutError:
                return "timeout", _timeout_result(name, timeout)
            except MCPError as exc:
                logger.info("elicitation for %s failed: %s", name, exc)
                return self._unsupported(
                    name, rule, f"it answered the approval request with an error ({exc})"
                )
        verdict = read_answer(answer.action, answer.content)
        if verdict == "denied":
            return "denied", ToolResult.failure(
                ApprovalDenied.code,
                f"{name} was not run: the user denied it. Do not repeat the call; "
                "ask the user what to do instead.",
                policy=True,
            )
        if verdict == "approved_for_session":
            if is_stateless(session_id) or not policy.config.session_approval:
                verdict = "approved"  # not offered there: an answer naming it approves this call only
            else:
                policy.remember(session_id, key)
        return verdict, None

    def _modern_answer(self, context: Context[Any, Any]) -> tuple[ElicitResult | None, bool]:
        """The answer a 2026-07-28 client sent back with the state of our question: ``(answer,
        expired)``. The state is sealed and bound to this tool and these arguments by the SDK
        (``RequestStateBoundary``); each question is answered once (a replayed answer asks again)."""
        responses = context.input_responses or {}
        response = responses.get(_APPROVAL_INPUT)
        try:
            state = json.loads(context.request_state or "null")
            nonce, asked = str(state["approval"]), float(state["asked"])
        except (ValueError, TypeError, KeyError):
            return None, False
        if not isinstance(response, ElicitResult) or nonce in self._answered:
            return None, False
        now = time.time()
        assert self._approval is not None
        timeout = self._approval.config.timeout_seconds
        while self._answered and (
            next(iter(self._answered.values())) < now - 2 * timeout - 60
            or len(self._answered) > _MAX_ANSWERED
        ):
            self._answered.popitem(last=False)
        self._answered[nonce] = now
        if now - asked > timeout:
            return None, True
        return response, False

    async def _question(
        self, registry: Registry, name: str, arguments: dict[str, Any], rule: str, session_id: str
    ) -> tuple[str, ToolResult | None]:
        """The question for the person and, for a tool with a dry run (editfile), its diff; or
        the dry run's error result when the call cannot succeed (then nobody is asked)."""
        assert self._approval is not None
        spec = registry.get(name)
        preview = None
        if "dry_run" in spec.args_model.model_fields:
            dry = await registry.call(name, {**arguments, "dryRun": True}, session_id=session_id)
            if dry.is_error:
                return "", dry
            diff = (dry.structured or {}).get("diff")
            preview = diff if isinstance(diff, str) else None
        message = self._approval.prompt(
            spec, arguments, rule=rule, base_dir=self._base_dirs[id(registry)], preview=preview
        )
        return message, None

    def _unsupported(self, name: str, rule: str, why: str) -> tuple[str, ToolResult | None]:
        assert self._approval is not None
        if self._approval.config.on_unsupported == "allow":
            return "allowed_unsupported", None
        return "unsupported", ToolResult.failure(
            ApprovalUnavailable.code,
            f"{name} was not run: it needs the user's approval ([approval] require has {rule!r}) and this "
            f"client cannot ask: {why}. Use a client that supports MCP elicitation, or the user can "
            'remove it from [approval] require or set [approval] on_unsupported = "allow"',
            policy=True,
        )

    async def list_resource_templates(self) -> list[ResourceTemplate]:
        return [
            ResourceTemplate(
                uri_template=source.uri_template,
                name=source.prefix,
                description=source.description,
            )
            for source in self._route()[0].resource_sources()
        ]

    async def read_resource(
        self, uri: Any, context: Context[Any, Any] | None = None
    ) -> list[ReadResourceContents]:
        """A resource a tool result linked to (``resource_link``), as the connection's session
        sees it; an unknown, expired or other session's URI is a -32602 "not found" error."""
        session_id, _ = self._session_of(context)
        try:
            page = self._route()[0].read_resource(str(uri), session_id)
        except NotFound as exc:
            raise ResourceNotFoundError(exc.message) from None
        content: str | bytes = page.text if page.text is not None else (page.data or b"")
        return [ReadResourceContents(content=content, mime_type=page.mime_type)]

    def _session_of(self, context: Context[Any, Any] | None) -> tuple[str, str | None]:
        """``(session_id, client_name)`` of the connection a request came on.

        A handshake-era (2024-11-05 ... 2025-11-25) connection is a session: its id is minted at
        its first tool call and kept in the SDK's per-connection ``Connection.state``, and
        ``Registry.end_session`` is scheduled on the connection's exit stack, which the SDK unwinds
        when the connection ends (stdio EOF, Streamable HTTP DELETE or idle timeout, SSE
        disconnect, an in-memory client closing). The 2026-07-28 revision has no sessions (every
        request stands alone): its requests are keyed by who sent them, ``STATELESS_SESSION``,
        the bearer token (``transports.token_principal``; ``stdio`` without one) and the profile,
        so one client never sees another's processes; that state lives until the server exits and
        is otherwise bounded by each tool's own limits and TTLs."""
        if context is None:
            return self._stateless_key(), None
        session = context.session
        params = session.client_params
        client_name = params.client_info.name if params is not None else None
        connection = getattr(session, "_connection", None)
        if connection is None or session.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return self._stateless_key(), client_name
        key = connection.state.get(_SESSION_KEY)
        if key is None:
            key = f"mcp-{next(_session_numbers)}"
            connection.state[_SESSION_KEY] = key
            for registry in {id(reg): reg for reg in [self._registry, *self._registries.values()]}.values():
                connection.exit_stack.push_async_callback(registry.end_session, key)
        return str(key), client_name

    def _stateless_key(self) -> str:
        """The owner key of a 2026-07-28 request: ``STATELESS_SESSION/<token>/<profile>``."""
        token = get_access_token()
        principal = token.client_id if token is not None and token.client_id else "stdio"
        return f"{STATELESS_SESSION}/{principal}/{self._route()[2] or '-'}"


def is_stateless(session_id: str) -> bool:
    """Whether ``session_id`` keys 2026-07-28 requests (no MCP session: nothing ends it)."""
    return session_id == STATELESS_SESSION or session_id.startswith(STATELESS_SESSION + "/")


def _timeout_result(name: str, timeout: float) -> ToolResult:
    return ToolResult.failure(
        ApprovalTimeout.code,
        f"{name} was not run: nobody answered the approval request within {timeout:g} s; "
        "ask the user, then call again",
        policy=True,
    )


_MAX_ANSWERED = 100_000
"""Most answered 2026-07-28 questions remembered (so that an answer is used once)."""

_APPROVAL_INPUT = "mcp-localtools/approval"
"""The key of the approval question in a 2026-07-28 ``InputRequiredResult``."""

STATELESS_SESSION = "mcp-stateless"
"""The prefix of the ``CallContext.session_id`` of every 2026-07-28-era request (that revision has
no sessions): ``mcp-stateless/<principal>/<profile>``, one per token and profile."""

_SESSION_KEY = "mcp-localtools/session"
_session_numbers = itertools.count(1)


def instructions_for(paths: PathPolicy, *, per_profile: bool = False) -> str:
    """Server instructions for the model: where the tools may work and how paths resolve.
    ``per_profile``: some profiles have roots of their own, so the roots are not named (the
    instructions are the same for every client; a refusal names the roots that apply)."""
    if per_profile:
        return (
            "Local file, search, edit and command tools. Every path must lie inside the allowed roots of "
            "this client's profile; a path outside is refused with the roots named. "
            "Failed calls say what went wrong and what to do."
        )
    if not paths.roots:
        return (
            "Local file, search, edit and command tools. This server has no allowed roots yet: every "
            "file and command tool is refused (no_roots) until the user restarts it with --root DIR. "
            "Failed calls say what went wrong and what to do."
        )
    roots = ", ".join(str(root) for root in paths.roots)
    return (
        f"Local file, search, edit and command tools. Every path must lie inside the allowed roots: {roots}. "
        f"Relative paths resolve against {paths.base_dir}. Failed calls say what went wrong and what to do."
    )


def create_server(
    registry: Registry,
    *,
    instructions: str | None = None,
    log_level: str = "WARNING",
    bearer_token: str | None = None,
    approval: ApprovalPolicy | None = None,
    audit: AuditLog | None = None,
    base_dir: str = "",
    profile_tokens: Mapping[str, str] | None = None,
    profiles: Mapping[str, frozenset[str]] | None = None,
    profile: str | None = None,
    profile_registries: Mapping[str, tuple[Registry, str]] | None = None,
    max_stdio_line_bytes: int = DEFAULT_STDIO_LINE_BYTES,
) -> MCPServer[Any]:
    """An ``MCPServer`` that serves ``registry``; run it with ``run()`` or a transport of
    ``transports.py``, or connect to it in memory with the SDK's ``Client(server)``.

    Args:
        registry: the tools.
        instructions: server instructions for the model.
        log_level: level of the SDK's loggers.
        bearer_token: when set, the HTTP transports require ``Authorization: Bearer <token>``
            (the SDK's resource-server auth with a static, constant-time token check; no OAuth
            metadata is published). stdio is unaffected.
        approval: the ``[approval]`` policy: calls it names are asked about through MCP
            elicitation before they run.
        audit: the ``[audit]`` log: one line per call.
        base_dir: where relative paths resolve (shown in approval questions).
        profile_tokens: more bearer tokens, each mapped to the name of a profile in ``profiles``;
            a client that presents one sees and calls only that profile's tools.
        profiles: profile name → the tool names it gets.
        profile: the profile of requests without a profile token (stdio: every request);
            None: every tool.
        profile_registries: profile name → ``(registry, base_dir)`` for a profile with policy
            overrides of its own (``Config.for_profile``): its clients (and, for ``profile``,
            requests without a profile token) list and call the tools of that registry; other
            profiles use ``registry``, the server's.
        max_stdio_line_bytes: over stdio, longer message lines are refused (-32600) unbuffered.
    """
    auth: dict[str, Any] = {}
    if bearer_token is not None or profile_tokens:
        auth = {
            "token_verifier": StaticTokenVerifier(bearer_token, profile_tokens),
            # issuer_url is required by the SDK but published nowhere: no metadata routes are served.
            "auth": AuthSettings(issuer_url=AnyHttpUrl("http://127.0.0.1"), resource_server_url=None),
        }
    if approval is not None and approval.active:
        # The 2026-07-28 question round-trips through the client; its sealed state must outlive
        # the approval timeout.
        auth["request_state_security"] = RequestStateSecurity.ephemeral(
            ttl=max(600.0, approval.config.timeout_seconds + 60.0)
        )
    return _RegistryServer(
        registry,
        approval=approval,
        audit=audit,
        base_dir=base_dir,
        profiles=profiles,
        profile=profile,
        profile_registries=profile_registries,
        name=SERVER_NAME,
        title="mcp-localtools",
        version=__version__,
        instructions=instructions,
        subscriptions=False,
        middleware=[refuse_second_initialize],
        log_level=log_level.upper(),
        max_stdio_line_bytes=max_stdio_line_bytes,
        **auth,
    )


def build_server(
    config: Config | None = None,
    *,
    log_level: str = "WARNING",
    bearer_token: str | None = None,
    environ: Mapping[str, str] | None = None,
    own_files: Sequence[str | Path] = (),
    profile_tokens: Mapping[str, str] | None = None,
    profile: str | None = None,
) -> MCPServer[Any]:
    """Build the policies, the registry and the MCP server from a config (default: ``Config()``,
    the current directory as the only root). ``bearer_token`` and ``profile_tokens`` (token →
    ``[profiles]`` name) and ``profile`` (the one chosen at start) as in ``create_server``;
    ``environ`` is the server's environment for the exec tools (see ``build_registry``);
    ``own_files`` the server's config file, protected when it lies in a root (``Workspace``), as
    is the ``[audit]`` log (its default location, from ``environ``, lies outside the roots).

    Raises:
        ConfigError: the config cannot be used (bad root, unknown tool in ``[tools]``,
            ``[approval] require`` or a profile, a token for an unknown profile, no home
            directory for the default audit log, ...).
    """
    config = config or Config()
    for name in [*(profile_tokens or {}).values(), *([profile] if profile else [])]:
        if name not in config.profiles:
            raise ConfigError(
                f"no profile {name!r}: [profiles] defines {', '.join(sorted(config.profiles)) or 'none'}"
            )
    audit = AuditLog.from_config(config.audit, environ or {}) if config.audit.enabled else None
    protected = [*own_files, *(audit.files if audit is not None else ())]
    workspace = Workspace.from_config(config, environ=environ, own_files=protected)
    registry = build_registry(config, workspace=workspace)
    own: dict[str, tuple[Registry, Workspace]] = {}  # the profiles with policies of their own
    for name, settings in config.profiles.items():
        if settings.overrides:
            try:
                profile_config = config.for_profile(name)
                space = workspace.sibling(profile_config, own_files=protected)
                own[name] = (build_registry(profile_config, workspace=space), space)
            except ConfigError as exc:
                raise ConfigError(f"profiles.{name}: {exc.message}") from exc
    known = [module.__name__.rpartition(".")[2] for group in GROUPS for module in group.MODULES]
    profiles = profile_tools(registry, config, {name: reg for name, (reg, _) in own.items()})
    default = own[profile][1] if profile in own else workspace  # requests without a profile token

    def where(space: Workspace) -> tuple[object, ...]:
        return (space.paths.roots, space.paths.base_dir)

    roots_vary = any(
        where(own[name][1] if name in own else workspace) != where(default)
        for name in (profile_tokens or {}).values()
    )
    limits = default.config.limits
    return create_server(
        registry,
        instructions=instructions_for(default.paths, per_profile=roots_vary),
        log_level=log_level,
        bearer_token=bearer_token,
        approval=ApprovalPolicy.create(config.approval, known, scrubber=Scrubber.of(config.audit)),
        audit=audit,
        base_dir=str(workspace.paths.base_dir),
        profile_tokens=profile_tokens,
        profiles=profiles,
        profile=profile,
        profile_registries={name: (reg, str(space.paths.base_dir)) for name, (reg, space) in own.items()},
        max_stdio_line_bytes=config.server.max_stdio_line_bytes or 2 * limits.max_write_bytes,
    )
