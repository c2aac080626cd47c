"""Declared tools: command tools and recipes written as data, in ``[tools.custom.NAME]`` or
given to ``Registry.register_map``.

A declared tool is an exec tool like runscript: it runs through the exec group's execution
policy, sandbox and kept outputs (``ExecGroup``), is asked about under ``[approval] require =
["exec"]`` and audited like any call, and ``[tools]`` enables, disables, renames and profiles it
by its name (its group is ``exec``). Its parts: ``table`` (the keys), ``arguments`` (the JSON
Schema read into a pydantic model), ``template`` (words and placeholders, the injection rules),
``run`` (the handler).
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping
from functools import partial
from typing import Any

from mcp_localtools import compat
from mcp_localtools.errors import ConfigError
from mcp_localtools.spec import ToolSpec, changes_anything
from mcp_localtools.tools.exec._declared.run import (
    DeclaredResult,
    check_declared,
    command_lines,
    describe,
    run_declared,
)
from mcp_localtools.tools.exec._declared.table import DeclaredTool, read_table
from mcp_localtools.tools.exec._described import with_approval_note
from mcp_localtools.tools.exec._group import EXEC_ANNOTATIONS, ExecGroup
from mcp_localtools.workspace import Workspace

__all__ = ["DeclaredTool", "declared_spec", "declared_specs", "read_table"]

logger = logging.getLogger(__name__)


def declared_spec(
    workspace: Workspace, name: str, table: Mapping[str, Any], *, taken: Collection[str], where: str
) -> ToolSpec[Any]:
    """The spec of the declared tool ``name`` described by ``table``, bound to ``workspace``'s
    exec group.

    Args:
        workspace: the workspace whose exec policy, sandbox and roots the tool runs under.
        name: the tool's name.
        table: the table, as ``[tools.custom.NAME]`` holds it.
        taken: the built-in tools' names (a declared tool may not take one).
        where: the table's key path for messages.

    Raises:
        ConfigError: ``name`` is a built-in tool's, or the table is refused (``read_table``).
    """
    if name in taken:
        raise ConfigError(
            f"{where}: {name!r} is the name of a built-in tool; give the declared tool a name of its own"
        )
    tool = read_table(name, table, where)
    group = workspace.shared(ExecGroup.create)
    text = describe(tool)
    spec = ToolSpec(
        name=tool.name,
        group="exec",
        title=text["title"],
        description=text["description"] + " " + group.containment(),
        args_model=tool.arguments.model,
        result_model=DeclaredResult,
        handler=partial(run_declared, tool=tool, group=group),
        check=partial(check_declared, tool=tool, group=group),
        commands=partial(command_lines, tool=tool, group=group),
        changes=changes_anything,
        annotations=EXEC_ANNOTATIONS,
        timeout_seconds=group.call_timeout(len(tool.steps)),
        unsupported=compat.why_unsupported(process_groups=True),
        on_register=group.sandbox.start,
        on_session_start=group.warm,
        on_session_end=group.end_session,
        resources=group.outputs,
    )
    return with_approval_note(spec, workspace.config.approval)


def declared_specs(workspace: Workspace, taken: Collection[str]) -> list[ToolSpec[Any]]:
    """The specs of ``[tools.custom]`` of ``workspace``'s config, in the config's order.

    Raises:
        ConfigError: a table is refused (the message names its key path).
    """
    config = workspace.config
    tables = config.tools.custom
    if tables and not config.exec.enabled:
        logger.warning("tools.custom: %s not served: [exec] enabled is false", ", ".join(tables))
    return [
        declared_spec(workspace, name, table, taken=taken, where=f"tools.custom.{name}")
        for name, table in tables.items()
    ]
