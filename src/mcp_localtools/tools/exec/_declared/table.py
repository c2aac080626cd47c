"""A ``[tools.custom.NAME]`` table (or the map given to ``Registry.register_map``), read and
checked: the keys, the name, the arguments' schema and the command templates.

Keys: ``description`` (required), ``title``, ``input_schema`` (``arguments.py``), exactly one of
``command`` (one template) and ``steps`` (a recipe: a list of templates run in order, stopping at
the first that fails), ``work_dir`` (relative to the base directory; inside the roots),
``timeout_seconds`` (per step), ``env`` (variables for its commands, checked like a call's
``env``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mcp_localtools.config import HARD_MAX_COMMANDS, HARD_MAX_TIMEOUT_SECONDS
from mcp_localtools.errors import ConfigError, InvalidArguments
from mcp_localtools.tools.exec._declared.arguments import Arguments, read_arguments
from mcp_localtools.tools.exec._declared.template import parse_template
from mcp_localtools.tools.exec._declared.words import Template

__all__ = ["DeclaredTool", "read_table"]

NAME = re.compile(r"^[a-z][a-z0-9]*$")
"""A tool name: lowercase letters and digits, no separators (``Registry.register`` refuses others)."""

MAX_DESCRIPTION_CHARS = 1024


class _Table(BaseModel):
    """The keys of a declared tool's table (unknown keys refused, types strict)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    description: Annotated[str, Field(min_length=1, max_length=MAX_DESCRIPTION_CHARS)]
    title: Annotated[str, Field(min_length=1, max_length=100)] | None = None
    input_schema: dict[str, Any] = {}
    command: list[Any] | None = None
    steps: Annotated[list[Any], Field(min_length=1, max_length=HARD_MAX_COMMANDS)] | None = None
    work_dir: str | None = None
    timeout_seconds: Annotated[int, Field(ge=1, le=HARD_MAX_TIMEOUT_SECONDS)] | None = None
    env: dict[str, str] = {}


@dataclass(frozen=True, slots=True)
class DeclaredTool:
    """A declared tool, checked.

    Attributes:
        name: its name.
        title: its title.
        description: the author's description.
        arguments: its arguments model and their types.
        steps: the templates it runs, in order (one for ``command``).
        work_dir: where they run (None: the base directory).
        timeout_seconds: each step's timeout (None: the policy's default).
        env: variables its commands get.
    """

    name: str
    title: str
    description: str
    arguments: Arguments
    steps: tuple[Template, ...]
    work_dir: str | None
    timeout_seconds: int | None
    env: dict[str, str]


def read_table(name: str, table: Any, where: str) -> DeclaredTool:
    """Read a declared tool's table.

    Args:
        name: the tool's name (the table's key).
        table: the table (a mapping, as TOML or ``register_map`` give it).
        where: its key path for messages (``tools.custom.tests``).

    Raises:
        ConfigError: a bad name, an unknown key or bad value, neither or both of ``command`` and
            ``steps``, a bad schema or template, or an argument no step uses (each message starts
            with the key path).
    """
    if not isinstance(name, str) or not NAME.match(name):
        raise ConfigError(f"{where}: a tool name is lowercase letters and digits, no separators ({name!r})")
    if not isinstance(table, Mapping):
        raise ConfigError(f"{where}: a table (description, input_schema, command or steps)")
    try:
        parsed = _Table.model_validate(dict(table))
    except ValidationError as exc:
        err = exc.errors()[0]
        key = ".".join(str(part) for part in err["loc"])
        reason = "unknown key" if err["type"] == "extra_forbidden" else err["msg"]
        raise ConfigError(f"{where}.{key}: {reason}") from None
    if (parsed.command is None) == (parsed.steps is None):
        raise ConfigError(
            f"{where}: give either command (one command) or steps (a recipe), not both or neither"
        )
    arguments = read_arguments(parsed.input_schema or {"type": "object"}, name, f"{where}.input_schema")
    templates = [(parsed.command, f"{where}.command")] if parsed.command is not None else []
    templates += [(step, f"{where}.steps[{index}]") for index, step in enumerate(parsed.steps or [])]
    steps = tuple(parse_template(raw, arguments.kinds, here) for raw, here in templates)
    used = set().union(*(step.slots() for step in steps))
    unused = sorted(set(arguments.kinds) - used)
    if unused:
        first = unused[0]
        raise ConfigError(
            f"{where}.input_schema.properties.{first}: no command uses it; write {{{first}}} where it goes"
        )
    _check_defaults(parsed.input_schema, arguments, steps, f"{where}.input_schema.properties")
    return DeclaredTool(
        name=name,
        title=parsed.title or f"Run {name}",
        description=parsed.description.strip(),
        arguments=arguments,
        steps=steps,
        work_dir=parsed.work_dir,
        timeout_seconds=parsed.timeout_seconds,
        env=dict(parsed.env),
    )


_STAND_INS: dict[str, Any] = {"string": "x", "integer": 1, "number": 1.0, "boolean": True, "array": ["x"]}
"""A harmless value of each type, for the arguments a default is rendered with."""


def _check_defaults(
    schema: Mapping[str, Any], arguments: Arguments, steps: tuple[Template, ...], where: str
) -> None:
    """Render every step with each argument's ``default`` (the others given harmless values, so
    every group is present) and refuse a default that a call leaving it out would be refused for
    (``default = "-n"`` before any ``--``).

    Raises:
        ConfigError: ``{where}.NAME.default: ...`` with the reason.
    """
    properties = schema.get("properties", {})
    for name, node in properties.items():
        if not isinstance(node, Mapping) or "default" not in node:
            continue
        values = {other: _STAND_INS[kind] for other, kind in arguments.kinds.items()}
        values[name] = node["default"]
        for step in steps:
            try:
                step.render(values, arguments.fixed)
            except InvalidArguments as exc:
                reason = exc.message.removeprefix(f"{name}: ").split("; ")[0]
                raise ConfigError(
                    f"{where}.{name}.default: {reason}: every call without {name} would be refused; "
                    "change the default or put a literal '--' before the word"
                ) from None
