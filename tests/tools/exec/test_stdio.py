"""Commands cannot touch the stdio transport: a real server subprocess, raw JSON-RPC lines."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from tests.helpers import installed_command, text_of

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
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "shellcommand", "arguments": {"commands": commands, "executeParallel": True}},
        },
        {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
    ]
    proc = subprocess.Popen(
        [installed_command(), "--root", str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    assert proc.stdin is not None and proc.stdout is not None
    lines: queue.Queue[str] = queue.Queue()
    reader = threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout], daemon=True)  # type: ignore[union-attr]
    reader.start()
    try:
        proc.stdin.write("".join(json.dumps(m) + "\n" for m in messages))
        proc.stdin.flush()
        replies = []
        while {1, 2, 3} - {reply.get("id") for reply in replies}:
            replies.append(json.loads(lines.get(timeout=60)))  # every line must be one JSON-RPC message
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
        reader.join(timeout=30)
        while not lines.empty():
            replies.append(json.loads(lines.get()))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    by_id = {reply.get("id"): reply for reply in replies}
    assert set(by_id) == {1, 2, 3}, "a forged frame or stray output reached the client"
    result = by_id[2]["result"]
    assert result["isError"] is False
    entries = result["structuredContent"]["results"]
    assert [entry["exitCode"] for entry in entries] == [0, 0, 0, 0, 0]
    assert entries[0]["stdout"] == "NOT-JSON-RPC\n" and entries[1]["stdout"] == FORGED + "\n"
    assert entries[2]["stdout"] == "" and entries[3]["stderr"] == "to-stderr\n"
    assert "shellcommand" in {tool["name"] for tool in by_id[3]["result"]["tools"]}


async def test_a_real_stdio_client_runs_commands_and_gets_progress(tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=installed_command(), args=["--root", str(tmp_path)], cwd=str(tmp_path)
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
