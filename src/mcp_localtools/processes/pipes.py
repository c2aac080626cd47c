"""Pipe descriptors as anyio byte streams, for the commands a session's supervisor runs
(``supervised.py``): the server makes the pipes and reads them on its event loop."""

from __future__ import annotations

import os

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream

from mcp_localtools import compat

__all__ = ["FdReader", "FdWriter"]


class FdReader(ByteReceiveStream):
    """The read end of a pipe (or a pseudo-terminal's master) as an anyio byte stream; takes the
    descriptor over. A pseudo-terminal's EIO (its other side closed) is the end of the stream."""

    def __init__(self, fd: int) -> None:
        compat.set_blocking(fd, False)
        self.fd = fd

    async def receive(self, max_bytes: int = 65536) -> bytes:
        while True:
            if self.fd < 0:
                raise anyio.ClosedResourceError
            try:
                data = os.read(self.fd, max_bytes)
            except BlockingIOError:
                await anyio.wait_readable(self.fd)
                continue
            except OSError:  # EIO from a pty whose last user is gone
                raise anyio.EndOfStream from None
            if not data:
                raise anyio.EndOfStream
            return data

    def read_ready(self, max_bytes: int) -> bytes:
        """What the pipe holds now, at most ``max_bytes``, without waiting (b"" when empty)."""
        chunks: list[bytes] = []
        while self.fd >= 0 and max_bytes > 0:
            try:
                data = os.read(self.fd, min(max_bytes, 65536))
            except OSError:  # empty (EAGAIN), or a pty's EIO
                break
            if not data:
                break
            chunks.append(data)
            max_bytes -= len(data)
        return b"".join(chunks)

    async def aclose(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


class FdWriter(ByteSendStream):
    """The write end of a pipe as an anyio byte stream; takes the descriptor over."""

    def __init__(self, fd: int) -> None:
        compat.set_blocking(fd, False)
        self.fd = fd

    async def send(self, item: bytes) -> None:
        view = memoryview(item)
        while view:
            if self.fd < 0:
                raise anyio.ClosedResourceError
            try:
                written = os.write(self.fd, view)
            except BlockingIOError:
                await anyio.wait_writable(self.fd)
                continue
            except (BrokenPipeError, ConnectionResetError):
                raise anyio.BrokenResourceError from None
            view = view[written:]

    async def aclose(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
