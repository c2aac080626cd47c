"""What a tool author imports: a tool's ``ToolSpec`` and the pieces it is made of.

A tool module (``tools/<group>/<name>.py``) defines an arguments model (``ToolArgs``: camelCase on
the wire, unknown fields refused, strict types), a result model (``ToolOutput``), a handler
``async (args, CallContext) -> ToolResult`` and, in ``spec(workspace)``, the ``ToolSpec`` that
binds them with a title, a description and ``ToolAnnotations`` (``READ_ONLY``, ``DESTRUCTIVE``).
``registry.py`` registers and calls specs; nothing here runs a tool, and nothing here knows MCP.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Generic, Protocol, TypeVar, get_args

from pydantic import AliasChoices, BaseModel, BeforeValidator, ConfigDict, model_validator
from pydantic.alias_generators import to_camel
from pydantic.fields import FieldInfo

from mcp_localtools._version import __version__
from mcp_localtools.results import ResourcePage, ToolResult

__all__ = [
    "DESTRUCTIVE",
    "DRY_RUN",
    "LOCAL_SESSION",
    "READ_ONLY",
    "CallContext",
    "ChangesFn",
    "CheckFn",
    "LocateFn",
    "PinFn",
    "Preview",
    "ProgressFn",
    "ResourceSource",
    "SessionEndFn",
    "ToolAnnotations",
    "ToolArgs",
    "ToolOutput",
    "ToolSpec",
    "any_case",
    "changes_anything",
    "changes_at",
    "tool_meta",
]

ProgressFn = Callable[[float, float | None, str | None], Awaitable[None]]
"""``(progress, total, message)``: reports progress of a running call to whoever asked for it."""

SessionEndFn = Callable[[str], Awaitable[None]]
"""``(session_id)``: releases what a tool kept for an MCP session that has ended."""

LocateFn = Callable[[Any, "CallContext", str], Awaitable[str | None]]
"""``(args, ctx, name)``: where the call would run the bare program ``name`` from, when it lies
outside every root (``ToolSpec.locate``); None when it does not, or is not found."""

CommandsFn = Callable[[Mapping[str, Any]], tuple[list[str], str | None]]
"""``(arguments) -> (lines, work_dir)``: the command lines a call with these wire arguments would
run, and the working directory the tool fixes (None: the call's ``workDir`` or the base
directory) (``ToolSpec.commands``)."""

PinFn = Callable[[Mapping[str, Any]], Awaitable[tuple[str, dict[str, Any]]]]
"""``await pin(arguments) -> (shown, pins)``: for a call whose effect depends on a file's content
(runscript), what the approval question shows of it (the script's first lines, size, sha256) and
the arguments added to the call once approved so that it runs exactly that (``expectedSha256``);
raises ``ToolError`` or pydantic's ``ValidationError`` for arguments the call would refuse
(``ToolSpec.pinned``)."""

ChangesFn = Callable[[Any], "Sequence[str] | None"]
"""``(args) -> paths``: what a successful call of a writing tool changed (``ToolSpec.changes``):
the paths its arguments name, as the model wrote them (relative to the base directory, or
absolute); ``()`` when it changed nothing (a preview); None when it may have changed anything (a
command)."""


def changes_at(*fields: str) -> ChangesFn:
    """A ``ChangesFn`` for a tool whose arguments ``fields`` (attribute names: ``path``,
    ``source``, ``destination``) name what it writes; nothing when the call asks for a preview
    (its ``dry_run`` argument is true)."""

    def changed(args: Any) -> Sequence[str]:
        if getattr(args, "dry_run", False) is True:
            return ()
        return tuple(value for name in fields if isinstance(value := getattr(args, name), str))

    changed.fields = fields  # type: ignore[attr-defined]  # ToolSpec checks them against its args
    return changed


def changes_anything(args: Any) -> None:
    """The ``ChangesFn`` of a tool whose call may change anything (a command)."""
    del args
    return


CheckFn = Callable[[Any, "CallContext"], Awaitable[None]]
"""``(args, ctx)``: the policy checks of a call without its effects (``ToolSpec.check``); raises
the ``ToolError`` the handler would raise for a refused call, returns None when it would run."""


class ToolArgs(BaseModel):
    """Base of every arguments model: camelCase names on the wire, unknown fields refused, and
    ``null`` for an optional argument taken as "use the default" (clients such as mcp-use send
    ``null`` for every property they have no value for).

    Types are strict, as the input schema says: ``"3"`` is not an integer and ``"yes"`` not a
    boolean (the error names the field and the type it wants). A number with no fractional part
    (``3.0``) is an integer, as JSON Schema defines ``integer``."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        alias_generator=to_camel,
        validate_by_alias=True,
        validate_by_name=False,
        strict=True,
        defer_build=True,
    )

    @model_validator(mode="before")
    @classmethod
    def _null_means_default(cls, data: Any) -> Any:
        if not isinstance(data, Mapping):
            return data
        if any(value is None for value in data.values()):
            optional = {
                wire
                for name, field in cls.model_fields.items()
                if not field.is_required()
                for wire in _wire_names(name, field)
            }
            data = {key: value for key, value in data.items() if value is not None or key not in optional}
        integers = _integer_fields(cls)
        if any(isinstance(data.get(key), float) for key in integers):
            data = {
                key: int(value)
                if key in integers and isinstance(value, float) and value.is_integer()
                else value
                for key, value in data.items()
            }
        return data


