"""waitprocess: block until a background process exits, a new line of its output matches
``waitFor`` (RE2), or a timeout; returns the matching line and the output since the last read.
Progress notifications while waiting; cancellable."""

from __future__ import annotations

from functools import partial
from typing import Any

from pydantic import Field

from mcp_localtools import compat
from mcp_localtools.config import HARD_MAX_TIMEOUT_SECONDS
from mcp_localtools.results import ToolResult, fit_within
from mcp_localtools.search.regex import compile_path_regex
from mcp_localtools.spec import READ_ONLY, CallContext, ToolArgs, ToolSpec
from mcp_localtools.tools.exec._group import ExecGroup
from mcp_localtools.tools.exec._processview import (
    ProcessOutput,
    buffering_hint,
    page_bytes,
    read_output,
    render_output,
    wait_for_line,
)
from mcp_localtools.workspace import Workspace

__all__ = ["WaitProcessArgs", "WaitProcessResult", "spec"]


class WaitProcessArgs(ToolArgs):
    process_id: str = Field(alias="processID", description="The process, from startprocess.")
    wait_for: str | None = Field(
        None, description="RE2 regex: return once a new line of stdout or stderr matches (default: the exit)."
    )
    timeout_seconds: float = Field(
        60, ge=0.01, le=HARD_MAX_TIMEOUT_SECONDS, description="Longest to wait, in seconds."
    )


class WaitProcessResult(ProcessOutput):
    matched_line: str | None = Field(None, description="The line that matched waitFor.")
    timed_out: bool = Field(description="True when the wait ended at timeoutSeconds.")


async def wait_process(args: WaitProcessArgs, ctx: CallContext, *, group: ExecGroup) -> ToolResult:
    """The waitprocess handler."""
    pattern = (
        compile_path_regex(args.wait_for, case_sensitive=True, fixed_strings=False) if args.wait_for else None
    )
    process = group.processes.get(args.process_id, ctx.session_id)

    async def report(message: str) -> None:
        await ctx.report_progress(0, None, message)

    matched, timed_out = await wait_for_line(process, pattern, args.timeout_seconds, report)
    budget = group.limits.max_result_chars
    with process.lock:
        offsets = (process.read_at["stdout"], process.read_at["stderr"])

    def build(payload: int) -> ToolResult:
        output = read_output(
            process, stdout_offset=offsets[0], stderr_offset=offsets[1], max_bytes=page_bytes(payload)
        )
        result = WaitProcessResult.model_validate(
            {**output.model_dump(), "matched_line": matched, "timed_out": timed_out}
        )
        if matched is not None:
            head = f"[matched: {matched}]"
        elif timed_out:
            head = (
                f"[no match within {args.timeout_seconds:g} s]{buffering_hint(result)}"
                if pattern
                else f"[still running after {args.timeout_seconds:g} s]"
            )
        else:
            head = "[exited before a line matched]" if pattern else ""
        return ToolResult.of(result, text=render_output(result, head))

    return fit_within(build, budget, budget)


def spec(workspace: Workspace) -> ToolSpec[Any]:
    """The waitprocess tool of ``workspace``."""
    group = workspace.shared(ExecGroup.create)
    return ToolSpec(
        name="waitprocess",
        title="Wait for a background process",
        description=(
            "Wait until a process from startprocess exits, or until a new line of its output matches "
            "waitFor (RE2, e.g. 'listening on|ready'), or timeoutSeconds; returns the matching line and "
            "the output since the last read. Cancellable; sends progress while it waits."
        ),
        args_model=WaitProcessArgs,
        result_model=WaitProcessResult,
        handler=partial(wait_process, group=group),
        annotations=READ_ONLY,
        timeout_seconds=HARD_MAX_TIMEOUT_SECONDS + 30,
        unsupported=compat.why_unsupported(process_groups=True),
    )
