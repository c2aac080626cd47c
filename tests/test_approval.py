"""Approval through MCP elicitation: the SDK client with an elicitation callback, both protocol
eras in memory, and a real stdio and HTTP server. Commands run with the sandbox off and touch
only ``tmp_path``."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.session import ClientRequestContext
from mcp.types import ElicitRequestParams, ElicitResult, ErrorData

from mcp_localtools.config import Config
from mcp_localtools.errors import ConfigError
from mcp_localtools.server import build_server
from tests.helpers import config_for, error_code, installed_command, text_of

pytestmark = pytest.mark.anyio

MODES = ["legacy", "2026-07-28"]


class Person:
    """An elicitation callback that answers like a person would, and records what it was shown."""

    def __init__(self, decision: str | None = "approve", *, action: str = "accept", delay: float = 0) -> None:
        self.decision = decision
        self.action = action
        self.delay = delay
        self.questions: list[ElicitRequestParams] = []

    async def __call__(
        self, context: ClientRequestContext, params: ElicitRequestParams
    ) -> ElicitResult | ErrorData:
        self.questions.append(params)
        if self.delay:
            await anyio.sleep(self.delay)
        content = {"decision": self.decision} if self.action == "accept" else None
        return ElicitResult(action=self.action, content=content)  # type: ignore[arg-type]

    @property
    def messages(self) -> list[str]:
        return [str(getattr(q, "message", "")) for q in self.questions]


def approval_config(root: Path, **approval: Any) -> Config:
    return config_for(
        root,
        approval={"require": ["exec", "destructive"], **approval},
        exec={"sandbox": "off"},
    )


@asynccontextmanager
async def asking(config: Config, person: Person | None, *, mode: str) -> AsyncIterator[Client]:
    async with Client(build_server(config), mode=mode, elicitation_callback=person) as client:
        yield client


@pytest.mark.parametrize("mode", MODES)
async def test_an_approved_command_runs_and_the_person_saw_the_command_and_its_directory(
    tmp_path: Path, mode: str
) -> None:
    person = Person("approve")
    async with asking(approval_config(tmp_path), person, mode=mode) as client:
        result = await client.call_tool("shellcommand", {"commands": ["echo ran > made.txt"]})
    assert not result.is_error, text_of(result)
    assert (tmp_path / "made.txt").read_text(encoding="utf-8") == "ran\n"
    assert len(person.questions) == 1
    message = person.messages[0]
    assert "$ echo ran > made.txt" in message and f"In: {tmp_path}" in message
    assert "'exec'" in message


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("decision", "action"), [("deny", "accept"), (None, "decline"), (None, "cancel")])
async def test_a_denied_call_is_refused_and_nothing_runs(
    tmp_path: Path, mode: str, decision: str | None, action: str
) -> None:
    canary = tmp_path / "canary.txt"
    canary.write_text("alive\n", encoding="utf-8")
    async with asking(approval_config(tmp_path), Person(decision, action=action), mode=mode) as client:
        command = await client.call_tool("shellcommand", {"commands": ["rm canary.txt"]})
        delete = await client.call_tool("deletefile", {"path": "canary.txt"})
    for result in (command, delete):
        assert error_code(result) == "approval_denied"
        assert "was not run: the user denied it" in text_of(result)
    assert canary.read_text(encoding="utf-8") == "alive\n"


@pytest.mark.parametrize("mode", MODES)
async def test_a_client_without_elicitation_is_refused_with_the_documented_message(
    tmp_path: Path, mode: str
) -> None:
    canary = tmp_path / "canary.txt"
    canary.write_text("alive\n", encoding="utf-8")
    async with asking(approval_config(tmp_path), None, mode=mode) as client:
        result = await client.call_tool("deletefile", {"path": "canary.txt"})
        read = await client.call_tool("readfile", {"path": "canary.txt"})
    assert error_code(result) == "approval_unavailable"
    assert text_of(result).startswith(
        "deletefile was not run: it needs the user's approval ([approval] require has 'destructive') "
        "and this client cannot ask: it does not support MCP elicitation (form mode)."
    )
    assert 'on_unsupported = "allow"' in text_of(result)
    assert canary.exists()
    assert not read.is_error  # read-only tools are not in "destructive"


async def test_on_unsupported_allow_runs_the_call_without_asking(tmp_path: Path) -> None:
    (tmp_path / "gone.txt").write_text("x", encoding="utf-8")
    config = approval_config(tmp_path, on_unsupported="allow")
    async with asking(config, None, mode="legacy") as client:
        result = await client.call_tool("deletefile", {"path": "gone.txt"})
    assert not result.is_error, text_of(result)
    assert not (tmp_path / "gone.txt").exists()


@pytest.mark.parametrize("mode", MODES)
async def test_no_answer_within_the_timeout_is_a_refusal(tmp_path: Path, mode: str) -> None:
    person = Person("approve", delay=2.5)
    config = approval_config(tmp_path, timeout_seconds=1)
    async with asking(config, person, mode=mode) as client:
        with anyio.fail_after(30):
            result = await client.call_tool("shellcommand", {"commands": ["echo late > late.txt"]})
    assert error_code(result) == "approval_timeout"
    assert "nobody answered the approval request within 1 s" in text_of(result)
    assert not (tmp_path / "late.txt").exists()


async def test_approve_for_this_session_skips_the_second_question_only_in_that_session(
    tmp_path: Path,
) -> None:
    config = approval_config(tmp_path)
    server = build_server(config)
    first = Person("approve for this session")
    call = {"commands": ["echo again >> log.txt"]}
    async with Client(server, mode="legacy", elicitation_callback=first) as client:
        schema = None
        for _ in range(3):
            assert not (await client.call_tool("shellcommand", call)).is_error
        schema = getattr(first.questions[0], "requested_schema", None)
        other = await client.call_tool("shellcommand", {"commands": ["echo other >> log.txt"]})
        assert not other.is_error
    assert len(first.questions) == 2  # the repeated call once, the different command once
    assert schema is not None
    assert schema["properties"]["decision"]["enum"] == ["approve", "approve for this session", "deny"]
    second = Person("deny")
    async with Client(server, mode="legacy", elicitation_callback=second) as client:
        refused = await client.call_tool("shellcommand", call)
    assert error_code(refused) == "approval_denied" and len(second.questions) == 1
    assert (tmp_path / "log.txt").read_text(encoding="utf-8") == "again\n" * 3 + "other\n"


@pytest.mark.parametrize("answer", ["approve", "approve for this session"])
async def test_the_2026_revision_has_no_sessions_so_every_call_is_asked(tmp_path: Path, answer: str) -> None:
    person = Person(answer)
    async with asking(approval_config(tmp_path), person, mode="2026-07-28") as client:
        for _ in range(2):
            assert not (await client.call_tool("shellcommand", {"commands": ["true"]})).is_error
    assert len(person.questions) == 2
    schema = getattr(person.questions[0], "requested_schema", None)
    assert schema is not None and schema["properties"]["decision"]["enum"] == ["approve", "deny"]


@pytest.mark.parametrize("mode", MODES)
async def test_an_edit_shows_its_diff_and_changes_nothing_until_approved(tmp_path: Path, mode: str) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("colour = red\n", encoding="utf-8")
    config = config_for(tmp_path, approval={"require": ["editfile"]})
    person = Person("deny")
    async with asking(config, person, mode=mode) as client:
        edit: dict[str, Any] = {"path": "notes.txt", "edits": [{"oldText": "red", "newText": "blue"}]}
        refused = await client.call_tool("editfile", edit)
        dry = await client.call_tool("editfile", {**edit, "dryRun": True})
        missing = await client.call_tool(
            "editfile", {**edit, "edits": [{"oldText": "green", "newText": "x"}]}
        )
    assert error_code(refused) == "approval_denied"
    assert "-colour = red" in person.messages[0] and "+colour = blue" in person.messages[0]
    assert not dry.is_error and len(person.questions) == 1  # a dry run changes nothing: not asked
    assert error_code(missing) == "no_match"  # a call that cannot succeed is not put to the person
    assert target.read_text(encoding="utf-8") == "colour = red\n"


async def test_the_question_masks_secrets_in_env(tmp_path: Path) -> None:
    person = Person("approve")
    async with asking(approval_config(tmp_path), person, mode="legacy") as client:
        await client.call_tool(
            "shellcommand", {"commands": ["true"], "env": {"API_TOKEN": "tok-value-123", "MODE": "x"}}
        )
    assert "tok-value-123" not in person.messages[0] and "API_TOKEN" in person.messages[0]


def test_an_unknown_name_in_require_fails_at_start_up(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"approval.require: 'shelcommand' is neither a tool"):
        build_server(config_for(tmp_path, approval={"require": ["shelcommand"]}))


async def test_a_real_stdio_server_asks_before_running(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        '[paths]\nallowed_roots = ["root"]\n[approval]\nrequire = ["writefile"]\n', encoding="utf-8"
    )
    (tmp_path / "root").mkdir()
    for mode, decision in (("legacy", "approve"), ("2026-07-28", "deny"), ("auto", "approve")):
        person = Person(decision)
        params = StdioServerParameters(command=installed_command(), args=["--config", str(config)])
        async with Client(params, mode=mode, elicitation_callback=person) as client:
            result = await client.call_tool("writefile", {"path": f"{mode}.txt", "content": "hi"})
        assert len(person.questions) == 1, mode
        assert result.is_error == (decision == "deny"), text_of(result)
        assert (tmp_path / "root" / f"{mode}.txt").exists() == (decision == "approve")


@pytest.mark.skipif(sys.platform == "win32", reason="the HTTP helpers use POSIX signals")
@pytest.mark.parametrize("transport", ["streamable-http", "sse"])
async def test_a_real_http_server_asks_before_running(tmp_path: Path, transport: str) -> None:
    from tests.test_transports import start, stop

    config = tmp_path / "config.toml"
    config.write_text('[approval]\nrequire = ["writefile"]\n', encoding="utf-8")
    served = start(transport, tmp_path, "--config", str(config))
    try:
        for mode, decision in (("legacy", "approve"), ("2026-07-28", "approve"), ("legacy", "deny")):
            if transport == "sse" and mode != "legacy":
                continue  # SSE is a handshake-era transport
            person = Person(decision)
            name = f"{mode}-{decision}.txt"
            client = served.connect(mode=mode)
            client.elicitation_callback = person  # before entering: the session is built then
            async with client:
                result = await client.call_tool("writefile", {"path": name, "content": "hi"})
            assert len(person.questions) == 1, (mode, text_of(result))
            assert (tmp_path / name).exists() == (decision == "approve"), text_of(result)
    finally:
        stop(served)


async def test_a_2026_answer_is_used_once_and_a_forged_state_is_refused(tmp_path: Path) -> None:
    from mcp import MCPError
    from mcp.types import CallToolResult, InputRequiredResult

    config = approval_config(tmp_path)
    call = {"commands": ["echo once >> count.txt"]}
    async with Client(build_server(config), mode="2026-07-28", elicitation_callback=Person()) as client:
        session = client.session
        asked = await session.call_tool("shellcommand", call, allow_input_required=True)
        assert isinstance(asked, InputRequiredResult) and asked.input_requests and asked.request_state
        yes = {
            key: ElicitResult(action="accept", content={"decision": "approve"})
            for key in asked.input_requests
        }
        ran = await session.call_tool(
            "shellcommand",
            call,
            input_responses=yes,
            request_state=asked.request_state,
            allow_input_required=True,
        )
        assert isinstance(ran, CallToolResult) and not ran.is_error
        replayed = await session.call_tool(
            "shellcommand",
            call,
            input_responses=yes,
            request_state=asked.request_state,
            allow_input_required=True,
        )
        assert isinstance(replayed, InputRequiredResult)  # asked again, not run again
        other = {"commands": ["echo other >> count.txt"]}
        with pytest.raises(MCPError, match="Invalid or expired requestState"):
            await session.call_tool(
                "shellcommand",
                other,
                input_responses=yes,
                request_state=asked.request_state,
                allow_input_required=True,
            )
    assert (tmp_path / "count.txt").read_text(encoding="utf-8") == "once\n"


@pytest.mark.parametrize(
    ("commands", "shell", "asked"),
    [
        (["git --version", "ls -la && ls"], "auto", False),
        (["FOO=1 env ls | git --version"], "bash", False),
        (["ls; rm -f canary.txt"], "auto", True),
        (["ls > listing.txt"], "auto", True),
        (["xargs rm -f canary.txt"], "auto", True),
        (["sh -c 'rm -f canary.txt'"], "auto", True),
        (["ls $(rm -f canary.txt)"], "auto", True),
        (["$CMD"], "auto", True),
        (["ls"], "fish", True),
    ],
)
async def test_trusted_commands_run_unasked_and_anything_else_is_asked(
    tmp_path: Path, commands: list[str], shell: str, asked: bool
) -> None:
    canary = tmp_path / "canary.txt"
    canary.write_text("alive\n", encoding="utf-8")
    config = config_for(
        tmp_path,
        approval={"require": ["exec"], "trusted_commands": ["git", "ls"]},
        exec={"sandbox": "off"},
    )
    person = Person("deny")
    async with asking(config, person, mode="legacy") as client:
        result = await client.call_tool("shellcommand", {"commands": commands, "shell": shell})
    assert len(person.questions) == (1 if asked else 0), text_of(result)
    if asked:
        assert error_code(result) == "approval_denied"
    else:
        assert not result.is_error or error_code(result) != "approval_denied"
    assert canary.exists()


async def test_a_renamed_tool_is_still_asked_about_under_its_built_in_name(tmp_path: Path) -> None:
    canary = tmp_path / "canary.txt"
    canary.write_text("alive\n", encoding="utf-8")
    config = config_for(
        tmp_path,
        approval={"require": ["shellcommand", "deletefile"], "trusted_commands": ["ls"]},
        tools={"rename": {"shellcommand": "bash", "deletefile": "rm"}},
        exec={"sandbox": "off"},
    )
    async with asking(config, None, mode="legacy") as client:
        removed = await client.call_tool("rm", {"path": "canary.txt"})
        ran = await client.call_tool("bash", {"commands": ["rm canary.txt"]})
        trusted = await client.call_tool("bash", {"commands": ["ls"]})
    assert error_code(removed) == "approval_unavailable"
    assert error_code(ran) == "approval_unavailable"
    assert not trusted.is_error, text_of(trusted)  # trusted_commands still applies to the renamed tool
    assert canary.exists()
