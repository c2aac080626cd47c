"""listdirectory through the SDK client: entries, glob patterns, details, maxEntries."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from mcp import Client

from mcp_localtools.config import LimitsConfig
from mcp_localtools.policy.paths import PathPolicy
from mcp_localtools.tools.fs.listdirectory import ListDirectoryArgs, list_directory
from tests.helpers import config_for, connect, error_code, text_of

pytestmark = pytest.mark.anyio


def names(result: object) -> list[str]:
    return [entry["name"] for entry in result.structured_content["entries"]]  # type: ignore[attr-defined]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for name in ["b.txt", "a.txt", ".hidden", "B.md", "ä.txt", "x*y.txt"]:
        (tmp_path / name).write_text(name, encoding="utf-8")
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "nested.txt").write_text("n", encoding="utf-8")
    return tmp_path


async def test_immediate_children_are_listed_sorted_by_name_with_dotfiles(client: Client, tree: Path) -> None:
    result = await client.call_tool("listdirectory", {"path": "."})
    assert names(result) == sorted([".hidden", "B.md", "a.txt", "b.txt", "dir", "x*y.txt", "ä.txt"])
    assert "nested.txt" not in text_of(result)
    assert result.structured_content["entries"][0] == {"name": ".hidden"}


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("*.txt", ["a.txt", "b.txt", "x*y.txt", "ä.txt"]),
        ("?.txt", ["a.txt", "b.txt", "ä.txt"]),
        ("[ab].txt", ["a.txt", "b.txt"]),
        ("[!a].txt", ["b.txt", "ä.txt"]),
        ("[^a].txt", ["b.txt", "ä.txt"]),
        ("x\\*y.txt", ["x*y.txt"]),
        ("b.*", ["b.txt"]),
        ("*", [".hidden", "B.md", "a.txt", "b.txt", "dir", "x*y.txt", "ä.txt"]),
        ("{a,b}.txt", []),
        ("**.md", ["B.md"]),
    ],
)
async def test_the_pattern_is_a_case_sensitive_glob_on_names(
    client: Client, tree: Path, pattern: str, expected: list[str]
) -> None:
    result = await client.call_tool("listdirectory", {"path": ".", "pattern": pattern})
    assert names(result) == expected


@pytest.mark.parametrize("pattern", ["[", "a[b", "abc\\"])
async def test_a_malformed_pattern_is_an_error(client: Client, tree: Path, pattern: str) -> None:
    result = await client.call_tool("listdirectory", {"path": ".", "pattern": pattern})
    assert error_code(result) == "invalid_arguments"
    assert "syntax error in pattern" in text_of(result)


async def test_a_missing_path_is_not_found_and_a_file_is_not_a_directory(client: Client, tree: Path) -> None:
    missing = await client.call_tool("listdirectory", {"path": "nope"})
    assert error_code(missing) == "not_found"
    file = await client.call_tool("listdirectory", {"path": "a.txt"})
    assert error_code(file) == "not_a_directory"


async def test_the_default_path_is_the_base_directory(client: Client, tree: Path) -> None:
    result = await client.call_tool("listdirectory", {})
    assert result.structured_content["path"] == str(tree)
    assert "a.txt" in names(result)


async def test_a_symlinked_directory_is_refused_when_symlinks_are_blocked(tree: Path) -> None:
    (tree / "link").symlink_to(tree / "dir")
    async with connect(config_for(tree, paths={"block_symlinks": True})) as client:
        result = await client.call_tool("listdirectory", {"path": "link"})
    assert error_code(result) == "symlink_refused"


async def test_a_directory_outside_the_roots_is_refused(client: Client, tree: Path) -> None:
    result = await client.call_tool("listdirectory", {"path": ".."})
    assert error_code(result) == "outside_roots"


async def test_details_give_type_size_and_mtime_without_following_symlinks(
    client: Client, tree: Path
) -> None:
    (tree / "link").symlink_to(tree / "dir")
    result = await client.call_tool("listdirectory", {"path": ".", "details": True})
    entries = {entry["name"]: entry for entry in result.structured_content["entries"]}
    assert entries["a.txt"]["type"] == "file" and entries["a.txt"]["sizeBytes"] == 5
    assert entries["dir"]["type"] == "directory"
    assert entries["link"]["type"] == "symlink"
    assert entries["a.txt"]["modTime"].endswith("Z")


async def test_max_entries_cuts_the_list_and_says_so(client: Client, tree: Path) -> None:
    result = await client.call_tool("listdirectory", {"path": ".", "maxEntries": 2})
    data = result.structured_content
    assert len(data["entries"]) == 2 and data["truncated"] is True and data["totalEntries"] == 7
    assert "truncated: 5 more" in text_of(result)


async def test_the_text_rendering_marks_directories_with_a_slash(client: Client, tree: Path) -> None:
    result = await client.call_tool("listdirectory", {"path": "."})
    assert "\ndir/\n" in text_of(result)


async def test_the_result_budget_bounds_a_huge_directory(tmp_path: Path) -> None:
    for n in range(300):
        (tmp_path / f"{'long-name-' * 5}{n:04}").touch()
    async with connect(config_for(tmp_path, limits={"max_result_chars": 2000})) as client:
        result = await client.call_tool("listdirectory", {"path": "."})
    assert result.structured_content["truncated"] is True
    assert len(text_of(result)) <= 2000


def test_details_leave_out_an_entry_deleted_between_the_scan_and_its_stat(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scandir = os.scandir

    @contextmanager
    def scan_then_delete(fd: int) -> Iterator[Iterator[os.DirEntry[str]]]:
        with scandir(fd) as scan:
            yield scan
        (tree / "b.txt").unlink()  # after the scan, before the entries are examined

    monkeypatch.setattr(os, "scandir", scan_then_delete)
    args = ListDirectoryArgs.model_validate({"path": str(tree), "details": True})
    result = list_directory(args, paths=PathPolicy.create([tree]), limits=LimitsConfig())
    data = result.structured
    assert result.error is None and data is not None
    assert [entry["name"] for entry in data["entries"]] == [
        ".hidden",
        "B.md",
        "a.txt",
        "dir",
        "x*y.txt",
        "ä.txt",
    ]
    assert data["totalEntries"] == 6 and data["truncated"] is False
