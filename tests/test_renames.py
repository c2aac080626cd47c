"""``[tools] rename`` reaches everything the model reads (issue 30, item 4): the descriptions of
every tool and field, the refusals and the continuation hints name each tool as it is served, and
a rename that would serve two tools under one name stops the server with a message of its own."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from mcp_localtools.errors import ConfigError
from mcp_localtools.tools import build_registry
from tests.helpers import config_for, connect, error_code, text_of

pytestmark = pytest.mark.anyio

RENAME = {
    "readfile": "read",
    "writefile": "write",
    "deletefile": "trash",
    "shellcommand": "sh",
    "startprocess": "bg",
    "processoutput": "output",
    "readtextrange": "lines",
    "inserttextlines": "insert",
    "makedirectory": "mkdir",
    "editfile": "edit",
    "searchfiles": "grep",
}
OLD = re.compile(r"(?<![\w.-])(" + "|".join(RENAME) + r")(?![\w-]|\.\w)")


def test_no_description_of_any_tool_or_field_names_a_tool_by_its_old_name(tmp_path: Path) -> None:
    registry = build_registry(config_for(tmp_path, tools={"rename": RENAME}))
    listed = [registry.manifest(name) for name in registry.names()]
    found = {entry["name"]: OLD.findall(json.dumps(entry)) for entry in listed}
    assert {name: words for name, words in found.items() if words} == {}
    shell = registry.manifest("sh")["description"]
    assert "use bg" in shell and "(use trash)" in shell and "(read/write)" in shell
    assert "The process, from bg." in json.dumps(registry.manifest("output")["inputSchema"])


async def test_refusals_and_hints_name_the_tools_as_they_are_served(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("".join(f"line {n}\n" for n in range(50)), encoding="utf-8")
    (tmp_path / "f.txt").write_text("a\n", encoding="utf-8")
    (tmp_path / "bin.dat").write_bytes(b"\xff\xfe\x00bad")
    async with connect(
        config_for(tmp_path, tools={"rename": RENAME}, limits={"read_max_lines": 10})
    ) as client:
        window = await client.call_tool("lines", {"path": "big.txt"})
        assert "call lines with startLine=11" in text_of(window), text_of(window)
        head = await client.call_tool("read", {"path": "big.txt", "limit": 5})
        assert "call read with offset=5 to continue" in text_of(head), text_of(head)
        tail = await client.call_tool("read", {"path": "big.txt", "tail": 3})
        grep = await client.call_tool("grep", {"pattern": "x", "path": "f.txt"})
        rm = await client.call_tool("sh", {"commands": ["rm f.txt"]})
        assert "use the trash tool" in text_of(rm), text_of(rm)
        background = await client.call_tool("sh", {"commands": ["sleep 100 &"]})
        assert "with bg" in text_of(background), text_of(background)
        empty = await client.call_tool("edit", {"path": "f.txt", "edits": [{"oldText": "", "newText": "x"}]})
        assert "use insert" in text_of(empty) and "write)" in text_of(empty), text_of(empty)
        binary = await client.call_tool("lines", {"path": "bin.dat"})
        assert 'read with encoding "binary"' in text_of(binary), text_of(binary)
        missing = await client.call_tool("write", {"path": "no/such/dir/f.txt", "content": "x"})
        assert "(mkdir, or createParents=true)" in text_of(missing), text_of(missing)
    for result in (window, head, tail, rm, background, empty, binary, missing, grep):
        assert not OLD.search(text_of(result)), text_of(result)
    assert error_code(missing) == "not_found"


@pytest.mark.parametrize(
    ("rename", "message"),
    [
        (
            {"readfile": "writefile"},
            "readfile = 'writefile' would serve two tools as writefile",
        ),
        ({"readfile": "x", "writefile": "x"}, "readfile and writefile are both renamed to 'x'"),
        (
            {"readfile": "Read"},
            "readfile = 'Read': a tool name is lowercase letters and digits",
        ),
    ],
)
def test_a_rename_that_collides_or_is_malformed_stops_the_server_with_its_own_message(
    tmp_path: Path, rename: dict[str, str], message: str
) -> None:
    with pytest.raises(ConfigError) as raised:
        build_registry(config_for(tmp_path, tools={"rename": rename}))
    assert f"tools.rename: {message}" in raised.value.message


async def test_two_tools_may_swap_names_and_a_disabled_tools_name_may_be_taken(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n", encoding="utf-8")
    swapped = build_registry(
        config_for(tmp_path, tools={"rename": {"readfile": "statpath", "statpath": "readfile"}})
    )
    result = await swapped.call("statpath", {"path": "a.txt"})
    assert result.structured is not None and result.structured["content"] == "hello\n"
    taken = build_registry(
        config_for(tmp_path, tools={"rename": {"readfile": "writefile"}, "disabled": ["writefile"]})
    )
    assert "writefile" in taken.names() and taken.get("writefile").builtin_name == "readfile"
