"""globfiles through the SDK client, with both engines."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.helpers import error_code, text_of
from tests.tools.fs.conftest import Connect

pytestmark = pytest.mark.anyio


@pytest.fixture
async def client(connect_search: Connect) -> AsyncIterator[Client]:
    """A search client rooted in ``tmp_path``, once per engine."""
    async with connect_search() as connected:
        yield connected


async def glob(client: Client, pattern: str, **args: Any) -> Any:
    result = await client.call_tool("globfiles", {"pattern": pattern, **args})
    assert not result.is_error, text_of(result)
    return result.structured_content


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for rel in ["a.py", "b.md", "src/c.py", "src/pkg/d.py", "src/pkg/e.ts", "tests/test_c.py", ".hidden.py"]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(rel, encoding="utf-8")
    (tmp_path / "empty").mkdir()
    return tmp_path


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("*.py", ["a.py"]),
        ("**/*.py", ["a.py", "src/c.py", "src/pkg/d.py", "tests/test_c.py"]),
        ("src/**", ["src/c.py", "src/pkg/d.py", "src/pkg/e.ts"]),
        ("src/*/?.py", ["src/pkg/d.py"]),
        ("**/*.{ts,md}", ["b.md", "src/pkg/e.ts"]),
        ("**/[cd].py", ["src/c.py", "src/pkg/d.py"]),
        ("./**/test_*", ["tests/test_c.py"]),
        ("nothing*", []),
    ],
)
async def test_globs_match_the_whole_relative_path(
    client: Client, tree: Path, pattern: str, expected: list[str]
) -> None:
    assert (await glob(client, pattern))["paths"] == expected


async def test_paths_mirror_the_root_argument(client: Client, tree: Path) -> None:
    assert (await glob(client, "*.py", root="src"))["paths"] == ["src/c.py"]
    assert (await glob(client, "*.py", root=str(tree / "src")))["paths"] == [f"{tree}/src/c.py"]


async def test_hidden_names_need_include_hidden(client: Client, tree: Path) -> None:
    assert ".hidden.py" not in (await glob(client, "*.py"))["paths"]
    assert (await glob(client, "*.py", includeHidden=True))["paths"] == [".hidden.py", "a.py"]


async def test_exclude_and_ignore_files_apply(client: Client, tree: Path) -> None:
    (tree / ".gitignore").write_text("tests/\n", encoding="utf-8")
    assert (await glob(client, "**/*.py"))["paths"] == ["a.py", "src/c.py", "src/pkg/d.py"]
    assert (await glob(client, "**/*.py", exclude=["pkg"]))["paths"] == ["a.py", "src/c.py"]
    everything = await glob(client, "**/*.py", respectIgnoreFiles=False)
    assert everything["paths"] == ["a.py", "src/c.py", "src/pkg/d.py", "tests/test_c.py"]


async def test_directories_are_included_on_request(client: Client, tree: Path) -> None:
    assert (await glob(client, "src*"))["paths"] == []
    with_dirs = await glob(client, "**/p*", includeDirectories=True)
    assert with_dirs["paths"] == ["src/pkg/"]
    assert (await glob(client, "**", includeDirectories=True))["paths"][:3] == ["a.py", "b.md", "src/"]


async def test_max_results_keeps_the_first_paths_in_order_and_counts_them_all(
    client: Client, tree: Path
) -> None:
    result = await glob(client, "**", includeDirectories=True, maxResults=4)
    assert result["paths"] == ["a.py", "b.md", "src/", "src/c.py"]
    assert result["total"] == 9 and result["truncated"] is True  # 6 files, src/, src/pkg/, tests/


async def test_sort_by_mtime_puts_the_newest_first(client: Client, tree: Path) -> None:
    for age, rel in enumerate(["src/c.py", "a.py", "src/pkg/d.py", "tests/test_c.py"]):
        stamp = 1_700_000_000 - age * 100
        os.utime(tree / rel, (stamp, stamp))
    result = await glob(client, "**/*.py", sortBy="mtime")
    assert result["paths"] == ["src/c.py", "a.py", "src/pkg/d.py", "tests/test_c.py"]
    newest = await glob(client, "**/*.py", sortBy="mtime", maxResults=2)
    assert newest["paths"] == ["src/c.py", "a.py"] and newest["total"] == 4 and newest["truncated"] is True


async def test_max_results_and_the_budget_cut_with_truncated(connect_search: Connect, tmp_path: Path) -> None:
    for index in range(300):
        (tmp_path / f"a-rather-long-file-name-number-{index:03}.txt").write_text("x", encoding="utf-8")
    async with connect_search(limits={"max_result_chars": 2000}) as client:
        few = await glob(client, "*.txt", maxResults=10)
        assert len(few["paths"]) == 10 and few["truncated"] is True and few["total"] == 300
        many = await client.call_tool("globfiles", {"pattern": "*.txt", "maxResults": 1000})
        assert len(text_of(many)) <= 2000 and many.structured_content["truncated"] is True


async def test_symlinks_loops_and_fifos_are_not_followed_or_listed(
    client: Client, tree: Path, tmp_path: Path
) -> None:
    (tree / "loop").symlink_to(tree)
    (tree / "out").symlink_to("/etc")
    os.mkfifo(tree / "pipe.py")
    with anyio.fail_after(20):
        result = await glob(client, "**/*", includeDirectories=True)
    assert {"a.py", "src/", "src/pkg/d.py"} <= set(result["paths"])
    assert all(not path.startswith(("loop", "out", "pipe")) for path in result["paths"])


@pytest.mark.parametrize("pattern", ["", "/etc/*", "../*", "src/../../x"])
async def test_patterns_must_stay_relative_to_root(client: Client, tree: Path, pattern: str) -> None:
    result = await client.call_tool("globfiles", {"pattern": pattern})
    assert error_code(result) == "invalid_arguments"


async def test_a_brace_pattern_of_more_than_1000_expansions_is_refused_with_what_to_do(
    client: Client, tree: Path
) -> None:
    # wcmatch's PatternLimitException was not caught: the call failed with internal_error.
    pattern = "{" + ",".join(f"a{number}" for number in range(20000)) + "}"
    with anyio.fail_after(20):
        result = await client.call_tool("globfiles", {"pattern": pattern})
    assert error_code(result) == "invalid_arguments"
    assert "expands to more than 1000 patterns" in text_of(result)
    assert "fewer" in text_of(result)
