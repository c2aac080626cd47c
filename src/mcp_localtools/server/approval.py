"""The approval conversation: asking the person about a call over MCP elicitation, in both eras.

``approval.ApprovalPolicy`` (MCP-free) says which calls need a yes, renders the question and reads
the answer; this module asks. ``Approver.decide(call)`` walks one call through: no rule → not
required; only trusted programs (found outside the roots) → not asked; approved earlier in the
session → not asked; a client that cannot ask → refused (or run, ``on_unsupported = "allow"``);
else the person is asked:

- handshake era (2024-11-05 ... 2025-11-25): an ``elicitation/create`` request on the call's
  connection, awaited within ``[approval] timeout_seconds``;
- 2026-07-28: the call returns an ``InputRequiredResult`` holding the question and a sealed
  request state (a nonce and the time asked); the client asks and calls again with the answer.
  Each question is answered once (``AnsweredQuestions``: a replayed answer is asked again).

A tool with a preview (``ToolSpec.preview``: editfile's dry run) is previewed before the question,
and the person sees the preview; a preview that fails is the call's result, and nobody is asked.
"""

from __future__ import annotations

import json
import logging
import secrets
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

import anyio
from mcp import MCPError
from mcp.types import ElicitRequest, ElicitRequestFormParams, ElicitResult, InputRequiredResult
from pydantic import ValidationError

from mcp_localtools.approval import Answer, ApprovalPolicy, read_answer
from mcp_localtools.errors import (
    ApprovalDenied,
    ApprovalTimeout,
    ApprovalUnanswered,
    ApprovalUnavailable,
    InvalidArguments,
    PolicyViolation,
    ToolError,
)
from mcp_localtools.results import ToolResult
from mcp_localtools.server.call import Call

__all__ = ["APPROVAL_INPUT", "AnsweredQuestions", "Approver", "Decision"]

logger = logging.getLogger(__name__)

APPROVAL_INPUT = "mcp-localtools/approval"
"""The key of the approval question in a 2026-07-28 ``InputRequiredResult``."""

_MAX_ANSWERED = 100_000
"""Most answered 2026-07-28 questions remembered (so that an answer is used once)."""


@dataclass(frozen=True, slots=True)
class Decision:
    """What became of a call's approval.

    Attributes:
        outcome: the audit line's ``approval`` value (``not_required``, ``trusted_commands``,
            ``session``, ``approved``, ``approved_for_session``, ``denied``, ``timeout``,
            ``cancelled``, ``failed``,
            ``unsupported``, ``allowed_unsupported``, ``not_asked``, ``asked``).
        rule: the ``[approval] require`` entry the call fell under.
        refusal: the call's result when it must not run (denied, timed out, cannot ask, its
            preview failed); None: run it.
        question: the 2026-07-28 question to send back instead of a result (``outcome`` is
            ``asked``).
        pins: arguments added to the call before it runs, so that it runs exactly what the
            person was shown (``ToolSpec.pinned``: runscript's ``expectedSha256``).
    """

    outcome: str
    rule: str | None = None
    refusal: ToolResult | None = None
    question: InputRequiredResult | None = None
    pins: Mapping[str, Any] | None = None


NOT_REQUIRED = Decision("not_required")


class AnsweredQuestions:
    """The 2026-07-28 questions already answered, by nonce, so that each answer is used once.
    Bounded: entries older than twice the approval timeout (plus a minute) go first, and at most
    ``limit`` are kept."""

    def __init__(self, timeout: float, limit: int = _MAX_ANSWERED) -> None:
        self._timeout = timeout
        self._limit = limit
        self._answered: OrderedDict[str, float] = OrderedDict()

    def __len__(self) -> int:
        return len(self._answered)

    def take(
        self, responses: Mapping[str, Any] | None, request_state: str | None
    ) -> tuple[ElicitResult | None, bool, dict[str, Any]]:
        """The answer a 2026-07-28 client sent back (its ``inputResponses``) with the state of our
        question: ``(answer, expired)``; ``(None, False)`` when there is none to use (no state, no
        answer, or an answer already used). The state is sealed and bound to this tool and these
        arguments by the SDK (``RequestStateBoundary``). The third item is the pins the question
        was asked with (``Decision.pins``)."""
        response = (responses or {}).get(APPROVAL_INPUT)
        try:
            state = json.loads(request_state or "null")
            nonce, asked = str(state["approval"]), float(state["asked"])
            pins = dict(state.get("pins") or {})
        except (ValueError, TypeError, KeyError, AttributeError):
            return None, False, {}
        if not isinstance(response, ElicitResult) or nonce in self._answered:
            return None, False, {}
        now = time.time()
        self._forget_old(now)
        self._answered[nonce] = now
        if now - asked > self._timeout:
            return None, True, {}
        return response, False, pins

    def _forget_old(self, now: float) -> None:
        oldest = now - 2 * self._timeout - 60
        while self._answered and (
            next(iter(self._answered.values())) < oldest or len(self._answered) > self._limit
        ):
            self._answered.popitem(last=False)


