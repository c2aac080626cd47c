"""Output as progress notifications while a command runs.

When the client sent a progress token, each complete line a command writes goes out as the
message of an MCP progress notification, in the order it arrived (stderr lines prefixed with
``[stderr] ``), with a ``$ command`` line before each command. Lines that arrive while a
notification is being sent are joined into the next one, so a fast producer costs a few large
notifications rather than one per line. At most ``limit`` bytes are streamed per call; the rest
is only in the result. A line that grows to the limit without ending is streamed as it is (cut),
so output without newlines costs no more memory or time than the limit. The progress value
counts notifications (1, 2, 3, ...): it only grows.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from mcp_localtools.errors import ToolError
from mcp_localtools.spec import CallContext

__all__ = ["OutputStreamer", "streaming"]

_MESSAGE_CHARS = 16_384


class OutputStreamer:
    """Turns command output into ordered progress notifications.

    Use it inside a task group: ``tg.start_soon(streamer.send_all)``, then ``command()`` and
    ``feed()`` while commands run, and ``await streamer.finish()`` before returning.

    Args:
        context: the call's context; its ``report_progress`` sends the notifications.
        limit: most output bytes streamed in the whole call.
    """

    def __init__(self, context: CallContext, limit: int) -> None:
        self._context = context
        self._budget = limit
        self._partial: dict[str, bytearray] = {"stdout": bytearray(), "stderr": bytearray()}
        self._send: MemoryObjectSendStream[str]
        self._receive: MemoryObjectReceiveStream[str]
        self._send, self._receive = anyio.create_memory_object_stream[str](math.inf)
        self._sent = 0
        self._done = anyio.Event()

    def command(self, text: str) -> None:
        """Announce the next command."""
        self._flush_partial()
        self._queue(f"$ {text}")

    def feed(self, stream: str, data: bytes) -> None:
        """Take a chunk of ``stream`` (``"stdout"`` or ``"stderr"``) output: complete lines are
        queued, the unfinished last line waits for its end, or is queued once it reaches the
        streaming budget. O(len(data)): earlier output is neither copied nor scanned again."""
        if self._budget <= 0:
            return
        partial = self._partial[stream]
        cut = data.rfind(b"\n") + 1
        if cut:
            self._emit(stream, bytes(partial) + data[:cut])
            partial.clear()
            if self._budget <= 0:
                return
        partial += data[cut:]
        if len(partial) >= self._budget:
            self._emit(stream, bytes(partial))
            partial.clear()

    def _emit(self, stream: str, data: bytes) -> None:
        if len(data) >= self._budget:
            data = data[: self._budget]
            self._budget = 0
            text = data.decode("utf-8", "replace").rstrip("\n")
            text += "\n[output streaming stopped here; the result has the captured output]"
        else:
            self._budget -= len(data)
            text = data.decode("utf-8", "replace").rstrip("\n")
        if stream == "stderr":
            text = "\n".join(f"[stderr] {line}" for line in text.split("\n"))
        self._queue(text)

    def _flush_partial(self) -> None:
        for stream, rest in self._partial.items():
            if rest and self._budget > 0:
                self._emit(stream, bytes(rest))
            rest.clear()

    def _queue(self, text: str) -> None:
        try:
            self._send.send_nowait(text)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass

    async def send_all(self) -> None:
        """Send queued messages until ``finish()``; joins what piles up during a send."""
        try:
            async with self._receive:
                async for first in self._receive:
                    batch = [first]
                    size = len(first)
                    while size < _MESSAGE_CHARS:
                        try:
                            batch.append(self._receive.receive_nowait())
                        except (anyio.WouldBlock, anyio.EndOfStream):
                            break
                        size += len(batch[-1])
                    self._sent += 1
                    await self._context.report_progress(self._sent, None, "\n".join(batch))
        finally:
            self._done.set()

    async def finish(self) -> None:
        """Queue the unfinished last lines, then wait until everything queued has been sent."""
        self._flush_partial()
        self._send.close()
        await self._done.wait()

    def close(self) -> None:
        """Stop taking messages (when the commands ended with an error or were cancelled: what is
        queued is dropped with the sending task)."""
        self._send.close()


@asynccontextmanager
async def streaming(context: CallContext, limit: int) -> AsyncIterator[OutputStreamer | None]:
    """An ``OutputStreamer`` sending in a task group of its own for the body's commands, finished
    (everything queued sent) when the body ends; None, and no task or task group at all, when the
    caller did not ask for progress (a short command then costs what running it costs).

    A ``ToolError`` the body raises (a sandbox that stopped between commands) reaches the caller
    as itself, not wrapped in the task group's ``ExceptionGroup``: its code is the same whether
    the client watches the output or not.

    Args:
        context: the call's context (``progress`` None: nothing is streamed).
        limit: most output bytes streamed in the whole call.
    """
    if context.progress is None:
        yield None
        return
    try:
        async with anyio.create_task_group() as tasks:
            streamer = OutputStreamer(context, limit)
            tasks.start_soon(streamer.send_all)
            try:
                yield streamer
                await streamer.finish()
            finally:
                streamer.close()  # a body that raised or was cancelled left it open
    except ExceptionGroup as group:
        refusals = [error for error in group.exceptions if isinstance(error, ToolError)]
        if len(group.exceptions) == 1 and refusals:
            raise refusals[0] from None
        raise
