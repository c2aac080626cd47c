"""Run one command inside a connection's sandbox, through its supervisor (``supervision.py``).

The same contract as ``ProcessRunner.run`` (``runner.py``): output read as it comes into
``HeadTail`` buffers and handed to ``on_output``; on timeout (exit 124), too much output or
cancellation every process of the run gets SIGTERM, then SIGKILL after the grace period; after a
normal exit the supervisor stops what the command left behind before it reports the exit; the
pipes are then drained for a bounded time, and what they still hold then is taken without
waiting (never lost). The pipes are made here and their far ends passed to the supervisor, which
forks the command inside the sandbox: the server starts no process per command.
"""

from __future__ import annotations

import os
import time
from functools import partial

import anyio

from mcp_localtools.errors import SandboxGone
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
from mcp_localtools.processes.pipes import FdReader, FdWriter
from mcp_localtools.processes.supervision import RunState, SupervisedSandbox

__all__ = ["run_supervised"]

_STOP_WAIT_SECONDS = 10.0
_PIPE_REST_BYTES = 1 << 20


async def run_supervised(
    sandbox: SupervisedSandbox,
    request: RunRequest,
    on_output: OutputFn | None = None,
    *,
    grace_seconds: float,
    drain_seconds: float,
) -> RunOutcome:
    """Run ``request`` in ``sandbox`` to completion, timeout or cancellation; never leaves a
    process of the run behind. ``request.cwd`` and ``request.env`` are as the command sees them."""
    started = time.monotonic()
    out_r, out_w = os.pipe()  # not inherited by the server's children (PEP 446)
    err_r, err_w = os.pipe()
    if request.stdin is None:
        in_r, in_w = os.open(os.devnull, os.O_RDONLY), -1
    else:
        in_r, in_w = os.pipe()
    readers = [FdReader(out_r), FdReader(err_r)]
    writer = FdWriter(in_w) if in_w >= 0 else None
    try:
        state = sandbox.spawn(request.argv, env=request.env, cwd=request.cwd, fds=[in_r, out_w, err_w])
    except SandboxGone as exc:
        return spawn_failure(request, OSError(0, str(exc)), started, cwd_exists=True)
    finally:
        for fd in (in_r, out_w, err_w):
            os.close(fd)
    out, err = HeadTail(request.max_output_bytes), HeadTail(request.max_output_bytes)
    overflow = Overflow(request.max_output_bytes * OUTPUT_STOP_FACTOR)
    timed_out = False
    try:
        async with anyio.create_task_group() as pumps:
            finished = [anyio.Event(), anyio.Event()]
            pumps.start_soon(pump, readers[0], out, "stdout", on_output, finished[0], overflow)
            pumps.start_soon(pump, readers[1], err, "stderr", on_output, finished[1], overflow)
            if writer is not None and request.stdin is not None:
                pumps.start_soon(feed, writer, request.stdin)
            timed_out = await until_exit(partial(sandbox.wait, state), overflow, request.timeout)
            await _stop(sandbox, state, grace_seconds)
            with anyio.move_on_after(drain_seconds):
                for event in finished:
                    await event.wait()
            pumps.cancel_scope.cancel()
        if overflow.stream is None:  # what was written before the drain ran out is never lost
            for reader, sink, name in ((readers[0], out, "stdout"), (readers[1], err, "stderr")):
                _take_rest(reader, sink, name, on_output, _PIPE_REST_BYTES)
    finally:
        with anyio.CancelScope(shield=True):
            await _stop(sandbox, state, grace_seconds)
            for stream in (*readers, *([writer] if writer is not None else [])):
                await stream.aclose()
    if state.error is not None:
        return spawn_failure(request, OSError(0, state.error), started, cwd_exists=True)
    return finished_outcome(state.code, timed_out, started, out, err, overflow)


def _take_rest(reader: FdReader, sink: HeadTail, name: str, on_output: OutputFn | None, limit: int) -> None:
    """Add to ``sink`` what ``reader``'s pipe still holds (a pump cancelled before it read the
    last chunk), at most ``limit`` bytes: a process that escaped every stop cannot keep it busy."""
    if rest := reader.read_ready(limit):
        sink.write(rest)
        if on_output is not None:
            on_output(name, rest)


async def _stop(sandbox: SupervisedSandbox, state: RunState, grace_seconds: float) -> None:
    """Stop every process of the run (at once when it has exited and left nothing behind)."""
    if state.exited.is_set():
        return
    sandbox.stop(state, grace_seconds)
    with anyio.move_on_after(grace_seconds + _STOP_WAIT_SECONDS):
        await sandbox.wait(state, "stopped")
