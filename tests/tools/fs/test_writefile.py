"""writefile through the SDK client: encodings, overwrite, parents, atomic writes, modes,
plus append, expectedSha256, hard links and byte-exact round trips."""

from __future__ import annotations

import base64
import hashlib
import os
from pathlib import Path

import anyio
import pytest
from mcp import Client

from tests.helpers import config_for, connect, error_code, text_of

pytestmark = pytest.mark.anyio


def leftovers(directory: Path) -> list[str]:
    return [p.name for p in directory.iterdir() if p.name.endswith(".tmp")]


async def test_encoding_is_trimmed_and_case_insensitive(client: Client, tmp_path: Path) -> None:
    result = await client.call_tool("writefile", {"path": "a.txt", "content": "hi", "encoding": " Text "})
    assert not result.is_error and (tmp_path / "a.txt").read_text(encoding="utf-8") == "hi"
    bad = await client.call_tool("writefile", {"path": "b.txt", "content": "hi", "encoding": "utf16"})
    assert error_code(bad) == "invalid_arguments" and "'text' or 'binary'" in text_of(bad)
    assert not (tmp_path / "b.txt").exists()


async def test_text_that_is_not_valid_utf8_is_refused(client: Client, tmp_path: Path) -> None:
    result = await client.call_tool("writefile", {"path": "s.txt", "content": "bad \ud800 surrogate"})
    assert error_code(result) == "invalid_arguments"
    assert "invalid arguments for writefile: content: holds a lone surrogate" in text_of(result)
    assert not (tmp_path / "s.txt").exists()


async def test_binary_content_is_trimmed_base64_and_round_trips(client: Client, tmp_path: Path) -> None:
    payload = bytes(range(256)) * 5
    encoded = base64.b64encode(payload).decode()
    wrapped = "\n".join(encoded[i : i + 76] for i in range(0, len(encoded), 76))
    result = await client.call_tool(
        "writefile", {"path": "b.bin", "content": f"  {wrapped}\n", "encoding": "binary"}
    )
    assert result.structured_content["bytesWritten"] == len(payload)
    assert (tmp_path / "b.bin").read_bytes() == payload


async def test_invalid_base64_is_refused(client: Client, tmp_path: Path) -> None:
    result = await client.call_tool(
        "writefile", {"path": "b.bin", "content": "not*base64!", "encoding": "binary"}
    )
    assert error_code(result) == "invalid_arguments" and "invalid base64 content" in text_of(result)
    assert not (tmp_path / "b.bin").exists()


async def test_content_over_the_write_cap_is_refused_before_decoding(tmp_path: Path) -> None:
    async with connect(config_for(tmp_path, limits={"max_write_bytes": 1000})) as client:
        binary = await client.call_tool(
            "writefile",
            {"path": "b.bin", "content": base64.b64encode(b"x" * 5000).decode(), "encoding": "binary"},
        )
        text = await client.call_tool("writefile", {"path": "t.txt", "content": "y" * 1001})
    assert error_code(binary) == "too_large"
    assert "content too large: about 5001 bytes decoded" in text_of(binary)
    assert error_code(text) == "too_large"
    assert list(tmp_path.iterdir()) == []


async def test_a_missing_parent_is_an_error_and_nothing_is_created(client: Client, tmp_path: Path) -> None:
    result = await client.call_tool("writefile", {"path": "new/dir/a.txt", "content": "x"})
    assert error_code(result) == "not_found" and "parent directory does not exist" in text_of(result)
    assert not (tmp_path / "new").exists()


async def test_create_parents_makes_up_to_eight_directories(client: Client, tmp_path: Path) -> None:
    deep = "/".join(f"d{n}" for n in range(8)) + "/a.txt"
    result = await client.call_tool("writefile", {"path": deep, "content": "x", "createParents": True})
    assert not result.is_error
    assert (tmp_path / deep).read_text(encoding="utf-8") == "x"
    assert len(result.structured_content["createdDirectories"]) == 8


async def test_more_than_eight_new_directories_is_refused_and_none_are_left(
    client: Client, tmp_path: Path
) -> None:
    deep = "/".join(f"d{n}" for n in range(9)) + "/a.txt"
    result = await client.call_tool("writefile", {"path": deep, "content": "x", "createParents": True})
    assert error_code(result) == "too_large"
    assert "too many parent directories to create: 9 (max 8)" in text_of(result)
    assert list(tmp_path.iterdir()) == []


async def test_directories_created_for_a_failed_write_are_removed(client: Client, tmp_path: Path) -> None:
    # expectedSha256 for a file that does not exist fails after the parents were made
    failing = await client.call_tool(
        "writefile",
        {"path": "n1/n2/n3/c.txt", "content": "x", "createParents": True, "expectedSha256": "0" * 64},
    )
    assert error_code(failing) == "conflict" and "does not exist" in text_of(failing)
    assert list(tmp_path.iterdir()) == []


