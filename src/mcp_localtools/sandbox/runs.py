"""The one path a command takes into the sandbox, chosen once per server by what the backend can do.

* ``SupervisedRuns`` (bubblewrap, Landlock: ``Backend.supervised``): every command and background
  process of a client connection is forked by the supervisor of the connection's sandbox
  (``launch.ConnectionSandboxes``; ``processes/supervised.run_supervised``). The server starts no
  process per command.
* ``WrappedRuns`` (Seatbelt, off): each command is wrapped on its own (``CommandSandbox.wrap``) and
  started by the server's ``ProcessRunner``.

Both answer ``run`` (a command to completion) and ``background`` (what ``startprocess`` starts), and
both settle a run the same way after it (``_settle``: git pointer files a command created are
removed, git files it made are made safe).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

import anyio
import anyio.to_thread

from mcp_localtools.config import SandboxConfig
from mcp_localtools.errors import SandboxGone, SandboxUnavailable
from mcp_localtools.processes.environment import CommandEnvironment
from mcp_localtools.processes.runner import OutputFn, ProcessRunner, RunOutcome, RunRequest
from mcp_localtools.processes.supervised import run_supervised
from mcp_localtools.processes.supervision import SupervisedSandbox
from mcp_localtools.sandbox.command import CommandSandbox
from mcp_localtools.sandbox.launch import SANDBOX_TMP, sandbox_key
from mcp_localtools.sandbox.runtime_notes import runtime_note

__all__ = ["Background", "Runs", "SupervisedRuns", "WrappedRuns", "runs_for"]


@dataclass(frozen=True, slots=True)
class Background:
    """How to start a background process.

    Attributes:
        argv: the argv to start (wrapped in the sandbox when ``sandbox`` is None).
        env: its whole environment.
        sandbox: the connection's sandbox whose supervisor starts it, or None: the server
            starts ``argv`` itself.
    """

    argv: list[str]
    env: dict[str, str]
    sandbox: SupervisedSandbox | None


class Runs(Protocol):
    """How commands of this server enter the sandbox."""

    async def run(self, request: RunRequest, on_output: OutputFn | None, owner: str) -> RunOutcome:
        """Run ``request`` (its ``argv`` unwrapped, its ``env`` complete but for the sandbox's
        variables) for client connection ``owner``; never leaves a process behind.

        Raises:
            SandboxUnavailable: the sandbox cannot start.
            SandboxesBusy: no sandbox may be started for ``owner`` now.
        """
        ...

    async def background(
        self, argv: list[str], *, cwd: Path, env: Mapping[str, str], owner: str
    ) -> Background:
        """How to start ``argv`` in the background for connection ``owner``.

        Raises:
            SandboxUnavailable: the sandbox cannot start.
            SandboxesBusy: no sandbox may be started for ``owner`` now.
        """
        ...

    async def warm(self, owner: str, cwd: Path) -> None:
        """Start what ``owner``'s first command in ``cwd`` needs, ahead of it (nothing for
        wrapped runs).

        Raises:
            SandboxUnavailable: the sandbox cannot start.
            SandboxesBusy: no sandbox may be started for ``owner`` now.
        """
        ...


async def _settle(sandbox: CommandSandbox, outcome: RunOutcome, missing: list[Path]) -> RunOutcome:
    """``outcome`` with what the sandbox undid after the run (in a worker thread: file system)."""

    def settle() -> tuple[tuple[str, ...], tuple[str, ...]]:
        return (sandbox.revert(missing) if missing else ()), sandbox.settle()

    reverted, cleaned = await anyio.to_thread.run_sync(settle)
    return replace(outcome, reverted=reverted, cleaned=cleaned) if reverted or cleaned else outcome


@dataclass(frozen=True, slots=True)
class SupervisedRuns:
    """Commands forked by the supervisor of their connection's sandbox."""

    sandbox: CommandSandbox
    environment: CommandEnvironment
    runner: ProcessRunner
    config: SandboxConfig

    async def _connection(
        self, owner: str, user: tuple[int, int] | None = None
    ) -> tuple[SupervisedSandbox, dict[str, str]]:
        base = await self.environment.base()  # its HOME and PATH decide what commands see
        try:
            return await self.sandbox.connections.get(owner, base, user)
        except SandboxGone as exc:
            raise SandboxUnavailable(f"the connection's sandbox cannot start: {exc}") from None

    @staticmethod
    def _env(extra: Mapping[str, str], env: Mapping[str, str]) -> dict[str, str]:
        return {**extra, **env, "TMPDIR": extra.get("TMPDIR", str(SANDBOX_TMP))}

    async def run(self, request: RunRequest, on_output: OutputFn | None, owner: str) -> RunOutcome:
        """See ``Runs.run``; a root server's command runs as the owner of the root that holds its
        working directory (``CommandSandbox.identity``), in the connection's sandbox for that
        identity."""
        user = self.sandbox.identity(request.cwd)
        key = sandbox_key(owner, user)
        box, extra = await self._connection(owner, user)
        kills = self.sandbox.connections.memory_kills(key)
        outcome = await run_supervised(
            box,
            replace(request, env=self._env(extra, request.env)),
            on_output,
            grace_seconds=self.runner.grace_seconds,
            drain_seconds=self.runner.drain_seconds,
        )
        note = runtime_note(
            self.config,
            stdout=outcome.stdout.text,
            stderr=outcome.stderr.text,
            exit_code=outcome.exit_code,
            refusals=self.sandbox.connections.refusals(key),
            unix_sockets_refused=self.sandbox.unix_sockets_refused,
            memory_killed=self.sandbox.connections.memory_kills(key) > kills,
        ) or _identity_note(user, outcome)
        if note is not None:
            outcome = replace(outcome, sandbox_note=note)
        return await _settle(self.sandbox, outcome, self.sandbox.missing(key))

    async def background(
        self, argv: list[str], *, cwd: Path, env: Mapping[str, str], owner: str
    ) -> Background:
        """See ``Runs.background`` (as the owner of ``cwd``'s root, as ``run``)."""
        box, extra = await self._connection(owner, self.sandbox.identity(cwd))
        return Background(list(argv), self._env(extra, env), box)

    async def warm(self, owner: str, cwd: Path) -> None:
        """Start ``owner``'s sandbox for ``cwd`` (see ``Runs.warm``)."""
        await self._connection(owner, self.sandbox.identity(cwd))


