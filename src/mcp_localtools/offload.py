"""Run a blocking tool body in a worker thread, so file work never blocks the event loop."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio.to_thread

from mcp_localtools.results import ToolResult
from mcp_localtools.spec import CallContext, ToolArgs

__all__ = ["offload", "offload_check"]

ArgsT = TypeVar("ArgsT", bound=ToolArgs)
R = TypeVar("R", ToolResult, None)


def offload(body: Callable[[ArgsT], R]) -> Callable[[ArgsT, CallContext], Awaitable[R]]:
    """Wrap a synchronous ``body(args) -> ToolResult`` as an async handler (or a ``body(args) ->
    None`` that raises a ``ToolError`` as an async ``ToolSpec.check``).

    The body runs in anyio's worker thread pool. If the call is cancelled or times out, the
    await returns at once (``abandon_on_cancel``) and the thread's eventual result is dropped:
    a hung filesystem costs one thread, never the server. Bodies must therefore be safe to
    abandon: they write nothing that a later call could observe half-done (writes go through
    a temporary file and a rename), and they call ``files.atomic.stop_if_cancelled`` before making a
    change visible, so an abandoned call does not commit after its caller was told it stopped.
    """

    async def handler(args: ArgsT, ctx: CallContext) -> R:
        return await anyio.to_thread.run_sync(body, args, abandon_on_cancel=True)

    return handler


def offload_check(target: Callable[[ArgsT], object]) -> Callable[[ArgsT, CallContext], Awaitable[None]]:
    """A ``ToolSpec.check`` that runs ``target(args)`` in a worker thread and drops what it returns:
    ``target`` is the policy work a tool body starts with (resolving and checking its paths), so
    the check refuses exactly what the body would (it raises the same ``ToolError``)."""

    def check(args: ArgsT) -> None:
        target(args)

    return offload(check)
