"""Every writing tool on a full disk: a ``no_space`` error that says so, and nothing half-written
left behind. The disk is a 64 KiB tmpfs in a private mount namespace (``helpers.small_disk_command``),
never a real one; a second tmpfs has room for data but only a few inodes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import small_disk_command

SCRIPT = r"""
import asyncio, json, os, sys
from mcp_localtools.config import parse_config
from mcp_localtools.tools import build_registry

blocks, inodes = sys.argv[1], sys.argv[2]
for name in ("a.txt", "b.txt", "c.txt"):
    with open(os.path.join(blocks, name), "w") as f:
        f.write("line one\nline two\n")
os.mkdir(os.path.join(blocks, ".trash"))
filler = os.open(os.path.join(blocks, "filler"), os.O_WRONLY | os.O_CREAT)
try:  # every block taken
    while True:
        os.write(filler, b"\0" * 4096)
except OSError:
    os.close(filler)
created = 0
try:
    while True:  # every inode taken
        open(os.path.join(inodes, f"i{created}"), "w").close()
        created += 1
except OSError:
    pass
registry = build_registry(parse_config({"paths": {"allowed_roots": [blocks, inodes]}}))
calls = {
    "writefile": {"path": f"{blocks}/new.txt", "content": "x" * 20000},
    "writefile-append": {"path": f"{blocks}/a.txt", "content": "x" * 20000, "append": True},
    "copypath": {"source": f"{blocks}/a.txt", "destination": f"{blocks}/copy.txt"},
    "editfile": {"path": f"{blocks}/b.txt", "edits": [{"oldText": "one", "newText": "1" * 9000}]},
    "inserttextlines": {"path": f"{blocks}/b.txt", "linesToInsert": ["y" * 9000], "position": "end"},
    "replacetextlines": {
        "path": f"{blocks}/c.txt", "matchLines": ["line one"], "replaceWithLines": ["z" * 9000]
    },
    "deletetextlines": {"path": f"{blocks}/c.txt", "matchLines": ["line one"]},
    "replaceinfiles": {
        "root": blocks, "pattern": "two", "replacement": "2" * 9000, "include": ["a.txt"], "dryRun": False
    },
    "deletefile": {"path": f"{blocks}/c.txt"},
    "makedirectory": {"path": f"{inodes}/sub"},
    "deletefile-inodes": {"path": f"{inodes}/i0", "trashDir": f"{inodes}/.trash"},
}
out = {}
for key, arguments in calls.items():
    result = asyncio.run(registry.call(key.split("-")[0], arguments))
    out[key] = {"code": result.error.code if result.error else None,
                "message": result.error.message if result.error else ""}
out["left"] = sorted(n for n in os.listdir(blocks) if n not in ("filler", ".trash"))
out["trash"] = sorted(os.listdir(os.path.join(blocks, ".trash")))
out["inodes"] = created
print(json.dumps(out))
"""


def test_every_writing_tool_on_a_full_disk_says_no_space_and_leaves_nothing_half_written(
    tmp_path: Path,
) -> None:
    blocks, inodes = tmp_path / "blocks", tmp_path / "inodes"
    blocks.mkdir()
    inodes.mkdir()
    command = small_disk_command(
        {blocks: "size=64k", inodes: "size=1m,nr_inodes=16"},
        [sys.executable, "-c", SCRIPT, str(blocks), str(inodes)],
    )
    if command is None:
        pytest.skip("needs Linux, unshare and a mount namespace")
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["inodes"] > 0
    for key in (
        "writefile",
        "writefile-append",
        "copypath",
        "editfile",
        "inserttextlines",
        "replacetextlines",
        "deletefile",
        "makedirectory",
        "deletefile-inodes",
    ):
        assert report[key]["code"] == "no_space", (key, report[key])
        assert "no space left on the device" in report[key]["message"], (key, report[key])
    # deletetextlines shrinks c.txt, yet the atomic write needs a new file first.
    assert report["deletetextlines"]["code"] == "no_space", report["deletetextlines"]
    assert report["replaceinfiles"]["code"] == "no_space", report["replaceinfiles"]
    assert "no file was changed" in report["replaceinfiles"]["message"]
    assert report["left"] == ["a.txt", "b.txt", "c.txt"], report["left"]  # no temp file, no partial copy
    assert report["trash"] == [], report["trash"]  # the files/ and info/ it made are removed again


TRASH_SCRIPT = r"""
import asyncio, json, os, sys
from mcp_localtools.config import parse_config
from mcp_localtools.tools import build_registry

disk = sys.argv[1]
os.makedirs(os.path.join(disk, "kept", ".trash"))  # a trash that exists, empty
os.mkdir(os.path.join(disk, "fresh"))
for folder in ("fresh", "kept"):
    with open(os.path.join(disk, folder, "c.txt"), "w") as f:
        f.write("line\n")
filler = os.open(os.path.join(disk, "filler"), os.O_WRONLY | os.O_CREAT)
try:  # every block taken
    while True:
        os.write(filler, b"\0" * 4096)
except OSError:
    os.close(filler)
registry = build_registry(parse_config({"paths": {"allowed_roots": [disk]}}))
out = {}
for folder in ("fresh", "kept"):
    arguments = {"path": f"{disk}/{folder}/c.txt", "trashDir": f"{disk}/{folder}/.trash"}
    result = asyncio.run(registry.call("deletefile", arguments))
    out[folder] = {
        "code": result.error.code if result.error else None,
        "entries": sorted(os.listdir(os.path.join(disk, folder))),
        "trash": sorted(os.listdir(os.path.join(disk, folder, ".trash")))
        if os.path.isdir(os.path.join(disk, folder, ".trash")) else None,
    }
print(json.dumps(out))
"""


def test_deletefile_on_a_full_disk_leaves_no_trash_directory_it_made(tmp_path: Path) -> None:
    """It said no_space correctly and left an empty ``.trash`` (with ``files/`` and ``info/``)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    command = small_disk_command({disk: "size=64k"}, [sys.executable, "-c", TRASH_SCRIPT, str(disk)])
    if command is None:
        pytest.skip("needs Linux, unshare and a mount namespace")
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["fresh"] == {"code": "no_space", "entries": ["c.txt"], "trash": None}, report
    assert report["kept"] == {"code": "no_space", "entries": [".trash", "c.txt"], "trash": []}, report