@dataclass(frozen=True, slots=True)
class WrappedRuns:
    """Commands each wrapped on their own (Seatbelt) or not at all (off), started by the server."""

    sandbox: CommandSandbox
    environment: CommandEnvironment
    runner: ProcessRunner

    async def _wrap(
        self, argv: list[str], cwd: Path, env: Mapping[str, str], owner: str
    ) -> tuple[list[str], dict[str, str], list[Path]]:
        if self.sandbox.uncontained:  # off: the command as it is, no file work, no thread
            return list(argv), dict(env), []
        base = await self.environment.base()  # its HOME and PATH decide what commands see

        def prepare() -> tuple[list[str], list[Path], dict[str, str]]:  # file system work: a thread
            temp_dir = self.sandbox.temp_dir(owner)
            wrapped, missing = self.sandbox.wrap(argv, cwd=cwd, temp_dir=temp_dir, environ=base)
            return wrapped, missing, self.sandbox.command_env(temp_dir)

        wrapped, missing, extra = await anyio.to_thread.run_sync(prepare)
        return wrapped, {**env, **extra}, missing

    async def run(self, request: RunRequest, on_output: OutputFn | None, owner: str) -> RunOutcome:
        """See ``Runs.run``."""
        wrapped, env, missing = await self._wrap(list(request.argv), request.cwd, request.env, owner)
        outcome = await self.runner.run(replace(request, argv=wrapped, env=env), on_output)
        if self.sandbox.uncontained:  # nothing was wrapped, no repository tracked: nothing to settle
            return outcome
        return await _settle(self.sandbox, outcome, missing)

    async def background(
        self, argv: list[str], *, cwd: Path, env: Mapping[str, str], owner: str
    ) -> Background:
        """See ``Runs.background``."""
        wrapped, full, _ = await self._wrap(argv, cwd, env, owner)
        return Background(wrapped, full, None)

    async def warm(self, owner: str, cwd: Path) -> None:
        """No sandbox to start ahead: only the commands' environment (the login shell's, asked once
        per server; see ``Runs.warm``)."""
        await self.environment.base()


def _identity_note(user: tuple[int, int] | None, outcome: RunOutcome) -> str | None:
    """The note of a write refused for permissions to a command run as the root's owner."""
    if user is None or outcome.exit_code == 0:
        return None
    text = outcome.stderr.text[-4096:] + outcome.stdout.text[-4096:]
    if "Permission denied" not in text and "EACCES" not in text:
        return None
    return (
        f"commands here run as uid {user[0]} (gid {user[1]}), the owner of the root that holds the "
        "working directory, as the server runs as root: a file or directory of another user (root's, "
        "for one) cannot be written; change its owner, or write elsewhere in the root"
    )


def runs_for(
    sandbox: CommandSandbox, environment: CommandEnvironment, runner: ProcessRunner, config: SandboxConfig
) -> Runs:
    """The path of this server's commands, by what its chosen backend can do (after
    ``CommandSandbox.ready``)."""
    if sandbox.supervised:
        return SupervisedRuns(sandbox, environment, runner, config)
    return WrappedRuns(sandbox, environment, runner)
