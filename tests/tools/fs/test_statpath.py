"""statpath through the SDK client: existence, size, type, mode and symlinks."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest
from mcp import Client

from tests.helpers import config_for, connect, error_code

pytestmark = pytest.mark.anyio


async def test_a_missing_path_is_not_an_error(client: Client, tmp_path: Path) -> None:
    result = await client.call_tool("statpath", {"path": "nope/deeper.txt"})
    assert not result.is_error
    assert result.structured_content == {
        "path": str(tmp_path / "nope" / "deeper.txt"),
        "name": "",
        "exists": False,
    }


async def test_an_existing_file_reports_name_type_size_and_mtime(client: Client, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("12345", encoding="utf-8")
    os.chmod(tmp_path / "a.txt", 0o640)
    data = (await client.call_tool("statpath", {"path": "a.txt"})).structured_content
    assert data["exists"] is True and data["name"] == "a.txt" and data["isDir"] is False
    assert data["type"] == "file" and data["sizeBytes"] == 5 and data["mode"] == "0640"
    assert data["isSymlink"] is False and "symlinkTarget" not in data
    assert data["modTime"].endswith("Z")


async def test_a_directory_reports_is_dir(client: Client, tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    data = (await client.call_tool("statpath", {"path": "d"})).structured_content
    assert data["isDir"] is True and data["type"] == "directory"


async def test_a_fifo_or_socket_is_type_other_and_stat_does_not_block(client: Client, tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(tmp_path / "sock"))
        for name in ("pipe", "sock"):
            data = (await client.call_tool("statpath", {"path": name})).structured_content
            assert data["exists"] is True and data["type"] == "other" and data["isDir"] is False, name


async def test_an_empty_file_still_has_a_size(client: Client, tmp_path: Path) -> None:
    (tmp_path / "empty").touch()
    data = (await client.call_tool("statpath", {"path": "empty"})).structured_content
    assert data["sizeBytes"] == 0


async def test_a_symlink_is_followed_and_described_when_allowed(client: Client, tmp_path: Path) -> None:
    (tmp_path / "target.txt").write_text("abc", encoding="utf-8")
    (tmp_path / "link").symlink_to("target.txt")
    data = (await client.call_tool("statpath", {"path": "link"})).structured_content
    assert data["isSymlink"] is True and data["symlinkTarget"] == "target.txt"
    assert data["type"] == "file" and data["sizeBytes"] == 3 and data["name"] == "link"


async def test_a_dangling_symlink_inside_the_root_exists_as_a_symlink(client: Client, tmp_path: Path) -> None:
    (tmp_path / "link").symlink_to("gone.txt")
    data = (await client.call_tool("statpath", {"path": "link"})).structured_content
    assert data["exists"] is True and data["type"] == "symlink" and data["symlinkTarget"] == "gone.txt"


async def test_a_symlink_is_refused_when_symlinks_are_blocked(tmp_path: Path) -> None:
    (tmp_path / "target.txt").touch()
    (tmp_path / "link").symlink_to("target.txt")
    async with connect(config_for(tmp_path, paths={"block_symlinks": True})) as client:
        result = await client.call_tool("statpath", {"path": "link"})
    assert error_code(result) == "symlink_refused"


async def test_an_empty_path_is_invalid_and_a_path_outside_the_roots_is_refused(
    client: Client, tmp_path: Path
) -> None:
    empty = await client.call_tool("statpath", {"path": " "})
    assert error_code(empty) == "invalid_path"
    outside = await client.call_tool("statpath", {"path": "/etc/passwd"})
    assert error_code(outside) == "outside_roots"


async def test_a_symlink_to_outside_is_refused_without_leaking_its_metadata(
    client: Client, tmp_path: Path
) -> None:
    (tmp_path / "link").symlink_to("/etc/passwd")
    result = await client.call_tool("statpath", {"path": "link"})
    assert error_code(result) == "outside_roots"
    assert result.structured_content is None
