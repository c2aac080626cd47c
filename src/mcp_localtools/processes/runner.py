"""Run one command: spawn, capture, time out, stop the whole tree, drain with a bound.

``ProcessRunner.run`` is the only place exec tools start processes. For every run:

* the child is the leader of a new session and process group; its stdin is ``/dev/null`` (or a
  pipe carrying the call's ``stdin`` text, then closed), stdout and stderr are pipes, every other
  descriptor is closed: it never sees the server's stdin or stdout (the stdio transport); it is
  started by ``spawn.open_command`` (no asyncio subprocess transport where pidfds work);
* stdout and stderr are read as they come into ``HeadTail`` buffers and handed to ``on_output``
  (progress notifications) in arrival order, with a turn for other tasks every 256 KiB;
* on timeout (exit code 124) or cancellation the process group and every process of the run
  that escaped it (``proctree``) get SIGTERM, are polled every 50 ms, and get SIGKILL after
  0.5 s (a request's ``stop_signal``, SIGHUP for a login shell, goes to its group first);
* after a normal exit, processes the command left behind are stopped the same way, so no
  process of a finished run stays alive;
* the pipes are then drained for at most ``drain_seconds``: a process that escaped every check
  and holds a pipe open cannot hang the call;
* exited processes that escaped a run, and were re-parented to the server, are collected by
  the sweeps (``ProcessTree.orphans``), so they do not stay zombies.

Exit codes: the command's own; 128+N when killed by signal N; 124 on timeout; 127 when the
process cannot be started (the error text is its stderr).
"""

from __future__ import annotations

import logging
import secrets
import signal
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio
import anyio.lowlevel
import anyio.to_thread
from anyio.abc import ByteReceiveStream, ByteSendStream, Process

from mcp_localtools import compat
from mcp_localtools.policy.commandrules import KILL_GRACE_SECONDS
from mcp_localtools.processes.output import Captured, HeadTail
from mcp_localtools.processes.spawn import open_command, pidfds_work
from mcp_localtools.processes.tree import RUN_MARKER, ProcessInfo, ProcessTree, harden_server_process

__all__ = [
    "EXIT_SPAWN_FAILED",
    "EXIT_TIMEOUT",
    "OUTPUT_STOP_FACTOR",
    "OutputFn",
    "Overflow",
    "ProcessRunner",
    "RunOutcome",
    "RunRequest",
    "feed",
    "finished_outcome",
    "pump",
    "spawn_failure",
    "until_exit",
]

logger = logging.getLogger(__name__)

EXIT_TIMEOUT = 124
EXIT_SPAWN_FAILED = 127
OUTPUT_STOP_FACTOR = 64
"""A run is stopped once one stream has written this many times its ``max_output_bytes`` (16 MiB
at the default 256 KiB, as much as is kept of a stream for the session): what it writes after
that could never be shown, and draining it costs the server CPU until the timeout (``yes`` wrote
40-131 GB in a 600 s run before this limit; now it is stopped within a second)."""
_POLL_SECONDS = 0.05
_DRAIN_SECONDS = 0.5
_KILL_WAIT_SECONDS = 5.0
_CHUNK = 65536
_YIELD_BYTES = 4 * _CHUNK

OutputFn = Callable[[str, bytes], None]
"""``(stream, data)``: receives output as it arrives; ``stream`` is ``"stdout"`` or ``"stderr"``."""


@dataclass(frozen=True, slots=True)
class RunRequest:
    """What to run and within which limits.

    Attributes:
        argv: program and arguments (no shell is added).
        cwd: working directory.
        env: the complete environment of the child.
        stdin: bytes for the child's stdin, or None for ``/dev/null``.
        timeout: seconds before the run is stopped.
        max_output_bytes: per stream; head and tail kept.
        stop_signal: sent first to the run's group while its leader runs, half a grace period
            before SIGTERM (``compat.SIGHUP`` for a login shell: an interactive shell ignores
            SIGTERM and ends on a hang-up, passing it on to its jobs).
    """

    argv: Sequence[str]
    cwd: Path
    env: Mapping[str, str]
    stdin: bytes | None
    timeout: float
    max_output_bytes: int
    stop_signal: int = signal.SIGTERM


