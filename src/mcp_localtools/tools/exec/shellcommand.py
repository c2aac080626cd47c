"""shellcommand: run shell commands, with sessions, ``stdin``, ``timeoutSeconds``, progress
notifications, cancellation, and partial results when a later command is refused.

Commands run one after another, each in a fresh shell process (so ``cd`` and ``export`` do not
carry over). Before anything runs the call is validated: commands (blank ones dropped, at least
one, at most the maximum), session (known), env (names and sizes), working directory (inside the
roots), shell (installed). Each command is then checked by the execution policy just before it
runs; when a later command is refused, the results of those that ran are returned with an error
entry for the refused one, and the call is an error result (the seed discarded those results).
By default the call stops after the first command that fails or times out; ``executeParallel``
keeps going.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

import anyio
import anyio.to_thread
from pydantic import Field

from mcp_localtools import compat
from mcp_localtools.config import HARD_MAX_COMMANDS, HARD_MAX_TIMEOUT_SECONDS, ShellName
from mcp_localtools.errors import InvalidArguments, NotFound, PolicyViolation, ToolError
from mcp_localtools.policy.paths import ResolvedPath
from mcp_localtools.processes.environment import merged_env
from mcp_localtools.processes.sessions import Session
from mcp_localtools.processes.shells import Shell, command_argv, resolve_shell
from mcp_localtools.results import ErrorInfo, TextContent, ToolResult, dump_model, fit_within
from mcp_localtools.sandbox.backend import SandboxName
from mcp_localtools.spec import CallContext, ToolArgs, ToolOutput, ToolSpec, changes_anything
from mcp_localtools.tools.exec._described import commands_sentence, with_approval_note
from mcp_localtools.tools.exec._envarg import EnvArgument, env_field
from mcp_localtools.tools.exec._group import EXEC_ANNOTATIONS, ExecGroup
from mcp_localtools.tools.exec._report import (
    KeptStreams,
    RunReport,
    cut_command,
    cut_reports,
    render_run,
    report_fields,
)
from mcp_localtools.tools.exec._streaming import streaming
from mcp_localtools.units import size_text
from mcp_localtools.workspace import Workspace

__all__ = ["CommandResult", "ShellCommandArgs", "ShellCommandResult", "shell_command", "spec"]


class ShellCommandArgs(ToolArgs):
    commands: list[str] = Field(
        min_length=1,
        max_length=HARD_MAX_COMMANDS,
        description="Each runs in a fresh shell (cd/export do not carry over).",
    )
    work_dir: str | None = Field(
        None,
        description="Default: the session's, else the base directory.",
    )
    env: EnvArgument = env_field("Kept in the session.")
    shell: ShellName = Field("auto", description="`auto`: the user's shell.")
    execute_parallel: bool = Field(
        False,
        description="Not concurrency: true runs all; false stops at the first failure.",
    )
    session_id: str = Field(
        "",
        alias="sessionID",
        description="An earlier call's, to reuse its workDir and env; empty starts one.",
    )
    stdin: str | None = Field(None, description="Piped to each command; default none (EOF).")
    timeout_seconds: int | None = Field(
        None,
        ge=1,
        le=HARD_MAX_TIMEOUT_SECONDS,
        description="Per command.",
    )


class CommandResult(RunReport):
    command: str = Field(description="The command as run (trimmed).")
    work_dir: str = Field(description="Absolute working directory it ran in.")
    shell: str = Field(description="Shell name.")
    shell_path: str = Field(description="Absolute path of the shell binary.")
    error: str | None = Field(None, description="Why the command was refused; it did not run.")


class ShellCommandResult(ToolOutput):
    session_id: str = Field(
        alias="sessionID", description="Session id; pass it back to keep workDir and env."
    )
    work_dir: str = Field(description="Absolute working directory of the call.")
    timeout_seconds: float = Field(description="Timeout each command had, in seconds.")
    results: list[CommandResult] = Field(
        description="One entry per command that ran (or was refused), in order."
    )
    skipped: int = Field(
        description="Commands not run because an earlier one failed (executeParallel=false)."
    )
    sandbox: SandboxName = Field(
        description="How the commands were contained: bwrap, landlock, seatbelt, or off."
    )


@dataclass(frozen=True, slots=True)
class _Plan:
    """What a shellcommand call will do, once its arguments passed every check but the commands'."""

    commands: list[str]
    session: Session | None
    call_env: dict[str, str | None]
    env: dict[str, str]
    work: ResolvedPath
    shell: Shell
    stdin: bytes | None
    timeout: float


