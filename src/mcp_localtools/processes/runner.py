"""Run one command: spawn, capture, time out, stop the whole tree, drain with a bound.

``ProcessRunner.run`` is the only place exec tools start processes. For every run:

* the child is the leader of a new session and process group; its stdin is ``/dev/null`` (or a
  pipe carrying the call's ``stdin`` text, then closed), stdout and stderr are pipes, every other
  descriptor is closed: it never sees the server's stdin or stdout (the stdio transport); it is
  started by ``spawn.open_command`` (no asyncio subprocess transport where pidfds work);
* stdout and stderr are read as they come into ``HeadTail`` buffers and handed to ``on_output``
  (progress notifications) in arrival order, with a turn for other tasks every 256 KiB;
* on timeout (exit code 124) or cancellation the process group and every process of the run
  that escaped it (``proctree``) get SIGTERM, are waited for (the leader; the rest polled every
  50 ms), and get SIGKILL after 0.5 s (a request's ``stop_signal``, SIGHUP for a login shell,
  goes to its group first, and that group is given ``stop_grace_seconds`` to end by itself: a
  profile's EXIT traps);
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
from collections.abc import Iterator
from pathlib import Path

import anyio
import anyio.lowlevel
import anyio.to_thread
from anyio.abc import Process

from mcp_localtools import compat
from mcp_localtools.policy.commandrules import KILL_GRACE_SECONDS
from mcp_localtools.processes.capture import (
    OUTPUT_STOP_FACTOR,
    OutputFn,
    Overflow,
    RunOutcome,
    RunRequest,
    feed,
    finished_outcome,
    pump,
    spawn_failure,
    until_exit,
)
from mcp_localtools.processes.output import HeadTail
from mcp_localtools.processes.spawn import PidfdProcess, open_command, pidfds_work
from mcp_localtools.processes.tree import RUN_MARKER, ProcessInfo, ProcessTree, harden_server_process

__all__ = ["OUTPUT_STOP_FACTOR", "OutputFn", "ProcessRunner", "RunOutcome", "RunRequest"]
"""``ProcessRunner``, and what its callers pass and get (``capture.py``'s)."""

logger = logging.getLogger(__name__)

_POLL_SECONDS = 0.05
_FIRST_POLL_SECONDS = 0.005
_DRAIN_SECONDS = 0.5
_KILL_WAIT_SECONDS = 5.0


class ProcessRunner:
    """Runs commands; owns the process-tree bookkeeping of one server.

    Args:
        grace_seconds: between SIGTERM and SIGKILL.
        drain_seconds: how long to keep reading pipes after the run's processes are gone.
        pidfds: start commands with pidfds (``spawn.PidfdProcess``) or not (``anyio.open_process``);
            None: with pidfds where they work (``pidfds_work``, probed when the first command runs).
        kill_wait_seconds: how long to wait for the run's processes after SIGKILL before the
            leader is abandoned (only a process in uninterruptible sleep outlives SIGKILL; one traced
            by a process that does not wait for it cannot be collected).
    """

    def __init__(
        self,
        *,
        grace_seconds: float = KILL_GRACE_SECONDS,
        drain_seconds: float = _DRAIN_SECONDS,
        pidfds: bool | None = None,
        kill_wait_seconds: float = _KILL_WAIT_SECONDS,
    ) -> None:
        self.grace_seconds = grace_seconds
        self.kill_wait_seconds = kill_wait_seconds
        self.drain_seconds = drain_seconds
        self.pidfds = pidfds
        self._tree: ProcessTree | None = None
        self._abandoned: list[Process] = []
        """Leaders still not collected when the wait after SIGKILL ran out (``_close``)."""

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
        if self._abandoned:
            await self._collect_abandoned(tree)
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
        run = _Run(process, token, tree, since, request.stop_signal, request.stop_grace_seconds)
        overflow = Overflow(request.max_output_bytes * OUTPUT_STOP_FACTOR)
        try:
            timed_out = await self._supervise(run, request, out, err, on_output, overflow)
        except BaseException:  # cancelled, or failed unexpectedly: stop everything first
            with anyio.CancelScope(shield=True):
                await self._stop(run)
                await self._close(process, tree)
            raise
        await self._close(process, tree)
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

    async def _close(self, process: Process, tree: ProcessTree) -> None:
        """Close the pipes and pidfd of a run's ``process`` and take it off ``tree``'s list of
        runs in progress (its wait inside returns at once: it has exited). A leader still not
        collected after SIGKILL (in uninterruptible sleep, or traced by a process that does not
        wait for it) has its descriptors closed and is kept until a later run collects it (the
        pipes of ``anyio.open_process``'s stay open until asyncio sees it exit)."""
        if process.returncode is None:
            logger.error("process %d survived SIGKILL; abandoning it", process.pid)
            if isinstance(process, PidfdProcess):
                await process.release()
            else:
                for stream in (process.stdin, process.stdout, process.stderr):
                    if stream is not None:
                        await stream.aclose()
            self._abandoned.append(process)
            return
        try:
            await process.aclose()
        finally:
            tree.finished(process.pid)

    async def _collect_abandoned(self, tree: ProcessTree) -> None:
        """Collect the abandoned leaders that have exited since (``returncode`` waits for them).
        The list is taken before the first await: a run abandoning another leader meanwhile
        appends to the new one, and two runs never both close one process."""
        pending, self._abandoned = self._abandoned, []
        for process in pending:
            if process.returncode is None:
                self._abandoned.append(process)
            else:
                await self._close(process, tree)

    async def _stop(self, run: _Run) -> None:
        """TERM, then KILL after the grace period, the run's group and every stray process;
        returns when none is left (at once when there is nothing to stop). A run whose leader
        still runs and whose ``stop_signal`` is not SIGTERM (SIGHUP for a login shell) gets that
        first, its group only, as a terminal's hang-up; that group is given the run's
        ``stop_grace`` to end by itself (its EXIT traps), and what is left half a grace period
        later gets SIGTERM. Leftovers of a leader that exited always get SIGTERM (an agent a
        profile started reloads on SIGHUP, but cleans up and exits on SIGTERM)."""
        members = await run.members()
        if run.process.returncode is None or members:
            grace = self.grace_seconds
            if run.process.returncode is None and run.stop_signal != signal.SIGTERM:
                run.signal([], run.stop_signal)
                grace /= 2
                if run.stop_grace is not None:
                    await self._hung_up(run, run.stop_grace)
                if await self._gone(run, grace):
                    return
                members = await run.members()
            run.signal(members, signal.SIGTERM)
            if await self._gone(run, grace):
                return
            members = await run.members()
            with anyio.move_on_after(self.kill_wait_seconds):
                while True:  # a process may fork while we kill: repeat until none is left
                    run.signal(members, compat.SIGKILL)
                    await run.process.wait()
                    members = await run.members()
                    if not members:
                        return
                    await anyio.sleep(_POLL_SECONDS)
            logger.error("processes of pid %d survived SIGKILL: %s", run.process.pid, members)

    @staticmethod
    async def _hung_up(run: _Run, seconds: float) -> None:
        """Wait at most ``seconds`` for the processes a hang-up reached (the leader and its
        process group: a profile's ``pyenv rehash`` removing its lock in an EXIT trap) to end;
        those that left the group (an agent in a session of its own) are not waited for."""
        group = run.process.pid
        with anyio.move_on_after(seconds):
            await run.process.wait()
            polls = _polls()
            while any(m.pgid == group for m in await run.members()):
                await anyio.sleep(next(polls))

    @staticmethod
    async def _gone(run: _Run, seconds: float) -> bool:
        """Whether the run's leader has exited and none of its processes is left, within at
        most ``seconds``: the leader's exit is awaited, what is left is polled (``_polls``), so a
        run that ends at once is not held for a poll period."""
        with anyio.move_on_after(seconds):
            await run.process.wait()
            polls = _polls()
            while await run.members():
                await anyio.sleep(next(polls))
            return True
        return False


def _polls() -> Iterator[float]:
    """Poll periods for what is left of a stopped run: 5 ms, doubling up to ``_POLL_SECONDS``
    (a child that ends a moment after its shell is seen then; one that lingers costs a look at
    ``/proc`` every 50 ms)."""
    period = _FIRST_POLL_SECONDS
    while True:
        yield period
        period = min(period * 2, _POLL_SECONDS)


class _Run:
    """One running command: its process, marker, the tree it is looked up in, the clock tick
    (``ProcessTree.clock``) before it started, the signal that asks it to stop and how long its
    process group is given to end after it (``RunRequest.stop_grace_seconds``)."""

    def __init__(
        self,
        process: Process,
        token: str,
        tree: ProcessTree,
        since: int,
        stop_signal: int,
        stop_grace: float | None,
    ) -> None:
        self.process = process
        self.token = token
        self.tree = tree
        self.since = since
        self.stop_signal = stop_signal
        self.stop_grace = stop_grace

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
