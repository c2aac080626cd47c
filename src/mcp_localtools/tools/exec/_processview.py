"""What the process tools report about a background process: its state, and output read in pages."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any, Literal

import anyio
from pydantic import Field

from mcp_localtools.processes.background import Background, read_new
from mcp_localtools.spec import ToolOutput
from mcp_localtools.toolnames import served_text
from mcp_localtools.tools.exec._report import cut_command

__all__ = [
    "ProcessOutput",
    "ProcessState",
    "buffering_hint",
    "page_bytes",
    "read_output",
    "render_output",
    "state_of",
    "wait_for_line",
]

_POLL_SECONDS = 0.02


class ProcessState(ToolOutput):
    """A background process as listprocesses and every process tool report it."""

    process_id: str = Field(alias="processID", description="Its id; pass it to the other process tools.")
    command: str = Field(description="The command as started.")
    work_dir: str = Field(description="Its working directory.")
    status: Literal["running", "exited"] = Field(description="running, or exited (see exitCode).")
    exit_code: int | None = Field(None, description="Exit code once exited; 128+N when killed by signal N.")
    runtime_seconds: float = Field(description="Seconds since it started (until it exited).")
    stdout_bytes: int = Field(description="Bytes it wrote to stdout in all.")
    stderr_bytes: int = Field(description="Bytes it wrote to stderr in all.")


class ProcessOutput(ProcessState):
    """Output read from a background process, with where the next read starts."""

    stdout: str = Field(description="stdout read by this call (UTF-8, invalid bytes replaced).")
    stderr: str = Field(description="stderr read by this call.")
    stdout_offset: int = Field(description="Byte offset where the next stdout read starts.")
    stderr_offset: int = Field(description="Byte offset where the next stderr read starts.")
    lost_bytes: int = Field(
        description="Bytes between the requested offsets and the oldest kept (only the most recent are kept)."
    )
    more: bool = Field(description="True when more output is kept after this read: call again.")


ECHOED_COMMAND_CHARS = 2000
"""A process's command as its results echo it: at most about this many characters (head and tail)."""


def state_of(process: Background) -> dict[str, object]:
    """``ProcessState`` fields (by Python name) of ``process`` now."""
    with process.lock:
        ended = process.ended
        return {
            "process_id": process.id,
            "command": cut_command(process.command, ECHOED_COMMAND_CHARS),
            "work_dir": str(process.work_dir),
            "status": "running" if process.exit_code is None else "exited",
            "exit_code": process.exit_code,
            "runtime_seconds": round((ended or time.time()) - process.started, 3),
            "stdout_bytes": process.stdout.total,
            "stderr_bytes": process.stderr.total,
        }


def buffering_hint(result: ProcessState) -> str:
    """What to tell when a wait for a line timed out on a running process that wrote nothing at
    all: it may buffer its output (empty when it wrote something, or has exited)."""
    if result.stdout_bytes or result.stderr_bytes or result.status != "running":
        return ""
    return (
        " [no output at all yet: the program may buffer its output when it is not a terminal; "
        "start it with tty: true, or make it flush (python -u, stdbuf -oL, a --line-buffered flag)]"
    )


def page_bytes(max_result_chars: int) -> int:
    """Bytes of each stream one result may carry: both streams go twice (text and structured)."""
    return max(1024, max_result_chars // 5)


def read_output(
    process: Background, *, stdout_offset: int | None, stderr_offset: int | None, max_bytes: int
) -> ProcessOutput:
    """Read both streams from the given offsets (None: where the last read ended)."""
    out = read_new(process, "stdout", stdout_offset, max_bytes)
    err = read_new(process, "stderr", stderr_offset, max_bytes)
    fields = state_of(process)  # after the reads: an exit seen here has all its output read
    with process.lock:
        more = out.end < process.stdout.total or err.end < process.stderr.total
    return ProcessOutput.model_validate(
        {
            **fields,
            "stdout": out.text,
            "stderr": err.text,
            "stdout_offset": out.end,
            "stderr_offset": err.end,
            "lost_bytes": out.lost + err.lost,
            "more": more,
        }
    )


def render_output(result: ProcessOutput, head: str) -> str:
    """``head``, a status line, the output read, and what to do next."""
    if result.status == "running":
        status = f"[{result.process_id} running for {result.runtime_seconds:g} s]"
    else:
        status = f"[{result.process_id} exited {result.exit_code} after {result.runtime_seconds:g} s]"
    parts = [head, status] if head else [status]
    if result.lost_bytes:
        parts.append(f"[{result.lost_bytes} bytes older than what is kept were skipped]")
    if result.stdout:
        parts.append(result.stdout.rstrip("\n"))
    if result.stderr:
        parts.append("[stderr]\n" + result.stderr.rstrip("\n"))
    if result.more:
        parts.append(served_text("[more output is kept: call processoutput again]"))
    return "\n".join(parts)


async def wait_for_line(
    process: Background, pattern: Any | None, timeout: float, report: Callable[[str], Awaitable[None]]
) -> tuple[str | None, bool]:
    """Wait until a new line of stdout or stderr matches ``pattern`` (an RE2 object with
    ``search``; None: only the exit), the process exits, or ``timeout`` seconds pass; lines are
    scanned from where the last read ended. Polls every 20 ms (the wake-up latency), reports
    progress through ``report`` about once a second; cancellable.

    Returns:
        ``(the matching line or None, True when the timeout ended the wait)``.
    """
    with process.lock:
        positions = dict(process.read_at)
    pending = {"stdout": b"", "stderr": b""}
    deadline = anyio.current_time() + timeout
    next_report = anyio.current_time() + 1
    while True:
        exited = not process.running  # read after this: the exit's last output is in the buffers
        for name in ("stdout", "stderr"):
            with process.lock:
                data, start, _ = process.stream(name).read(positions[name], process.stream(name).limit)
            positions[name] = start + len(data)
            *lines, pending[name] = (pending[name] + data).split(b"\n")
            if exited and pending[name]:
                lines.append(pending[name])
            if pattern is not None:
                for line in lines:
                    text = line.decode("utf-8", "replace").rstrip("\r")
                    if pattern.search(text):
                        return text, False
            if len(pending[name]) > process.stream(name).limit:  # a line longer than what is kept
                pending[name] = pending[name][-process.stream(name).limit :]
        if exited:
            return None, False
        now = anyio.current_time()
        if now >= deadline:
            return None, True
        if now >= next_report:
            next_report = now + 1
            await report(f"waiting for {process.id}: {state_of(process)['runtime_seconds']} s")
        await anyio.sleep(_POLL_SECONDS)
