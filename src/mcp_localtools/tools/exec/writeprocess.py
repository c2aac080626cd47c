"""writeprocess: send text to a background process's stdin (a REPL, a prompt), or close it."""

from __future__ import annotations

from functools import partial
from typing import Any

import anyio.to_thread
from pydantic import Field

from mcp_localtools import compat
from mcp_localtools.policy.commandrules import MAX_STDIN_BYTES
from mcp_localtools.results import ToolResult
from mcp_localtools.spec import CallContext, ToolAnnotations, ToolArgs, ToolSpec, changes_anything
from mcp_localtools.tools.exec._group import ExecGroup
from mcp_localtools.tools.exec._processview import ProcessState, state_of
from mcp_localtools.workspace import Workspace

__all__ = ["WriteProcessArgs", "spec"]


class WriteProcessArgs(ToolArgs):
    process_id: str = Field(alias="processID", description="The process, from startprocess.")
    text: str = Field("", description="Text to send, as UTF-8; add \\n to end a line.")
    close_stdin: bool = Field(False, description="Close stdin after the text (end of input).")


async def check_write_process(args: WriteProcessArgs, ctx: CallContext, *, group: ExecGroup) -> None:
    """writeprocess's ``ToolSpec.check``: the process is one of this session's.

    Raises:
        NotFound: no such process in this session.
        TooLarge: ``text`` is over the stdin limit.
    """
    group.processes.get(args.process_id, ctx.session_id)
    group.stdin_bytes(args.text)


async def write_process(args: WriteProcessArgs, ctx: CallContext, *, group: ExecGroup) -> ToolResult:
    """The writeprocess handler."""
    process = group.processes.get(args.process_id, ctx.session_id)
    data = group.stdin_bytes(args.text) or b""
    # A process that does not read blocks the write when the pipe is full: abandoned on cancel.
    await anyio.to_thread.run_sync(
        partial(process.write_stdin, data, close=args.close_stdin), abandon_on_cancel=True
    )
    result = ProcessState.model_validate(state_of(process))
    closed = "; stdin closed" if args.close_stdin else ""
    return ToolResult.of(result, text=f"sent {len(data)} bytes to {process.id}{closed}")


def spec(workspace: Workspace) -> ToolSpec[Any]:
    """The writeprocess tool of ``workspace``."""
    group = workspace.shared(ExecGroup.create)
    return ToolSpec(
        name="writeprocess",
        title="Write to a background process",
        description=(
            "Send text to the stdin of a process from startprocess (a REPL, a prompt; end lines with "
            f"\\n), at most {MAX_STDIN_BYTES} bytes a call; closeStdin=true ends its input. Read the "
            "answer with waitprocess or processoutput."
        ),
        args_model=WriteProcessArgs,
        result_model=ProcessState,
        handler=partial(write_process, group=group),
        check=partial(check_write_process, group=group),
        # Destructive: it types anything into a running shell or REPL a person may have approved.
        changes=changes_anything,
        annotations=ToolAnnotations(read_only=False, destructive=True, idempotent=False, open_world=True),
        unsupported=compat.why_unsupported(process_groups=True),
    )
