"""processoutput: a background process's output since the last read (or from a byte offset), in
pages within the result budget, stdout and stderr apart, and its exit status once it has ended.
Output of a finished process stays readable until stopprocess removes it."""

from __future__ import annotations

from functools import partial
from typing import Any

from pydantic import Field

from mcp_localtools import compat
from mcp_localtools.results import ToolResult, fit_within
from mcp_localtools.spec import READ_ONLY, CallContext, ToolArgs, ToolSpec
from mcp_localtools.tools.exec._group import ExecGroup
from mcp_localtools.tools.exec._processview import ProcessOutput, page_bytes, read_output, render_output
from mcp_localtools.workspace import Workspace

__all__ = ["ProcessOutputArgs", "spec"]


class ProcessOutputArgs(ToolArgs):
    process_id: str = Field(alias="processID", description="The process, from startprocess.")
    stdout_offset: int | None = Field(
        None, ge=0, description="Byte offset to read stdout from (default: where the last read ended)."
    )
    stderr_offset: int | None = Field(
        None, ge=0, description="Byte offset to read stderr from (default: where the last read ended)."
    )


async def process_output(args: ProcessOutputArgs, ctx: CallContext, *, group: ExecGroup) -> ToolResult:
    """The processoutput handler."""
    process = group.processes.get(args.process_id, ctx.session_id)
    budget = group.limits.max_result_chars

    def build(payload: int) -> ToolResult:
        # Re-reading a page is harmless: the offsets are the call's, not advanced until it fits.
        result = read_output(
            process, stdout_offset=offsets[0], stderr_offset=offsets[1], max_bytes=page_bytes(payload)
        )
        return ToolResult.of(result, text=render_output(result, ""))

    with process.lock:
        offsets = (
            process.read_at["stdout"] if args.stdout_offset is None else args.stdout_offset,
            process.read_at["stderr"] if args.stderr_offset is None else args.stderr_offset,
        )
    return fit_within(build, budget, budget)


def spec(workspace: Workspace) -> ToolSpec[Any]:
    """The processoutput tool of ``workspace``."""
    group = workspace.shared(ExecGroup.create)
    return ToolSpec(
        name="processoutput",
        title="Read a background process's output",
        description=(
            "Output of a process from startprocess since the last read (or from stdoutOffset/"
            "stderrOffset), stdout and stderr apart, in pages (more=true: call again), and its exit "
            f"code once it ended. The most recent {group.config.process_output_bytes} bytes of each "
            "stream are kept; lostBytes counts what was older."
        ),
        args_model=ProcessOutputArgs,
        result_model=ProcessOutput,
        handler=partial(process_output, group=group),
        annotations=READ_ONLY,
        unsupported=compat.why_unsupported(process_groups=True),
    )
