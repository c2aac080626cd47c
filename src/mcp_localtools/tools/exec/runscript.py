"""runscript: run a script file by its extension's interpreter.

| extension | runs as |
|---|---|
| ``.sh`` | ``sh <script> <args>`` (no exec bit needed) |
| ``.bash`` ``.zsh`` ``.ksh`` ``.dash`` | the same-named shell |
| ``.py`` | ``python3 <script> <args>`` |
| ``.ps1`` | ``pwsh`` (else ``powershell``) ``-NoLogo ... -Command "& '<script>' '<args>'"`` |

Only ``[exec.scripts] allowed_extensions`` run (``""`` there allows extension-less files, which
then need a mapping and have none by default). The script is run directly from an argv, no shell
parses the arguments; the equivalent command line, quoted for the wrapper shell (POSIX single
quotes, PowerShell doubled single quotes), is what the execution policy checks and the result
reports. The script's own content is not inspected: a script can do anything a command can,
which is why the policy is a guardrail and not a sandbox.
"""

from __future__ import annotations

import hashlib
import shlex
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
from pydantic import Field

from mcp_localtools import compat
from mcp_localtools.config import HARD_MAX_TIMEOUT_SECONDS, ScriptsConfig
from mcp_localtools.errors import (
    ConfigError,
    Conflict,
    InvalidArguments,
    NotAFile,
    NotFound,
    UnsupportedContent,
)
from mcp_localtools.files.read import stat_path
from mcp_localtools.policy.commandrules import MAX_SCRIPT_ARG_BYTES, MAX_SCRIPT_ARGS
from mcp_localtools.policy.paths import ResolvedPath
from mcp_localtools.processes.environment import merged_env
from mcp_localtools.processes.shells import Shell, command_argv, first_found
from mcp_localtools.results import ToolResult, fit_within
from mcp_localtools.sandbox.backend import SandboxName
from mcp_localtools.spec import CallContext, ToolArgs, ToolSpec, changes_anything
from mcp_localtools.toolnames import served
from mcp_localtools.tools.exec._described import commands_sentence, with_approval_note
from mcp_localtools.tools.exec._envarg import EnvArgument, env_field
from mcp_localtools.tools.exec._group import EXEC_ANNOTATIONS, ExecGroup
from mcp_localtools.tools.exec._report import KeptStreams, RunReport, cut_reports, render_run, report_fields
from mcp_localtools.tools.exec._streaming import streaming
from mcp_localtools.workspace import Workspace

__all__ = [
    "INTERPRETERS",
    "RunScriptArgs",
    "RunScriptResult",
    "ScriptPolicy",
    "powershell_quote",
    "run_script",
    "script_command",
    "spec",
]

INTERPRETERS: dict[str, tuple[str, ...]] = {
    ".sh": ("sh",),
    ".bash": ("bash",),
    ".zsh": ("zsh",),
    ".ksh": ("ksh",),
    ".dash": ("dash",),
    ".py": ("python3",),
    ".ps1": ("pwsh", "powershell"),
}
"""The seed's default extension → interpreter policy: candidate programs, the first on PATH runs."""


@dataclass(frozen=True, slots=True)
class ScriptPolicy:
    """Which extensions run (normalised: lowercase, leading dot; ``""`` = no extension)."""

    allowed_extensions: frozenset[str]

    @classmethod
    def from_config(cls, config: ScriptsConfig) -> ScriptPolicy:
        """Raises: ConfigError: an entry contains a NUL byte or whitespace."""
        allowed = set()
        for index, raw in enumerate(config.allowed_extensions):
            text = raw.strip().lower()
            if "\x00" in text or any(ch.isspace() for ch in text):
                raise ConfigError(f"exec.scripts.allowed_extensions[{index}]: not an extension: {raw!r}")
            allowed.add("" if not text else text if text.startswith(".") else "." + text)
        return cls(frozenset(allowed))

    def interpreters(self, extension: str) -> tuple[str, ...]:
        """The candidate programs for ``extension`` (lowercase, leading dot, ``""`` for none).

        Raises:
            UnsupportedContent: the extension is not allowed or has no mapping.
        """
        if extension not in self.allowed_extensions:
            allowed = ", ".join(sorted(e or '""' for e in self.allowed_extensions))
            raise UnsupportedContent(f'script extension "{extension}" is not allowed; allowed: {allowed}')
        programs = INTERPRETERS.get(extension)
        if programs is None:
            raise UnsupportedContent(f'no interpreter mapping for extension "{extension}"')
        return programs


