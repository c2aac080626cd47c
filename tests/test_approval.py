"""Approval through MCP elicitation: the SDK client with an elicitation callback, both protocol
eras in memory, and a real stdio and HTTP server. Commands run with the sandbox off and touch
only ``tmp_path``."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.session import ClientRequestContext
from mcp.types import ElicitRequestParams, ElicitResult, ErrorData

from mcp_localtools.approval import _assigns_program_env
from mcp_localtools.config import Config
from mcp_localtools.errors import ConfigError
from mcp_localtools.server import build_server
from tests.helpers import (
    LONG_BYTES,
    best_cpu_seconds,
    client_env,
    config_for,
    error_code,
    filled,
    installed_command,
    text_of,
)

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
        return ElicitResult(action=self.action, content=content)

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
@pytest.mark.parametrize(("decision", "action"), [("deny", "accept"), (None, "decline")])
async def test_a_denied_call_is_refused_and_nothing_runs(
    tmp_path: Path, mode: str, decision: str | None, action: str
) -> None:
    canary = tmp_path / "canary.txt"
    canary.write_text("alive\n", encoding="utf-8")
    async with asking(approval_config(tmp_path), Person(decision, action=action), mode=mode) as client:
        command = await client.call_tool("shellcommand", {"commands": ["mv canary.txt moved.txt"]})
        delete = await client.call_tool("deletefile", {"path": "canary.txt"})
    for result in (command, delete):
        assert error_code(result) == "approval_denied"
        assert "was not run: the user denied it" in text_of(result)
    assert canary.read_text(encoding="utf-8") == "alive\n"


class Failing(Person):
    """A client whose form fails: it answers the question with an error."""

    async def __call__(
        self, context: ClientRequestContext, params: ElicitRequestParams
    ) -> ElicitResult | ErrorData:
        self.questions.append(params)
        return ErrorData(code=-32603, message="the form could not be shown")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("person", "code", "said", "logged"),
    [
        (Person(None, action="decline"), "approval_denied", "the user denied it", "denied"),
        (Person("deny"), "approval_denied", "the user denied it", "denied"),
        (Person(None, action="cancel"), "approval_unanswered", "cancelled", "cancelled"),
        (Person("maybe"), "approval_unanswered", "no answer it could read", "failed"),
        (Failing(), "approval_unanswered", "failed", "failed"),
    ],
    ids=["decline", "deny", "cancel", "unreadable", "error"],
)
async def test_a_cancelled_or_failed_question_is_no_answer_and_a_decline_is_a_no(
    tmp_path: Path, mode: str, person: Person, code: str, said: str, logged: str
) -> None:
    """A cancel said "the user denied it. Do not repeat the call", as a decline does; the model
    should hear that nobody answered, and the audit line say which happened."""
    if mode == "2026-07-28" and isinstance(person, Failing):
        pytest.skip("a 2026-07-28 client whose form fails raises in the client: no retry reaches the server")
    person.questions.clear()
    canary = tmp_path / "canary.txt"
    canary.write_text("alive\n", encoding="utf-8")
    log = tmp_path / "audit.jsonl"
    config = config_for(
        tmp_path,
        approval={"require": ["destructive"]},
        audit={"enabled": True, "path": str(log)},
    )
    async with asking(config, person, mode=mode) as client:
        result = await client.call_tool("deletefile", {"path": "canary.txt"})
    text = text_of(result)
    assert error_code(result) == code and said in text, text
    if code == "approval_unanswered":
        assert "nobody answered" in text and "denied" not in text, text
        assert "ask the user" in text and "call again" in text, text
    else:
        assert "Do not repeat the call" in text, text
    assert canary.read_text(encoding="utf-8") == "alive\n"
    line = json.loads(log.read_text(encoding="utf-8").splitlines()[-1])
    assert (line["tool"], line["approval"], line["error_code"]) == ("deletefile", logged, code), line


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


async def test_the_question_shows_env_as_it_will_be_set(tmp_path: Path) -> None:
    """The person is the one whose secrets they are: a masked value hides what runs."""
    person = Person("deny")
    async with asking(approval_config(tmp_path), person, mode="legacy") as client:
        await client.call_tool(
            "shellcommand", {"commands": ["true"], "env": {"API_TOKEN": "tok-value-123", "MODE": "x"}}
        )
    assert '"API_TOKEN": "tok-value-123"' in person.messages[0]


SHOWN_AS_THEY_RUN = [
    'SECRET="$(touch pwned-by-masked-secret)" true',
    "GITHUB_TOKEN=$(touch${IFS}pwned-unquoted) true",
    "echo digest ../../x; echo token --force-everything-here",
    "echo " + "a" * 1200 + "; touch pwned-after-cut",
    "echo -u user:pass https://example.invalid/?api_key=$(cat id_rsa) | true",
]


@pytest.mark.parametrize("mode", MODES)
async def test_the_question_shows_every_command_exactly_as_it_will_run(tmp_path: Path, mode: str) -> None:
    """Red-team finding 3: secret masking and a 1,000-character cut showed the person a harmless
    command while another ran (``SECRET=*** true`` for a command substitution)."""
    person = Person("deny")
    async with asking(approval_config(tmp_path), person, mode=mode) as client:
        result = await client.call_tool("shellcommand", {"commands": SHOWN_AS_THEY_RUN})
    assert error_code(result) == "approval_denied"
    steps = [line for line in person.messages[0].splitlines() if line.startswith("  $ ")]
    assert steps == [f"  $ {command}" for command in SHOWN_AS_THEY_RUN]
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("mode", MODES)
async def test_a_call_too_long_to_show_is_refused_without_asking(tmp_path: Path, mode: str) -> None:
    person = Person("approve")
    commands = ["echo " + "a" * 7000 + "; touch pwned-after-cut"]
    async with asking(approval_config(tmp_path), person, mode=mode) as client:
        result = await client.call_tool("shellcommand", {"commands": commands})
        halves = ["echo " + "a" * 3000, "echo " + "b" * 3000]
        split = await client.call_tool("shellcommand", {"commands": halves})
    assert error_code(result) == "approval_denied", text_of(result)
    assert "too long to show for approval" in text_of(result) and "split it" in text_of(result)
    assert error_code(split) == "approval_denied"
    assert person.questions == []
    assert not (tmp_path / "pwned-after-cut").exists()


async def test_the_question_escapes_characters_that_would_hide_or_reorder_text(tmp_path: Path) -> None:
    """ESC, CR, bidi overrides and line separators reach the client's form escaped, never raw."""
    person = Person("deny")
    command = "echo safe\rtouch x \x1b[2K \u202eevil\u202c \u2028 \u2066x\u2069 \x85"
    async with asking(approval_config(tmp_path), person, mode="legacy") as client:
        await client.call_tool("shellcommand", {"commands": [command], "workDir": "."})
        await client.call_tool("deletefile", {"path": "a\u202etxt.exe"})
    for message in person.messages:
        assert all(ch.isprintable() or ch == "\n" for ch in message), repr(message)
    escaped = "echo safe\\rtouch x \\x1b[2K \\u202eevil\\u202c \\u2028 \\u2066x\\u2069 \\x85"
    assert f"  $ {escaped}" in person.messages[0]
    assert "Path: a\\u202etxt.exe" in person.messages[1]