@dataclass(frozen=True, slots=True)
class RunOutcome:
    """How a run ended."""

    exit_code: int
    timed_out: bool
    duration_ms: int
    stdout: Captured
    stderr: Captured
    reverted: tuple[str, ...] = ()
    """Git pointers the command created and the sandbox removed again (``CommandSandbox.revert``)."""
    cleaned: tuple[str, ...] = ()
    """What the sandbox did to git files the command made (``RepositoryTracker.check``)."""
    output_stopped: str | None = None
    """``"stdout"`` or ``"stderr"`` when the run was stopped because that stream passed
    ``OUTPUT_STOP_FACTOR`` times ``max_output_bytes``; None otherwise."""
    sandbox_note: str | None = None
    """What the connection's sandbox did to the run at run time (a proxy refusal, a limit reached:
    ``sandbox/runtime_notes.py``), when it shows."""


class ProcessRunner:
    """Runs commands; owns the process-tree bookkeeping of one server.

    Args:
        grace_seconds: between SIGTERM and SIGKILL.
        drain_seconds: how long to keep reading pipes after the run's processes are gone.
        pidfds: start commands with pidfds (``spawn.PidfdProcess``) or not (``anyio.open_process``);
            None: with pidfds where they work (``pidfds_work``, probed when the first command runs).
    """

    def __init__(
        self,
        *,
        grace_seconds: float = KILL_GRACE_SECONDS,
        drain_seconds: float = _DRAIN_SECONDS,
        pidfds: bool | None = None,
    ) -> None:
        self.grace_seconds = grace_seconds
        self.drain_seconds = drain_seconds
        self.pidfds = pidfds
        self._tree: ProcessTree | None = None

    def _process_tree(self) -> ProcessTree:
        # Hardening changes process-wide state, so it happens when the first command runs,
        # not when a server is merely built.
        if self._tree is None:
            harden_server_process()
            if self.pidfds is None:
                self.pidfds = pidfds_work()
            self._tree = ProcessTree()
        return self._tree

    async def run(self, request: RunRequest, on_output: OutputFn | None = None) -> RunOutcome:
        """Run ``request`` to completion, timeout or cancellation; never leaves a process behind.

        On cancellation the run's processes are stopped before the cancellation propagates.
        """
        tree = self._process_tree()
        token = secrets.token_hex(16)
        started = time.monotonic()
        since = tree.clock()
        try:
            # Not cancelled half-way (that would leave a started process without a handle): a
            # pending cancellation lands inside the try below.
            with tree.starting():
                process = await open_command(
                    request.argv,
                    cwd=request.cwd,
                    env={**request.env, RUN_MARKER: token},
                    stdin=request.stdin is not None,
                    pidfds=bool(self.pidfds),
                )
        except OSError as exc:
            cwd_exists = await anyio.to_thread.run_sync(Path(request.cwd).is_dir)
            return spawn_failure(request, exc, started, cwd_exists=cwd_exists)
        tree.started(process.pid)
        out, err = HeadTail(request.max_output_bytes), HeadTail(request.max_output_bytes)
        run = _Run(process, token, tree, since, request.stop_signal)
        overflow = Overflow(request.max_output_bytes * OUTPUT_STOP_FACTOR)
        try:
            timed_out = await self._supervise(run, request, out, err, on_output, overflow)
        except BaseException:  # cancelled, or failed unexpectedly: stop everything first
            with anyio.CancelScope(shield=True):
                await self._stop(run)
                await _close(process, tree)
            raise
        await _close(process, tree)
        return finished_outcome(process.returncode, timed_out, started, out, err, overflow)

    async def _supervise(
        self,
        run: _Run,
        request: RunRequest,
        out: HeadTail,
        err: HeadTail,
        on_output: OutputFn | None,
        overflow: Overflow,
    ) -> bool:
        process = run.process
        assert process.stdout is not None and process.stderr is not None
        timed_out = False
        async with anyio.create_task_group() as pumps:
            finished = [anyio.Event(), anyio.Event()]
            pumps.start_soon(pump, process.stdout, out, "stdout", on_output, finished[0], overflow)
            pumps.start_soon(pump, process.stderr, err, "stderr", on_output, finished[1], overflow)
            if request.stdin is not None:
                assert process.stdin is not None
                pumps.start_soon(feed, process.stdin, request.stdin)
            timed_out = await until_exit(process.wait, overflow, request.timeout)
            await self._stop(run)
            if not all(event.is_set() for event in finished):
                with anyio.move_on_after(self.drain_seconds):
                    for event in finished:
                        await event.wait()
            pumps.cancel_scope.cancel()
        return timed_out

    async def _stop(self, run: _Run) -> None:
        """TERM, then KILL after the grace period, the run's group and every stray process;
        returns when none is left (at once when there is nothing to stop). A run whose leader
        still runs and whose ``stop_signal`` is not SIGTERM (SIGHUP for a login shell) gets that
        first, its group only, as a terminal's hang-up; what is left half a grace period later
        gets SIGTERM. Leftovers of a leader that exited always get SIGTERM (an agent a profile
        started reloads on SIGHUP, but cleans up and exits on SIGTERM)."""
        members = await run.members()
        if run.process.returncode is None or members:
            grace = self.grace_seconds
            if run.process.returncode is None and run.stop_signal != signal.SIGTERM:
                run.signal([], run.stop_signal)
                grace /= 2
                if await self._gone(run, grace):
                    return
                members = await run.members()
            run.signal(members, signal.SIGTERM)
            if await self._gone(run, grace):
                return
            members = await run.members()
            with anyio.move_on_after(_KILL_WAIT_SECONDS):
                while True:  # a process may fork while we kill: repeat until none is left
                    run.signal(members, compat.SIGKILL)
                    await run.process.wait()
                    members = await run.members()
                    if not members:
                        return
                    await anyio.sleep(_POLL_SECONDS)
            logger.error("processes of pid %d survived SIGKILL: %s", run.process.pid, members)

    @staticmethod
    async def _gone(run: _Run, seconds: float) -> bool:
        """Whether the run's leader has exited and none of its processes is left, polled every
        ``_POLL_SECONDS`` for at most ``seconds``."""
        with anyio.move_on_after(seconds):
            while True:
                await anyio.sleep(_POLL_SECONDS)
                if run.process.returncode is not None and not await run.members():
                    return True
        return False


