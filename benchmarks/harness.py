"""Benchmark harness: a stdio client transport with linear-time line framing, and statistics.

The SDK's ``stdio_client`` re-joins and re-splits its whole buffer for every chunk of a long
line, so reading one large reply costs time quadratic in its size (a 50 MiB reply takes about
20 s). ``linear_stdio`` spawns the server the same way but keeps a byte buffer and scans only
the newly arrived bytes for the newline, so a reply costs time linear in its size. It yields the
same ``(read_stream, write_stream)`` pair, so the SDK's own ``Client``/``ClientSession`` sits on
top of it unchanged and every message still goes through the SDK's parsing and validation.
"""

from __future__ import annotations

import math
import os
import shutil
import statistics
import subprocess
import sysconfig
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import mcp_types as types
from anyio.abc import Process
from mcp.shared.message import SessionMessage

__all__ = [
    "Samples",
    "Spawned",
    "cpu_seconds",
    "linear_stdio",
    "peak_rss_kib",
    "process_cpu",
    "server_command",
]


def server_command() -> str:
    """The installed ``mcp-localtools`` command: next to this interpreter, else on ``PATH``."""
    found = Path(sysconfig.get_path("scripts")) / "mcp-localtools"
    return str(found) if found.exists() else (shutil.which("mcp-localtools") or "mcp-localtools")


@dataclass
class Spawned:
    """The server process behind a ``linear_stdio`` transport."""

    process: Process | None = None

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid


@asynccontextmanager
async def linear_stdio(
    argv: Sequence[str], spawned: Spawned | None = None, *, cwd: str | None = None
) -> AsyncIterator[tuple[object, object]]:
    """Start ``argv`` and speak newline-delimited JSON-RPC with it over its stdin/stdout.

    Args:
        argv: the server command.
        spawned: filled with the process (for its pid), if given.
        cwd: the server's working directory.
    """
    process = await anyio.open_process(
        list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=cwd
    )
    if spawned is not None:
        spawned.process = process
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)

    async def reader() -> None:
        assert process.stdout is not None
        buffer = bytearray()
        scanned = 0
        async with read_writer:
            async for chunk in process.stdout:
                buffer += chunk
                while (end := buffer.find(b"\n", scanned)) != -1:
                    line = bytes(buffer[:end])
                    del buffer[: end + 1]
                    scanned = 0
                    message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                    await read_writer.send(SessionMessage(message))
                scanned = len(buffer)

    async def writer() -> None:
        assert process.stdin is not None
        async with write_reader:
            async for item in write_reader:
                data = item.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                await process.stdin.send(data.encode())

    async with anyio.create_task_group() as group:
        group.start_soon(reader)
        group.start_soon(writer)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                if process.stdin is not None:
                    await process.stdin.aclose()
                with anyio.move_on_after(5):
                    await process.wait()
                if process.returncode is None:
                    process.kill()
                    await process.wait()
            group.cancel_scope.cancel()


def peak_rss_kib(pid: int) -> int:
    """The peak resident set size of a process (``VmHWM``), in KiB."""
    with open(f"/proc/{pid}/status", encoding="utf-8") as handle:
        for line in handle:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise RuntimeError(f"no VmHWM for pid {pid}")


@dataclass
class Samples:
    """Timings of one contender, in seconds."""

    values: list[float] = field(default_factory=list)

    def add(self, seconds: float) -> None:
        self.values.append(seconds)

    @property
    def median(self) -> float:
        return statistics.median(self.values)

    @property
    def p95(self) -> float:
        ordered = sorted(self.values)
        return ordered[min(len(ordered) - 1, math.ceil(0.95 * len(ordered)) - 1)]


def process_cpu(pid: int) -> float:
    """CPU seconds of process ``pid`` so far, every thread's (live or ended), to the nanosecond:
    its CPU-time clock (Linux: ``MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED)``, the id glibc's
    ``clock_getcpuclockid`` makes). ``/proc/PID/stat``'s utime + stime are in 10 ms ticks and
    scaled per thread: the process's total less its live threads' moved by ±1 tick in about one
    call in seven with no thread ending, ±0.2 ms per call over 400 calls of 2 ms.

    Raises:
        OSError: no such process.
    """
    return time.clock_gettime_ns((~pid << 3) | 2) / 1e9


def _reaped_cpu(pid: int) -> float:
    """CPU seconds of the children process ``pid`` has reaped (``/proc/PID/stat``, in ticks)."""
    with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return sum(int(value) for value in fields[13:15]) / os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process (``process_cpu``) and its reaped children."""
    return process_cpu(pid) + _reaped_cpu(pid)
