"""movepath through the SDK client."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from mcp import Client

from tests.helpers import config_for, connect, error_code, text_of

pytestmark = pytest.mark.anyio


async def test_movepath_renames_a_file(client: Client, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a", encoding="utf-8")
    result = await client.call_tool("movepath", {"source": "a.txt", "destination": "b.txt"})
    data = result.structured_content
    assert (data["method"], data["type"], data["replaced"]) == ("rename", "file", False)
    assert not (tmp_path / "a.txt").exists() and (tmp_path / "b.txt").read_text(encoding="utf-8") == "a"


async def test_movepath_refuses_an_existing_destination_without_overwrite(
    client: Client, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("a", encoding="utf-8")
    (tmp_path / "b.txt").write_text("b", encoding="utf-8")
    result = await client.call_tool("movepath", {"source": "a.txt", "destination": "b.txt"})
    assert error_code(result) == "already_exists"
    assert "destination already exists and overwrite=false" in text_of(result)
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "a"
    assert (tmp_path / "b.txt").read_text(encoding="utf-8") == "b"
    replaced = await client.call_tool(
        "movepath", {"source": "a.txt", "destination": "b.txt", "overwrite": True}
    )
    assert replaced.structured_content["replaced"] is True
    assert (tmp_path / "b.txt").read_text(encoding="utf-8") == "a"


async def test_movepath_moves_a_directory_and_refuses_a_non_empty_destination(
    client: Client, tmp_path: Path
) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "f").write_text("f", encoding="utf-8")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "g").write_text("g", encoding="utf-8")
    refused = await client.call_tool("movepath", {"source": "src", "destination": "full", "overwrite": True})
    assert error_code(refused) == "already_exists" and "not empty" in text_of(refused)
    moved = await client.call_tool("movepath", {"source": "src", "destination": "new/place"})
    assert error_code(moved) == "not_found" and "parent directory does not exist" in text_of(moved)
    moved = await client.call_tool("movepath", {"source": "src", "destination": "dst"})
    assert moved.structured_content["type"] == "directory"
    assert (tmp_path / "dst" / "f").read_text(encoding="utf-8") == "f"


async def test_movepath_refuses_to_move_a_directory_into_itself(client: Client, tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    result = await client.call_tool("movepath", {"source": "d", "destination": "d/inner"})
    assert error_code(result) == "invalid_arguments" and "into itself" in text_of(result)


async def test_movepath_refuses_to_replace_a_file_with_a_directory(client: Client, tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "f").write_text("f", encoding="utf-8")
    result = await client.call_tool("movepath", {"source": "d", "destination": "f", "overwrite": True})
    assert error_code(result) == "not_a_file" and "cannot replace a file with a directory" in text_of(result)


async def test_movepath_moves_a_symlink_as_itself(client: Client, tmp_path: Path) -> None:
    (tmp_path / "target").write_text("t", encoding="utf-8")
    (tmp_path / "link").symlink_to("target")
    await client.call_tool("movepath", {"source": "link", "destination": "moved"})
    assert (tmp_path / "moved").is_symlink() and os.readlink(tmp_path / "moved") == "target"


async def test_movepath_cannot_move_a_root_or_escape_the_roots(client: Client, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a", encoding="utf-8")
    root = await client.call_tool("movepath", {"source": ".", "destination": "elsewhere"})
    assert error_code(root) == "policy_violation" and tmp_path.is_dir()
    escape = await client.call_tool("movepath", {"source": "a.txt", "destination": "../escaped.txt"})
    assert error_code(escape) == "outside_roots"
    assert (tmp_path / "a.txt").exists()


async def test_movepath_across_devices_copies_then_removes(tmp_path: Path, other_device: Path) -> None:
    (tmp_path / "tree" / "sub").mkdir(parents=True)
    (tmp_path / "tree" / "sub" / "f.txt").write_text("f", encoding="utf-8")
    (tmp_path / "tree" / "run.sh").write_text("#!/bin/sh\n", encoding="utf-8")
    (tmp_path / "tree" / "run.sh").chmod(0o755)
    config = config_for(tmp_path, paths={"allowed_roots": [str(tmp_path), str(other_device)]})
    async with connect(config) as client:
        result = await client.call_tool(
            "movepath", {"source": "tree", "destination": str(other_device / "tree")}
        )
    assert result.structured_content["method"] == "copyAndRemove"
    assert (other_device / "tree" / "sub" / "f.txt").read_text(encoding="utf-8") == "f"
    assert (other_device / "tree" / "run.sh").stat().st_mode & 0o777 == 0o755
    assert not (tmp_path / "tree").exists()
