"""A root server in a checkout owned by another user (issue 34, item 4), as in a container that serves
a checkout mounted from the host: commands run as the checkout's owner, the files the file tools
create there belong to that owner, and a write refused for permissions says why."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcp import Client

from mcp_localtools.server import build_server
from tests.helpers import config_for, text_of
from tests.tools.exec.conftest import NEEDS_BWRAP, run_commands

pytestmark = [
    pytest.mark.anyio,
    NEEDS_BWRAP,
    pytest.mark.skipif(
        not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs a server running as root"
    ),
]

OWNER = (1000, 1000)


@pytest.fixture
def checkout() -> Iterator[Path]:
    """A folder owned by uid 1000 in a place that user can reach (pytest's own temp folders are
    root's alone), removed afterwards."""
    base = Path(tempfile.mkdtemp(prefix="mcplt-owner-", dir="/tmp"))
    try:
        base.chmod(0o755)
        root = base / "proj"
        root.mkdir()
        os.chown(root, *OWNER)
        yield root
    finally:
        shutil.rmtree(base, ignore_errors=True)


def owner_of(path: Path) -> tuple[int, int]:
    info = path.lstat()
    return info.st_uid, info.st_gid


async def test_commands_run_as_the_checkouts_owner_and_what_they_make_is_theirs(checkout: Path) -> None:
    async with Client(build_server(config_for(checkout), environ=dict(os.environ))) as client:
        data = await run_commands(
            client,
            "id -u; id -g",
            "touch made.txt && mkdir -p made/dir",
            "git init -q && git -c user.name=A -c user.email=a@b.c commit -q --allow-empty -m x && echo ok",
        )
    assert [entry["exitCode"] for entry in data["results"]] == [0, 0, 0], data["results"]
    assert data["results"][0]["stdout"].split() == ["1000", "1000"]
    assert data["results"][2]["stdout"].strip() == "ok"
    for made in ("made.txt", "made", "made/dir", ".git", ".git/HEAD"):
        assert owner_of(checkout / made) == OWNER, made


async def test_the_file_tools_create_files_and_directories_for_the_owner(checkout: Path) -> None:
    other = checkout / "other.txt"
    other.write_text("someone else's\n", encoding="utf-8")
    os.chown(other, 1001, 1001)
    async with Client(build_server(config_for(checkout), environ=dict(os.environ))) as client:
        for tool, arguments in (
            ("writefile", {"path": "new/deep/file.txt", "content": "x", "createParents": True}),
            ("makedirectory", {"path": "a/b"}),
            ("writefile", {"path": "other.txt", "content": "replaced\n", "overwrite": True}),
            ("copypath", {"source": "new", "destination": "copy", "recursive": True}),
        ):
            result = await client.call_tool(tool, arguments)
            assert not result.is_error, (tool, text_of(result))
    for made in ("new", "new/deep", "new/deep/file.txt", "a", "a/b", "copy", "copy/deep/file.txt"):
        assert owner_of(checkout / made) == OWNER, made
    assert owner_of(other) == (1001, 1001)  # an overwrite keeps the file's own owner


async def test_a_write_refused_for_permissions_says_whose_identity_commands_have(checkout: Path) -> None:
    (checkout / "roots-file").write_text("root's\n", encoding="utf-8")  # created by the root test process
    async with Client(build_server(config_for(checkout), environ=dict(os.environ))) as client:
        data = await client.call_tool("shellcommand", {"commands": ["echo more >> roots-file"]})
    (entry,) = (data.structured_content or {})["results"]
    assert entry["exitCode"] != 0
    assert "uid 1000" in (entry.get("sandboxNote") or ""), entry


async def test_a_root_owned_by_root_keeps_commands_as_root(tmp_path: Path) -> None:
    async with Client(build_server(config_for(tmp_path), environ=dict(os.environ))) as client:
        data = await run_commands(client, "id -u")
    assert data["results"][0]["stdout"].strip() == "0"


async def test_the_owners_temp_dir_goes_with_the_connection(checkout: Path) -> None:
    async with Client(build_server(config_for(checkout), environ=dict(os.environ))) as client:
        await run_commands(client, "echo x > $TMPDIR/../../kept 2>/dev/null; echo hi")
        temp_dirs = [
            path
            for base in Path(tempfile.gettempdir()).glob(f"mcp-localtools-{os.getpid()}-*")
            for path in base.iterdir()
        ]
        assert any(path.name.endswith("_uid1000") for path in temp_dirs)
    with anyio.fail_after(20):
        while any(path.exists() for path in temp_dirs if path.name.endswith("_uid1000")):
            await anyio.sleep(0.05)


async def test_a_copy_or_rewrite_by_a_root_server_never_keeps_a_setuid_bit(checkout: Path) -> None:
    """The owner's setuid program copied into a directory of root's would be root's and setuid
    (anyone outside running it would be root): a root server drops the set-user-ID and
    set-group-ID bits of what it copies or rewrites."""
    rootdir = checkout / "rootdir"
    rootdir.mkdir()  # root's, inside the owner's checkout
    async with Client(build_server(config_for(checkout), environ=dict(os.environ))) as client:
        await run_commands(client, "cp /bin/true x && chmod 6755 x && stat -c %a x")
        for tool, arguments in (
            ("copypath", {"source": "x", "destination": "rootdir/x"}),
            ("writefile", {"path": "x", "content": "#!/bin/sh\n", "overwrite": True}),
        ):
            result = await client.call_tool(tool, arguments)
            assert not result.is_error, text_of(result)
    for path in (rootdir / "x", checkout / "x"):
        assert not path.stat().st_mode & 0o6000, (path, oct(path.stat().st_mode))


async def test_the_owners_commands_never_get_the_checkouts_group_nor_read_root_only_files(
    checkout: Path,
) -> None:
    """A checkout whose group is ``shadow`` (or root's): commands run in the owner's own group,
    and ``/etc/shadow`` stays covered."""
    os.chown(checkout, 1000, 42)
    async with Client(build_server(config_for(checkout), environ=dict(os.environ))) as client:
        data = await run_commands(client, "id -g; head -c 64 /etc/shadow | wc -c")
    group, shadow = data["results"][0]["stdout"].split()
    assert group != "42" and group != "0"
    assert shadow == "0"
