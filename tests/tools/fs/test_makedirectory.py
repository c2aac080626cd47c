"""makedirectory through the SDK client."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from tests.helpers import error_code, text_of

pytestmark = pytest.mark.anyio


async def test_makedirectory_creates_parents_by_default(client: Client, tmp_path: Path) -> None:
    result = await client.call_tool("makedirectory", {"path": "a/b/c"})
    assert (tmp_path / "a" / "b" / "c").is_dir()
    assert result.structured_content["created"] is True
    assert result.structured_content["createdDirectories"] == [
        str(tmp_path / p) for p in ("a", "a/b", "a/b/c")
    ]


async def test_makedirectory_on_an_existing_directory_is_fine(client: Client, tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    result = await client.call_tool("makedirectory", {"path": "d"})
    assert not result.is_error and result.structured_content["created"] is False


async def test_makedirectory_on_an_existing_file_is_an_error(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x", encoding="utf-8")
    result = await client.call_tool("makedirectory", {"path": "f"})
    assert error_code(result) == "not_a_directory"


async def test_makedirectory_on_a_root_is_fine(client: Client, tmp_path: Path) -> None:
    result = await client.call_tool("makedirectory", {"path": "."})
    assert not result.is_error, text_of(result)
    assert result.structured_content == {"path": str(tmp_path), "created": False, "createdDirectories": []}


async def test_makedirectory_on_a_dangling_symlink_is_a_clear_error(client: Client, tmp_path: Path) -> None:
    (tmp_path / "link").symlink_to("gone")
    result = await client.call_tool("makedirectory", {"path": "link", "parents": False})
    assert error_code(result) == "not_a_directory"
    assert f"path is a symlink whose target cannot be used as a directory: {tmp_path / 'link'}" in text_of(
        result
    )
    assert (tmp_path / "link").is_symlink() and not (tmp_path / "gone").exists()


async def test_makedirectory_without_parents_needs_the_parent(client: Client, tmp_path: Path) -> None:
    result = await client.call_tool("makedirectory", {"path": "x/y", "parents": False})
    assert error_code(result) == "not_found" and "parent directory does not exist" in text_of(result)
    assert not (tmp_path / "x").exists()


async def test_makedirectory_outside_the_roots_is_refused(client: Client, tmp_path: Path) -> None:
    result = await client.call_tool("makedirectory", {"path": "../sibling"})
    assert error_code(result) == "outside_roots" and not (tmp_path.parent / "sibling").exists()
