"""listprocesses: this MCP session's background processes with their command, status, runtime
and output sizes."""

from __future__ import annotations

from functools import partial
from typing import Any, Literal

from pydantic import Field

from mcp_localtools import compat
from mcp_localtools.results import ToolResult
from mcp_localtools.spec import READ_ONLY, CallContext, ToolArgs, ToolOutput, ToolSpec
from mcp_localtools.toolnames import served_text
from mcp_localtools.tools.exec._group import ExecGroup
from mcp_localtools.tools.exec._processview import ProcessState, state_of
from mcp_localtools.workspace import Workspace

__all__ = ["ListProcessesArgs", "ListProcessesResult", "spec"]


class ListProcessesArgs(ToolArgs):
    status: Literal["all", "running", "exited"] = Field("all", description="Which processes to list.")


class ListProcessesResult(ToolOutput):
    processes: list[ProcessState] = Field(description="This session's processes, oldest first.")


async def list_processes(args: ListProcessesArgs, ctx: CallContext, *, group: ExecGroup) -> ToolResult:
    """The listprocesses handler."""
    states = [ProcessState.model_validate(state_of(p)) for p in group.processes.of(ctx.session_id)]
    if args.status != "all":
        states = [state for state in states if state.status == args.status]
    lines = [
        f"{s.process_id}  {s.status if s.exit_code is None else f'exited {s.exit_code}'}  "
        f"{s.runtime_seconds:g} s  out {s.stdout_bytes} B  err {s.stderr_bytes} B  $ {s.command}"
        for s in states
    ]
    empty = "no background processes in this session (startprocess starts one)"
    text = "\n".join(lines) if lines else served_text(empty)
    return ToolResult.of(ListProcessesResult(processes=states), text=text)


def spec(workspace: Workspace) -> ToolSpec[Any]:
    """The listprocesses tool of ``workspace``."""
    group = workspace.shared(ExecGroup.create)
    return ToolSpec(
        name="listprocesses",
        title="List background processes",
        description=(
            "This session's processes from startprocess: command, status, exit code, runtime, output sizes."
        ),
        args_model=ListProcessesArgs,
        result_model=ListProcessesResult,
        handler=partial(list_processes, group=group),
        annotations=READ_ONLY,
        unsupported=compat.why_unsupported(process_groups=True),
    )