async def _close(process: Process, tree: ProcessTree) -> None:
    """Close the pipes of a run's ``process`` (its wait inside returns at once: it has exited)
    and take it off ``tree``'s list of runs in progress."""
    if process.returncode is None:  # pragma: no cover - a process SIGKILL cannot end (uninterruptible sleep)
        logger.error("process %d survived SIGKILL; abandoning it", process.pid)
        return
    try:
        await process.aclose()
    finally:
        tree.finished(process.pid)


class _Run:
    """One running command: its process, marker, the tree it is looked up in, the clock tick
    (``ProcessTree.clock``) before it started, and the signal that asks it to stop."""

    def __init__(self, process: Process, token: str, tree: ProcessTree, since: int, stop_signal: int) -> None:
        self.process = process
        self.token = token
        self.tree = tree
        self.since = since
        self.stop_signal = stop_signal

    async def members(self) -> list[ProcessInfo]:
        """The run's live processes (exited orphans are reaped on the way)."""
        if not self.tree.available:
            return []
        if self.process.returncode is not None and self.tree.has_children() is False:
            # The shell is reaped and the server has no child at all: nothing of this run (nor an
            # escaped descendant, which would have been re-parented to us) is alive. The usual
            # case, decided without a thread hop.
            return []
        found = await anyio.to_thread.run_sync(self.tree.sweep, self.process.pid, self.token)
        self.tree.reap([info for info in found.members if info.state == "Z"], self.process.pid)
        exited = self.tree.orphans(found.strays, self.since)
        if exited:
            # A child watcher collects its children from the event loop (asyncio's pidfd watcher
            # once the loop polls): give it that turn, so only zombies nobody waits for are left.
            await anyio.lowlevel.checkpoint()
            self.tree.reap_orphans(exited)
        return [info for info in found.members if info.state != "Z"]

    def signal(self, members: list[ProcessInfo], signum: int) -> None:
        if self.process.returncode is None:  # the group id is still ours while the leader is unreaped
            try:
                compat.killpg(self.process.pid, signum)
            except (ProcessLookupError, PermissionError):
                pass
        self.tree.signal(members, signum)


