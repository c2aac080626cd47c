"""The seed's end-to-end text scenario through the SDK client, byte-exact,
and the same steps on a CRLF file with a BOM."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from tests.helpers import text_of

pytestmark = pytest.mark.anyio

START = [
    "# Title",
    "Intro line",
    "",
    "## Section A",
    "<!-- A START -->",
    "TODO: old",
    "<!-- A END -->",
    "",
    "## Section B",
    "<!-- B START -->",
    "TODO: old",
    "<!-- B END -->",
]
END = [
    "# Title",
    "",
    "## Section A",
    "<!-- A START -->",
    "TODO: old",
    "<!-- A END -->",
    "",
    "Inserted after A",
    "",
    "## Section B",
    "<!-- B START -->",
    "TODO: new",
    "<!-- B END -->",
]


async def run_scenario(client: Client, content: str) -> None:
    async def ok(tool: str, arguments: dict[str, object]) -> dict[str, object]:
        result = await client.call_tool(tool, {"path": "doc.md", **arguments})
        assert not result.is_error, f"{tool}: {text_of(result)}"
        data: dict[str, object] = result.structured_content or {}
        return data

    await ok("writefile", {"content": content, "overwrite": False})
    section = await ok(
        "readtextrange", {"startMatchLines": ["<!-- B START -->"], "endMatchLines": ["<!-- B END -->"]}
    )
    assert section["linesReturned"] == 3
    found = await ok("findtext", {"queryType": "substring", "query": "TODO:", "contextLines": 1})
    assert found["matchesReturned"] == 2
    replaced = await ok(
        "replacetextlines",
        {
            "matchLines": ["TODO: old"],
            "replaceWithLines": ["TODO: new"],
            "beforeLines": ["<!-- B START -->"],
            "afterLines": ["<!-- B END -->"],
        },
    )
    assert replaced["replacementsMade"] == 1 and replaced["replacedAtLines"] == [11]
    inserted = await ok(
        "inserttextlines",
        {
            "position": "afterAnchor",
            "anchorMatchLines": ["<!-- A END -->"],
            "linesToInsert": ["", "Inserted after A"],
        },
    )
    assert inserted["insertedAtLine"] == 8 and inserted["anchorMatchedAtLine"] == 7
    deleted = await ok("deletetextlines", {"matchLines": ["Intro line"], "expectedDeletions": 1})
    assert deleted["deletedAtLines"] == [2]


async def test_the_text_scenario_ends_byte_exact(client: Client, tmp_path: Path) -> None:
    await run_scenario(client, "\n".join(START) + "\n")
    expected = "\n".join(END) + "\n"
    assert (tmp_path / "doc.md").read_bytes() == expected.encode("utf-8")
    final = await client.call_tool("readfile", {"path": "doc.md"})
    assert final.structured_content is not None and final.structured_content["content"] == expected


async def test_the_text_scenario_keeps_crlf_and_a_bom(client: Client, tmp_path: Path) -> None:
    await run_scenario(client, "\ufeff" + "\r\n".join(START) + "\r\n")
    assert (tmp_path / "doc.md").read_bytes() == ("\ufeff" + "\r\n".join(END) + "\r\n").encode("utf-8")
