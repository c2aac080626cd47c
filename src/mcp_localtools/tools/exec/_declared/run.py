"""Running a declared tool: its steps' argvs, checked like runscript's commands, run one after
another in one exec session of the exec tools' sandbox (``ExecGroup.run``), stopping at the first
that fails.

Each step's argv goes to the process as it is (no shell reads it); the equivalent command line,
POSIX-quoted (``shlex.join``), is what the execution policy checks, what the approval question and
the audit log show, and what the result reports. Every step is checked before the first runs, so a
refused step means nothing ran.
"""

from __future__ import annotations

import shlex
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
from pydantic import Field

from mcp_localtools.errors import NotFound, ToolError
from mcp_localtools.policy.paths import ResolvedPath
from mcp_localtools.processes.environment import merged_env
from mcp_localtools.results import ToolResult, fit_within
from mcp_localtools.sandbox.backend import SandboxName
from mcp_localtools.spec import CallContext, ToolArgs, ToolOutput
from mcp_localtools.tools.exec._declared.table import DeclaredTool
from mcp_localtools.tools.exec._group import ExecGroup
from mcp_localtools.tools.exec._report import KeptStreams, RunReport, cut_reports, render_run, report_fields
from mcp_localtools.tools.exec._streaming import streaming

__all__ = ["DeclaredResult", "StepResult", "check_declared", "command_lines", "run_declared"]


class StepResult(RunReport):
    command: str = Field(description="The step's command line (POSIX-quoted; no shell ran it).")


class DeclaredResult(ToolOutput):
    work_dir: str = Field(description="Absolute working directory the steps ran in.")
    results: list[StepResult] = Field(description="One entry per step that ran, in order.")
    failed_step: int | None = Field(
        None,
        description="The step (1 = first) that failed (non-zero exit or timeout); later steps did not "
        "run. Absent when every step succeeded.",
    )
    skipped: int = Field(description="Steps not run because an earlier one failed.")
    sandbox: SandboxName = Field(
        description="How the steps were contained: bwrap, landlock, seatbelt, or off."
    )


@dataclass(frozen=True, slots=True)
class _Plan:
    """What a call will run, once every check passed."""

    argvs: list[list[str]]
    lines: list[str]
    env: dict[str, str]
    work: ResolvedPath
    timeout: float


def _programs(argvs: list[list[str]], search_path: str | None) -> list[list[str]]:
    """``argvs`` with each bare program name replaced by its path on ``search_path`` (a program
    given with a ``/`` runs as written, from the working directory). Blocking: a worker thread.

    Raises:
        NotFound: a program is not on ``search_path``.
    """
    found: list[list[str]] = []
    for argv in argvs:
        program = argv[0]
        if "/" not in program and "\\" not in program:
            path = shutil.which(program, path=search_path)
            if path is None:
                raise NotFound(f"{program} not found on PATH; install it or name it by its full path")
            program = path
        found.append([program, *argv[1:]])
    return found


async def _plan(args: ToolArgs, tool: DeclaredTool, group: ExecGroup) -> _Plan:
    """Check a call (the arguments into every step's argv, the tool's env, its working directory,
    each program, the execution policy on each step's command line) and resolve what it will run.

    Raises:
        ToolError: the first check that fails.
    """
    argvs = _argvs(args.model_dump(by_alias=True), tool, group)
    lines = [shlex.join(argv) for argv in argvs]
    await group.sandbox.ready()
    call_env = group.policy.check_env(tool.env, writable=group.writable_roots())
    env = merged_env(await group.environment.base(), call_env)

    def preflight() -> tuple[ResolvedPath, list[list[str]]]:  # file system and PATH: a thread
        work = group.work_dir(None if tool.work_dir is None else _under(group, tool.work_dir))
        return work, _programs(argvs, env.get("PATH"))

    work, resolved = await anyio.to_thread.run_sync(preflight)
    for number, line in enumerate(lines, start=1):
        try:
            await group.check_command_async(line, "sh")
        except ToolError as exc:
            where = f"step {number}: " if len(lines) > 1 else ""
            raise type(exc)(f"{where}{exc.message} (refused before the call ran: nothing ran)") from exc
    return _Plan(resolved, lines, env, work, group.policy.timeout_for(tool.timeout_seconds))