async def test_a_command_of_several_lines_is_shown_on_several_lines(tmp_path: Path) -> None:
    person = Person("deny")
    async with asking(approval_config(tmp_path), person, mode="legacy") as client:
        await client.call_tool("shellcommand", {"commands": ["echo one\ntouch two"]})
    assert "  $ echo one\n  > touch two\n" in person.messages[0]


async def test_paths_and_urls_in_the_question_are_not_masked(tmp_path: Path) -> None:
    person = Person("deny")
    config = config_for(tmp_path, approval={"require": ["httpget", "deletefile"]})
    async with asking(config, person, mode="legacy") as client:
        await client.call_tool("httpget", {"url": "https://example.invalid/c?api_key=FILE-CONTENTS-1234"})
        await client.call_tool("deletefile", {"path": "token abcdefgh12345678"})
    assert "https://example.invalid/c?api_key=FILE-CONTENTS-1234" in person.messages[0]
    assert "Path: token abcdefgh12345678" in person.messages[1]


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
        params = StdioServerParameters(
            command=installed_command(), args=["--config", str(config)], env=client_env()
        )
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
            async with served.connect(mode=mode, elicitation_callback=person) as client:
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
        yes: dict[str, Any] = {
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
        (["ls; mv canary.txt gone.txt"], "auto", True),
        (["ls > listing.txt"], "auto", True),
        (["xargs mv canary.txt gone.txt"], "auto", True),
        (["sh -c 'mv canary.txt gone.txt'"], "auto", True),
        (["ls $(mv canary.txt gone.txt)"], "auto", True),
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
    if shutil.which(shell) is None and shell != "auto":  # the policy refuses it first: not asked
        assert error_code(result) == "not_found" and not person.questions
        return
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
        ran = await client.call_tool("bash", {"commands": ["mv canary.txt gone.txt"]})
        trusted = await client.call_tool("bash", {"commands": ["ls"]})
    assert error_code(removed) == "approval_unavailable"
    assert error_code(ran) == "approval_unavailable"
    assert not trusted.is_error, text_of(trusted)  # trusted_commands still applies to the renamed tool
    assert canary.exists()


REPLACE = {"pattern": "a", "replacement": "b", "include": ["*"]}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("tool", "arguments", "code"),
    [
        ("shellcommand", {"commands": ["rm -rf build"]}, "command_refused"),
        ("shellcommand", {"commands": ["echo one", "sudo ls"]}, "command_refused"),
        ("shellcommand", {"commands": ["ls"], "workDir": "/"}, "outside_roots"),
        ("shellcommand", {"commands": ["ls"], "env": {"LD_PRELOAD": "x.so"}}, "command_refused"),
        ("startprocess", {"command": "curl http://127.0.0.1:9"}, "command_refused"),
        ("runscript", {"path": "missing.sh"}, "not_found"),
        ("deletefile", {"path": "/etc/hostname"}, "outside_roots"),
        ("shellcommand", {"commands": "ls"}, "invalid_arguments"),
        ("editfile", {"path": "/etc/hostname", "edits": [{"oldText": "a", "newText": "b"}]}, "outside_roots"),
        (
            "replaceinfiles",
            {"root": "/etc", "pattern": "a", "replacement": "b", "include": ["*"], "dryRun": False},
            "outside_roots",
        ),
        (
            "replaceinfiles",
            {"pattern": "(", "replacement": "b", "include": ["*"], "match": "regex"},
            "invalid_arguments",
        ),
        ("httpget", {"url": "http://169.254.169.254/latest/meta-data/"}, "policy_violation"),
        ("httpget", {"url": "file:///etc/passwd"}, "policy_violation"),
        ("httpget", {"url": "example.com/x"}, "invalid_arguments"),
        ("stopprocess", {"processID": "proc_none"}, "not_found"),
        ("writeprocess", {"processID": "proc_none", "text": "y\n"}, "not_found"),
    ],
)
async def test_a_call_the_policy_refuses_is_refused_without_asking_the_person(
    tmp_path: Path, mode: str, tool: str, arguments: dict[str, Any], code: str
) -> None:
    person = Person("approve")
    async with asking(approval_config(tmp_path, require=["all"]), person, mode=mode) as client:
        result = await client.call_tool(tool, arguments)
    assert error_code(result) == code, text_of(result)
    assert person.questions == []
    assert not (tmp_path / "one").exists()


