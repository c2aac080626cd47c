"""The call pipeline: each step alone, then the order (a finished call skips the rest, the audit
line always runs)."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import anyio
import pytest

from mcp_localtools.approval import ApprovalPolicy
from mcp_localtools.audit import AuditLog, Scrubber
from mcp_localtools.config import ApprovalConfig, AuditConfig
from mcp_localtools.errors import OutsideAllowedRoots
from mcp_localtools.registry import Registry
from mcp_localtools.results import ToolResult
from mcp_localtools.server.approval import Approver
from mcp_localtools.server.call import Call
from mcp_localtools.server.pipeline import Approval, AuditGate, AuditLine, Pipeline, PolicyCheck, Run, Step
from mcp_localtools.server.routes import Route
from mcp_localtools.server.sessions import Session
from mcp_localtools.spec import DRY_RUN, CallContext, ToolSpec
from tests.test_registry import EchoArgs, EchoResult, spec

pytestmark = pytest.mark.anyio


def _registry(*specs: ToolSpec) -> Registry:  # type: ignore[type-arg]
    registry = Registry()
    for one in specs or (spec(),):
        registry.register(one)
    return registry


def _call(registry: Registry, name: str = "echo", arguments: dict[str, object] | None = None) -> Call:
    route = Route.of(registry, base_dir="/work", profile="dev")
    return Call(name, dict(arguments or {}), route, Session("mcp-7", "tester"))


def _audit(path: Path, *, required: bool = False) -> AuditLog:
    config = AuditConfig(enabled=True, path=str(path), required=required)
    return AuditLog.from_config(config, {})


def _approver(**settings: object) -> Approver:
    config = ApprovalConfig.model_validate({"require": ["echo"], **settings})
    return Approver(ApprovalPolicy.create(config, ["echo"], scrubber=Scrubber.of(AuditConfig())))


async def test_the_audit_gate_refuses_while_a_required_log_cannot_be_written(tmp_path: Path) -> None:
    (tmp_path / "blocker").write_text("a file where the log's directory should be", encoding="utf-8")
    call = _call(_registry())
    await AuditGate(_audit(tmp_path / "blocker" / "audit.jsonl", required=True))(call)
    assert call.result is not None and call.result.error is not None
    assert call.result.error.code == "audit_unavailable" and call.result.error.policy


async def test_the_audit_gate_lets_a_call_through_when_the_log_is_not_required(tmp_path: Path) -> None:
    (tmp_path / "blocker").write_text("x", encoding="utf-8")
    call = _call(_registry())
    await AuditGate(_audit(tmp_path / "blocker" / "audit.jsonl"))(call)
    await AuditGate(_audit(tmp_path / "ok" / "audit.jsonl", required=True))(call)
    assert call.result is None


async def test_approval_refuses_a_call_whose_client_cannot_be_asked() -> None:
    call = _call(_registry())
    await Approval(_approver())(call)
    assert (call.approval, call.rule) == ("unsupported", "echo")
    assert call.result is not None and call.result.error is not None
    assert call.result.error.code == "approval_unavailable"


async def test_approval_lets_a_call_run_unasked_when_on_unsupported_allows_it() -> None:
    call = _call(_registry())
    await Approval(_approver(on_unsupported="allow"))(call)
    assert (call.approval, call.rule, call.result) == ("allowed_unsupported", "echo", None)


async def test_approval_does_not_ask_about_a_preview_it_changes_nothing() -> None:
    class DryArgs(EchoArgs):
        dry_run: bool = False

    DryArgs.model_fields["dry_run"].description = "Only preview."
    registry = _registry(replace(spec(args_model=DryArgs), preview=DRY_RUN))
    asked, previewed = (
        _call(registry, arguments={"dryRun": False}),
        _call(registry, arguments={"dryRun": True}),
    )
    await Approval(_approver())(asked)
    await Approval(_approver())(previewed)
    assert asked.approval == "unsupported"
    assert (previewed.approval, previewed.rule, previewed.result) == ("not_required", None, None)


async def test_approval_of_a_tool_the_policy_does_not_name_is_not_required() -> None:
    call = _call(_registry(spec(name="other")), name="other")
    await Approval(_approver())(call)
    assert (call.approval, call.rule, call.result) == ("not_required", None, None)


async def test_run_calls_the_tool_as_the_calls_session_and_client() -> None:
    seen: list[tuple[str, str | None]] = []

    async def whoami(args: EchoArgs, ctx: CallContext) -> ToolResult:
        seen.append((ctx.session_id, ctx.client_name))
        return ToolResult.of(EchoResult(text=args.text))

    call = _call(_registry(spec(handler=whoami)), arguments={"text": "x"})
    await Run()(call)
    assert seen == [("mcp-7", "tester")]
    assert call.result is not None and call.result.structured == {"text": "x"}


async def test_the_audit_line_records_the_outcome_approval_and_profile(tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    call = _call(_registry(), arguments={"text": "x"})
    call.approval, call.rule = "approved", "echo"
    await Run()(call)
    await AuditLine(_audit(log))(call)
    (line,) = [json.loads(text) for text in log.read_text(encoding="utf-8").splitlines()]
    assert line["tool"] == "echo" and line["session"] == "mcp-7" and line["client"] == "tester"
    assert (line["approval"], line["approval_rule"], line["profile"]) == ("approved", "echo", "dev")
    assert line["decision"] == "allowed" and line["result"] == "ok"


async def test_a_call_without_a_result_is_logged_as_cancelled(tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    await AuditLine(_audit(log))(_call(_registry()))
    assert json.loads(log.read_text(encoding="utf-8"))["error_code"] == "cancelled"


class _Record:
    def __init__(self, name: str, seen: list[str], *, finish: bool = False, fail: bool = False) -> None:
        self.name, self.seen, self.finish, self.fail = name, seen, finish, fail

    async def __call__(self, call: Call) -> None:
        self.seen.append(self.name)
        if self.fail:
            raise RuntimeError("a step failed")
        if self.finish:
            call.result = ToolResult.failure("refused", "no")


async def test_a_step_that_finishes_the_call_skips_the_later_steps_but_not_the_last() -> None:
    seen: list[str] = []
    steps: list[Step] = [_Record("gate", seen), _Record("approval", seen, finish=True), _Record("run", seen)]
    reply = await Pipeline(steps, _Record("line", seen))(_call(_registry()))
    assert seen == ["gate", "approval", "line"]
    assert reply.is_error  # type: ignore[union-attr]


async def test_the_last_step_runs_when_a_step_raises_or_the_call_is_cancelled() -> None:
    seen: list[str] = []
    with pytest.raises(RuntimeError):
        await Pipeline([_Record("run", seen, fail=True)], _Record("line", seen))(_call(_registry()))
    assert seen == ["run", "line"]

    async def forever(args: EchoArgs, ctx: CallContext) -> ToolResult:
        await anyio.sleep_forever()
        raise AssertionError

    seen.clear()
    with anyio.move_on_after(0.05):
        await Pipeline([Run()], _Record("line", seen))(_call(_registry(spec(handler=forever))))
    assert seen == ["line"]


async def test_the_policy_check_refuses_before_anyone_is_asked_a_call_the_tool_would_refuse() -> None:
    async def refuse(args: EchoArgs, ctx: CallContext) -> None:
        raise OutsideAllowedRoots(f"outside the roots: {args.text}")

    registry = _registry(replace(spec(), check=refuse), spec(name="other"))
    refused, unasked = _call(registry, arguments={"text": "/etc"}), _call(registry, name="other")
    await PolicyCheck(_approver())(refused)
    await PolicyCheck(_approver())(unasked)
    assert (refused.approval, refused.rule) == ("not_asked", "echo")
    assert refused.result is not None and refused.result.error is not None
    assert refused.result.error.code == "outside_roots"
    assert (unasked.approval, unasked.rule, unasked.result) == ("not_required", None, None)


async def test_the_policy_check_lets_a_call_it_accepts_go_on_to_the_question() -> None:
    call = _call(_registry(), arguments={"text": "fine"})
    await PolicyCheck(_approver())(call)
    assert (call.approval, call.rule, call.result) == ("not_required", "echo", None)


def test_the_servers_pipeline_is_gate_approval_run_then_the_audit_line(tmp_path: Path) -> None:
    full = Pipeline.of(audit=_audit(tmp_path / "a.jsonl"), approver=_approver())
    assert [type(step) for step in full.steps] == [AuditGate, PolicyCheck, Approval, Run]
    assert isinstance(full.last, AuditLine)
    assert [type(step) for step in Pipeline.of().steps] == [Run]


def test_the_architectures_step_list_is_the_servers_pipeline(tmp_path: Path) -> None:
    """docs/ARCHITECTURE.md's "A call, in server/pipeline.py" block names every step of the full
    pipeline, in order, then the last."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    block = re.search(r"^A call, in `server/pipeline\.py`:\n\n```\n(.*?)^```", doc, re.MULTILINE | re.DOTALL)
    assert block is not None, "the ARCHITECTURE has no pipeline step list"
    listed = re.findall(r"^([A-Z]\w+) ", block.group(1), re.MULTILINE)
    full = Pipeline.of(audit=_audit(tmp_path / "a.jsonl"), approver=_approver())
    assert listed == [type(step).__name__ for step in [*full.steps, full.last]]
