"""stopprocess: SIGTERM to a background process's whole process group, SIGKILL after a grace
period; its output stays readable unless ``remove`` forgets it."""

from __future__ import annotations

from functools import partial
from typing import Any

import anyio.to_thread
from pydantic import Field

from mcp_localtools import compat
from mcp_localtools.policy.commandrules import KILL_GRACE_SECONDS
from mcp_localtools.results import ToolResult
from mcp_localtools.spec import CallContext, ToolAnnotations, ToolArgs, ToolSpec, changes_anything
from mcp_localtools.tools.exec._group import ExecGroup
from mcp_localtools.tools.exec._processview import ProcessState, state_of
from mcp_localtools.workspace import Workspace

__all__ = ["StopProcessArgs", "spec"]


class StopProcessArgs(ToolArgs):
    process_id: str = Field(alias="processID", description="The process, from startprocess.")
    grace_seconds: float = Field(
        KILL_GRACE_SECONDS, ge=0, le=60, description="Seconds between SIGTERM and SIGKILL."
    )
    remove: bool = Field(False, description="Also forget it and its output (frees a slot of the session).")


async def check_stop_process(args: StopProcessArgs, ctx: CallContext, *, group: ExecGroup) -> None:
    """stopprocess's ``ToolSpec.check``: the process is one of this session's.

    Raises:
        NotFound: no such process in this session.
    """
    group.processes.get(args.process_id, ctx.session_id)


async def stop_process(args: StopProcessArgs, ctx: CallContext, *, group: ExecGroup) -> ToolResult:
    """The stopprocess handler."""
    process = group.processes.get(args.process_id, ctx.session_id)
    was_running = process.running
    await anyio.to_thread.run_sync(group.processes.stop, process, args.grace_seconds)
    if args.remove:
        group.processes.remove(process)
    result = ProcessState.model_validate(state_of(process))
    how = "stopped" if was_running else "had already exited"
    removed = "; removed" if args.remove else "; its output stays readable (remove=true forgets it)"
    return ToolResult.of(result, text=f"{process.id} {how} (exit {result.exit_code}){removed}")


def spec(workspace: Workspace) -> ToolSpec[Any]:
    """The stopprocess tool of ``workspace``."""
    group = workspace.shared(ExecGroup.create)
    return ToolSpec(
        name="stopprocess",
        title="Stop a background process",
        description=(
            "Stop a process from startprocess and everything it started (its process group): SIGTERM, "
            "then SIGKILL after graceSeconds. Its output stays readable with processoutput unless "
            "remove=true."
        ),
        args_model=StopProcessArgs,
        result_model=ProcessState,
        handler=partial(stop_process, group=group),
        check=partial(check_stop_process, group=group),
        changes=changes_anything,
        annotations=ToolAnnotations(read_only=False, destructive=True, idempotent=True, open_world=False),
        unsupported=compat.why_unsupported(process_groups=True),
    )
