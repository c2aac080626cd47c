"""makedirectory, movepath and copypath through the SDK client."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from mcp import Client

from tests.helpers import config_for, connect, text_of

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
    assert result.is_error and "exists and is not a directory" in text_of(result)


async def test_makedirectory_on_a_root_is_fine(client: Client, tmp_path: Path) -> None:
    result = await client.call_tool("makedirectory", {"path": "."})
    assert not result.is_error, text_of(result)
    assert result.structured_content == {"path": str(tmp_path), "created": False, "createdDirectories": []}


async def test_makedirectory_on_a_dangling_symlink_is_a_clear_error(client: Client, tmp_path: Path) -> None:
    (tmp_path / "link").symlink_to("gone")
    result = await client.call_tool("makedirectory", {"path": "link", "parents": False})
    assert result.is_error
    assert f"path is a symlink whose target cannot be used as a directory: {tmp_path / 'link'}" in text_of(
        result
    )
    assert (tmp_path / "link").is_symlink() and not (tmp_path / "gone").exists()


async def test_makedirectory_without_parents_needs_the_parent(client: Client, tmp_path: Path) -> None:
    result = await client.call_tool("makedirectory", {"path": "x/y", "parents": False})
    assert result.is_error and "parent directory does not exist" in text_of(result)
    assert not (tmp_path / "x").exists()


async def test_makedirectory_outside_the_roots_is_refused(client: Client, tmp_path: Path) -> None:
    result = await client.call_tool("makedirectory", {"path": "../sibling"})
    assert result.is_error and not (tmp_path.parent / "sibling").exists()


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
    assert result.is_error and "destination already exists and overwrite=false" in text_of(result)
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
    assert refused.is_error and "not empty" in text_of(refused)
    moved = await client.call_tool("movepath", {"source": "src", "destination": "new/place"})
    assert moved.is_error and "parent directory does not exist" in text_of(moved)
    moved = await client.call_tool("movepath", {"source": "src", "destination": "dst"})
    assert moved.structured_content["type"] == "directory"
    assert (tmp_path / "dst" / "f").read_text(encoding="utf-8") == "f"


async def test_movepath_refuses_to_move_a_directory_into_itself(client: Client, tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    result = await client.call_tool("movepath", {"source": "d", "destination": "d/inner"})
    assert result.is_error and "into itself" in text_of(result)


async def test_movepath_refuses_to_replace_a_file_with_a_directory(client: Client, tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "f").write_text("f", encoding="utf-8")
    result = await client.call_tool("movepath", {"source": "d", "destination": "f", "overwrite": True})
    assert result.is_error and "cannot replace a file with a directory" in text_of(result)


async def test_movepath_moves_a_symlink_as_itself(client: Client, tmp_path: Path) -> None:
    (tmp_path / "target").write_text("t", encoding="utf-8")
    (tmp_path / "link").symlink_to("target")
    await client.call_tool("movepath", {"source": "link", "destination": "moved"})
    assert (tmp_path / "moved").is_symlink() and os.readlink(tmp_path / "moved") == "target"


async def test_movepath_cannot_move_a_root_or_escape_the_roots(client: Client, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a", encoding="utf-8")
    root = await client.call_tool("movepath", {"source": ".", "destination": "elsewhere"})
    assert root.is_error and tmp_path.is_dir()
    escape = await client.call_tool("movepath", {"source": "a.txt", "destination": "../escaped.txt"})
    assert escape.is_error and "outside allowed roots" in text_of(escape)
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


async def test_copypath_copies_a_file_keeping_mode_and_mtime(client: Client, tmp_path: Path) -> None:
    source = tmp_path / "run.sh"
    source.write_text("#!/bin/sh\n", encoding="utf-8")
    source.chmod(0o751)
    os.utime(source, (1_000_000_000, 1_000_000_000))
    result = await client.call_tool("copypath", {"source": "run.sh", "destination": "copy.sh"})
    assert result.structured_content["bytesCopied"] == 10 and result.structured_content["filesCopied"] == 1
    copy = tmp_path / "copy.sh"
    assert copy.read_text(encoding="utf-8") == "#!/bin/sh\n"
    assert copy.stat().st_mode & 0o777 == 0o751 and copy.stat().st_mtime == 1_000_000_000


async def test_copypath_of_a_directory_needs_recursive_and_keeps_symlinks(
    client: Client, tmp_path: Path
) -> None:
    (tmp_path / "src" / "sub").mkdir(parents=True)
    (tmp_path / "src" / "sub" / "f.txt").write_text("f", encoding="utf-8")
    (tmp_path / "src" / "link").symlink_to("sub/f.txt")
    os.mkfifo(tmp_path / "src" / "pipe")
    refused = await client.call_tool("copypath", {"source": "src", "destination": "dst"})
    assert refused.is_error and "recursive=true" in text_of(refused)
    result = await client.call_tool("copypath", {"source": "src", "destination": "dst", "recursive": True})
    assert (tmp_path / "dst" / "sub" / "f.txt").read_text(encoding="utf-8") == "f"
    assert os.readlink(tmp_path / "dst" / "link") == "sub/f.txt"
    assert result.structured_content["skipped"] == [str(tmp_path / "src" / "pipe")]
    assert not (tmp_path / "dst" / "pipe").exists()


async def test_copypath_refuses_an_existing_destination_unless_overwrite(
    client: Client, tmp_path: Path
) -> None:
    (tmp_path / "a").write_text("a", encoding="utf-8")
    (tmp_path / "b").write_text("b", encoding="utf-8")
    refused = await client.call_tool("copypath", {"source": "a", "destination": "b"})
    assert refused.is_error and (tmp_path / "b").read_text(encoding="utf-8") == "b"
    done = await client.call_tool("copypath", {"source": "a", "destination": "b", "overwrite": True})
    assert done.structured_content["replaced"] is True and (tmp_path / "b").read_text(encoding="utf-8") == "a"


async def test_copypath_never_merges_directories(client: Client, tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    result = await client.call_tool(
        "copypath", {"source": "a", "destination": "b", "recursive": True, "overwrite": True}
    )
    assert result.is_error and "does not merge" in text_of(result)


async def test_copypath_refuses_to_copy_into_itself(client: Client, tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    result = await client.call_tool("copypath", {"source": "a", "destination": "a/copy", "recursive": True})
    assert result.is_error and "into itself" in text_of(result)


async def test_copypath_of_a_symlink_to_outside_is_refused(client: Client, tmp_path: Path) -> None:
    (tmp_path / "link").symlink_to("/etc/hostname")
    result = await client.call_tool("copypath", {"source": "link", "destination": "stolen"})
    assert result.is_error and "outside allowed roots" in text_of(result)
    assert not (tmp_path / "stolen").exists()


async def test_a_failed_copy_leaves_no_partial_destination(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "ok.txt").write_text("ok", encoding="utf-8")
    unreadable = tmp_path / "src" / "zz-loop"
    unreadable.symlink_to("zz-loop")  # copied as a symlink: fine
    (tmp_path / "src" / "zzz").mkdir()
    deep = tmp_path / "src" / "zzz"
    for _ in range(260):  # deeper than copies go: the copy fails part-way
        deep = deep / "d"
    os.makedirs(deep)
    async with connect(config_for(tmp_path)) as client:
        result = await client.call_tool(
            "copypath", {"source": "src", "destination": "dst", "recursive": True}
        )
    assert result.is_error and "too deep" in text_of(result)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src"]