def _wire_names(name: str, field: FieldInfo) -> list[str]:
    """The names a field is taken by on the wire: its alias, and the other names its
    ``validation_alias`` accepts (``AliasChoices("maxResults", "limit")``)."""
    names = [field.alias or name]
    if isinstance(field.validation_alias, AliasChoices):
        names += [choice for choice in field.validation_alias.choices if isinstance(choice, str)]
    return names


@cache
def _integer_fields(model: type[BaseModel]) -> frozenset[str]:
    """Wire names of ``model``'s fields typed ``int`` or ``int | None`` (a model's fields never
    change, so this is computed once per model)."""
    return frozenset(
        field.alias or name
        for name, field in model.model_fields.items()
        if field.annotation is int or set(get_args(field.annotation)) == {int, type(None)}
    )


class ToolOutput(BaseModel):
    """Base of every result model: camelCase names on the wire."""

    model_config = ConfigDict(
        frozen=True,
        alias_generator=to_camel,
        validate_by_name=True,
        serialize_by_alias=True,
        defer_build=True,
    )


@dataclass(frozen=True, slots=True)
class ToolAnnotations:
    """MCP tool annotations (hints for clients; the server enforces nothing through them)."""

    read_only: bool
    destructive: bool
    idempotent: bool
    open_world: bool = False


READ_ONLY = ToolAnnotations(read_only=True, destructive=False, idempotent=True)
"""A tool that changes nothing."""
DESTRUCTIVE = ToolAnnotations(read_only=False, destructive=True, idempotent=False)
"""A tool that may replace or remove what is there (writes, edits, moves, deletes)."""


def tool_meta(group: str, hints: ToolAnnotations) -> dict[str, Any]:
    """A tool's ``_meta`` in ``tools/list`` (llm_toolkit's tool metadata): the server version
    (``mcp-localtools/version``) and the tool's tags (``mcp-localtools/tags``: its group first,
    then ``read-only``, ``destructive``, ``open-world`` as ``hints`` say)."""
    flags = (
        ("read-only", hints.read_only),
        ("destructive", hints.destructive),
        ("open-world", hints.open_world),
    )
    return {
        "mcp-localtools/version": __version__,
        "mcp-localtools/tags": [group, *(t for t, on in flags if on)],
    }