class RunScriptArgs(ToolArgs):
    path: str = Field(description="Script file; relative to workDir when given.")
    args: list[str] = Field(
        default_factory=list,
        description=f"Passed verbatim (at most {MAX_SCRIPT_ARGS}, each < 16 KiB).",
    )
    env: EnvArgument = env_field("For this run only.")
    work_dir: str | None = Field(None, description="Default: the base directory.")
    stdin: str | None = Field(None, description="Text piped in; default none (EOF).")
    timeout_seconds: int | None = Field(
        None,
        ge=1,
        le=HARD_MAX_TIMEOUT_SECONDS,
        description="Default and cap as for shellcommand.",
    )
    expected_sha256: str | None = Field(
        None, pattern=r"^[0-9a-fA-F]{64}$", description="Refuse if the script's SHA-256 differs."
    )


class RunScriptResult(RunReport):
    path: str = Field(description="Absolute path of the script.")
    work_dir: str = Field(description="Absolute working directory it ran in.")
    command: str = Field(description="The equivalent command line, quoted for its shell.")
    interpreter: str = Field(description="Absolute path of the program that ran the script.")
    sandbox: SandboxName = Field(
        description="How the script was contained: bwrap, landlock, seatbelt, or off."
    )


def _check_args(args: list[str]) -> None:
    if len(args) > MAX_SCRIPT_ARGS:
        raise InvalidArguments(f"too many args: {len(args)} (max {MAX_SCRIPT_ARGS})")
    for index, arg in enumerate(args):
        if "\x00" in arg:
            raise InvalidArguments(f"args[{index}] contains NUL byte")
        if len(arg.encode("utf-8", "surrogateescape")) > MAX_SCRIPT_ARG_BYTES:
            raise InvalidArguments(f"args[{index}] too long (max {MAX_SCRIPT_ARG_BYTES} bytes)")


def powershell_quote(text: str) -> str:
    """``text`` as a PowerShell single-quoted string (``'`` doubled)."""
    return "'" + text.replace("'", "''") + "'"


def script_command(program: Shell, script: str, args: list[str]) -> tuple[list[str], str]:
    """How ``program`` runs ``script`` with ``args``: ``(argv, command line)``.

    The command line is the equivalent of the argv quoted for ``program.dialect`` (POSIX single
    quotes; for PowerShell, the ``& '<script>' '<args>'`` that its ``-Command`` runs): what the
    execution policy checks and the result reports.
    """
    if program.dialect == "powershell":
        line = "& " + " ".join(powershell_quote(part) for part in (script, *args))
        return command_argv(program, line), line
    return [program.path, script, *args], shlex.join([program.name, script, *args])


def _find_target(
    args: RunScriptArgs, group: ExecGroup, scripts: ScriptPolicy, search_path: str | None
) -> tuple[ResolvedPath, ResolvedPath, Shell]:
    """``(working directory, script, program to run it with)``; blocking (resolves, stats and
    looks programs up on ``search_path``): run it in a worker thread.

    Raises:
        ToolError: a bad ``workDir`` or ``path`` (outside the roots, missing, not a regular file),
            an extension not allowed or not mapped, no interpreter on ``search_path``.
    """
    work = group.work_dir(args.work_dir)
    given = Path(args.path.strip())
    script = group.paths.resolve(
        str(given if given.is_absolute() or args.work_dir is None else work.path / given), field="path"
    )
    info = stat_path(group.paths, script, follow=True)
    if info is None:
        raise NotFound(f"path does not exist: {script.path}")
    if not stat.S_ISREG(info.st_mode):
        raise NotAFile(f"not a regular file: {script.path}; {served('runscript')} runs script files")
    candidates = scripts.interpreters(script.path.suffix.lower())
    program = first_found(candidates, search_path)
    if program is None:
        raise NotFound(f"{' or '.join(candidates)} not found on PATH; cannot run {script.path.name}")
    return work, script, program


