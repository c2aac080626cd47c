"""What a run of a command reads, waits for and reports, whoever started it: ``ProcessRunner``
(``runner.py``) and ``run_supervised`` (``supervised.py``, a command the connection's supervisor
started) share it.

``RunRequest`` and ``RunOutcome``; ``pump`` (a stream into a ``HeadTail`` buffer and ``on_output``,
a turn for other tasks every 256 KiB), ``feed`` (the call's stdin), ``Overflow`` (the stream that
passed ``OUTPUT_STOP_FACTOR`` times its cap stops the run), ``until_exit`` (the wait for the exit,
the timeout or that stop) and ``finished_outcome`` / ``spawn_failure`` (the outcome and its exit
code: the command's own; 128+N when killed by signal N; 124 on timeout; 127 when it cannot start).
"""

from __future__ import annotations

import math
import signal
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio
import anyio.lowlevel
from anyio.abc import ByteReceiveStream, ByteSendStream

from mcp_localtools import compat
from mcp_localtools.processes.output import Captured, HeadTail

__all__ = [
    "EXIT_SPAWN_FAILED",
    "EXIT_TIMEOUT",
    "OUTPUT_STOP_FACTOR",
    "OutputFn",
    "Overflow",
    "RunOutcome",
    "RunRequest",
    "feed",
    "finished_outcome",
    "pump",
    "spawn_failure",
    "until_exit",
]

EXIT_TIMEOUT = 124
EXIT_SPAWN_FAILED = 127
OUTPUT_STOP_FACTOR = 64
"""A run is stopped once one stream has written this many times its ``max_output_bytes`` (16 MiB
at the default 256 KiB, as much as is kept of a stream for the session): what it writes after
that could never be shown, and draining it costs the server CPU until the timeout (``yes`` wrote
40-131 GB in a 600 s run before this limit; now it is stopped within a second)."""
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
        stop_grace_seconds: None, or how long the process group sent ``stop_signal`` is given
            to end by itself before what is left gets SIGTERM (the login-shell probe: its
            profile's EXIT traps, such as the one removing pyenv's rehash lock, run to their end);
            the stop goes on as soon as the group has ended. None: half the runner's grace period.
    """

    argv: Sequence[str]
    cwd: Path
    env: Mapping[str, str]
    stdin: bytes | None
    timeout: float
    max_output_bytes: int
    stop_signal: int = signal.SIGTERM
    stop_grace_seconds: float | None = None


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


async def until_exit(exited: Callable[[], Awaitable[object]], overflow: Overflow, timeout: float) -> bool:
    """Wait until ``exited()`` returns (the run's process ended) or one stream passes its
    ``overflow`` limit, for at most ``timeout`` seconds; True when the timeout ended the wait.
    No task of its own, and one cancel scope: the stream that passes the limit cancels the wait
    (``Overflow.check``), which is then no timeout, unless the limit was seen at or after the
    deadline (both in one turn of the event loop, the pump's turn first): the command outlived
    its timeout, and that is what its exit code says (124)."""
    with anyio.move_on_after(timeout) as deadline:
        overflow.stops = deadline
        if overflow.stream is None:
            await exited()
    overflow.stops = None
    return deadline.cancelled_caught and (overflow.stream is None or overflow.seen_at >= deadline.deadline)


class Overflow:
    """Which stream, if any, passed ``limit`` bytes, and when (``seen_at``, ``anyio.current_time``):
    the first one to do so stops the run (it cancels ``stops``, the wait of ``until_exit``; a
    stream that passes the limit before that wait began is seen by it in ``stream``)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.stream: str | None = None
        self.seen_at = math.inf
        self.stops: anyio.CancelScope | None = None

    def check(self, name: str, total: int) -> None:
        if total > self.limit and self.stream is None:
            self.stream = name
            self.seen_at = anyio.current_time()
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
    if code is None:  # a process not collected after SIGKILL (uninterruptible sleep, traced)
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