def _argvs(values: dict[str, Any], tool: DeclaredTool, group: ExecGroup | None = None) -> list[list[str]]:
    """Each step's argv for the validated wire ``values``; with ``group``, an environment
    assignment an argument makes after a wrapper (``env {x} prog``) is checked by its policy
    like a call's ``env``.

    Raises:
        InvalidArguments: a word is refused (``Template.render``).
        CommandRefused: such an assignment sets a variable the policy refuses.
    """

    def check_env(env: Mapping[str, str]) -> object:
        assert group is not None
        return group.policy.check_env(env, writable=group.writable_roots())

    checked = None if group is None else check_env
    return [step.render(values, tool.arguments.fixed, checked) for step in tool.steps]


def _under(group: ExecGroup, work_dir: str) -> str:
    """``work_dir`` taken against the base directory when relative."""
    return str(group.paths.base_dir / Path(work_dir))


def command_lines(
    arguments: Mapping[str, Any], *, tool: DeclaredTool, group: ExecGroup
) -> tuple[list[str], str | None]:
    """What a call with the wire ``arguments`` would run (``ToolSpec.commands``, for the approval
    question): each step's command line, POSIX-quoted, and the tool's working directory (None
    when it has none: the base directory).

    Raises:
        pydantic.ValidationError: the arguments do not fit the tool's schema.
        ToolError: a step's words are refused (``render``).
    """
    values = tool.arguments.model.model_validate(dict(arguments)).model_dump(by_alias=True)
    return [shlex.join(argv) for argv in _argvs(values, tool)], None if tool.work_dir is None else _under(
        group, tool.work_dir
    )


async def check_declared(args: ToolArgs, ctx: CallContext, *, tool: DeclaredTool, group: ExecGroup) -> None:
    """A declared tool's checks without running anything (``ToolSpec.check``).

    Raises:
        ToolError: what the handler would raise for the first refused check.
    """
    await _plan(args, tool, group)


async def run_declared(
    args: ToolArgs, ctx: CallContext, *, tool: DeclaredTool, group: ExecGroup
) -> ToolResult:
    """A declared tool's handler: run its steps in order, stop at the first that fails.

    Raises:
        ToolError: a check refused the call (nothing ran), or the sandbox cannot start.
    """
    plan = await _plan(args, tool, group)
    kept = KeptStreams(group.outputs, ctx.session_id, links=group.config.resource_links)
    steps: list[StepResult] = []
    failed: int | None = None
    await group.prepare(ctx.session_id, plan.work.path)
    async with streaming(ctx, group.policy.max_output_bytes) as streamer:
        for number, (argv, line) in enumerate(zip(plan.argvs, plan.lines, strict=True), start=1):
            if streamer is not None:
                streamer.command(line)
            forward = streamer.feed if streamer is not None else None
            recorder = group.outputs.recorder(forward)
            kept.recorders.append(recorder)
            outcome = await group.run(
                argv,
                cwd=plan.work.path,
                env=plan.env,
                stdin=None,
                timeout=plan.timeout,
                on_output=recorder.feed if recorder is not None else forward,
                owner=ctx.session_id,
            )
            fields = report_fields(outcome, group.sandbox, ctx.session_id)
            steps.append(StepResult.model_validate({"command": line, **fields}))
            if outcome.exit_code != 0 or outcome.timed_out:
                failed = number
                break
    return _result(steps, failed, plan, kept, group)


def _result(
    steps: list[StepResult], failed: int | None, plan: _Plan, kept: KeptStreams, group: ExecGroup
) -> ToolResult:
    budget = group.limits.max_result_chars

    def build(payload: int) -> ToolResult:
        shown, links = cut_reports(steps, [step.command for step in steps], kept, payload)
        result = DeclaredResult(
            work_dir=str(plan.work.path),
            results=shown,
            failed_step=failed,
            skipped=len(plan.argvs) - len(steps),
            sandbox=group.sandbox.name,
        )
        return ToolResult.of(result, *links, text=_render(result, plan.timeout))

    # The output goes twice (text and structuredContent): about half the budget each.
    return fit_within(build, budget, budget // 2 - 1000)


def _render(result: DeclaredResult, timeout: float) -> str:
    parts = [render_run(step.command, step, timeout=timeout) for step in result.results]
    if result.failed_step is not None and len(result.results) + result.skipped > 1:
        parts.append(
            f"[step {result.failed_step} failed; {result.skipped} later step(s) not run]"
            if result.skipped
            else f"[step {result.failed_step} (the last) failed]"
        )
    return "\n".join(parts)


def describe(tool: DeclaredTool) -> dict[str, Any]:
    """The parts of a declared tool's ``ToolSpec`` that are text (``description``, ``title``)."""
    runs = " then ".join(f"`{step.shown()}`" for step in tool.steps)
    stop = ", stopping at the first that fails" if len(tool.steps) > 1 else ""
    return {"title": tool.title, "description": f"{tool.description} Runs {runs}{stop}."}