def any_case(choices: Any) -> BeforeValidator:
    """A pydantic validator that takes a choice of the ``Literal`` type ``choices`` in any case
    and with surrounding white space, and gives its canonical spelling (``" LineBlock "`` →
    ``"lineBlock"``); anything else is left for the ``Literal`` to refuse. Use it as
    ``Annotated[Kind, any_case(Kind)]``."""
    canonical = {choice.lower(): choice for choice in get_args(choices)}

    def validate(value: Any) -> Any:
        return canonical.get(value.strip().lower(), value) if isinstance(value, str) else value

    return BeforeValidator(validate)


@dataclass(frozen=True, slots=True)
class Preview:
    """How a call shows what it would do without doing it (editfile's dry run): the boolean
    argument that asks for that, and the field of the result that holds what it would do. A call
    that asks for a preview changes nothing, so it needs no approval; a call that needs approval
    is previewed first, and the person is shown the preview.

    Attributes:
        argument: the wire name of the boolean argument (``dryRun``).
        field: the wire name of the result field with the preview (``diff``).
    """

    argument: str
    field: str

    def asked(self, arguments: Mapping[str, Any]) -> bool:
        """True when ``arguments`` ask for the preview explicitly (``"dryRun": true``)."""
        return arguments.get(self.argument) is True

    def of(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """``arguments`` asking for the preview instead."""
        return {**arguments, self.argument: True}

    def shown(self, result: ToolResult) -> str | None:
        """The preview a successful preview call returned, or None."""
        value = (result.structured or {}).get(self.field)
        return value if isinstance(value, str) else None


DRY_RUN = Preview(argument="dryRun", field="diff")
"""The edit tools' preview: ``dryRun: true`` returns the ``diff`` and writes nothing."""


LOCAL_SESSION = "local"
"""The session id of calls made without MCP (the Python API, the JSON command line)."""


@dataclass(frozen=True, slots=True)
class CallContext:
    """What a handler may use of the call beyond its arguments.

    Attributes:
        progress: receives progress updates, or None when the caller did not ask for them.
        session_id: an opaque key of the MCP session (connection) the call came on, unique for
            the server's lifetime; ``LOCAL_SESSION`` for calls made without MCP. State a tool
            keeps per session (exec sessions, processes, stored outputs) is keyed by it, and
            ``Registry.on_session_end`` callbacks receive it when the session ends.
        client_name: the client's name from ``initialize`` (``clientInfo.name``), when known.
    """

    progress: ProgressFn | None = None
    session_id: str = LOCAL_SESSION
    client_name: str | None = None

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Send a progress update; a no-op when the caller did not ask for progress."""
        if self.progress is not None:
            await self.progress(progress, total, message)


class ResourceSource(Protocol):
    """Resources a tool keeps for an MCP session (e.g. a command's full output), read with
    ``resources/read``. Its URIs start with ``prefix``; ``uri_template`` (RFC 6570) and
    ``description`` are published in ``resources/templates/list``."""

    prefix: str
    uri_template: str
    description: str

    def read(self, uri: str, session_id: str) -> ResourcePage:
        """The resource at ``uri`` as the session ``session_id`` may see it.

        Raises:
            NotFound: no such resource in that session (never existed, expired, evicted).
        """
        ...


ArgsT = TypeVar("ArgsT", bound=ToolArgs)


@dataclass(frozen=True, slots=True)
class ToolSpec(Generic[ArgsT]):
    """Everything about one tool.

    Attributes:
        name: lowercase wire name (``readfile``).
        title: short human-readable name.
        description: the model's documentation: what it does, its limits, what to use instead.
        args_model: the arguments model (input schema and validation).
        result_model: the structured result model (output schema).
        handler: ``async (args, ctx) -> ToolResult``; raises ``ToolError`` for failures.
        annotations: MCP annotations.
        group: the tool group: ``fs``, ``text``, ``exec`` (declared tools too), ``image``, ``web``,
            ``code``: the package of ``tools/`` the tool's module lives in, which the catalog sets
            (``tools.catalog``; a tool module leaves it out); ``[tools]`` filters and ``[approval]
            require = ["exec"]`` match it, and it is a tag of the tool's ``_meta``.
        timeout_seconds: this tool's call timeout, when it differs from the registry default.
        unsupported: why the tool cannot work on this platform (``compat.why_unsupported``), or
            None when it can; ``build_registry`` leaves such a tool out and logs the reason.
        on_register: called once the tool is registered: start-up work that only a served tool
            needs (the exec tools probe their sandbox), so a tool left out costs nothing.
        on_session_start: awaited in the background with a ``CallContext.session_id`` when a
            client connection is first seen (``Registry.start_session``): work its first call
            would wait for, done ahead (the exec tools start the connection's sandbox). Tools of
            one group may share one callback; it is called once per session.
        on_session_end: awaited with a ``CallContext.session_id`` when that MCP session ends
            (``Registry.end_session``): per-session state is released there. Tools of one group
            may share one callback; it is called once per session.
        resources: resources the tool's results link to (``Registry.read_resource``); tools of
            one group may share one source.
        builtin_name: the tool's own name when ``[tools.rename]`` serves it under ``name``
            (policies that name tools, such as ``[approval] require``, still match it); else None.
        changes: what a successful call changed, from its arguments (``changes_at``,
            ``changes_anything``); for the tools ``build_registry`` registers, the code tools' index
            is told (``Workspace.changes``), not for a spec a host registers itself. Required
            for a tool that is not read-only (the constructor raises ``TypeError`` without it);
            None for a read-only one.
        check: the call's policy checks without its effects (``Registry.check``): the same
            functions the handler calls first (path resolution, the execution policy), raising the
            same ``ToolError``; the approval step runs it before asking a person, so nobody is
            asked about a call the policy will refuse. None: only the arguments are checked.
        locate: for a command tool, where a bare program name in the call would run from when
            both the ``PATH`` directory and the program's real path lie outside every root
            (``[approval] trusted_commands`` trusts only such programs); None: no command tool.
        preview: how a call of the tool previews what it would do (``DRY_RUN``), or None.
        commands: for a command tool whose arguments are not its command lines (a declared
            tool), the command lines a call would run and where (``CommandsFn``), shown in the
            approval question; raises
            ``ToolError`` or pydantic's ``ValidationError`` for arguments the call would refuse.
            None: the question shows the ``commands`` argument, if any.
        pinned: for a tool whose call runs a file's content (runscript), what the approval question
            shows of that content and the arguments that pin it (``PinFn``); None: nothing to pin.
    """

    name: str
    title: str
    description: str
    args_model: type[ArgsT]
    result_model: type[ToolOutput]
    handler: Callable[[ArgsT, CallContext], Awaitable[ToolResult]]
    annotations: ToolAnnotations
    group: str = ""
    timeout_seconds: float | None = None
    unsupported: str | None = None
    on_register: Callable[[], None] | None = None
    on_session_start: SessionEndFn | None = None
    on_session_end: SessionEndFn | None = None
    resources: ResourceSource | None = None
    builtin_name: str | None = None
    check: CheckFn | None = None
    locate: LocateFn | None = None
    preview: Preview | None = None
    commands: CommandsFn | None = None
    pinned: PinFn | None = None
    changes: ChangesFn | None = None

    def __post_init__(self) -> None:
        if self.changes is None and not self.annotations.read_only:
            raise TypeError(
                f"tool {self.name!r} is not read-only: its spec declares what it changes (changes=)"
            )
        unknown = [f for f in getattr(self.changes, "fields", ()) if f not in self.args_model.model_fields]
        if unknown:
            raise TypeError(f"tool {self.name!r}: changes_at names {unknown}, not fields of its arguments")

    @property
    def meta(self) -> dict[str, Any]:
        """The tool's ``_meta`` in ``tools/list``: version and tags (``tool_meta``)."""
        return tool_meta(self.group, self.annotations)
