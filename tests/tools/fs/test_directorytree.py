"""directorytree through the SDK client."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.helpers import config_for, connect, error_code, text_of, wire_chars

pytestmark = pytest.mark.anyio


async def tree_of(client: Client, **args: Any) -> Any:
    result = await client.call_tool("directorytree", args)
    assert not result.is_error, text_of(result)
    return result


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for rel, size in [("README.md", 10), ("src/a.py", 2048), ("src/pkg/b.py", 5), ("src/pkg/deep/c.py", 1)]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(b"x" * size)
    (tmp_path / "empty").mkdir()
    (tmp_path / ".git").mkdir()
    (tmp_path / ".env").write_text("SECRET=1", encoding="utf-8")
    return tmp_path


async def test_the_tree_is_indented_with_sizes_and_marks_directories_beyond_the_depth(
    client: Client, tree: Path
) -> None:
    result = await tree_of(client)
    assert text_of(result).splitlines()[1:] == [
        "README.md 10B",
        "empty/",
        "src/",
        "  a.py 2.0K",
        "  pkg/",
        "    b.py 5B",
        "    deep/ …",
    ]
    assert result.structured_content["entries"] == [
        {"path": "README.md", "type": "file", "sizeBytes": 10},
        {"path": "empty", "type": "directory"},
        {"path": "src", "type": "directory"},
        {"path": "src/a.py", "type": "file", "sizeBytes": 2048},
        {"path": "src/pkg", "type": "directory"},
        {"path": "src/pkg/b.py", "type": "file", "sizeBytes": 5},
        {"path": "src/pkg/deep", "type": "directory", "notRead": True},
    ]


async def test_max_depth_limits_the_levels(client: Client, tree: Path) -> None:
    result = await tree_of(client, maxDepth=1)
    assert text_of(result).splitlines()[1:] == ["README.md 10B", "empty/ …", "src/ …"]
    assert (await tree_of(client, maxDepth=5)).structured_content["shownEntries"] == 8


async def test_max_entries_fills_upper_levels_first_and_notes_the_cut(client: Client, tmp_path: Path) -> None:
    for top in ("a", "b"):
        for index in range(5):
            (tmp_path / top / f"f{index}.txt").parent.mkdir(exist_ok=True)
            (tmp_path / top / f"f{index}.txt").write_text("x", encoding="utf-8")
    result = await tree_of(client, maxEntries=5)
    assert text_of(result).splitlines()[1:] == [
        "a/",
        "  f0.txt 1B",
        "  f1.txt 1B",
        "  f2.txt 1B",
        "  [… 2 more entries not shown: maxEntries]",
        "b/",
        "  [… 5 more entries not shown: maxEntries]",
    ]
    content = result.structured_content
    assert content["truncated"] is True and content["shownEntries"] == 5
    assert content["entries"][0] == {"path": "a", "type": "directory", "omittedEntries": 2}
    assert content["entries"][4] == {"path": "b", "type": "directory", "omittedEntries": 5}


async def test_a_tree_over_the_budget_stays_in_it_with_text_and_entries_cut_alike(tmp_path: Path) -> None:
    for top in range(40):
        for index in range(50):
            (tmp_path / f"dir{top:02}" / f"file-{index:03}.txt").parent.mkdir(exist_ok=True)
            (tmp_path / f"dir{top:02}" / f"file-{index:03}.txt").write_text("x", encoding="utf-8")
    async with connect(config_for(tmp_path, limits={"max_result_chars": 20_000})) as client:
        result = await client.call_tool("directorytree", {"maxEntries": 5000})
    data = result.structured_content
    assert wire_chars(result) <= 20_000 and data["truncated"] is True
    lines = [line for line in text_of(result).splitlines()[1:] if not line.startswith("[")]
    assert len(lines) == len(data["entries"]) == data["shownEntries"] > 100
    assert lines[-1].strip().split(" ")[0] == data["entries"][-1]["path"].rsplit("/", 1)[-1]


async def test_hidden_names_and_ignored_entries_are_left_out_unless_asked(client: Client, tree: Path) -> None:
    (tree / ".gitignore").write_text("src/pkg/\n", encoding="utf-8")
    default = text_of(await tree_of(client))
    assert ".env" not in default and ".git" not in default and "pkg" not in default
    everything = text_of(await tree_of(client, includeHidden=True, respectIgnoreFiles=False))
    assert ".env 8B" in everything and ".git/" in everything and "pkg/" in everything
    assert "src/" not in text_of(await tree_of(client, exclude=["src"]))


async def test_symlinks_are_shown_not_followed_and_fifos_do_not_hang(client: Client, tree: Path) -> None:
    (tree / "loop").symlink_to(tree)
    (tree / "outside").symlink_to("/etc")
    os.mkfifo(tree / "pipe")
    with anyio.fail_after(20):
        result = await tree_of(client, maxDepth=4)
    lines = text_of(result).splitlines()
    assert "loop@" in lines and "outside@" in lines and "pipe (other)" in lines
    assert "passwd" not in text_of(result)


async def test_the_path_must_be_a_directory_inside_the_roots(client: Client, tree: Path) -> None:
    assert error_code(await client.call_tool("directorytree", {"path": "README.md"})) == "not_a_directory"
    outside = await client.call_tool("directorytree", {"path": "/etc"})
    assert error_code(outside) == "outside_roots"


async def test_the_text_stays_within_the_result_budget(tmp_path: Path) -> None:
    for index in range(400):
        (tmp_path / f"a-long-file-name-to-fill-the-budget-{index:03}.txt").write_text("x", encoding="utf-8")
    async with connect(config_for(tmp_path, limits={"max_result_chars": 2000})) as client:
        result = await client.call_tool("directorytree", {"maxEntries": 1000})
    assert len(text_of(result)) <= 2000 and result.structured_content["truncated"] is True
