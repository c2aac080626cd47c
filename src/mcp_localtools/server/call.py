"""One ``tools/call`` on its way through the pipeline: what was asked, and what became of it."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, InputRequiredResult

from mcp_localtools._sdk import progress_requested
from mcp_localtools.results import ToolResult
from mcp_localtools.server.results import to_call_tool_result
from mcp_localtools.server.routes import Route
from mcp_localtools.server.sessions import Session, is_modern
from mcp_localtools.spec import ToolSpec

__all__ = ["Call"]


@dataclass(eq=False)
class Call:
    """A tool call: the request (``name``, ``arguments``, ``route``, ``session``, ``context``)
    and its outcome so far, which the pipeline's steps fill in.

    Attributes:
        result: the call's result; a step that sets it ends the call (a refusal, or the run).
        question: a 2026-07-28 approval question sent back instead of a result (the client
            asks the person and calls again); it ends the call too, and is not a call for the
            audit log.
        approval: the audit line's ``approval`` outcome (``not_required``, ``approved``, ...).
        rule: the ``[approval] require`` entry the call fell under, if any.
        began: ``time.monotonic()`` when the call arrived.
    """

    name: str
    arguments: dict[str, Any]
    route: Route
    session: Session
    context: Context[Any, Any] | None = None
    result: ToolResult | None = None
    question: InputRequiredResult | None = None
    approval: str = "not_required"
    rule: str | None = None
    began: float = field(default_factory=time.monotonic)

    @property
    def spec(self) -> ToolSpec[Any]:
        """The tool's spec in the route's registry."""
        return self.route.registry.get(self.name)

    @property
    def modern(self) -> bool:
        """True for a 2026-07-28 request."""
        return is_modern(self.context)

    @property
    def finished(self) -> bool:
        """True once a step gave the call its result or its question."""
        return self.result is not None or self.question is not None

    @property
    def wants_progress(self) -> bool:
        """True when the client asked for progress on this call (a ``progressToken``, or an
        in-process caller's callback); a tool is then given ``progress``, else None, so a short
        command starts no output streamer (issue 38: no extra tasks for a short command)."""
        return self.context is not None and progress_requested(self.context)

    async def progress(self, done: float, total: float | None, message: str | None) -> None:
        """Report the tool's progress to the client, when it asked for it."""
        if self.context is not None:
            await self.context.report_progress(done, total, message)

    def reply(self) -> CallToolResult | InputRequiredResult:
        """What goes back to the client: the question, else the mapped result."""
        if self.question is not None:
            return self.question
        assert self.result is not None, "a finished call has a result or a question"
        return to_call_tool_result(self.result)
