"""Every text tool: what files they accept, symlinks, atomic writes that keep
the mode, and edits of one file that run in parallel without losing each other."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from mcp_localtools.tools import build_registry
from tests.helpers import config_for, connect, error_code, text_of

pytestmark = pytest.mark.anyio

EDITS: list[tuple[str, dict[str, Any]]] = [
    ("inserttextlines", {"linesToInsert": ["new"]}),
    ("replacetextlines", {"matchLines": ["a"], "replaceWithLines": ["b"]}),
    ("deletetextlines", {"matchLines": ["a"]}),
    ("editfile", {"edits": [{"oldText": "a", "newText": "b"}]}),
]
READS: list[tuple[str, dict[str, Any]]] = [
    ("readtextrange", {}),
    ("findtext", {"query": "a"}),
]
ALL = EDITS + READS


@pytest.mark.parametrize(("tool", "arguments"), ALL)
async def test_a_file_that_is_not_utf8_is_refused_and_untouched(
    client: Client, tmp_path: Path, tool: str, arguments: dict[str, Any]
) -> None:
    (tmp_path / "f.txt").write_bytes(b"a\n\xff\xfe\n")
    result = await client.call_tool(tool, {"path": "f.txt", **arguments})
    assert error_code(result) == "unsupported_content"
    assert "not valid UTF-8 text" in text_of(result) and "offset 2" in text_of(result)
    assert (tmp_path / "f.txt").read_bytes() == b"a\n\xff\xfe\n"


@pytest.mark.parametrize(("tool", "arguments"), ALL)
async def test_missing_files_and_directories_are_refused(
    client: Client, tmp_path: Path, tool: str, arguments: dict[str, Any]
) -> None:
    missing = await client.call_tool(tool, {"path": "nope.txt", **arguments})
    assert error_code(missing) == "not_found"
    (tmp_path / "d").mkdir()
    directory = await client.call_tool(tool, {"path": "d", **arguments})
    assert error_code(directory) == "not_a_file"


@pytest.mark.parametrize(("tool", "arguments"), ALL)
async def test_a_file_over_the_read_cap_is_refused(
    tmp_path: Path, tool: str, arguments: dict[str, Any]
) -> None:
    (tmp_path / "f.txt").write_text("a\n" * 600, encoding="utf-8")
    async with connect(config_for(tmp_path, limits={"max_read_bytes": 1000})) as client:
        result = await client.call_tool(tool, {"path": "f.txt", **arguments})
    assert error_code(result) == "too_large"


@pytest.mark.parametrize(("tool", "arguments"), ALL)
async def test_paths_outside_the_roots_are_refused(
    tmp_path: Path, tool: str, arguments: dict[str, Any]
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "outside.txt").write_text("a\n", encoding="utf-8")
    async with connect(config_for(root)) as client:
        result = await client.call_tool(tool, {"path": "../outside.txt", **arguments})
    assert error_code(result) == "outside_roots"
    assert (tmp_path / "outside.txt").read_text(encoding="utf-8") == "a\n"


@pytest.mark.parametrize(("tool", "arguments"), EDITS)
async def test_editing_tools_never_write_through_a_symlink(
    client: Client, tmp_path: Path, tool: str, arguments: dict[str, Any]
) -> None:
    (tmp_path / "target.txt").write_text("a\n", encoding="utf-8")
    (tmp_path / "link.txt").symlink_to("target.txt")
    result = await client.call_tool(tool, {"path": "link.txt", **arguments})
    assert error_code(result) == "symlink_refused" and "refusing to edit through a symlink" in text_of(result)
    assert "target.txt" in text_of(result)
    assert (tmp_path / "link.txt").is_symlink() and (tmp_path / "target.txt").read_text(
        encoding="utf-8"
    ) == "a\n"


@pytest.mark.parametrize(("tool", "arguments"), READS)
async def test_read_only_tools_follow_a_symlinked_file(
    client: Client, tmp_path: Path, tool: str, arguments: dict[str, Any]
) -> None:
    (tmp_path / "target.txt").write_text("a\n", encoding="utf-8")
    (tmp_path / "link.txt").symlink_to("target.txt")
    result = await client.call_tool(tool, {"path": "link.txt", **arguments})
    assert not result.is_error


@pytest.mark.parametrize(("tool", "arguments"), ALL)
async def test_block_symlinks_refuses_even_read_only_tools(
    tmp_path: Path, tool: str, arguments: dict[str, Any]
) -> None:
    (tmp_path / "target.txt").write_text("a\n", encoding="utf-8")
    (tmp_path / "link.txt").symlink_to("target.txt")
    async with connect(config_for(tmp_path, paths={"block_symlinks": True})) as client:
        result = await client.call_tool(tool, {"path": "link.txt", **arguments})
    assert error_code(result) == "symlink_refused"


@pytest.mark.parametrize(("tool", "arguments"), EDITS)
async def test_edits_are_atomic_and_keep_the_mode(
    client: Client, tmp_path: Path, tool: str, arguments: dict[str, Any]
) -> None:
    (tmp_path / "f.txt").write_text("a\nz\n", encoding="utf-8")
    os.chmod(tmp_path / "f.txt", 0o604)
    inode = (tmp_path / "f.txt").stat().st_ino
    result = await client.call_tool(tool, {"path": "f.txt", **arguments})
    assert not result.is_error, text_of(result)
    after = (tmp_path / "f.txt").stat()
    assert after.st_mode & 0o777 == 0o604
    assert after.st_ino != inode  # a new file renamed into place, not rewritten in place
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.txt"]  # no temporary file left


@pytest.mark.parametrize(("tool", "arguments"), [e for e in EDITS if e[0] != "deletetextlines"])
async def test_a_result_over_the_write_cap_is_refused_and_nothing_changes(
    tmp_path: Path, tool: str, arguments: dict[str, Any]
) -> None:
    original = ("a\n" + "y" * 1498 + "\n").encode()
    (tmp_path / "f.txt").write_bytes(original)
    grow = {**arguments}
    if tool == "inserttextlines":
        grow["linesToInsert"] = ["n" * 100]
    elif tool == "replacetextlines":
        grow["replaceWithLines"] = ["b" * 100]
    else:
        grow["edits"] = [{"oldText": "a", "newText": "b" * 100}]
    async with connect(config_for(tmp_path, limits={"max_write_bytes": 1510})) as client:
        result = await client.call_tool(tool, {"path": "f.txt", **grow})
    assert error_code(result) == "too_large" and "over the write limit" in text_of(result)
    assert (tmp_path / "f.txt").read_bytes() == original


async def test_a_large_edit_over_the_write_cap_names_the_cap_not_the_size_of_a_piece(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"a\n")
    async with connect(config_for(tmp_path, limits={"max_write_bytes": 1_500_000})) as client:
        result = await client.call_tool(
            "editfile", {"path": "f.txt", "edits": [{"oldText": "a", "newText": "\u00e9" * 1_100_000}]}
        )
    assert error_code(result) == "too_large"
    assert text_of(result) == (
        "the edited file would be over the write limit of 1500000 bytes; nothing was written"
    )
    assert (tmp_path / "f.txt").read_bytes() == b"a\n"


@pytest.mark.parametrize("dry_run", [False, True])
async def test_an_edit_that_changes_nothing_reports_the_size_of_the_file(
    client: Client, tmp_path: Path, dry_run: bool
) -> None:
    (tmp_path / "f.txt").write_bytes("\ufeffé\r\n".encode())
    result = await client.call_tool(
        "editfile", {"path": "f.txt", "edits": [{"oldText": "é", "newText": "é"}], "dryRun": dry_run}
    )
    assert not result.is_error and not result.structured_content["changed"]
    assert result.structured_content["sizeBytes"] == 7


async def test_parallel_edits_of_one_file_all_land(tmp_path: Path) -> None:
    names = [f"name{n}" for n in range(24)]
    (tmp_path / "f.txt").write_text("".join(f"{name} = old\n" for name in names), encoding="utf-8")
    registry = build_registry(config_for(tmp_path))
    failures: list[str] = []

    async def one(name: str) -> None:
        result = await registry.call(
            "editfile", {"path": "f.txt", "edits": [{"oldText": f"{name} = old", "newText": f"{name} = new"}]}
        )
        if result.is_error:
            failures.append(result.content[0].text)  # type: ignore[union-attr]

    with anyio.fail_after(120):
        async with anyio.create_task_group() as group:
            for name in names:
                group.start_soon(one, name)
    assert failures == []
    assert (tmp_path / "f.txt").read_text(encoding="utf-8") == "".join(f"{name} = new\n" for name in names)
