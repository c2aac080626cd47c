"""The stdio transport's byte I/O (``stdio.py``): lines read with a bound, and a wire that is a
pipe or a socket (as clients start servers) read and written by the event loop itself,
non-blocking, so a call costs no thread hand-off for its request or its reply; a file, a
terminal, and Windows, are read and written in worker threads."""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass

import anyio
import anyio.to_thread

from mcp_localtools.jsonrpc import ID_SCAN_BYTES

__all__ = ["Oversized", "non_blocking", "read_lines", "restore", "write"]

_CHUNK = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Oversized:
    """A line longer than the limit: its first bytes and its full length."""

    prefix: bytes
    length: int


async def read_lines(
    fd: int, max_line_bytes: int, *, polled: bool = False
) -> AsyncIterator[bytes | Oversized]:
    """Lines of ``fd`` without their newline, until EOF (a last line without newline counts).

    A line over ``max_line_bytes`` is yielded as ``Oversized``: only its first
    ``ID_SCAN_BYTES`` are kept, the rest is read and dropped, so memory stays within
    ``max_line_bytes`` plus one read chunk whatever arrives. ``polled``: ``fd`` is non-blocking
    and read by the event loop (``_read``)."""
    buffer = bytearray()
    dropping: Oversized | None = None
    while True:
        chunk = await _read(fd, polled)
        if not chunk:
            break
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            piece = memoryview(chunk)[start : len(chunk) if end < 0 else end]
            if dropping is not None:
                dropping = Oversized(dropping.prefix, dropping.length + len(piece))
            elif len(buffer) + len(piece) > max_line_bytes:
                prefix = bytes(buffer[:ID_SCAN_BYTES]) + bytes(piece[: max(0, ID_SCAN_BYTES - len(buffer))])
                dropping = Oversized(prefix, len(buffer) + len(piece))
                buffer = bytearray()
            else:
                buffer += piece
            if end < 0:
                break
            if dropping is not None:
                yield dropping
                dropping = None
            else:
                yield bytes(buffer)
                buffer = bytearray()
            start = end + 1
    if dropping is not None:
        yield dropping
    elif buffer.strip():
        yield bytes(buffer)


if sys.platform == "win32":  # pragma: no cover - the Proactor loop waits on no pipe

    def non_blocking(fd: int) -> tuple[bool, bool]:
        """Windows: the wire is read and written by worker threads."""
        return False, False

    def restore(fd: int, changed: bool) -> None:
        """Windows: nothing was changed."""

else:

    def non_blocking(fd: int) -> tuple[bool, bool]:
        """``(polled, changed)``: ``fd`` is a pipe or a socket, now non-blocking, that the event
        loop reads or writes itself (else it stays as it is, with the worker threads: a file or
        a terminal); ``changed``: it was made non-blocking here, and ``restore`` makes it
        blocking again (the description may outlive us)."""
        try:
            mode = os.fstat(fd).st_mode
        except OSError:
            return False, False
        if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
            return False, False
        if not os.get_blocking(fd):
            return True, False
        os.set_blocking(fd, False)
        return True, True

    def restore(fd: int, changed: bool) -> None:
        """Make ``fd`` blocking again when ``non_blocking`` changed it."""
        if changed:
            try:
                os.set_blocking(fd, True)
            except OSError:
                pass


async def _read(fd: int, polled: bool) -> bytes:
    """The next bytes of ``fd`` (empty at EOF): read by the event loop when it waits on ``fd``
    (``polled``: non-blocking), else in a worker thread."""
    if not polled:
        return await anyio.to_thread.run_sync(os.read, fd, _CHUNK, abandon_on_cancel=True)
    while True:
        try:
            return os.read(fd, _CHUNK)
        except BlockingIOError:
            await anyio.wait_readable(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


async def _write_polled(fd: int, data: bytes) -> None:
    """Write ``data`` to the non-blocking ``fd`` from the event loop: what the pipe takes now,
    the rest as it drains (raises ``OSError`` when the reader is gone)."""
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view) :]
        except BlockingIOError:
            await anyio.wait_writable(fd)


async def write(fd: int, data: bytes, *, polled: bool) -> None:
    """Write all of ``data`` to ``fd``: from the event loop when ``polled`` (``non_blocking``),
    else in a worker thread (raises ``OSError`` when the reader is gone)."""
    if polled:
        await _write_polled(fd, data)
    else:
        await anyio.to_thread.run_sync(_write_all, fd, data)
