"""deletefile through the SDK client: what may be deleted, where it goes, name collisions,
``.trashinfo`` entries, the freedesktop trash through send2trash, and roots that can never be deleted."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from urllib.parse import unquote

import pytest
from mcp import Client

from tests.helpers import config_for, connect, error_code, installed_command, text_of
from tests.support.env import child_env

pytestmark = pytest.mark.anyio


def trash_info(path: str) -> dict[str, str]:
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    assert lines[0] == "[Trash Info]"
    return dict(line.split("=", 1) for line in lines[1:])


async def test_a_missing_path_is_not_found(client: Client) -> None:
    result = await client.call_tool("deletefile", {"path": "nope.txt"})
    assert error_code(result) == "not_found"


async def test_a_directory_needs_recursive(client: Client, tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    result = await client.call_tool("deletefile", {"path": "d"})
    assert error_code(result) == "not_a_file"
    assert "path is a directory, not a file" in text_of(result) and "recursive" in text_of(result)
    assert (tmp_path / "d").is_dir()


async def test_a_fifo_is_refused(client: Client, tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    result = await client.call_tool("deletefile", {"path": "pipe"})
    assert error_code(result) == "not_a_file" and "refusing to delete non-regular file" in text_of(result)
    assert (tmp_path / "pipe").exists()


async def test_a_symlink_is_moved_itself_and_its_target_is_untouched(client: Client, tmp_path: Path) -> None:
    outside = tmp_path.parent / f"{tmp_path.name}-outside.txt"
    outside.write_text("outside", encoding="utf-8")
    try:
        (tmp_path / "link").symlink_to(outside)
        result = await client.call_tool("deletefile", {"path": "link"})
        assert not result.is_error, text_of(result)
        trashed = Path(result.structured_content["trashedPath"])
        assert trashed.is_symlink() and os.readlink(trashed) == str(outside)
        assert outside.read_text(encoding="utf-8") == "outside"
        assert not (tmp_path / "link").is_symlink()
    finally:
        outside.unlink()


async def test_a_symlink_is_refused_when_symlinks_are_blocked(tmp_path: Path) -> None:
    (tmp_path / "a.txt").touch()
    (tmp_path / "link").symlink_to("a.txt")
    async with connect(config_for(tmp_path, paths={"block_symlinks": True})) as client:
        result = await client.call_tool("deletefile", {"path": "link"})
    assert error_code(result) == "symlink_refused"


async def test_auto_uses_dot_trash_in_the_root_when_the_desktop_trash_is_outside(
    client: Client, tmp_path: Path
) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "notes.txt").write_text("notes", encoding="utf-8")
    result = await client.call_tool("deletefile", {"path": "sub/notes.txt"})
    data = result.structured_content
    assert data["method"] == "rename"
    assert data["trashedPath"] == str(tmp_path / ".trash" / "files" / "notes.txt")
    assert Path(data["trashedPath"]).read_text(encoding="utf-8") == "notes"


def test_auto_uses_the_freedesktop_trash_when_it_is_inside_the_roots(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    (home / "project").mkdir(parents=True)
    (home / "project" / "old.txt").write_text("old", encoding="utf-8")
    env = child_env({"HOME": str(home), "PATH": os.environ.get("PATH", "")})
    done = subprocess.run(
        [installed_command(), "--root", str(home), "call", "deletefile", '{"path": "project/old.txt"}'],
        cwd=home,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    data = json.loads(done.stdout)["structuredContent"]
    assert data["method"] == "systemTrash"
    trash = home / ".local" / "share" / "Trash"
    assert data["trashedPath"] == str(trash / "files" / "old.txt")
    assert (trash / "files" / "old.txt").read_text(encoding="utf-8") == "old"
    assert unquote(trash_info(data["trashInfoPath"])["Path"]) == str(home / "project" / "old.txt")


async def test_an_explicit_trash_dir_is_created_relative_to_the_base(client: Client, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a", encoding="utf-8")
    result = await client.call_tool("deletefile", {"path": "a.txt", "trashDir": "bin/trash"})
    assert result.structured_content["trashedPath"] == str(tmp_path / "bin" / "trash" / "files" / "a.txt")


async def test_a_trash_dir_that_is_a_file_is_an_error_and_the_original_stays(
    client: Client, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("a", encoding="utf-8")
    (tmp_path / "trash").write_text("i am a file", encoding="utf-8")
    result = await client.call_tool("deletefile", {"path": "a.txt", "trashDir": "trash"})
    assert error_code(result) == "not_a_directory"
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "a"


async def test_a_trash_dir_outside_the_roots_is_refused(client: Client, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a", encoding="utf-8")
    result = await client.call_tool("deletefile", {"path": "a.txt", "trashDir": "/tmp"})
    assert error_code(result) == "outside_roots"
    assert (tmp_path / "a.txt").exists()


async def test_name_collisions_in_the_trash_get_unique_names(client: Client, tmp_path: Path) -> None:
    trashed = []
    for content in ("first", "second", "third"):
        (tmp_path / "same.txt").write_text(content, encoding="utf-8")
        result = await client.call_tool("deletefile", {"path": "same.txt"})
        trashed.append(Path(result.structured_content["trashedPath"]))
    assert trashed[0].name == "same.txt"
    assert len(set(trashed)) == 3
    assert all(p.name.startswith("same.") and p.name.endswith(".txt") for p in trashed)
    assert sorted(p.read_text(encoding="utf-8") for p in trashed) == ["first", "second", "third"]


async def test_across_devices_the_file_is_copied_then_removed(tmp_path: Path, other_device: Path) -> None:
    (tmp_path / "a.txt").write_text("cross", encoding="utf-8")
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / "x.txt").write_text("x", encoding="utf-8")
    config = config_for(tmp_path, paths={"allowed_roots": [str(tmp_path), str(other_device)]})
    async with connect(config) as client:
        file = await client.call_tool("deletefile", {"path": "a.txt", "trashDir": str(other_device / "t")})
        tree = await client.call_tool(
            "deletefile", {"path": "tree", "trashDir": str(other_device / "t"), "recursive": True}
        )
    assert file.structured_content["method"] == "copyAndRemove"
    assert Path(file.structured_content["trashedPath"]).read_text(encoding="utf-8") == "cross"
    assert (Path(tree.structured_content["trashedPath"]) / "x.txt").read_text(encoding="utf-8") == "x"
    assert not (tmp_path / "a.txt").exists() and not (tmp_path / "tree").exists()


async def test_after_success_the_original_is_gone_and_the_trashed_path_exists(
    client: Client, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("a", encoding="utf-8")
    result = await client.call_tool("deletefile", {"path": "a.txt"})
    gone = await client.call_tool("statpath", {"path": "a.txt"})
    there = await client.call_tool("statpath", {"path": result.structured_content["trashedPath"]})
    assert gone.structured_content["exists"] is False
    assert there.structured_content["exists"] is True


async def test_every_trash_entry_has_a_trashinfo_with_the_original_path(
    client: Client, tmp_path: Path
) -> None:
    (tmp_path / "my file.txt").write_text("a", encoding="utf-8")
    result = await client.call_tool("deletefile", {"path": "my file.txt"})
    info = trash_info(result.structured_content["trashInfoPath"])
    assert unquote(info["Path"]) == str(tmp_path / "my file.txt")
    assert "%20" in info["Path"]
    assert len(info["DeletionDate"]) == len("2026-11-21T12:00:00")


async def test_recursive_moves_a_whole_directory_to_the_trash(client: Client, tmp_path: Path) -> None:
    (tmp_path / "build" / "deep").mkdir(parents=True)
    (tmp_path / "build" / "deep" / "out.o").write_bytes(b"\x7fELF")
    result = await client.call_tool("deletefile", {"path": "build", "recursive": True})
    assert (Path(result.structured_content["trashedPath"]) / "deep" / "out.o").read_bytes() == b"\x7fELF"
    assert not (tmp_path / "build").exists()


@pytest.mark.parametrize("path", [".", "{root}", "sub/.."])
async def test_an_allowed_root_itself_can_never_be_deleted(client: Client, tmp_path: Path, path: str) -> None:
    (tmp_path / "sub").mkdir()
    result = await client.call_tool("deletefile", {"path": path.format(root=tmp_path), "recursive": True})
    assert error_code(result) == "policy_violation"
    assert f"refusing to delete {tmp_path}: it is (or contains) an allowed root" in text_of(result)
    assert tmp_path.is_dir() and (tmp_path / "sub").is_dir()


async def test_a_directory_that_contains_a_root_can_never_be_deleted(tmp_path: Path) -> None:
    (tmp_path / "outer" / "inner").mkdir(parents=True)
    roots = [str(tmp_path / "outer"), str(tmp_path / "outer" / "inner")]
    async with connect(config_for(tmp_path, paths={"allowed_roots": roots})) as client:
        result = await client.call_tool(
            "deletefile", {"path": str(tmp_path / "outer" / "inner"), "recursive": True}
        )
    assert error_code(result) == "policy_violation" and "allowed root" in text_of(result)
    assert (tmp_path / "outer" / "inner").is_dir()


async def test_outside_the_roots_is_refused(client: Client, tmp_path: Path) -> None:
    result = await client.call_tool("deletefile", {"path": "/etc/hostname"})
    assert error_code(result) == "outside_roots"


@pytest.mark.parametrize("xdg", ["", "rel"])
def test_an_empty_or_relative_xdg_data_home_never_sends_a_file_outside_the_roots(
    tmp_path: Path, xdg: str
) -> None:
    """send2trash would compute a relative trash and move the file under the server's working
    directory, outside every root; the tool uses the root's own .trash instead."""
    root = tmp_path / "root"
    (root / "project").mkdir(parents=True)
    (root / "project" / "old.txt").write_text("old", encoding="utf-8")
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    env = child_env({"HOME": str(root), "XDG_DATA_HOME": xdg, "PATH": os.environ.get("PATH", "")})
    done = subprocess.run(
        [
            installed_command(),
            "--root",
            str(root),
            "call",
            "deletefile",
            json.dumps({"path": str(root / "project" / "old.txt")}),
        ],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    data = json.loads(done.stdout)["structuredContent"]
    assert data["method"] != "systemTrash"
    assert data["trashedPath"] == str(root / ".trash" / "files" / "old.txt")
    assert list(cwd.rglob("*")) == []


async def test_a_git_directory_cannot_be_trashed(client: Client, tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    result = await client.call_tool("deletefile", {"path": ".git", "recursive": True})
    assert error_code(result) == "protected_path"
    assert (tmp_path / ".git" / "HEAD").is_file()
