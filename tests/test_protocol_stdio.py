"""The installed server over a real stdio subprocess: both protocol eras, and a clean stdout."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp.types import ImageContent

from mcp_localtools.server import ERROR_META_KEY
from tests.helpers import (
    INITIALIZE,
    INITIALIZED,
    call_message,
    client_env,
    error_code,
    installed_command,
    make_pdf,
    make_png,
    raw_stdio_exchange,
    text_of,
)

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
        command=installed_command(), args=["--root", str(project)], cwd=str(project), env=client_env()
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
        assert error_code(outside) == "outside_roots" and "outside allowed roots" in text_of(outside)


def test_stdout_carries_nothing_but_json_rpc(project: Path) -> None:
    messages = [
        INITIALIZE,
        INITIALIZED,
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        call_message(3, "readfile", {"path": "README.md"}),
        call_message(4, "readfile", {"path": "/etc/shadow"}),
        call_message(5, "nosuchtool", {}),
    ]
    by_id, notifications = raw_stdio_exchange(project, messages, trailing="this is not json\n")
    assert notifications == []
    assert {1, 2, 3, 4, 5} <= set(by_id)
    assert by_id[3]["result"]["isError"] is False
    assert by_id[4]["result"]["isError"] is True
    assert by_id[4]["result"]["_meta"][ERROR_META_KEY]["code"] == "outside_roots"
    assert by_id[5]["error"]["code"] == -32602


async def test_a_client_started_against_the_repository_reads_its_readme_with_a_window() -> None:
    repo = Path(__file__).resolve().parent.parent
    params = StdioServerParameters(command=installed_command(), args=[], cwd=str(repo), env=client_env())
    async with Client(params, mode="legacy") as client:
        result = await client.call_tool("readfile", {"path": "README.md", "limit": 3})
    assert result.structured_content["content"].startswith("# mcp-localtools\n")
    assert result.structured_content["nextOffset"] == 3