@dataclass(frozen=True, slots=True)
class _Plan:
    """What a runscript call will run, once it passed every check."""

    env: dict[str, str]
    work: ResolvedPath
    script: ResolvedPath
    program: Shell
    argv: list[str]
    line: str
    stdin: bytes | None


async def _plan(args: RunScriptArgs, group: ExecGroup, scripts: ScriptPolicy) -> _Plan:
    """Check the call (path, arguments, env, working directory, script, interpreter, the
    execution policy on the command it makes, stdin) and resolve what it will run.

    Raises:
        ToolError: the first check that fails.
    """
    if not args.path.strip():
        raise InvalidArguments("path is required")
    _check_args(args.args)
    await group.sandbox.ready()
    call_env = group.policy.check_env(args.env, writable=group.writable_roots())
    env = merged_env(await group.environment.base(), call_env)
    work, script, program = await anyio.to_thread.run_sync(
        _find_target, args, group, scripts, env.get("PATH")
    )
    argv, line = script_command(program, str(script.path), args.args)
    await group.check_command_async(line, program.dialect, what="constructed command")
    return _Plan(env, work, script, program, argv, line, group.stdin_bytes(args.stdin))


SHOWN_LINES = 40
"""Lines of a script the approval question shows (each cut to ``_SHOWN_LINE_CHARS``)."""
_SHOWN_LINE_CHARS = 200
_SHOWN_CHARS = 3000
"""Most characters of script the question shows (its whole text has a limit: ``MAX_PROMPT_CHARS``)."""
_HEAD_BYTES = 16 * 1024
"""Most bytes of the script's head read for the question."""


def _script_view(path: Path) -> tuple[str, str]:
    """``(shown, sha256)`` of the script at ``path``: its size, sha256 and first ``SHOWN_LINES``
    lines as the approval question shows them; blocking (reads the whole file once)."""
    digest, head, size = hashlib.sha256(), bytearray(), 0
    with path.open("rb") as script:
        while chunk := script.read(1 << 16):
            digest.update(chunk)
            size += len(chunk)
            if len(head) < _HEAD_BYTES:  # bounded: a file without newlines is not kept whole
                head += chunk[: _HEAD_BYTES - len(head)]
    lines = bytes(head).decode("utf-8", "replace").splitlines()
    body: list[str] = []
    for line in lines[:SHOWN_LINES]:
        cut = f"[... {len(line)} characters]" if len(line) > _SHOWN_LINE_CHARS else ""
        text = f"  | {line[:_SHOWN_LINE_CHARS]}{cut}"
        if sum(map(len, body)) + len(text) > _SHOWN_CHARS:  # the question has a size limit too
            break
        body.append(text)
    whole = size == len(head) and len(body) == len(lines)
    total = "" if whole else f"the first {len(body)} lines; "
    shown = [f"Script content ({size} bytes, {total}sha256 {digest.hexdigest()}):", *body]
    return "\n".join(shown), digest.hexdigest()


async def pin_script(
    arguments: Mapping[str, Any], *, group: ExecGroup, scripts: ScriptPolicy
) -> tuple[str, dict[str, Any]]:
    """What the approval question shows of the script a call would run (its size, sha256 and first
    lines) and the ``expectedSha256`` that makes the call run exactly that (``ToolSpec.pinned``).

    Raises:
        ToolError: the call's path, working directory or interpreter is refused.
        ValidationError: the arguments are not runscript's.
    """
    args = RunScriptArgs.model_validate(arguments)
    plan = await _plan(args, group, scripts)
    shown, sha256 = await anyio.to_thread.run_sync(_script_view, plan.script.path)
    return shown, {"expectedSha256": sha256}


