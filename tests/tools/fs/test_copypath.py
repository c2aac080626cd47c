"""copypath through the SDK client."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from mcp import Client

from tests.helpers import config_for, connect, error_code, text_of

pytestmark = pytest.mark.anyio


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
    assert error_code(refused) == "not_a_file" and "recursive=true" in text_of(refused)
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
    assert error_code(refused) == "already_exists" and (tmp_path / "b").read_text(encoding="utf-8") == "b"
    done = await client.call_tool("copypath", {"source": "a", "destination": "b", "overwrite": True})
    assert done.structured_content["replaced"] is True and (tmp_path / "b").read_text(encoding="utf-8") == "a"


async def test_copypath_never_merges_directories(client: Client, tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    result = await client.call_tool(
        "copypath", {"source": "a", "destination": "b", "recursive": True, "overwrite": True}
    )
    assert error_code(result) == "already_exists" and "does not merge" in text_of(result)


async def test_copypath_refuses_to_copy_into_itself(client: Client, tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    result = await client.call_tool("copypath", {"source": "a", "destination": "a/copy", "recursive": True})
    assert error_code(result) == "invalid_arguments" and "into itself" in text_of(result)


async def test_copypath_of_a_symlink_to_outside_is_refused(client: Client, tmp_path: Path) -> None:
    (tmp_path / "link").symlink_to("/etc/hostname")
    result = await client.call_tool("copypath", {"source": "link", "destination": "stolen"})
    assert error_code(result) == "outside_roots"
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
    assert error_code(result) == "invalid_arguments" and "too deep" in text_of(result)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src"]
