"""Long-running processes: what startprocess starts and the other process tools watch and stop.

A background process runs in its own process group, inside the same sandbox as every command of
its exec session: started by the supervisor inside the connection's sandbox (bwrap,
Landlock; ``handles.SupervisedHandle``), or by the server with its argv wrapped (Seatbelt) or not
(off). Its output comes through pipes, or a pseudo-terminal with ``tty``. Two reader
threads copy its stdout and stderr
into bounded buffers that keep the most recent ``[exec] process_output_bytes`` of each stream,
with absolute offsets, so a client reads "what is new since my last read" or "from offset N" and
learns how much it missed; a third thread waits for it to exit. Threads, not event-loop tasks: a
process outlives the call that started it, and no call's task group may own its readers.

A process belongs to the MCP session that started it (``CallContext.session_id``: a connection,
or on the 2026-07-28 protocol a bearer token and profile): another gets the same "unknown
processID" answer as for an id that never existed. Only running processes take one of the
session's ``max_processes`` slots; as many ended ones are kept for their output. Everything a session
started is stopped when the session ends (``end_session``), when it has been idle for
``process_idle_seconds``, and when the server exits (``stop_all``, at exit).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import secrets
import signal
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

import anyio
import anyio.to_thread

from mcp_localtools import compat
from mcp_localtools.errors import NotFound, TooLarge
from mcp_localtools.processes.background import Background, StreamBuffer, exit_code_of
from mcp_localtools.processes.handles import Handle, PopenHandle, Streams, SupervisedHandle
from mcp_localtools.processes.supervision import SupervisedSandbox
from mcp_localtools.toolnames import served_text

__all__ = ["ProcessTable"]

_CHUNK = 65536
DRAIN_SECONDS = 2.0
"""Longest an exit waits for the readers to reach the end of the process's output."""
_POLL_SECONDS = 0.02