async def _plan(args: ShellCommandArgs, ctx: CallContext, group: ExecGroup) -> _Plan:
    """Check the call (commands given, session known, env, working directory, shell, stdin) and
    resolve what it will run with. Raises the ``ToolError`` of the first check that fails."""
    policy = group.policy
    commands = [command for command in args.commands if command.strip()]
    if not commands:
        raise InvalidArguments("commands is required: give at least one non-blank command")
    if len(commands) > policy.max_commands:
        raise InvalidArguments(f"too many commands: {len(commands)} (max {policy.max_commands})")
    session = group.sessions.get(args.session_id, ctx.session_id) if args.session_id else None
    if args.session_id and session is None:
        raise NotFound(
            f"unknown sessionID: {args.session_id} (expired or evicted); "
            "omit sessionID to start a new session"
        )
    await group.sandbox.ready()
    call_env = policy.check_env(args.env, writable=group.writable_roots())
    stored = session.work_dir if session is not None else None
    defaults = await group.environment.defaults()
    env = merged_env(group.environment.base_of(defaults), session.env if session else {}, call_env)

    def preflight() -> tuple[ResolvedPath, Shell]:  # file system and PATH lookups: a worker thread
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
    stdin = group.stdin_bytes(args.stdin)
    return _Plan(
        commands, session, call_env, env, work, shell, stdin, policy.timeout_for(args.timeout_seconds)
    )


async def check_call(args: ShellCommandArgs, ctx: CallContext, *, group: ExecGroup) -> None:
    """shellcommand's checks without running anything (``ToolSpec.check``): the call's own checks
    and the execution policy on every command, as the handler applies them.

    Raises:
        ToolError: what the handler would raise or report for the first refused check; for a
            refused command the message adds that none of the call's commands ran.
    """
    plan = await _plan(args, ctx, group)
    for index, raw in enumerate(plan.commands):
        try:
            await group.check_command_async(raw, plan.shell.dialect, what=f"commands[{index}]")
        except ToolError as exc:
            where = "" if f"commands[{index}]" in exc.message else f"commands[{index}]: "
            raise type(exc)(f"{where}{exc.message} (refused before the call ran: nothing ran)") from exc


async def locate(args: ShellCommandArgs, ctx: CallContext, name: str, *, group: ExecGroup) -> str | None:
    """Where this call's commands would run the bare program ``name`` from, on the ``PATH`` they
    get (the server's, the session's or the call's ``env``), when it lies outside every root
    (``ToolSpec.locate``, ``ExecGroup.program_outside_roots``).

    Raises:
        ToolError: the call would be refused (``check_call``).
    """
    plan = await _plan(args, ctx, group)
    return await anyio.to_thread.run_sync(group.program_outside_roots, name, plan.env.get("PATH"))