def _check_sha256(path: Path, expected: str) -> None:
    """Raises Conflict when the script at ``path`` no longer has the sha256 ``expected``."""
    digest = hashlib.sha256()
    with path.open("rb") as script:
        while chunk := script.read(1 << 16):
            digest.update(chunk)
    if digest.hexdigest() != expected.lower():
        raise Conflict(
            f"{path.name} was not run: the script changed after it was approved (or since its "
            f"expectedSha256 was read: it is now sha256 {digest.hexdigest()}); call again"
        )


async def check_call(
    args: RunScriptArgs, ctx: CallContext, *, group: ExecGroup, scripts: ScriptPolicy
) -> None:
    """runscript's checks without running the script (``ToolSpec.check``).

    Raises:
        ToolError: what the handler would raise for the first refused check.
    """
    await _plan(args, group, scripts)


async def run_script(
    args: RunScriptArgs, ctx: CallContext, *, group: ExecGroup, scripts: ScriptPolicy
) -> ToolResult:
    """The runscript handler."""
    plan = await _plan(args, group, scripts)
    if args.expected_sha256 is not None:
        await anyio.to_thread.run_sync(_check_sha256, plan.script.path, args.expected_sha256)
    env, work, script, program, argv, line = (
        plan.env,
        plan.work,
        plan.script,
        plan.program,
        plan.argv,
        plan.line,
    )
    stdin = plan.stdin
    timeout = group.policy.timeout_for(args.timeout_seconds)
    kept = KeptStreams(group.outputs, ctx.session_id, links=group.config.resource_links)
    await group.prepare(ctx.session_id, work.path)
    async with streaming(ctx, group.policy.max_output_bytes) as streamer:
        if streamer is not None:
            streamer.command(line)
        forward = streamer.feed if streamer is not None else None
        recorder = group.outputs.recorder(forward)
        kept.recorders.append(recorder)
        outcome = await group.run(
            argv,
            cwd=work.path,
            env=env,
            stdin=stdin,
            timeout=timeout,
            on_output=recorder.feed if recorder is not None else forward,
            owner=ctx.session_id,
        )
    result = RunScriptResult.model_validate(
        {
            "path": str(script.path),
            "work_dir": str(work.path),
            "command": line,
            "interpreter": program.path,
            "sandbox": group.sandbox.name,
            **report_fields(outcome, group.sandbox, ctx.session_id),
        }
    )
    budget = group.limits.max_result_chars

    def build(payload: int) -> ToolResult:
        (shown,), links = cut_reports([result], [line], kept, payload)
        return ToolResult.of(shown, *links, text=render_run(line, shown, timeout=timeout))

    # The output goes twice (text and structuredContent): about half the budget each.
    return fit_within(build, budget, budget // 2 - 1000)


def spec(workspace: Workspace) -> ToolSpec[Any]:
    """The runscript tool, bound to ``workspace``."""
    group = workspace.shared(ExecGroup.create)
    scripts = ScriptPolicy.from_config(group.config.scripts)
    allowed = ", ".join(sorted(e or '""' for e in scripts.allowed_extensions))
    described = ToolSpec(
        name="runscript",
        title="Run a script file",
        description=(
            f"Run a script by its extension ({allowed}) with that shell, python3 or PowerShell; no exec "
            "bit needed. Timeout, output limits and cleanup as for shellcommand. "
            + (f"{commands_sentence(group.config)} " if group.config.deny_by_default else "")
            + group.containment()
        ),
        args_model=RunScriptArgs,
        result_model=RunScriptResult,
        handler=partial(run_script, group=group, scripts=scripts),
        check=partial(check_call, group=group, scripts=scripts),
        pinned=partial(pin_script, group=group, scripts=scripts),
        changes=changes_anything,
        annotations=EXEC_ANNOTATIONS,
        timeout_seconds=group.call_timeout(1),
        unsupported=compat.why_unsupported(process_groups=True),
        on_register=group.sandbox.start,
        on_session_start=group.warm,
        on_session_end=group.end_session,
        resources=group.outputs,
    )
    return with_approval_note(described, workspace.config.approval)
