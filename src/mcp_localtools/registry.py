"""The tool registry: registration checks, argument validation, timeouts and error results.

Each tool is a ``ToolSpec`` (``spec.py``, what a tool author imports): its name, title and
description, one pydantic arguments model (the single source of its input schema *and* its
validation, ``docs/ARCHITECTURE.md``), a result model (its output schema), MCP-style annotations
and an async handler. The registry refuses a bad spec when it is registered, not when it is
called (duplicate name, a field without a description), and ``call()`` turns every failure into an
error ``ToolResult``. A tool author imports from ``spec.py`` only.

Nothing here depends on MCP: the same registry serves the MCP adapter, the Python API and the
JSON command line.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
from pydantic import ValidationError

from mcp_localtools.errors import (
    ConfigError,
    InvalidArguments,
    NotFound,
    PolicyViolation,
    SpecError,
    ToolError,
    ToolTimeout,
    UnknownToolError,
)
from mcp_localtools.results import ResourcePage, ToolResult, enforce_budget
from mcp_localtools.schemas import cached_schema, input_schema, models_in, output_schema
from mcp_localtools.spec import LOCAL_SESSION, CallContext, ProgressFn, ResourceSource, SessionEndFn, ToolSpec
from mcp_localtools.toolnames import render_names, serving
from mcp_localtools.validation import lone_surrogate, validation_message

__all__ = ["DEFAULT_CALL_TIMEOUT_SECONDS", "Registry"]

logger = logging.getLogger(__name__)

DEFAULT_CALL_TIMEOUT_SECONDS = 600.0
"""Every call is bounded; a hung filesystem cannot hang the server."""

_NAME = re.compile(r"^[a-z][a-z0-9]*$")


async def _no_check(args: Any, ctx: CallContext) -> None:
    """The check of a tool without one: its arguments were valid, nothing more to ask."""


def _nodes(node: Any) -> Iterator[dict[str, Any]]:
    """Every object in a JSON Schema, ``node`` first."""
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _nodes(value)
    elif isinstance(node, list):
        for value in node:
            yield from _nodes(value)


@dataclass
class Registry:
    """The registered tools, looked up by name.

    Args:
        default_timeout: seconds a call may take unless its spec says otherwise.
        max_result_chars: the result budget (``[limits] max_result_chars``): every result's
            text plus the JSON of its structured content is cut to it (``results.enforce_budget``);
            None leaves results as the tools made them.
        renamed: ``[tools] rename`` (own name -> served name): registered descriptions (the tool's
            and every field's) name tools as served (``toolnames.render_names``), and each call runs
            with it in place for ``toolnames.served``, so refusals and hints do too.
        declare: ``(name, table) -> spec`` of a declared tool (``register_map``), bound to a
            workspace by ``build_registry``; None: this registry cannot declare tools.
    """

    default_timeout: float = DEFAULT_CALL_TIMEOUT_SECONDS
    max_result_chars: int | None = None
    renamed: Mapping[str, str] = field(default_factory=dict)
    declare: Callable[[str, Mapping[str, Any]], ToolSpec[Any]] | None = field(default=None, repr=False)
    _specs: dict[str, ToolSpec[Any]] = field(default_factory=dict, init=False, repr=False)
    _built: set[str] = field(default_factory=set, init=False, repr=False)
    _schemas: dict[str, tuple[dict[str, Any], dict[str, Any]]] = field(
        default_factory=dict, init=False, repr=False
    )
    _session_end: list[SessionEndFn] = field(default_factory=list, init=False, repr=False)
    _session_start: list[SessionEndFn] = field(default_factory=list, init=False, repr=False)
    _resources: list[ResourceSource] = field(default_factory=list, init=False, repr=False)

    def resource_sources(self) -> list[ResourceSource]:
        """The registered tools' resource sources, each once."""
        return list(self._resources)

    def read_resource(self, uri: str, session_id: str) -> ResourcePage:
        """Read a resource a tool result linked to, as session ``session_id``.

        Raises:
            NotFound: no source holds ``uri`` for that session.
        """
        for source in self._resources:
            if uri.startswith(source.prefix):
                return source.read(uri, session_id)
        raise NotFound(f"unknown resource: {uri}")

    def on_session_end(self, callback: SessionEndFn) -> None:
        """Await ``callback(session_id)`` whenever an MCP session ends (``end_session``); a
        callback added twice is called once."""
        if callback not in self._session_end:
            self._session_end.append(callback)

    async def start_session(self, session_id: str) -> None:
        """A client connection was first seen: await each tool's ``on_session_start`` once (a
        callback shared by tools is called once). A failing callback is logged and does not stop
        the others. The MCP adapter runs this in the background."""
        await _each(self._session_start, session_id, "preparing")

    async def end_session(self, session_id: str) -> None:
        """Release everything kept for ``session_id``: await each ``on_session_end`` callback
        (the tools' and the ones added with ``on_session_end``) once. A failing callback is
        logged and does not stop the others. The MCP adapter calls this when a connection ends."""
        await _each(self._session_end, session_id, "releasing")

    def register(self, spec: ToolSpec[Any]) -> None:
        """Add a tool.

        Raises:
            SpecError: a taken or malformed name, no title, description or group, an undocumented
                field.
        """
        if not _NAME.match(spec.name):
            raise SpecError(f"tool name {spec.name!r} must be lowercase letters and digits")
        if spec.name in self._specs:
            raise SpecError(f"tool {spec.name!r} is registered twice")
        if not spec.description.strip() or not spec.title.strip():
            raise SpecError(f"tool {spec.name!r} needs a title and a description")
        if not _NAME.match(spec.group):
            raise SpecError(
                f"tool {spec.name!r} needs its group (group=; the catalog sets it from the package)"
            )
        for model in (spec.args_model, spec.result_model):
            undocumented = [n for n, f in model.model_fields.items() if not f.description]
            if undocumented:
                raise SpecError(
                    f"tool {spec.name!r}: {model.__name__} fields without a description: "
                    + ", ".join(undocumented)
                )
        wire_names = {field.alias or name for name, field in spec.args_model.model_fields.items()}
        if spec.preview is not None and spec.preview.argument not in wire_names:
            raise SpecError(
                f"tool {spec.name!r}: its preview argument {spec.preview.argument!r} is not an argument"
            )
        self._schemas[spec.name] = (
            self._rendered(cached_schema(spec.args_model, "input") or input_schema(spec.args_model)),
            self._rendered(cached_schema(spec.result_model, "output") or output_schema(spec.result_model)),
        )
        self._specs[spec.name] = dataclasses.replace(
            spec, description=render_names(spec.description, self.renamed)
        )
        if spec.on_register is not None:
            spec.on_register()
        if spec.on_session_start is not None and spec.on_session_start not in self._session_start:
            self._session_start.append(spec.on_session_start)
        if spec.on_session_end is not None:
            self.on_session_end(spec.on_session_end)
        if spec.resources is not None and all(spec.resources is not r for r in self._resources):
            self._resources.append(spec.resources)

    def register_map(self, name: str, table: Mapping[str, Any]) -> ToolSpec[Any]:
        """Declare a command tool from a plain map shaped as a ``[tools.custom.NAME]`` table
        (``tools/exec/_declared``), register it and return its spec. Raises ``ConfigError``: the
        registry has no ``declare`` (not built by ``build_registry``), the name is taken, or the
        table is refused (the message names the key)."""
        if self.declare is None:
            raise ConfigError("register_map: this registry cannot run commands; build it with build_registry")
        spec = self.declare(name, table)
        if spec.name in self._specs:
            raise ConfigError(f"register_map({name!r}): a tool named {name!r} is already registered")
        self.register(spec)
        return self._specs[spec.name]

    def _rendered(self, schema: dict[str, Any]) -> dict[str, Any]:
        """``schema`` (a fresh copy) with its descriptions naming tools as served."""
        if not self.renamed:
            return schema
        for node in _nodes(schema):
            if isinstance(node.get("description"), str):
                node["description"] = render_names(node["description"], self.renamed)
        return schema

    def replace(self, spec: ToolSpec[Any]) -> ToolSpec[Any]:
        """Put ``spec`` in place of the tool registered under its name (composition: a built-in
        tool overridden on purpose; ``register`` still refuses a taken name).

        Returns:
            the spec that was replaced.

        Raises:
            SpecError: no tool has that name (use ``register``), or ``spec`` fails the checks
                of ``register``; the old tool stays registered then.
        """
        if spec.name not in self._specs:
            raise SpecError(f"cannot replace tool {spec.name!r}: no tool has that name; register it")
        old, schemas = self._specs.pop(spec.name), self._schemas.pop(spec.name)
        try:
            self.register(spec)
        except SpecError:
            self._specs[spec.name], self._schemas[spec.name] = old, schemas
            raise
        return old

    def get(self, name: str) -> ToolSpec[Any]:
        """The spec registered under ``name``.

        Raises:
            UnknownToolError: no such tool; the message lists the known names.
        """
        try:
            return self._specs[name]
        except KeyError:
            raise UnknownToolError(
                f"unknown tool: {name!r}; known tools: {', '.join(self.names())}"
            ) from None

    async def ready(self, name: str | None = None) -> None:
        """Have tool ``name`` (None: every tool) built before it is looked up: here every tool is
        built already (``deferred.DeferredRegistry`` builds held ones in a worker thread)."""

    def names(self) -> list[str]:
        """Registered tool names, sorted."""
        return sorted(self._specs)

    def specs(self) -> list[ToolSpec[Any]]:
        """Registered specs, sorted by name."""
        return [self._specs[name] for name in self.names()]

    def schemas(self, name: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """``(input_schema, output_schema)`` of a registered tool, computed once at registration."""
        self.get(name)
        return self._schemas[name]

    def manifest(self, name: str) -> dict[str, Any]:
        """The MCP ``tools/list`` entry of a registered tool as wire JSON: ``name``, ``title``,
        ``description``, both schemas, ``annotations`` (the four hints), ``_meta`` (``ToolSpec.meta``)."""
        spec = self.get(name)
        schema_in, schema_out = self._schemas[name]
        hints = spec.annotations
        return {
            "name": spec.name,
            "title": spec.title,
            "description": spec.description,
            "inputSchema": schema_in,
            "outputSchema": schema_out,
            "annotations": {  # the title is the tool's own (``title``), not repeated here
                "readOnlyHint": hints.read_only,
                "destructiveHint": hints.destructive,
                "idempotentHint": hints.idempotent,
                "openWorldHint": hints.open_world,
            },
            "_meta": spec.meta,
        }

    def __iter__(self) -> Iterator[ToolSpec[Any]]:
        return iter(self.specs())

    def __len__(self) -> int:
        return len(self._specs)

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    async def call(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        progress: ProgressFn | None = None,
        timeout: float | None = None,
        session_id: str = LOCAL_SESSION,
        client_name: str | None = None,
    ) -> ToolResult:
        """Validate ``arguments``, run the tool under its timeout and return its result.

        Every failure of the call itself is an error ``ToolResult``: invalid arguments, a
        ``ToolError`` from the handler (its message and code), a timeout, or an unexpected
        exception (logged with its traceback on stderr; the result says only that it happened).

        Args:
            name: the tool's name.
            arguments: the wire arguments (camelCase); ``None`` means all defaults.
            progress: receives progress updates of long calls.
            timeout: seconds; default the spec's, else the registry's.
            session_id: the MCP session the call came on (``CallContext.session_id``).
            client_name: the client's name, when known (``CallContext.client_name``).

        Raises:
            UnknownToolError: no tool of that name (a request error, not a tool failure).
        """
        spec = self.get(name)
        context = CallContext(progress=progress, session_id=session_id, client_name=client_name)
        result = await self._invoke(spec, arguments, context, spec.handler, timeout)
        assert result is not None  # a handler returns a result; only a check returns None
        if self.max_result_chars is None:
            return result
        return enforce_budget(result, self.max_result_chars)

    async def check(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        session_id: str = LOCAL_SESSION,
        client_name: str | None = None,
    ) -> ToolResult | None:
        """The error result ``call`` would give for a call its arguments or its tool's policy
        checks (``ToolSpec.check``) refuse, without running it; None when the call would go ahead.
        The pipeline runs this before it asks a person (``server.pipeline.PolicyCheck``).

        Raises:
            UnknownToolError: no tool of that name.
        """
        spec = self.get(name)
        context = CallContext(session_id=session_id, client_name=client_name)
        return await self._invoke(spec, arguments, context, spec.check or _no_check, None)

    async def locate(
        self, name: str, arguments: Mapping[str, Any] | None, program: str, *, session_id: str = LOCAL_SESSION
    ) -> str | None:
        """Where the call ``name(arguments)`` would run the bare program ``program`` from, when it
        lies outside every root (``ToolSpec.locate``); None when it does not, when the tool runs
        no commands, or when the call would be refused anyway.

        Raises:
            UnknownToolError: no tool of that name.
        """
        spec = self.get(name)
        if spec.locate is None:
            return None
        try:
            args = spec.args_model.model_validate(dict(arguments or {}))
            return await spec.locate(args, CallContext(session_id=session_id), program)
        except (ValidationError, ToolError):
            return None

    async def _invoke(
        self,
        spec: ToolSpec[Any],
        arguments: Mapping[str, Any] | None,
        context: CallContext,
        body: Callable[[Any, CallContext], Awaitable[ToolResult | None]],
        timeout: float | None,
    ) -> ToolResult | None:
        """Validate ``arguments`` and await ``body(args, context)`` (the handler or the check)
        under the call timeout; every failure becomes an error result."""
        with serving(self.renamed):  # refusals and hints name tools as served (toolnames.served)
            name = spec.name
            if spec.name not in self._built:
                # Tool models are built on first use (``defer_build``); build this tool's here, on the
                # event loop's thread, before its body constructs results in a worker thread:
                # pydantic before 2.13 does not lock a model's build against another thread's.
                for model in models_in(spec.args_model) + models_in(spec.result_model):
                    model.model_rebuild()
                self._built.add(spec.name)
            if (where := lone_surrogate(arguments or {}, "")) is not None:
                return ToolResult.failure(
                    InvalidArguments.code,
                    f"invalid arguments for {name}: {where}: holds a lone surrogate (\\ud800-\\udfff), "
                    "which is not valid Unicode text; send valid UTF-8",
                )
            try:
                args = spec.args_model.model_validate(dict(arguments or {}))
            except ValidationError as exc:
                return ToolResult.failure(InvalidArguments.code, validation_message(name, spec, exc))
            limit = timeout or spec.timeout_seconds or self.default_timeout
            try:
                with anyio.fail_after(limit):
                    return await body(args, context)
            except ToolError as exc:
                return ToolResult.failure(exc.code, exc.message, policy=isinstance(exc, PolicyViolation))
            except TimeoutError:
                message = f"{name} did not finish within {limit:g} s and was stopped; narrow the request"
                return ToolResult.failure(ToolTimeout.code, message)
            except Exception:
                # The one place an unexpected exception is caught: log it, tell the caller no more.
                logger.exception("tool %s failed unexpectedly", name)
                return ToolResult.failure(
                    "internal_error", f"{name} failed with an internal error; the server log has the details"
                )


async def _each(callbacks: list[SessionEndFn], session_id: str, what: str) -> None:
    """Await every one of ``callbacks`` with ``session_id``; one that fails is logged ("``what``
    session ... failed") and does not stop the others."""
    for callback in list(callbacks):
        try:
            await callback(session_id)
        except Exception:
            logger.exception("%s session %s failed", what, session_id)