async def test_a_policy_refusal_before_the_question_runs_none_of_the_calls_commands(tmp_path: Path) -> None:
    person = Person("approve")
    async with asking(approval_config(tmp_path), person, mode="legacy") as client:
        result = await client.call_tool("shellcommand", {"commands": ["echo ran > made.txt", "sudo ls"]})
    assert error_code(result) == "command_refused"
    assert "commands[1]" in text_of(result) and "nothing ran" in text_of(result)
    assert not (tmp_path / "made.txt").exists()
    assert person.questions == []


def _trusting(root: Path, *trusted: str) -> Config:
    return config_for(
        root, approval={"require": ["exec"], "trusted_commands": list(trusted)}, exec={"sandbox": "off"}
    )


async def test_a_program_made_inside_a_root_is_asked_about_though_its_name_is_trusted(tmp_path: Path) -> None:
    """``./bin/ls`` made executable with the file tools alone (copypath keeps a sample's 0755)."""
    sample = tmp_path / "hooks" / "sample"
    sample.parent.mkdir()
    sample.write_text("#!/bin/sh\necho planted > planted.txt\n", encoding="utf-8")
    sample.chmod(0o755)
    person = Person("deny")
    async with asking(_trusting(tmp_path, "ls"), person, mode="legacy") as client:
        await client.call_tool("makedirectory", {"path": "bin"})
        copied = await client.call_tool("copypath", {"source": "hooks/sample", "destination": "bin/ls"})
        assert not copied.is_error, text_of(copied)
        assert (tmp_path / "bin" / "ls").stat().st_mode & 0o111
        for command in ["./bin/ls", "bin/ls", f"{tmp_path}/bin/ls", "cd bin && ./ls", "PATH=./bin ls"]:
            result = await client.call_tool("shellcommand", {"commands": [command]})
            assert error_code(result) == "approval_denied", (command, text_of(result))
        plain = await client.call_tool("shellcommand", {"commands": ["ls"]})
    assert not plain.is_error, text_of(plain)
    assert len(person.questions) == 5
    assert not (tmp_path / "planted.txt").exists()


