"""Verified parent directories: a directory swapped for an outside symlink while writes, moves and
deletes run never lets them touch the outside; directories created for a write that fails are
removed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_localtools.tools import build_registry
from tests.helpers import config_for

pytestmark = pytest.mark.anyio


def snapshot(directory: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()
    }


SWAPPER = """
import ctypes, os, sys, time
directory, evil, outside, stop = sys.argv[1:5]
os.symlink(outside, evil)
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
swaps = 0
deadline = time.monotonic() + 120
while time.monotonic() < deadline and not os.path.exists(stop):
    # atomically exchange the real directory and the symlink to outside, and back
    for _ in range(2):
        if libc.renameat2(AT_FDCWD, directory.encode(), AT_FDCWD, evil.encode(), RENAME_EXCHANGE) != 0:
            sys.exit("renameat2 failed: " + os.strerror(ctypes.get_errno()))
    swaps += 1
print(swaps)
"""


async def test_a_directory_swapped_for_an_outside_symlink_never_lets_a_write_move_or_delete_escape(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    outside = tmp_path / "outside"
    (root / "d").mkdir(parents=True)
    outside.mkdir()
    for name in ("canary.txt", "victim.txt", "a.txt", "b.txt", "x.txt"):
        (outside / name).write_text(f"outside {name}", encoding="utf-8")
    before = snapshot(outside)
    registry = build_registry(config_for(root))
    # The adversary is another process, as a racing program would be: a thread would share our GIL.
    swapper = subprocess.Popen(
        [
            sys.executable,
            "-c",
            SWAPPER,
            str(root / "d"),
            str(root / "evil"),
            str(outside),
            str(tmp_path / "stop"),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    outcomes: dict[str, int] = {}
    try:
        with anyio.fail_after(120):
            for n in range(250):
                calls: list[tuple[str, dict[str, Any]]] = [
                    ("writefile", {"path": f"d/w{n % 7}.txt", "content": "inside", "overwrite": True}),
                    ("writefile", {"path": "d/victim.txt", "content": "pwned", "overwrite": True}),
                    (
                        "writefile",
                        {"path": "d/sub/new.txt", "content": "x", "createParents": True, "overwrite": True},
                    ),
                    ("movepath", {"source": "d/a.txt", "destination": "d/b.txt", "overwrite": True}),
                    ("movepath", {"source": "d/b.txt", "destination": "d/a.txt", "overwrite": True}),
                    ("deletefile", {"path": "d/x.txt"}),
                    ("writefile", {"path": "d/x.txt", "content": "x"}),
                    ("copypath", {"source": "d/canary.txt", "destination": "stolen.txt", "overwrite": True}),
                ]
                for name, args in calls:
                    result = await registry.call(name, args)
                    key = f"{name}:{result.error.code if result.error else 'ok'}"
                    outcomes[key] = outcomes.get(key, 0) + 1
    finally:
        (tmp_path / "stop").touch()
        out, _ = swapper.communicate(timeout=30)
    assert swapper.returncode == 0
    swaps = int(out)
    assert swaps >= 1000, swaps
    assert (root / "d").is_dir() and not (root / "d").is_symlink()
    assert snapshot(outside) == before, outcomes  # nothing outside was written, moved, trashed or copied
    assert not (root / "stolen.txt").exists()
    assert "internal_error" not in " ".join(outcomes), outcomes
    assert outcomes.get("writefile:ok", 0) > 0, outcomes  # the race did not just refuse everything


def test_directories_created_before_a_failed_mkdir_or_open_are_removed(tmp_path: Path) -> None:
    # Each created parent is opened; a low RLIMIT_NOFILE makes the k-th open fail, for every k in
    # turn, so some attempt fails after creating directories and before reaching the file.
    script = f"""
import json, os, resource, anyio
from mcp_localtools.tools import build_registry
from mcp_localtools.config import parse_config
registry = build_registry(parse_config({{"paths": {{"allowed_roots": [{str(tmp_path)!r}]}}}}))
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)

async def main():
    codes = []
    await registry.call("statpath", {{"path": "."}})  # start the worker thread first
    for extra in range(1, 8):
        highest = max(int(fd) for fd in os.listdir("/proc/self/fd"))
        resource.setrlimit(resource.RLIMIT_NOFILE, (highest + extra, hard))
        try:
            result = await registry.call(
                "writefile", {{"path": f"k{{extra}}/a/b/c/f.txt", "content": "x", "createParents": True}}
            )
        finally:
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        codes.append(result.error.code if result.error else None)
    print(json.dumps(codes))

anyio.run(main)
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    codes = json.loads(done.stdout)
    assert "os_error" in codes and None in codes, codes  # some attempts failed part-way, some got through
    for extra, code in enumerate(codes, start=1):
        written = tmp_path / f"k{extra}" / "a" / "b" / "c" / "f.txt"
        if code is None:
            assert written.read_text(encoding="utf-8") == "x"
        else:
            assert not (tmp_path / f"k{extra}").exists(), (extra, code)
