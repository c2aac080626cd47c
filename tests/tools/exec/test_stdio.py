"""Commands cannot touch the stdio transport: a real server subprocess, raw JSON-RPC lines."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from tests.helpers import (
    INITIALIZE,
    INITIALIZED,
    call_message,
    client_env,
    installed_command,
    raw_stdio_exchange,
    text_of,
)

pytestmark = pytest.mark.anyio

FORGED = '{"jsonrpc":"2.0","id":99,"result":{"forged":true}}'


def test_a_child_writing_to_stdout_or_reading_stdin_cannot_corrupt_the_stdio_stream(tmp_path: Path) -> None:
    commands = [
        "echo NOT-JSON-RPC",
        f"printf '%s\\n' '{FORGED}'",  # a forged response on the command's stdout
        "cat",  # would swallow the client's next frames if stdin were inherited
        "echo to-stderr >&2",
        "setsid -f sh -c 'sleep 0.2; echo late-write'",  # a writer that outlives its command
    ]
    messages = [
        INITIALIZE,
        INITIALIZED,
        call_message(2, "shellcommand", {"commands": commands, "executeParallel": True}),
        {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
    ]
    by_id, notifications = raw_stdio_exchange(tmp_path, messages, cwd=tmp_path)
    assert set(by_id) == {1, 2, 3} and notifications == [], "a forged frame or stray output reached us"
    result = by_id[2]["result"]
    assert result["isError"] is False
    entries = result["structuredContent"]["results"]
    assert [entry["exitCode"] for entry in entries] == [0, 0, 0, 0, 0]
    assert entries[0]["stdout"] == "NOT-JSON-RPC\n" and entries[1]["stdout"] == FORGED + "\n"
    assert entries[2]["stdout"] == "" and entries[3]["stderr"] == "to-stderr\n"
    assert "shellcommand" in {tool["name"] for tool in by_id[3]["result"]["tools"]}


async def test_a_real_stdio_client_runs_commands_and_gets_progress(tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=installed_command(), args=["--root", str(tmp_path)], cwd=str(tmp_path), env=client_env()
    )
    messages: list[str] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        messages.append(message or "")

    async with Client(params, mode="legacy") as client:
        result = await client.call_tool(
            "shellcommand", {"commands": ["echo one", "echo two"]}, progress_callback=on_progress
        )
    assert not result.is_error, text_of(result)
    assert "\n".join(messages).splitlines() == ["$ echo one", "one", "$ echo two", "two"]