async def test_a_trusted_name_found_through_a_path_directory_inside_a_root_is_asked(tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    tools.mkdir()
    program = tools / "mytool"
    program.write_text("#!/bin/sh\necho planted > planted.txt\n", encoding="utf-8")
    program.chmod(0o755)
    person = Person("deny")
    config = config_for(
        tmp_path,
        approval={"require": ["exec"], "trusted_commands": ["mytool"]},
        exec={"sandbox": "off", "allowed_env": ["PATH"]},
    )
    async with asking(config, person, mode="legacy") as client:
        env = {"PATH": f"{tools}:/usr/bin:/bin"}
        result = await client.call_tool("shellcommand", {"commands": ["mytool"], "env": env})
    assert error_code(result) == "approval_denied", text_of(result)
    assert len(person.questions) == 1
    assert not (tmp_path / "planted.txt").exists()


async def test_a_trusted_name_linked_into_a_root_from_outside_is_asked(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    real = root / "real-tool"
    real.write_text("#!/bin/sh\necho planted > planted.txt\n", encoding="utf-8")
    real.chmod(0o755)
    (outside / "mytool").symlink_to(real)
    person = Person("deny")
    config = config_for(
        root,
        approval={"require": ["exec"], "trusted_commands": ["mytool"]},
        exec={"sandbox": "off"},
    )
    async with asking(config, person, mode="legacy") as client:
        env = {"PATH": f"{outside}:/usr/bin:/bin"}
        result = await client.call_tool("shellcommand", {"commands": ["mytool"], "env": env})
    assert error_code(result) == "approval_denied", text_of(result)
    assert not (root / "planted.txt").exists()


@pytest.mark.parametrize("require", [["destructive"], ["writes"]])
def test_writeprocess_is_destructive(tmp_path: Path, require: list[str]) -> None:
    from mcp_localtools.approval import ApprovalPolicy
    from mcp_localtools.tools import build_registry

    config = config_for(tmp_path, approval={"require": require}, exec={"sandbox": "off"})
    registry = build_registry(config)
    spec = registry.get("writeprocess")
    assert spec.annotations.destructive
    assert ApprovalPolicy.create(config.approval, registry.names()).rule_for(spec) == require[0]


@pytest.mark.parametrize(
    "command",
    [
        "git -c alias.x='!touch pwned-alias' x",
        "git -c core.pager='touch pwned-pager' -p log",
        "git --config-env=alias.x=CMD x",
        "git --exec-path=. status",
        "git --exec-path . status",
        "git -C sub status",
        "git --git-dir=planted status",
        "git fetch --upload-pack='touch pwned-upload' .",
        "git rebase -x 'touch pwned-rebase' HEAD",
        "git rebase -ix'touch pwned-attached' HEAD",
        "git rebase --exe='touch pwned-prefix' HEAD",
        "git difftool --extcmd='touch pwned-difftool' HEAD",
        "git config alias.y '!touch pwned-config'",
        "git submodule foreach 'touch pwned-foreach'",
        "git bisect run touch pwned-bisect",
        "git $OPTION x",
        "git log " + "a " * 20 + "-c",
        "git --namespace x bisect run touch pwned-namespace",
        "git --attr-source x config core.pager 'touch pwned-attr'",
        "git clone --template=tpl src out",
        "git init --template=tpl r",
        "git send-email --sendmail-cmd='touch pwned-mail' x",
        "git daemon --access-hook='touch pwned-daemon'",
        "git instaweb --httpd='touch pwned-web'",
    ],
)
async def test_a_trusted_git_is_asked_when_its_words_may_run_a_program(tmp_path: Path, command: str) -> None:
    """Red-team finding 7: git runs programs through its config and options, so trusting git
    with any arguments ran ``git -c alias.x='!cmd' x`` unasked."""
    person = Person("deny")
    async with asking(_trusting(tmp_path, "git", "ls"), person, mode="legacy") as client:
        result = await client.call_tool("shellcommand", {"commands": [command]})
    assert error_code(result) == "approval_denied", text_of(result)
    assert len(person.questions) == 1
    assert not [path.name for path in tmp_path.iterdir() if path.name.startswith("pwned")]


@pytest.mark.parametrize("env", [{"MODE": "x"}, {"GIT_AUTHOR_NAME": "me"}])
async def test_a_trusted_command_is_asked_when_the_call_sets_env(tmp_path: Path, env: dict[str, str]) -> None:
    """The call's ``env`` may change what a trusted program runs (``GIT_EDITOR``, ``GIT_PROXY_COMMAND``
    were not even refused): a call that sets any is asked."""
    person = Person("deny")
    async with asking(_trusting(tmp_path, "git", "ls"), person, mode="legacy") as client:
        result = await client.call_tool("shellcommand", {"commands": ["ls"], "env": env})
        plain = await client.call_tool("shellcommand", {"commands": ["git --version", "ls -la"], "env": {}})
    assert error_code(result) == "approval_denied", text_of(result)
    assert not plain.is_error, text_of(plain)
    assert len(person.questions) == 1


@pytest.mark.parametrize(
    "name",
    [
        "GIT_EDITOR",
        "GIT_SEQUENCE_EDITOR",
        "GIT_PROXY_COMMAND",
        "GIT_SSH_VARIANT",
        "GIT_TRACE",
        "GIT_TRACE2_EVENT",
    ],
)
async def test_env_that_makes_git_run_a_program_or_write_a_file_is_refused(tmp_path: Path, name: str) -> None:
    person = Person("approve")
    async with asking(approval_config(tmp_path), person, mode="legacy") as client:
        result = await client.call_tool("shellcommand", {"commands": ["git --version"], "env": {name: "x"}})
    assert error_code(result) == "command_refused", text_of(result)
    assert person.questions == []


@pytest.mark.slow  # a ratio of CPU times (best of two runs): -m 'not slow' leaves it out
def test_the_trusted_commands_assignment_check_takes_time_linear_in_the_commands_length() -> None:
    """Four times the length must not cost sixteen times the time: the ``NAME[...]=`` pattern
    backtracked over ``a[`` repeated (0.7 s at 63,000 characters)."""

    def check(size: int) -> Callable[[], object]:
        command = filled("ls", " a[", size=size)
        return lambda: _assigns_program_env(command)

    assert _assigns_program_env("ls; env LD_PRELOAD=/x.so ls") and _assigns_program_env("a[1]=x PATH=. ls")
    assert not _assigns_program_env(filled("ls", " a["))
    small, big = best_cpu_seconds(check(LONG_BYTES // 4)), best_cpu_seconds(check(LONG_BYTES))
    assert big < 8 * small + 0.2 and big < 5, f"{LONG_BYTES // 4}: {small:.3f} s, {LONG_BYTES}: {big:.3f} s"