class ProcessTable:
    """The background processes of one server.

    Args:
        max_per_session: most running processes one session may have (as many ended ones are kept).
        output_bytes: bytes kept per stream of each process.
        idle_seconds: a process nobody asked about for this long is stopped and removed.
        grace_seconds: between SIGTERM and SIGKILL when a process is stopped.
    """

    def __init__(
        self, *, max_per_session: int, output_bytes: int, idle_seconds: float, grace_seconds: float
    ) -> None:
        self.max_per_session = max_per_session
        self.output_bytes = output_bytes
        self.idle_seconds = idle_seconds
        self.grace_seconds = grace_seconds
        self._processes: dict[str, Background] = {}
        self._lock = threading.Lock()
        atexit.register(self.stop_all)

    def start(
        self,
        argv: Sequence[str],
        *,
        owner: str,
        command: str,
        shell: str,
        cwd: Path,
        env: Mapping[str, str],
        sandbox: SupervisedSandbox | None = None,
        tty: bool = False,
    ) -> Background:
        """Start ``argv`` (already wrapped by the sandbox, or run in ``sandbox``, its session's)
        in its own process group, with its output (through a pseudo-terminal with ``tty``) read
        into bounded buffers. Blocking (fork and exec): call it from a worker thread.

        Raises:
            TooLarge: the session has ``max_per_session`` running processes; stop one first.
            OSError: the program could not be started (the caller reports it).
        """
        self.expire()
        with self._lock:
            running = [p for p in self._processes.values() if p.owner == owner and p.running]
            if len(running) >= self.max_per_session:
                raise TooLarge(
                    f"this session has {len(running)} running processes (max {self.max_per_session}); "
                    + served_text("stop one with stopprocess, then start this one")
                )
            self._forget_ended(owner)
        streams = Streams(tty=tty)
        popen: Handle
        try:
            if sandbox is not None:
                popen = SupervisedHandle(sandbox, argv, cwd=cwd, env=env, streams=streams, tty=tty)
            else:
                popen = PopenHandle(argv, cwd=cwd, env=env, streams=streams, tty=tty)
        except BaseException:
            streams.close()
            raise
        streams.started()
        process = Background(
            id=f"proc_{secrets.token_hex(8)}",
            owner=owner,
            command=command,
            work_dir=cwd,
            shell=shell,
            popen=popen,
            started=time.time(),
            stdout=StreamBuffer(self.output_bytes),
            stderr=StreamBuffer(self.output_bytes),
        )
        for name, pipe in (("stdout", popen.stdout), ("stderr", popen.stderr)):
            reader = threading.Thread(
                target=_pump, args=(process, name, pipe), name=f"{process.id}-{name}", daemon=True
            )
            process.threads.append(reader)
        waiter = threading.Thread(target=_reap, args=(process,), name=f"{process.id}-wait", daemon=True)
        process.threads.append(waiter)
        for thread in process.threads:
            thread.start()
        with self._lock:
            self._processes[process.id] = process
        return process

    def _forget_ended(self, owner: str) -> None:
        """Forget ``owner``'s oldest ended processes beyond ``max_per_session`` (under the lock):
        ended ones take no slot, but their output is kept only for the most recent."""
        ended = sorted(
            (p for p in self._processes.values() if p.owner == owner and not p.running),
            key=lambda p: p.started,
        )
        for process in ended[: max(0, len(ended) - self.max_per_session)]:
            self._processes.pop(process.id, None)

    def get(self, process_id: str, owner: str) -> Background:
        """The process ``process_id`` of session ``owner``.

        Raises:
            NotFound: no such process in this session (also for another session's id, so ids
                cannot be probed).
        """
        self.expire()
        with self._lock:
            process = self._processes.get(process_id)
        if process is None or process.owner != owner:
            raise NotFound(
                f"unknown processID: {process_id} (never started in this session, or removed); "
                + served_text("listprocesses shows this session's processes")
            )
        process.last_used = time.monotonic()
        return process

    def of(self, owner: str) -> list[Background]:
        """Session ``owner``'s processes, oldest first."""
        self.expire()
        with self._lock:
            return sorted((p for p in self._processes.values() if p.owner == owner), key=lambda p: p.started)

    def remove(self, process: Background) -> None:
        """Forget an ended process (its output with it)."""
        with self._lock:
            self._processes.pop(process.id, None)

    def stop(self, process: Background, grace: float | None = None) -> int | None:
        """SIGTERM to the process group, SIGKILL after ``grace`` seconds (default the table's);
        returns the exit code (None if it survived SIGKILL, which only a process stuck in the
        kernel does). Blocking: call it from a worker thread."""
        grace = self.grace_seconds if grace is None else grace
        handle = process.popen
        if handle.stop(grace):
            self._join(process)
            return process.exit_code
        pgid = handle.pid
        for signum, wait in ((signal.SIGTERM, grace), (compat.SIGKILL, 5.0)):
            if not self._signal_group(pgid, signum) and not process.running:
                break
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline:
                if not process.running and not self._group_alive(pgid):
                    break
                time.sleep(_POLL_SECONDS)
            else:
                continue
            break
        self._join(process)
        return process.exit_code

    @staticmethod
    def _join(process: Background) -> None:
        """Wait until the stopped process's exit is recorded (its readers get a second first)."""
        for thread in process.threads[:2]:
            thread.join(timeout=1)
        process.threads[2].join(timeout=DRAIN_SECONDS + 1)

    @staticmethod
    def _signal_group(pgid: int, signum: int) -> bool:
        try:
            compat.killpg(pgid, signum)
        except (ProcessLookupError, PermissionError):
            return False
        return True

    @staticmethod
    def _group_alive(pgid: int) -> bool:
        """Whether a process of group ``pgid`` is left; ask once its leader is collected. Members
        that exited after they were re-parented to the server (a child subreaper:
        ``harden_server_process``) are collected first: their zombies are of the group until
        then, and a stop waited out its whole SIGKILL wait for them."""
        with contextlib.suppress(OSError):  # ChildProcessError: no such child (left); Windows
            while compat.waitpid_nohang(-pgid)[0] > 0:
                pass
        try:
            compat.killpg(pgid, 0)
        except (ProcessLookupError, PermissionError):
            return False
        return True

    async def end_session(self, owner: str) -> None:
        """Stop and forget every process of session ``owner`` (``ToolSpec.on_session_end``)."""
        with self._lock:
            mine = [p for p in self._processes.values() if p.owner == owner]
        for process in mine:
            await anyio.to_thread.run_sync(self.stop, process)
            self.remove(process)

    def expire(self) -> None:
        """Kill and forget the processes nobody asked about for ``idle_seconds`` (SIGKILL to
        the group, without waiting: this runs on the event loop, in every lookup)."""
        now = time.monotonic()
        with self._lock:
            idle = [p for p in self._processes.values() if now - p.last_used > self.idle_seconds]
        for process in idle:
            process.popen.signal(compat.SIGKILL)
            self.remove(process)

    def stop_all(self) -> None:
        """Stop every process (at server exit): SIGKILL to each group, nothing survives."""
        with self._lock:
            every = list(self._processes.values())
        for process in every:
            if process.running or process.popen.alive():
                process.popen.signal(compat.SIGKILL)


def _pump(process: Background, name: str, pipe: IO[bytes]) -> None:
    """Reader thread: copy one pipe into its buffer until end of file."""
    buffer = process.stream(name)
    try:
        while chunk := os.read(pipe.fileno(), _CHUNK):
            with process.lock:
                buffer.write(chunk)
            process.changed.set()
    except OSError:
        pass
    finally:
        pipe.close()


def _reap(process: Background) -> None:
    """Waiter thread: record the exit code once the process ends and its readers have reached
    the end of its output, or ``DRAIN_SECONDS`` after the exit when something it left behind
    holds its pipes (their output keeps arriving after the exit is reported)."""
    code = process.popen.wait()
    deadline = time.monotonic() + DRAIN_SECONDS
    for thread in process.threads[:2]:  # "exited" is never seen before the output written before it
        thread.join(timeout=max(0.0, deadline - time.monotonic()))
    with process.lock:
        process.exit_code = exit_code_of(code)
        process.ended = time.time()
    process.changed.set()
    process.close_stdin()
