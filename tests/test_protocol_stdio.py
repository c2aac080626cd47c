"""The installed server over a real stdio subprocess: both protocol eras, and a clean stdout."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp.types import ImageContent

from tests.helpers import installed_command, make_pdf, make_png, text_of

pytestmark = pytest.mark.anyio


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "README.md").write_text("".join(f"line {n}\n" for n in range(1, 101)), encoding="utf-8")
    (tmp_path / "doc.pdf").write_bytes(make_pdf(["First page text", "Second page text"]))
    (tmp_path / "pic.png").write_bytes(make_png(8, 6))
    return tmp_path


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_real_stdio_client_lists_reads_and_is_refused_outside(project: Path, mode: str) -> None:
    params = StdioServerParameters(
        command=installed_command(), args=["--root", str(project)], cwd=str(project)
    )
    async with Client(params, mode=mode) as client:
        tools = (await client.list_tools()).tools
        assert "readfile" in {tool.name for tool in tools}
        assert all(tool.annotations is not None and tool.output_schema for tool in tools)

        window = await client.call_tool("readfile", {"path": "README.md", "offset": 10, "limit": 5})
        assert window.structured_content["content"] == "line 11\nline 12\nline 13\nline 14\nline 15\n"
        assert window.structured_content["nextOffset"] == 15

        pdf = await client.call_tool("readfile", {"path": "doc.pdf", "pages": "2"})
        assert "Second page text" in pdf.structured_content["content"]

        png = await client.call_tool("readfile", {"path": "pic.png", "encoding": "binary"})
        assert any(isinstance(block, ImageContent) for block in png.content)

        outside = await client.call_tool("readfile", {"path": "/etc/passwd"})
        assert outside.is_error and "outside allowed roots" in text_of(outside)


def test_stdout_carries_nothing_but_json_rpc(project: Path) -> None:
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
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "readfile", "arguments": {"path": "README.md"}},
        },
        {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "tools/call",
            "params": {"name": "readfile", "arguments": {"path": "/etc/shadow"}},
        },
        {
            "jsonrpc": "2.0",
            "id": 5,
            "method": "tools/call",
            "params": {"name": "nosuchtool", "arguments": {}},
        },
    ]
    proc = subprocess.Popen(
        [installed_command(), "--root", str(project)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write("\n".join(json.dumps(m) for m in messages) + "\nthis is not json\n")
        proc.stdin.flush()
        lines: queue.Queue[str] = queue.Queue()
        reader = threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout], daemon=True)  # type: ignore[union-attr]
        reader.start()
        replies = []
        while {1, 2, 3, 4, 5} - {reply.get("id") for reply in replies}:
            replies.append(json.loads(lines.get(timeout=60)))  # every line must be one JSON-RPC message
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
        reader.join(timeout=30)
        while not lines.empty():
            replies.append(json.loads(lines.get()))
    finally:
        if proc.poll() is None:
            proc.kill()
    assert all(reply["jsonrpc"] == "2.0" for reply in replies)
    by_id = {reply.get("id"): reply for reply in replies}
    assert {1, 2, 3, 4, 5} <= set(by_id)
    assert by_id[3]["result"]["isError"] is False
    assert by_id[4]["result"]["isError"] is True
    assert by_id[5]["error"]["code"] == -32602


async def test_a_client_started_against_the_repository_reads_its_readme_with_a_window() -> None:
    repo = Path(__file__).resolve().parent.parent
    params = StdioServerParameters(command=installed_command(), args=[], cwd=str(repo))
    async with Client(params, mode="legacy") as client:
        result = await client.call_tool("readfile", {"path": "README.md", "limit": 3})
    assert result.structured_content["content"].startswith("# mcp-localtools\n")
    assert result.structured_content["nextOffset"] == 3
