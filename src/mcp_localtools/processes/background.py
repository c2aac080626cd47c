"""One background process as the process table keeps it: its handle, its two bounded output
buffers (the most recent bytes of each stream, with absolute offsets), its stdin (one write at a
time, closed once it has ended), and reading what is new since a client's last read
(``read_new``)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from mcp_localtools.errors import InvalidArguments
from mcp_localtools.processes.handles import Handle

__all__ = ["STDIN_WAIT_SECONDS", "Background", "NewOutput", "StreamBuffer", "exit_code_of", "read_new"]

STDIN_WAIT_SECONDS = 5.0
"""Longest a write to a process's stdin waits for an earlier write the process has not read."""


class StreamBuffer:
    """The most recent ``limit`` bytes of one stream, addressed by absolute offsets (bytes since
    the process started writing to it). Thread-safe through its owner's lock."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.data = bytearray()
        self.start = 0  # absolute offset of data[0]
        self.total = 0  # bytes written in all

    def write(self, chunk: bytes) -> None:
        self.data += chunk
        self.total += len(chunk)
        excess = len(self.data) - self.limit
        if excess > 0:
            del self.data[:excess]
            self.start += excess

    def read(self, offset: int, max_bytes: int) -> tuple[bytes, int, int]:
        """``(bytes from offset, the offset they start at, bytes lost before them)``: what is
        kept from ``offset`` on, at most ``max_bytes``; an offset older than the buffer starts at
        the oldest byte kept, and the gap is reported as lost."""
        begin = max(offset, self.start)
        lost = begin - offset if offset < self.start else 0
        piece = bytes(self.data[begin - self.start : begin - self.start + max_bytes])
        return piece, begin, lost


@dataclass(eq=False)
class Background:
    """One started process.

    Attributes:
        id: ``proc_`` and 16 random hex digits.
        owner: the MCP session that started it.
        command: the command as given.
        work_dir: its working directory.
        shell: the shell that runs it.
        popen: its handle (``handles.py``): started by the server, or by its session's supervisor.
        started: wall-clock start (seconds since the epoch).
    """

    id: str
    owner: str
    command: str
    work_dir: Path
    shell: str
    popen: Handle
    started: float
    stdout: StreamBuffer
    stderr: StreamBuffer
    lock: threading.Lock = field(default_factory=threading.Lock)
    stdin_lock: threading.Lock = field(default_factory=threading.Lock)
    read_at: dict[str, int] = field(default_factory=lambda: {"stdout": 0, "stderr": 0})
    exit_code: int | None = None
    ended: float | None = None
    last_used: float = field(default_factory=time.monotonic)
    changed: threading.Event = field(default_factory=threading.Event)
    threads: list[threading.Thread] = field(default_factory=list)

    @property
    def running(self) -> bool:
        return self.exit_code is None

    def stream(self, name: str) -> StreamBuffer:
        return self.stdout if name == "stdout" else self.stderr

    def write_stdin(self, data: bytes, *, close: bool) -> None:
        """Send ``data`` to the process's stdin (blocking until the pipe takes it); close it after.
        One write at a time: a write waits at most ``STDIN_WAIT_SECONDS`` for an earlier one that
        the process has not read yet (its call may have been cancelled, its thread left waiting).

        Raises:
            InvalidArguments: the process has ended or its stdin is closed, or an earlier write
                still waits for the process to read.
        """
        if not self.stdin_lock.acquire(timeout=STDIN_WAIT_SECONDS):
            raise InvalidArguments(
                f"an earlier write to {self.id} is still waiting for it to read its stdin; read its "
                "output (processoutput) or stop it (stopprocess)"
            )
        try:
            stdin = self.popen.stdin
            if stdin is None or stdin.closed:
                if not self.running:
                    raise InvalidArguments(
                        f"{self.id} has ended and its stdin is closed; start a new process to send more"
                    )
                raise InvalidArguments(f"the stdin of {self.id} is closed; start a new process to send more")
            try:
                if data:
                    stdin.write(data)
                    stdin.flush()
                if close:
                    stdin.close()
            except (BrokenPipeError, ValueError, OSError) as exc:
                raise InvalidArguments(f"{self.id} no longer reads its stdin (it has ended): {exc}") from None
        finally:
            if not self.running:  # ended while this write held stdin: the reaper left it to us
                _close_quietly(self.popen.stdin)
            self.stdin_lock.release()

    def close_stdin(self) -> None:
        """Close the server's end of the process's stdin (it has ended: nothing more is sent). A
        write in progress closes it itself when it finds the process ended; this waits for it at
        most a second, so the reaper never hangs on a write nobody reads."""
        if self.stdin_lock.acquire(timeout=1.0):
            try:
                _close_quietly(self.popen.stdin)
            finally:
                self.stdin_lock.release()


def _close_quietly(stream: IO[bytes] | None) -> None:
    """Close ``stream`` if it is open; a write that never reached an ended process is no loss."""
    if stream is not None and not stream.closed:
        try:
            stream.close()
        except OSError:
            pass


def exit_code_of(returncode: int) -> int:
    """A process's exit code as a shell reports it: 128 plus the signal that ended it."""
    return 128 - returncode if returncode < 0 else returncode


@dataclass(frozen=True, slots=True)
class NewOutput:
    """Output of one stream read from an offset: its text, where it starts and ends (absolute
    byte offsets), and how many bytes before it are no longer kept."""

    text: str
    start: int
    end: int
    lost: int


def read_new(process: Background, name: str, offset: int | None, max_bytes: int) -> NewOutput:
    """Stream ``name`` of ``process`` from ``offset`` (None: from where the last read of this
    stream ended), at most ``max_bytes``; advances the read position. The text is UTF-8 with
    invalid bytes replaced; a read never ends inside a character."""
    with process.lock:
        begin = process.read_at[name] if offset is None else offset
        data, start, lost = process.stream(name).read(begin, max_bytes)
        data = _whole_characters(data)
        end = start + len(data)
        process.read_at[name] = end
    return NewOutput(data.decode("utf-8", "replace"), start, end, lost)


def _whole_characters(data: bytes) -> bytes:
    """``data`` without a UTF-8 character cut off at its end (the next read starts with it);
    unchanged when that would leave nothing (a stream that ends in invalid bytes)."""
    lead = len(data) - 1
    while lead >= 0 and lead > len(data) - 4 and (data[lead] & 0xC0) == 0x80:
        lead -= 1
    if lead <= 0:
        return data
    first = data[lead]
    need = 2 if first >> 5 == 0b110 else 3 if first >> 4 == 0b1110 else 4 if first >> 3 == 0b11110 else 1
    return data if len(data) - lead >= need else data[:lead]
