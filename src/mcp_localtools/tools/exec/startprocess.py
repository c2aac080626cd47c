"""startprocess: start a long-running command (a dev server, a watcher, a REPL) and return at once
with its processID, or once a line of its output matches ``waitFor``.

It runs like a shellcommand command (same execution policy, sandbox, exec session, env and shell),
but in the background: it outlives the call, its output is kept (the most recent
``[exec] process_output_bytes`` of each stream) for processoutput and waitprocess, and it is stopped
by stopprocess, when the MCP session ends, when idle for ``process_idle_seconds``, or at server
exit.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

import anyio
import anyio.to_thread
from pydantic import Field

from mcp_localtools import compat
from mcp_localtools.config import HARD_MAX_TIMEOUT_SECONDS, ShellName
from mcp_localtools.errors import FileSystemError, NotFound
from mcp_localtools.policy.paths import ResolvedPath
from mcp_localtools.processes.environment import merged_env
from mcp_localtools.processes.sessions import Session
from mcp_localtools.processes.shells import Shell, command_argv, resolve_shell
from mcp_localtools.results import ToolResult, fit_within
from mcp_localtools.search.regex import compile_path_regex
from mcp_localtools.spec import CallContext, ToolArgs, ToolSpec, changes_anything
from mcp_localtools.tools.exec._described import with_approval_note
from mcp_localtools.tools.exec._envarg import EnvArgument, env_field
from mcp_localtools.tools.exec._group import EXEC_ANNOTATIONS, ExecGroup
from mcp_localtools.tools.exec._processview import (
    ProcessOutput,
    buffering_hint,
    page_bytes,
    read_output,
    render_output,
    wait_for_line,
)
from mcp_localtools.workspace import Workspace

__all__ = ["StartProcessArgs", "StartProcessResult", "spec"]


class StartProcessArgs(ToolArgs):
    command: str = Field(description="One shell command to run in the background ('&' is not needed).")
    work_dir: str | None = Field(
        None, description="Working directory inside the roots (default: the session's)."
    )
    env: EnvArgument = env_field("Environment variables; also stored in the exec session.")
    session_id: str | None = Field(
        None, alias="sessionID", description="Exec session (from shellcommand or startprocess) to run in."
    )
    shell: ShellName = Field("auto", description="Shell to run the command with.")
    wait_for: str | None = Field(
        None, description="RE2 regex: return once a line of stdout or stderr matches (e.g. 'listening on')."
    )
    timeout_seconds: float = Field(
        30, ge=0.01, le=HARD_MAX_TIMEOUT_SECONDS, description="Longest to wait for waitFor, in seconds."
    )
    tty: bool = Field(
        False, description="Run under a pseudo-terminal (programs that buffer a pipe's output write at once)."
    )


class StartProcessResult(ProcessOutput):
    session_id: str = Field(alias="sessionID", description="Exec session it runs in.")
    matched_line: str | None = Field(None, description="The line that matched waitFor.")
    wait_timed_out: bool = Field(False, description="True when waitFor did not match within timeoutSeconds.")


@dataclass(frozen=True, slots=True)
class _Plan:
    """What a startprocess call will start, once it passed every check."""

    pattern: Any
    session: Session | None
    call_env: dict[str, str | None]
    env: dict[str, str]
    work: ResolvedPath
    shell: Shell
    command: str


async def _plan(args: StartProcessArgs, ctx: CallContext, group: ExecGroup) -> _Plan:
    """Check the call (``waitFor``, session, env, working directory, shell, the execution policy
    on the command) and resolve what it will start.

    Raises:
        ToolError: the first check that fails.
    """
    policy = group.policy
    pattern = (
        compile_path_regex(args.wait_for, case_sensitive=True, fixed_strings=False) if args.wait_for else None
    )
    session = group.sessions.get(args.session_id, ctx.session_id) if args.session_id else None
    if args.session_id and session is None:
        raise NotFound(f"unknown sessionID: {args.session_id} (expired or evicted); omit sessionID")
    await group.sandbox.ready()
    call_env = policy.check_env(args.env, writable=group.writable_roots())
    defaults = await group.environment.defaults()
    env = merged_env(group.environment.base_of(defaults), session.env if session else {}, call_env)
    stored = session.work_dir if session is not None else None

    def preflight() -> tuple[ResolvedPath, Shell]:
        work = group.work_dir(args.work_dir if args.work_dir is not None else stored)
        shell = resolve_shell(
            args.shell,
            default=group.config.default_shell,
            detected=defaults.shell,
            env=env,
            find=group.shells.find,
        )
        return work, shell

    work, shell = await anyio.to_thread.run_sync(preflight)
    command = await group.check_command_async(args.command, shell.dialect)
    return _Plan(pattern, session, call_env, env, work, shell, command)


async def check_call(args: StartProcessArgs, ctx: CallContext, *, group: ExecGroup) -> None:
    """startprocess's checks without starting anything (``ToolSpec.check``).

    Raises:
        ToolError: what the handler would raise for the first refused check.
    """
    await _plan(args, ctx, group)


async def start_process(args: StartProcessArgs, ctx: CallContext, *, group: ExecGroup) -> ToolResult:
    """The startprocess handler."""
    plan = await _plan(args, ctx, group)
    pattern, session, call_env, env = plan.pattern, plan.session, plan.call_env, plan.env
    work, shell, command = plan.work, plan.shell, plan.command
    if session is None:
        session = group.sessions.create(ctx.session_id)
    group.sessions.update(session, work_dir=work.path if args.work_dir is not None else None, env=call_env)
    start = await group.background(
        command_argv(shell, command), cwd=work.path, env=env, owner=ctx.session_id, tty=args.tty
    )
    try:
        process = await anyio.to_thread.run_sync(
            partial(
                group.processes.start,
                start.argv,
                owner=ctx.session_id,
                command=command,
                shell=shell.name,
                cwd=work.path,
                env=start.env,
                sandbox=start.sandbox,
                tty=args.tty,
            )
        )
    except OSError as exc:
        raise FileSystemError(f"cannot start {shell.path}: {exc.strerror or exc}") from exc
    matched, timed_out = None, False
    if pattern is not None:

        async def report(message: str) -> None:
            await ctx.report_progress(0, None, message)

        matched, timed_out = await wait_for_line(process, pattern, args.timeout_seconds, report)
    budget = group.limits.max_result_chars

    def build(payload: int) -> ToolResult:
        output = read_output(process, stdout_offset=0, stderr_offset=0, max_bytes=page_bytes(payload))
        result = StartProcessResult.model_validate(
            {
                **output.model_dump(),
                "session_id": session.id,
                "matched_line": matched,
                "wait_timed_out": timed_out,
            }
        )
        head = f"started {process.id} in {work.path} (session {session.id}): $ {result.command}"
        if pattern is not None:
            head += (
                f"\n[waitFor matched: {matched}]"
                if matched is not None
                else (
                    f"\n[waitFor did not match within {args.timeout_seconds:g} s]{buffering_hint(result)}"
                    if timed_out
                    else "\n[exited before waitFor matched]"
                )
            )
        return ToolResult.of(result, text=render_output(result, head))

    return fit_within(build, budget, budget)


def spec(workspace: Workspace) -> ToolSpec[Any]:
    """The startprocess tool of ``workspace``."""
    group = workspace.shared(ExecGroup.create)
    described = ToolSpec(
        name="startprocess",
        title="Start a background process",
        description=(
            "Start one command in the background (a dev server, a watcher, a REPL) and return its "
            "processID at once, or when a line of its output matches waitFor (RE2). Same policy, "
            "sandbox and exec session as shellcommand: its later commands reach a server it started on "
            "127.0.0.1. Read its output with processoutput, wait with "
            "waitprocess, send input with writeprocess, stop it with stopprocess. It is stopped when "
            f"the MCP session ends. At most {group.config.max_processes} per session. " + group.containment()
        ),
        args_model=StartProcessArgs,
        result_model=StartProcessResult,
        handler=partial(start_process, group=group),
        check=partial(check_call, group=group),
        changes=changes_anything,
        annotations=EXEC_ANNOTATIONS,
        timeout_seconds=HARD_MAX_TIMEOUT_SECONDS + 60,
        unsupported=compat.why_unsupported(process_groups=True),
        on_register=group.sandbox.start,
        on_session_start=group.warm,
        on_session_end=group.end_session,
    )
    return with_approval_note(described, workspace.config.approval)