def _cannot_ask(call: Call) -> str | None:
    """Why the call's client cannot be asked (it lacks form elicitation, or its handshake-era
    connection cannot send requests), or None when it can."""
    context = call.context
    capabilities = context.client_capabilities if context is not None else None
    elicitation = capabilities.elicitation if capabilities is not None else None
    if (
        context is None
        or elicitation is None
        or (elicitation.form is None and elicitation.url is not None)
        or (not call.modern and not context.session.can_send_request)
    ):
        return "it does not support MCP elicitation (form mode)"
    return None


class Approver:
    """Decides and, where needed, asks about the calls ``policy`` names (``decide``).

    Args:
        policy: the ``[approval]`` policy (remembers "approve for this session" answers).
        answered: the replay cache of 2026-07-28 answers (one is made when omitted).
    """

    def __init__(self, policy: ApprovalPolicy, answered: AnsweredQuestions | None = None) -> None:
        self.policy = policy
        self.answered = answered or AnsweredQuestions(policy.config.timeout_seconds)

    def rule_for(self, call: Call) -> str | None:
        """The ``[approval] require`` entry ``call`` falls under; None for a preview (it changes
        nothing) or a call no entry names."""
        spec = call.spec
        if spec.preview is not None and spec.preview.asked(call.arguments):
            return None
        return self.policy.rule_for(spec)

    async def decide(self, call: Call) -> Decision:
        """The approval of ``call``, asking the person when the policy wants it."""
        rule = self.rule_for(call)
        if rule is None:
            return NOT_REQUIRED
        locate = partial(call.route.registry.locate, call.name, call.arguments, session_id=call.session.id)
        if await self.policy.trusted(call.spec, call.arguments, locate):
            return Decision("trusted_commands", rule)
        if call.modern:
            return await self._ask_modern(call, rule)
        shown, pins, refusal = await self._pinned(call)
        if refusal is not None:
            return Decision("not_asked", rule, refusal)
        if self.policy.approved_for_session(call.session.id, self._key(call, pins)):
            return Decision("session", rule, pins=pins)
        why = _cannot_ask(call)
        if why is not None:
            return self._unsupported(call, rule, why, pins)
        return await self._ask_handshake(call, rule, shown, pins)

    def _key(self, call: Call, pins: Mapping[str, Any]) -> str:
        """What "approve for this session" approves: the tool, its arguments and pins, and the
        roots and base directory they were asked in (a relative path means another file in other
        roots, even when the answer arrives after the session's roots changed)."""
        space = call.route.workspace
        roots = ", ".join(map(str, space.paths.roots)) if space is not None else ""
        where = f" in {call.route.base_dir} [{roots}]"
        return self.policy.session_key(call.spec, {**call.arguments, **pins}) + where

    async def _pinned(self, call: Call) -> tuple[str | None, dict[str, Any], ToolResult | None]:
        """What the question shows of the content the call runs and the arguments that pin it
        (``ToolSpec.pinned``), or the refusal of a call whose content cannot be read."""
        if call.spec.pinned is None:
            return None, {}, None
        try:
            shown, pins = await call.spec.pinned(call.arguments)
        except ToolError as exc:
            return None, {}, ToolResult.failure(exc.code, str(exc), policy=isinstance(exc, PolicyViolation))
        except ValidationError as exc:
            return None, {}, ToolResult.failure(InvalidArguments.code, str(exc))
        return shown, pins, None

    async def _ask_modern(self, call: Call, rule: str) -> Decision:
        assert call.context is not None
        answer, expired, asked_pins = self.answered.take(
            call.context.input_responses, call.context.request_state
        )
        if expired:
            return self._timed_out(call, rule)
        if answer is not None:  # run what the question showed: the pins it was asked with
            return self._verdict(call, rule, read_answer(answer.action, answer.content), asked_pins)
        shown, pins, refusal = await self._pinned(call)
        if refusal is not None:
            return Decision("not_asked", rule, refusal)
        why = _cannot_ask(call)
        if why is not None:
            return self._unsupported(call, rule, why, pins)
        message, refusal = await self._question(call, rule, shown)
        if refusal is not None:
            return Decision("not_asked", rule, refusal)
        schema = self.policy.form_schema(sessions=not call.session.stateless)
        request = ElicitRequest(params=ElicitRequestFormParams(message=message, requested_schema=schema))
        state = json.dumps({"approval": secrets.token_urlsafe(16), "asked": time.time(), "pins": pins})
        question = InputRequiredResult(input_requests={APPROVAL_INPUT: request}, request_state=state)
        return Decision("asked", rule, question=question)

    async def _ask_handshake(
        self, call: Call, rule: str, shown: str | None, pins: dict[str, Any]
    ) -> Decision:
        assert call.context is not None
        message, refusal = await self._question(call, rule, shown)
        if refusal is not None:
            return Decision("not_asked", rule, refusal)
        schema = self.policy.form_schema(sessions=not call.session.stateless)
        context = call.context
        try:
            with anyio.fail_after(self.policy.config.timeout_seconds):
                answer = await context.session.elicit_form(
                    message, schema, related_request_id=context.request_id
                )
        except TimeoutError:
            return self._timed_out(call, rule)
        except MCPError as exc:  # it can ask (it declared elicitation), but this question failed
            logger.info("elicitation for %s failed: %s", call.name, exc)
            return self._unanswered(call, rule, "failed", f"it failed: {exc}")
        return self._verdict(call, rule, read_answer(answer.action, answer.content), pins)

    async def _question(self, call: Call, rule: str, details: str | None) -> tuple[str, ToolResult | None]:
        """The question for the person and, for a tool with a preview, the preview in it; or
        the preview's error result when the call cannot succeed (then nobody is asked)."""
        spec, registry = call.spec, call.route.registry
        shown = None
        if spec.preview is not None:
            preview = spec.preview.of(call.arguments)
            dry = await registry.call(call.name, preview, session_id=call.session.id)
            if dry.is_error:
                return "", dry
            shown = spec.preview.shown(dry)
        try:
            message = self.policy.prompt(
                spec, call.arguments, rule=rule, base_dir=call.route.base_dir, preview=shown, details=details
            )
        except ApprovalDenied as exc:  # too long to show: refused, nobody asked
            return "", ToolResult.failure(exc.code, str(exc), policy=True)
        return message, None

    def _verdict(self, call: Call, rule: str, verdict: Answer, pins: dict[str, Any]) -> Decision:
        if verdict == "denied":
            return Decision(
                "denied",
                rule,
                ToolResult.failure(
                    ApprovalDenied.code,
                    f"{call.name} was not run: the user denied it. Do not repeat the call; "
                    "ask the user what to do instead.",
                    policy=True,
                ),
            )
        if verdict == "cancelled":
            return self._unanswered(call, rule, verdict, "the question was cancelled, not declined")
        if verdict == "failed":
            return self._unanswered(call, rule, verdict, "the client sent no answer it could read")
        if verdict == "approved_for_session":
            if call.session.stateless or not self.policy.config.session_approval:
                verdict = "approved"  # not offered there: an answer naming it approves this call only
            else:
                self.policy.remember(call.session.id, self._key(call, pins))
        return Decision(verdict, rule, pins=pins)

    def _unanswered(self, call: Call, rule: str, outcome: str, why: str) -> Decision:
        """A question nobody answered (``outcome``: ``cancelled`` or ``failed``, as the audit
        line records it): unlike a decline, the call may be asked again."""
        return Decision(
            outcome,
            rule,
            ToolResult.failure(
                ApprovalUnanswered.code,
                f"{call.name} was not run: nobody answered the approval request ({why}); call again to "
                "ask again, or ask the user what to do",
                policy=True,
            ),
        )

    def _timed_out(self, call: Call, rule: str) -> Decision:
        timeout = self.policy.config.timeout_seconds
        return Decision(
            "timeout",
            rule,
            ToolResult.failure(
                ApprovalTimeout.code,
                f"{call.name} was not run: nobody answered the approval request within {timeout:g} s; "
                "ask the user, then call again",
                policy=True,
            ),
        )

    def _unsupported(self, call: Call, rule: str, why: str, pins: dict[str, Any]) -> Decision:
        if self.policy.config.on_unsupported == "allow":
            return Decision("allowed_unsupported", rule, pins=pins)
        return Decision(
            "unsupported",
            rule,
            ToolResult.failure(
                ApprovalUnavailable.code,
                f"{call.name} was not run: it needs the user's approval ([approval] require has {rule!r}) "
                f"and this client cannot ask: {why}. Use a client that supports MCP elicitation, or the "
                'user can remove it from [approval] require or set [approval] on_unsupported = "allow"',
                policy=True,
            ),
        )