async def test_a_directory_destination_is_refused(client: Client, tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    result = await client.call_tool("writefile", {"path": "d", "content": "x", "overwrite": True})
    assert error_code(result) == "not_a_file" and "path is a directory, not a file" in text_of(result)


async def test_a_symlink_destination_is_refused_even_when_symlinks_are_allowed(
    client: Client, tmp_path: Path
) -> None:
    (tmp_path / "target.txt").write_text("keep", encoding="utf-8")
    (tmp_path / "link.txt").symlink_to("target.txt")
    result = await client.call_tool("writefile", {"path": "link.txt", "content": "new", "overwrite": True})
    assert error_code(result) == "symlink_refused"
    assert (tmp_path / "target.txt").read_text(encoding="utf-8") == "keep"
    assert (tmp_path / "link.txt").is_symlink()


async def test_a_fifo_destination_is_refused_without_hanging(client: Client, tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    result = await client.call_tool("writefile", {"path": "pipe", "content": "x", "overwrite": True})
    assert error_code(result) == "not_a_file" and "FIFO" in text_of(result)


async def test_an_existing_file_without_overwrite_is_refused_and_untouched(
    client: Client, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("keep", encoding="utf-8")
    result = await client.call_tool("writefile", {"path": "a.txt", "content": "new"})
    assert error_code(result) == "already_exists"
    assert f"file already exists and overwrite=false: {tmp_path / 'a.txt'}" in text_of(result)
    assert "pass overwrite=true" in text_of(result)
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "keep"


async def test_an_overwrite_replaces_the_inode_and_leaves_no_temp_file(
    client: Client, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("old", encoding="utf-8")
    before = (tmp_path / "a.txt").stat().st_ino
    result = await client.call_tool("writefile", {"path": "a.txt", "content": "new", "overwrite": True})
    assert not result.is_error
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "new"
    assert (tmp_path / "a.txt").stat().st_ino != before
    assert leftovers(tmp_path) == []


async def test_a_new_file_gets_the_usual_mode_and_an_overwrite_keeps_the_old_mode(
    client: Client, tmp_path: Path
) -> None:
    umask = os.umask(0o022)
    os.umask(umask)
    await client.call_tool("writefile", {"path": "new.txt", "content": "x"})
    assert (tmp_path / "new.txt").stat().st_mode & 0o777 == 0o666 & ~umask
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\n", encoding="utf-8")
    script.chmod(0o750)
    await client.call_tool(
        "writefile", {"path": "run.sh", "content": "#!/bin/sh\necho hi\n", "overwrite": True}
    )
    assert script.stat().st_mode & 0o777 == 0o750


async def test_the_result_gives_the_absolute_path_bytes_and_sha256(client: Client, tmp_path: Path) -> None:
    content = "héllo\n"
    result = await client.call_tool("writefile", {"path": "./sub/../a.txt", "content": content})
    data = result.structured_content
    assert data["path"] == str(tmp_path / "a.txt")
    assert data["bytesWritten"] == len(content.encode()) == 7
    assert data["sha256"] == hashlib.sha256(content.encode()).hexdigest()
    assert data["created"] is True


async def test_a_path_outside_the_roots_is_refused(client: Client, tmp_path: Path) -> None:
    result = await client.call_tool("writefile", {"path": "../escape.txt", "content": "x"})
    assert error_code(result) == "outside_roots"
    assert not (tmp_path.parent / "escape.txt").exists()


async def test_a_symlinked_parent_is_refused_when_symlinks_are_blocked(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "alias").symlink_to("real")
    async with connect(config_for(tmp_path, paths={"block_symlinks": True})) as client:
        result = await client.call_tool("writefile", {"path": "alias/a.txt", "content": "x"})
    assert error_code(result) == "symlink_refused"
    assert not (tmp_path / "real" / "a.txt").exists()


async def test_a_dangling_symlink_to_outside_is_refused_and_creates_nothing_outside(tmp_path: Path) -> None:
    root = tmp_path / "root"
    outside = tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "dangling").symlink_to(outside / "created.txt")
    async with connect(config_for(root)) as client:
        for overwrite in (False, True):
            result = await client.call_tool(
                "writefile", {"path": "dangling", "content": "x", "overwrite": overwrite}
            )
            assert error_code(result) == "outside_roots"
    assert list(outside.iterdir()) == []


async def test_an_overwrite_never_writes_through_a_hard_link(client: Client, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("shared", encoding="utf-8")
    os.link(tmp_path / "a.txt", tmp_path / "b.txt")
    await client.call_tool("writefile", {"path": "a.txt", "content": "changed", "overwrite": True})
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "changed"
    assert (tmp_path / "b.txt").read_text(encoding="utf-8") == "shared"


@pytest.mark.parametrize(
    "raw", [b"one\r\ntwo\r\n", b"\xef\xbb\xbfbom\nno final newline", b"\x00\x01\xff\xfe" * 64]
)
async def test_crlf_bom_and_binary_content_round_trip_exactly(
    client: Client, tmp_path: Path, raw: bytes
) -> None:
    encoded = base64.b64encode(raw).decode()
    await client.call_tool("writefile", {"path": "f", "content": encoded, "encoding": "binary"})
    assert (tmp_path / "f").read_bytes() == raw
    if b"\x00" not in raw:
        await client.call_tool("writefile", {"path": "g", "content": raw.decode("utf-8")})
        assert (tmp_path / "g").read_bytes() == raw


async def test_append_adds_at_the_end_and_creates_a_missing_file(client: Client, tmp_path: Path) -> None:
    await client.call_tool("writefile", {"path": "log.txt", "content": "one\n", "append": True})
    result = await client.call_tool("writefile", {"path": "log.txt", "content": "two\n", "append": True})
    assert (tmp_path / "log.txt").read_text(encoding="utf-8") == "one\ntwo\n"
    data = result.structured_content
    assert data["bytesWritten"] == 4 and data["sizeBytes"] == 8 and data["created"] is False


async def test_append_is_atomic_for_a_reader_of_the_old_content(client: Client, tmp_path: Path) -> None:
    (tmp_path / "log.txt").write_text("old\n", encoding="utf-8")
    with (tmp_path / "log.txt").open(encoding="utf-8") as reader:
        await client.call_tool("writefile", {"path": "log.txt", "content": "new\n", "append": True})
        assert reader.read() == "old\n"
    assert (tmp_path / "log.txt").read_text(encoding="utf-8") == "old\nnew\n"


async def test_expected_sha256_allows_the_write_only_when_the_file_is_unchanged(
    client: Client, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("v1", encoding="utf-8")
    read = await client.call_tool("readfile", {"path": "a.txt"})
    sha = read.structured_content["sha256"]
    (tmp_path / "a.txt").write_text("v2 by someone else", encoding="utf-8")
    stale = await client.call_tool(
        "writefile", {"path": "a.txt", "content": "mine", "overwrite": True, "expectedSha256": sha}
    )
    assert error_code(stale) == "conflict" and "changed since it was read" in text_of(stale)
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "v2 by someone else"
    fresh = hashlib.sha256(b"v2 by someone else").hexdigest()
    ok = await client.call_tool(
        "writefile", {"path": "a.txt", "content": "mine", "overwrite": True, "expectedSha256": fresh.upper()}
    )
    assert not ok.is_error and (tmp_path / "a.txt").read_text(encoding="utf-8") == "mine"


async def test_a_malformed_expected_sha256_is_refused(client: Client) -> None:
    result = await client.call_tool("writefile", {"path": "a.txt", "content": "x", "expectedSha256": "abc"})
    assert error_code(result) == "invalid_arguments" and "expectedSha256" in text_of(result)


async def test_concurrent_appends_to_one_file_all_land(client: Client, tmp_path: Path) -> None:
    (tmp_path / "log.txt").write_text("", encoding="utf-8")
    lines = [f"line {n}\n" for n in range(40)]

    async def append(line: str) -> None:
        result = await client.call_tool("writefile", {"path": "log.txt", "content": line, "append": True})
        assert not result.is_error, text_of(result)

    async with anyio.create_task_group() as group:
        for line in lines:
            group.start_soon(append, line)
    assert sorted((tmp_path / "log.txt").read_text(encoding="utf-8").splitlines(keepends=True)) == sorted(
        lines
    )


async def test_appends_and_text_edits_on_one_file_take_turns(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("".join(f"k{n} = 0\n" for n in range(20)), encoding="utf-8")

    async def edit(n: int) -> None:
        args = {"path": "f.txt", "edits": [{"oldText": f"k{n} = 0", "newText": f"k{n} = 1"}]}
        result = await client.call_tool("editfile", args)
        assert not result.is_error, text_of(result)

    async def append(n: int) -> None:
        args = {"path": "f.txt", "content": f"a{n}\n", "append": True}
        result = await client.call_tool("writefile", args)
        assert not result.is_error, text_of(result)

    async with anyio.create_task_group() as group:
        for n in range(20):
            group.start_soon(edit, n)
            group.start_soon(append, n)
    text = (tmp_path / "f.txt").read_text(encoding="utf-8")
    assert all(f"k{n} = 1\n" in text and f"a{n}\n" in text for n in range(20)), text


async def test_writing_to_an_allowed_root_itself_says_so(client: Client, tmp_path: Path) -> None:
    result = await client.call_tool("writefile", {"path": ".", "content": "x", "overwrite": True})
    assert error_code(result) == "policy_violation"
    assert f"{tmp_path} is an allowed root, not an entry inside one" in text_of(result)
