"""The order of a ``tools/call``, as one list of steps.

::

    AuditGate → PolicyCheck → Approval → Run    each may end the call (a refusal, a question,
                                                the result)
    AuditLine                                   always, last, also for a cancelled call

A step is a small object called with the ``Call``; it reads what earlier steps found and may
set ``call.result`` (or ``call.question``), which ends the call: the later steps are skipped and
only the closing step runs. Nothing else decides the order: ``build.py`` makes the list, and
``adapter.py`` sends every call through it.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Protocol

import anyio
import anyio.to_thread
from mcp.types import CallToolResult, InputRequiredResult

from mcp_localtools.audit import AuditLog
from mcp_localtools.errors import AuditUnavailable, UnknownToolError
from mcp_localtools.results import ToolResult
from mcp_localtools.server.approval import Approver
from mcp_localtools.server.call import Call

__all__ = ["Approval", "AuditGate", "AuditLine", "Pipeline", "PolicyCheck", "Run", "Step"]


class Step(Protocol):
    """One step of a call: reads and updates ``call``; setting ``call.result`` ends the call."""

    async def __call__(self, call: Call) -> None: ...


class AuditGate:
    """``[audit] required``: refuse the call while the audit log cannot be written."""

    def __init__(self, audit: AuditLog) -> None:
        self.audit = audit

    async def __call__(self, call: Call) -> None:
        if not self.audit.required or await anyio.to_thread.run_sync(self.audit.ready):
            return
        call.result = ToolResult.failure(
            AuditUnavailable.code,
            f"{call.name} was not run: the audit log cannot be written ({self.audit.failure}) and "
            "[audit] required = true refuses every call until it can; tell the user",
            policy=True,
        )


class PolicyCheck:
    """Before anyone is asked: a call that needs approval is first put to its tool's own policy
    checks (``Registry.check``: the arguments, path resolution, the execution policy), so nobody
    is asked about a call the policy will refuse; a refusal ends the call (approval
    ``not_asked``)."""

    def __init__(self, approver: Approver) -> None:
        self.approver = approver

    async def __call__(self, call: Call) -> None:
        call.rule = self.approver.rule_for(call)
        if call.rule is None:
            return
        refusal = await call.route.registry.check(
            call.name, call.arguments, session_id=call.session.id, client_name=call.session.client_name
        )
        if refusal is not None:
            call.result, call.approval = refusal, "not_asked"


class Approval:
    """``[approval]``: ask the person when the policy wants it (``Approver.decide``); a refusal
    or a 2026-07-28 question ends the call."""

    def __init__(self, approver: Approver) -> None:
        self.approver = approver

    async def __call__(self, call: Call) -> None:
        decision = await self.approver.decide(call)
        call.approval, call.rule = decision.outcome, decision.rule
        call.result, call.question = decision.refusal, decision.question
        if decision.pins:  # run exactly what the person was shown (runscript's expectedSha256)
            call.arguments = {**call.arguments, **decision.pins}


class Run:
    """Run the tool through its registry (validation, timeout, result budget)."""

    async def __call__(self, call: Call) -> None:
        call.result = await call.route.registry.call(
            call.name,
            call.arguments,
            progress=call.progress if call.wants_progress else None,
            session_id=call.session.id,
            client_name=call.session.client_name,
        )


class AuditLine:
    """``[audit]``: one line for every call, whatever became of it (a call the client cancelled
    gets its line too); a 2026-07-28 question round is not a call and gets none."""

    def __init__(self, audit: AuditLog) -> None:
        self.audit = audit

    async def __call__(self, call: Call) -> None:
        if call.question is not None:
            return
        done = call.result or ToolResult.failure("cancelled", f"{call.name} was cancelled by the client")
        line = partial(
            self.audit.record,
            session=call.session.id,
            client=call.session.client_name,
            tool=call.name,
            arguments=call.arguments,
            result=done,
            approval=call.approval,
            approval_rule=call.rule,
            refused_by=done.error.code if done.error and done.error.policy else None,
            began=call.began,
            profile=call.route.profile,
            ran_commands=_ran_commands(call),
        )
        with anyio.CancelScope(shield=True):  # scrubbing and JSON run off the event loop too
            await anyio.to_thread.run_sync(lambda: self.audit.write(line()))


def _ran_commands(call: Call) -> bool:
    """Whether the call's tool reports command lines its arguments do not hold (a declared tool:
    its ``ToolSpec.commands`` is set); False for a tool the route does not know."""
    try:
        return call.spec.commands is not None
    except UnknownToolError:
        return False


class _Nothing:
    async def __call__(self, call: Call) -> None:
        return None


class Pipeline:
    """Runs a call through ``steps`` in order until one finishes it, then ``last`` (always).

    Args:
        steps: the steps, in order (``Run`` last).
        last: the closing step (the audit line); runs even when a step raised or the call was
            cancelled.
    """

    def __init__(self, steps: Sequence[Step], last: Step | None = None) -> None:
        self.steps = tuple(steps)
        self.last: Step = last or _Nothing()

    @classmethod
    def of(cls, *, audit: AuditLog | None = None, approver: Approver | None = None) -> Pipeline:
        """The server's pipeline: ``AuditGate → PolicyCheck → Approval → Run``, then
        ``AuditLine``; a step whose section is off is left out."""
        steps: list[Step] = []
        if audit is not None:
            steps.append(AuditGate(audit))
        if approver is not None:
            steps += [PolicyCheck(approver), Approval(approver)]
        steps.append(Run())
        return cls(steps, AuditLine(audit) if audit is not None else None)

    async def __call__(self, call: Call) -> CallToolResult | InputRequiredResult:
        try:
            for step in self.steps:
                await step(call)
                if call.finished:
                    break
        finally:
            await self.last(call)
        return call.reply()