async def shell_command(args: ShellCommandArgs, ctx: CallContext, *, group: ExecGroup) -> ToolResult:
    """The shellcommand handler."""
    policy = group.policy
    plan = await _plan(args, ctx, group)
    commands, session, call_env, env = plan.commands, plan.session, plan.call_env, plan.env
    work, shell, stdin, timeout = plan.work, plan.shell, plan.stdin, plan.timeout

    created = session is None
    if session is None:
        session = group.sessions.create(ctx.session_id)
    group.sessions.update(session, work_dir=work.path if args.work_dir is not None else None, env=call_env)
    results: list[CommandResult] = []
    kept = KeptStreams(group.outputs, ctx.session_id, links=group.config.resource_links)
    refusal: ToolError | None = None
    skipped = 0
    try:
        await group.prepare(ctx.session_id, work.path)  # the connection's sandbox, if not started ahead
        # With a streamer the commands run in a task group, which wraps what its body raises in
        # an ExceptionGroup: the refusal of a command is kept in ``refusal`` and raised after.
        async with streaming(ctx, policy.max_output_bytes) as streamer:
            for index, raw in enumerate(commands):
                try:
                    command = await group.check_command_async(raw, shell.dialect, what=f"commands[{index}]")
                except ToolError as exc:
                    refusal = exc
                    if results:
                        results.append(_refused(raw.strip(), exc, work.path, shell.name, shell.path))
                    break
                if streamer is not None:
                    streamer.command(command)
                forward = streamer.feed if streamer is not None else None
                recorder = group.outputs.recorder(forward)
                kept.recorders.append(recorder)
                outcome = await group.run(
                    command_argv(shell, command),
                    cwd=work.path,
                    env=env,
                    stdin=stdin,
                    timeout=timeout,
                    on_output=recorder.feed if recorder is not None else forward,
                    owner=ctx.session_id,
                )
                results.append(
                    CommandResult.model_validate(
                        {
                            "command": command,
                            "work_dir": str(work.path),
                            "shell": shell.name,
                            "shell_path": shell.path,
                            **report_fields(outcome, group.sandbox, ctx.session_id),
                        }
                    )
                )
                if (outcome.exit_code != 0 or outcome.timed_out) and not args.execute_parallel:
                    skipped = len(commands) - index - 1
                    break
    finally:
        if created and not results:  # a failed call leaves no session behind
            group.sessions.delete(session.id)
    if refusal is not None and not results:
        raise refusal
    budget = group.limits.max_result_chars

    def build(payload: int) -> ToolResult:
        shown, links = cut_reports(results, [entry.command for entry in results], kept, payload)
        # Each command is echoed in both copies: together they take at most about a quarter of
        # the payload, the rest is left to the output.
        echo = payload // (4 * max(len(shown), 1))
        shown = [
            entry.model_copy(update={"command": cut_command(entry.command, echo)})
            if len(entry.command) > echo
            else entry
            for entry in shown
        ]
        result = ShellCommandResult(
            session_id=session.id,
            work_dir=str(work.path),
            timeout_seconds=timeout,
            results=shown,
            skipped=skipped,
            sandbox=group.sandbox.name,
        )
        text = _render(result)
        if refusal is None:
            return ToolResult.of(result, *links, text=text)
        ran = len(results) - 1
        plural = "s" if ran != 1 else ""
        message = f"{refusal.message} (refused after {ran} earlier command{plural} ran; see their results)"
        return ToolResult(
            content=(TextContent(text + "\n" + message), *links),
            structured=dump_model(result),
            error=ErrorInfo(refusal.code, message, policy=isinstance(refusal, PolicyViolation)),
        )

    # The output goes twice (text and structuredContent): about half the budget each.
    return fit_within(build, budget, budget // 2 - 1000)


def _refused(command: str, exc: ToolError, work_dir: Any, shell: str, shell_path: str) -> CommandResult:
    return CommandResult(
        command=command,
        work_dir=str(work_dir),
        shell=shell,
        shell_path=shell_path,
        exit_code=None,
        timed_out=False,
        duration_ms=0,
        stdout="",
        stderr="",
        stdout_truncated=False,
        stderr_truncated=False,
        stdout_bytes=0,
        stderr_bytes=0,
        error=exc.message,
    )


def _render(result: ShellCommandResult) -> str:
    parts = [f"session {result.session_id} in {result.work_dir}"]
    for entry in result.results:
        if entry.error is not None:
            parts.append(f"$ {entry.command}\n[refused: {entry.error}]")
        else:
            parts.append(render_run(entry.command, entry, timeout=result.timeout_seconds))
    if result.skipped:
        parts.append(
            f"[{result.skipped} later command(s) not run; pass executeParallel=true to run them anyway]"
        )
    return "\n".join(parts)


def spec(workspace: Workspace) -> ToolSpec[Any]:
    """The shellcommand tool, bound to ``workspace``."""
    group = workspace.shared(ExecGroup.create)
    policy = group.policy
    described = ToolSpec(
        name="shellcommand",
        title="Run shell commands",
        description=(
            f"Run shell commands in order. Each: timeout {policy.timeout_seconds:g} s (up to "
            f"{policy.max_timeout_seconds:g}); stdout and stderr kept to "
            f"{size_text(policy.max_output_bytes)} each, head and tail shown, a cut stream's full output "
            "at stdoutURI; its processes stopped when it ends (for a server or watcher that must keep "
            "running use startprocess). "
            f"{commands_sentence(group.config)} {group.containment()}"
        ),
        args_model=ShellCommandArgs,
        result_model=ShellCommandResult,
        handler=partial(shell_command, group=group),
        check=partial(check_call, group=group),
        locate=partial(locate, group=group),
        changes=changes_anything,
        annotations=EXEC_ANNOTATIONS,
        timeout_seconds=group.call_timeout(policy.max_commands),
        unsupported=compat.why_unsupported(process_groups=True),
        on_register=group.sandbox.start,
        on_session_start=group.warm,
        on_session_end=group.end_session,
        resources=group.outputs,
    )
    return with_approval_note(described, workspace.config.approval)
