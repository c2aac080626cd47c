"""File names with newlines or escape sequences cannot forge lines or drive a terminal in the text
every listing tool renders; the structured content keeps them as they are (issue 13, Build 2)."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from tests.helpers import text_of

pytestmark = pytest.mark.anyio

FORGED = "n\nFAKE-RESULT.txt"
TITLE = "t\x1b]0;pwned\x07.txt"


@pytest.fixture
def named(tmp_path: Path) -> Path:
    (tmp_path / FORGED).write_text("needle\n", encoding="utf-8")
    (tmp_path / TITLE).write_text("needle\n", encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("listdirectory", {"path": "."}),
        ("listdirectory", {"path": ".", "details": True}),
        ("directorytree", {"path": "."}),
        ("globfiles", {"pattern": "*.txt"}),
        ("searchfiles", {"pattern": "needle"}),
        ("searchfiles", {"pattern": "needle", "outputMode": "files"}),
        ("searchfiles", {"pattern": "needle", "outputMode": "count"}),
    ],
)
async def test_names_are_escaped_in_the_text_and_exact_in_structured_content(
    client: Client, named: Path, tool: str, arguments: dict[str, object]
) -> None:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, text_of(result)
    text = text_of(result)
    assert not any(line.startswith("FAKE-RESULT") for line in text.splitlines())
    assert "\x1b" not in text and "\x07" not in text
    assert "n\\nFAKE-RESULT.txt" in text and "t\\x1b]0;pwned\\x07.txt" in text
    assert "FAKE-RESULT" in str(result.structured_content)
    assert FORGED in repr(result.structured_content) or FORGED.replace("\n", "\\n") in repr(
        result.structured_content
    )