async def until_exit(exited: Callable[[], Awaitable[object]], overflow: Overflow, timeout: float) -> bool:
    """Wait until ``exited()`` returns (the run's process ended) or one stream passes its
    ``overflow`` limit, for at most ``timeout`` seconds; True when the timeout ended the wait.
    No task of its own, and one cancel scope: the stream that passes the limit cancels the wait
    (``Overflow.check``), which is then no timeout."""
    with anyio.move_on_after(timeout) as deadline:
        overflow.stops = deadline
        if overflow.stream is None:
            await exited()
    overflow.stops = None
    return deadline.cancelled_caught and overflow.stream is None


class Overflow:
    """Which stream, if any, passed ``limit`` bytes: the first one to do so stops the run (it
    cancels ``stops``, the wait of ``until_exit``; a stream that passes the limit before that
    wait began is seen by it in ``stream``)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.stream: str | None = None
        self.stops: anyio.CancelScope | None = None

    def check(self, name: str, total: int) -> None:
        if total > self.limit and self.stream is None:
            self.stream = name
            if self.stops is not None:
                self.stops.cancel()


async def pump(
    stream: ByteReceiveStream,
    sink: HeadTail,
    name: str,
    on_output: OutputFn | None,
    finished: anyio.Event,
    overflow: Overflow,
) -> None:
    """Read ``stream`` into ``sink`` and ``on_output`` until its end, or until it passes the
    ``overflow`` limit; set ``finished`` then. A receive that finds data returns without waiting,
    so the pump gives the event loop a turn after every ``_YIELD_BYTES`` it read (a command
    writing without pause would keep the loop otherwise, 20 ms for 4 MiB)."""
    unyielded = 0
    try:
        while True:
            try:
                chunk = await stream.receive(_CHUNK)
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                return
            sink.write(chunk)
            overflow.check(name, sink.total)
            if on_output is not None:
                on_output(name, chunk)
            if overflow.stream == name:  # read no more: the writer blocks until it is stopped
                return
            unyielded += len(chunk)
            if unyielded >= _YIELD_BYTES:
                unyielded = 0
                await anyio.lowlevel.checkpoint()
    finally:
        finished.set()


async def feed(stream: ByteSendStream, data: bytes) -> None:
    try:
        for start in range(0, len(data), _CHUNK):
            await stream.send(data[start : start + _CHUNK])
        await stream.aclose()
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, BrokenPipeError, ConnectionResetError):
        pass  # the command exited without reading all of it


def finished_outcome(
    code: int | None, timed_out: bool, started: float, out: HeadTail, err: HeadTail, overflow: Overflow
) -> RunOutcome:
    """The outcome of a command that ran: its exit ``code`` (minus the signal that ended it; None
    for a process SIGKILL could not end, reported as killed), ``EXIT_TIMEOUT`` when it
    ``timed_out``, the time since ``started`` (``time.monotonic()``) and its captured output."""
    if code is None:  # pragma: no cover - a process SIGKILL cannot end (uninterruptible sleep)
        code = -compat.SIGKILL
    return RunOutcome(
        exit_code=EXIT_TIMEOUT if timed_out else (128 - code if code < 0 else code),
        timed_out=timed_out,
        duration_ms=round((time.monotonic() - started) * 1000),
        stdout=out.render(),
        stderr=err.render(),
        output_stopped=overflow.stream,
    )


def spawn_failure(request: RunRequest, exc: OSError, started: float, *, cwd_exists: bool) -> RunOutcome:
    reason = exc.strerror or str(exc)
    program = request.argv[0] if request.argv else "?"
    where = "" if cwd_exists else f" in {request.cwd}"
    message = f"cannot start {program}{where}: {reason}\n"
    return RunOutcome(
        exit_code=EXIT_SPAWN_FAILED,
        timed_out=False,
        duration_ms=round((time.monotonic() - started) * 1000),
        stdout=Captured("", False, 0),
        stderr=Captured(message, False, len(message.encode())),
    )
