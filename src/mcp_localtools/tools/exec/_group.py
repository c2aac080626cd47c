"""The exec tool group: the policies and the state shellcommand and runscript share.

One ``ExecGroup`` is built per server from ``[exec]``; it owns the frozen ``ExecutionPolicy``,
the path policy, the session store, the process runner and the command environment. The tools
(``shellcommand.py``, ``runscript.py``) are functions of their arguments and this group.
"""

from __future__ import annotations

import functools
import logging
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import anyio

from mcp_localtools.config import ExecConfig, LimitsConfig
from mcp_localtools.errors import (
    CommandRefused,
    NotADirectory,
    NotFound,
    TooLarge,
    ToolError,
)
from mcp_localtools.files.read import stat_path
from mcp_localtools.policy.commandrules import KILL_GRACE_SECONDS, MAX_STDIN_BYTES
from mcp_localtools.policy.execution import ExecutionPolicy
from mcp_localtools.policy.paths import PathPolicy, ResolvedPath
from mcp_localtools.policy.scanner import Dialect
from mcp_localtools.processes.environment import (
    BOOTSTRAP_SECONDS,
    PROBE_STOP_GRACE_SECONDS,
    CommandEnvironment,
)
from mcp_localtools.processes.runner import OutputFn, ProcessRunner, RunOutcome, RunRequest
from mcp_localtools.processes.sessions import SessionStore
from mcp_localtools.processes.shells import FoundShells
from mcp_localtools.processes.stored import OutputStore
from mcp_localtools.processes.table import ProcessTable
from mcp_localtools.sandbox.command import CommandSandbox
from mcp_localtools.sandbox.runs import Background, Runs, runs_for
from mcp_localtools.spec import ToolAnnotations
from mcp_localtools.tools.exec._described import containment_sentence
from mcp_localtools.workspace import ServedRoots, Workspace

__all__ = ["EXEC_ANNOTATIONS", "LONG_COMMAND_CHARS", "PLAIN_OUTPUT", "ExecGroup"]

logger = logging.getLogger(__name__)

_PER_RUN_OVERHEAD_SECONDS = KILL_GRACE_SECONDS + 6.0  # grace, SIGKILL wait, drain

UNBUFFERED = {"PYTHONUNBUFFERED": "1"}
"""Set by the server for every command and background process: Python writes its output as it
goes, not in 8 KiB blocks, when stdout is a pipe (a dev server's "Serving HTTP" line arrives).
Other programs that buffer a pipe's output (C stdio) line-buffer under ``startprocess``'s ``tty``."""

PLAIN_OUTPUT = {"TERM": "dumb", "NO_COLOR": "1"}
"""Set for every command without a terminal: output is read by a model, not a terminal, so no
colours or cursor escapes (pytest, git, ls, npm and most tools honour one or the other)."""


LONG_COMMAND_CHARS = 4096
"""A command longer than this (characters) is checked in a worker thread (``check_command_async``):
its check takes time linear in its length, up to 0.3 s at 65,536 bytes (13,000 commands of one
``true;`` each), which the event loop, and every other call of the connection, would wait for;
under 4,096 characters it takes at most about 20 ms."""


EXEC_ANNOTATIONS = ToolAnnotations(read_only=False, destructive=True, idempotent=False, open_world=True)
"""What shellcommand and runscript are: they may change anything and reach outside the machine."""


@dataclass(frozen=True, slots=True)
class ExecGroup:
    """Everything the exec tools share.

    Attributes:
        config: the ``[exec]`` section.
        policy: the execution policy built from it.
        paths: where working directories and scripts may be.
        limits: ``[limits]`` (the text budget of a result).
        sessions: exec sessions (a working directory and environment that later calls reuse).
        runner: starts and stops processes.
        environment: the base environment of commands.
        sandbox: what contains every command: one sandbox per client connection.
        outputs: full outputs of cut runs, kept for the MCP session as resources.
        processes: the background processes of startprocess and the other process tools.
        served_roots: every root the server serves to any session (``Workspace.served_roots``).
    """

    config: ExecConfig
    policy: ExecutionPolicy
    paths: PathPolicy
    limits: LimitsConfig
    sessions: SessionStore
    runner: ProcessRunner
    environment: CommandEnvironment
    sandbox: CommandSandbox
    outputs: OutputStore
    processes: ProcessTable
    served_roots: ServedRoots
    by_backend: dict[str, ExecutionPolicy] = field(default_factory=dict)
    """The execution policy for each sandbox backend (``check_command``), built on first use."""
    chosen: dict[str, Runs] = field(default_factory=dict)
    """The path of commands (``_runs``), chosen once the backend is."""
    shells: FoundShells = field(default_factory=FoundShells)
    """Shells named by calls or the config, as last looked up (re-checked on each use)."""

    @classmethod
    def create(cls, workspace: Workspace) -> ExecGroup:
        """Build the group of ``workspace`` (``[exec]``, the path policy, the limits, and the
        server's environment, of which commands get an allowlisted part); the exec tools share
        one through ``workspace.shared(ExecGroup.create)``.

        Raises:
            ConfigError: a ``denied_patterns`` entry is not a valid regex.
        """
        config, paths = workspace.exec, workspace.paths
        runner = ProcessRunner()
        hidden = [*config.sandbox.hide_paths, *map(str, workspace.foreign_roots)]
        sandbox = CommandSandbox(
            config.sandbox.model_copy(update={"hide_paths": hidden}),
            roots=paths.roots,
            environ=workspace.environ,
            protected=paths.protected,
            unprotected=paths.unprotected,
            web=workspace.config.web,
            base_dir=paths.base_dir,
        )
        return cls(
            config=config,
            policy=ExecutionPolicy.from_config(config, host_rule=workspace.command_rule),
            paths=paths,
            limits=workspace.limits,
            sessions=SessionStore(ttl_seconds=config.session_ttl_seconds, max_sessions=config.max_sessions),
            runner=runner,
            environment=CommandEnvironment(
                workspace.environ,
                base_env=[*config.base_env, *config.pass_env],
                default_shell=config.default_shell,
                runner=runner,
                cwd=paths.base_dir,
            ),
            sandbox=sandbox,
            outputs=OutputStore(
                max_bytes=config.kept_output_bytes,
                max_runs=config.kept_outputs,
                page_bytes=workspace.limits.max_result_chars // 2,
            ),
            processes=ProcessTable(
                max_per_session=config.max_processes,
                output_bytes=config.process_output_bytes,
                idle_seconds=config.process_idle_seconds,
                grace_seconds=KILL_GRACE_SECONDS,
            ),
            served_roots=workspace.served_roots,
        )

    def containment(self) -> str:
        """One sentence for the tools' descriptions: how commands are contained, from the config
        (``_described.containment_sentence``)."""
        return containment_sentence(self.config)

    def call_timeout(self, runs: int) -> float:
        """Registry timeout of a call that may run ``runs`` commands at the longest timeout
        (the registry's timeout must not stop a call the policy allows), and the login-shell
        probe's bound and its stop's grace twice (a probe whose connection ended is stopped, and
        the call's starts another)."""
        probe = 2 * (BOOTSTRAP_SECONDS + PROBE_STOP_GRACE_SECONDS)
        return runs * (self.policy.max_timeout_seconds + _PER_RUN_OVERHEAD_SECONDS) + probe + 30

    def work_dir(self, path: str | Path | None, *, field: str = "workDir") -> ResolvedPath:
        """Resolve a working directory (the base directory when None): inside the roots and an
        existing directory. Blocking (resolves and stats): call it from a worker thread.

        Raises:
            InvalidPath, OutsideAllowedRoots, SymlinkRefused: refused by the path policy.
            NotFound: nothing is there.
            NotADirectory: it is not a directory.
            FileSystemError: it cannot be inspected.
        """
        resolved = self.paths.resolve(
            str(path) if path is not None else str(self.paths.base_dir), field=field
        )
        info = stat_path(self.paths, resolved, follow=True)
        if info is None:
            raise NotFound(f"{field} does not exist: {resolved.path}")
        if not stat.S_ISDIR(info.st_mode):
            raise NotADirectory(f"{field} is not a directory: {resolved.path}")
        return resolved

    def writable_roots(self) -> tuple[Path, ...]:
        """Where the file tools of some session could have written: this group's roots and every
        other root the server serves (another profile's, a client's earlier roots). Programs and
        ``PATH`` entries under them are not trusted (``program_outside_roots``, ``check_env``)."""
        return tuple(dict.fromkeys([*self.paths.roots, *self.served_roots.all()]))

    def program_outside_roots(self, name: str, search_path: str | None) -> str | None:
        """The real path of the program a command would run for the bare word ``name`` (the
        first executable ``name`` in a ``search_path`` directory), when both that directory and
        the program's real path lie outside every served root (``writable_roots``); None when
        it is not found, or is found first in a relative (working-directory) entry or inside such
        a root: a program the file tools could have written. Blocking (stats): call it from a
        worker thread."""
        if not name or "/" in name or "\\" in name:
            return None
        for entry in (search_path or "").split(os.pathsep):
            directory = Path(entry)
            if not entry or not directory.is_absolute():
                return None  # resolves against the working directory, which lies in a root
            candidate = directory / name
            try:
                if not (candidate.is_file() and os.access(candidate, os.X_OK)):
                    continue
                places = (directory.resolve(), candidate.resolve())
            except OSError:  # an unreadable PATH entry: the shell would pass over it too
                continue
            if any(place.is_relative_to(root) for place in places for root in self.writable_roots()):
                return None
            return str(places[1])
        return None

    async def check_command_async(self, command: str, dialect: Dialect, *, what: str = "command") -> str:
        """``check_command``, in a worker thread when ``command`` is longer than
        ``LONG_COMMAND_CHARS`` (a short one is checked at once), so the connection's other calls
        are answered while a long one is checked. Returns the command trimmed.

        Raises:
            InvalidArguments, TooLarge, CommandRefused: as ``check_command``.
        """
        if len(command) <= LONG_COMMAND_CHARS:
            return self.check_command(command, dialect, what=what)
        check = functools.partial(self.check_command, command, dialect, what=what)
        return await anyio.to_thread.run_sync(check)

    def check_command(self, command: str, dialect: Dialect, *, what: str = "command") -> str:
        """``ExecutionPolicy.check_command`` under the policy for the sandbox that contains the
        commands (after ``sandbox.ready``): bubblewrap and Seatbelt let ``curl`` and ``wget``
        run (the sandbox decides what they reach); Landlock gets the strict preset, and a command
        refused only because of it says so.

        Raises:
            InvalidArguments, TooLarge, CommandRefused: as ``ExecutionPolicy.check_command``.
        """
        backend = self.sandbox.name
        policy = self.by_backend.get(backend)
        if policy is None:
            policy = self.by_backend.setdefault(
                backend,
                ExecutionPolicy.from_config(self.config, backend=backend, host_rule=self.policy.host_rule),
            )
        try:
            return policy.check_command(command, dialect, what=what)
        except CommandRefused as exc:
            if (
                backend != "landlock"
                or self.config.preset == "strict"
                or _refuses(self.policy, command, dialect)
            ):
                raise
            raise CommandRefused(
                f"{exc.message}. Commands here are contained by Landlock, which cannot stop metadata "
                "changes (chmod, chown) or hide other processes, so the strict preset applies; "
                "under bubblewrap this command would run"
            ) from exc

    @staticmethod
    def stdin_bytes(text: str | None) -> bytes | None:
        """The call's ``stdin`` as UTF-8.

        Raises:
            TooLarge: over ``MAX_STDIN_BYTES``.
        """
        if text is None:
            return None
        data = text.encode("utf-8", "surrogateescape")
        if len(data) > MAX_STDIN_BYTES:
            raise TooLarge(f"stdin is {len(data)} bytes (max {MAX_STDIN_BYTES}); write it to a file instead")
        return data

    def _runs(self) -> Runs:
        """The one path of this server's commands (``sandbox/runs.py``), chosen once the backend
        is (after ``sandbox.ready``)."""
        runs = self.chosen.get("runs")
        if runs is None:
            runs = self.chosen.setdefault(
                "runs", runs_for(self.sandbox, self.environment, self.runner, self.config.sandbox)
            )
        return runs

    async def run(
        self,
        argv: list[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        stdin: bytes | None,
        timeout: float,
        on_output: OutputFn | None,
        owner: str,
    ) -> RunOutcome:
        """Run one command in the sandbox of client connection ``owner``
        (``CallContext.session_id``) under the policy's output limit, with ``PLAIN_OUTPUT``.

        Raises:
            SandboxUnavailable: no sandbox works here, or it cannot start (fail closed).
            SandboxesBusy: no sandbox may be started for ``owner`` now.
        """
        env = {**env, **UNBUFFERED, **PLAIN_OUTPUT}
        request = RunRequest(argv, cwd, env, stdin, timeout, self.policy.max_output_bytes)
        return await self._runs().run(request, on_output, owner)

    async def background(
        self, argv: list[str], *, cwd: Path, env: Mapping[str, str], owner: str, tty: bool = False
    ) -> Background:
        """How to start a background process of connection ``owner`` (``tty``: on a
        pseudo-terminal, which keeps the terminal's ``TERM``; else ``PLAIN_OUTPUT``).

        Raises:
            SandboxUnavailable: no sandbox works here, or it cannot start (fail closed).
            SandboxesBusy: no sandbox may be started for ``owner`` now.
        """
        env = {**env, **UNBUFFERED, **({} if tty else PLAIN_OUTPUT)}
        return await self._runs().background(argv, cwd=cwd, env=env, owner=owner)

    async def prepare(self, owner: str, cwd: Path | None = None) -> None:
        """Start connection ``owner``'s sandbox for commands in ``cwd`` (default: the base
        directory) now if it has none (so that a sandbox that cannot start is the call's error,
        not a failure inside a task group).

        Raises:
            SandboxUnavailable: the sandbox cannot start here.
            SandboxesBusy: no sandbox may be started for ``owner`` now.
        """
        await self.sandbox.ready()
        await self._runs().warm(owner, cwd or self.paths.base_dir)

    async def warm(self, owner: str) -> None:
        """Client connection ``owner`` was seen: start its sandbox in the background, so that its
        first command finds it ready (``ToolSpec.on_session_start``). A failure is logged; the
        first command then reports it."""
        try:
            await self.prepare(owner)
        except ToolError as exc:
            logger.info("the sandbox of %s was not started ahead: %s", owner, exc.message)

    async def end_session(self, owner: str) -> None:
        """Client connection ``owner`` ended (``ToolSpec.on_session_end`` of every exec tool):
        stop its processes, forget its exec sessions and kept outputs, close its sandbox (every
        process in it ends)."""
        with anyio.CancelScope(shield=True):  # a connection torn down by cancellation still cleans up
            await self.processes.end_session(owner)
            self.sessions.end_owner(owner)
            await self.outputs.end_session(owner)
            self.sandbox.release(owner)


def _refuses(policy: ExecutionPolicy, command: str, dialect: Dialect) -> bool:
    """Whether ``policy`` refuses ``command`` too."""
    try:
        policy.check_command(command, dialect)
    except ToolError:
        return True
    return False
