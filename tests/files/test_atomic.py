"""Atomic writes: a write that fails part-way leaves the original byte for byte and no temp file."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_localtools import compat

pytestmark = pytest.mark.anyio


def test_a_failing_write_leaves_the_original_byte_for_byte_and_no_temp_file(tmp_path: Path) -> None:
    original = b"original content\r\n\x00\xff"
    (tmp_path / "big.txt").write_bytes(original)
    script = f"""
import json, resource, signal, anyio
from mcp_localtools.tools import build_registry
from mcp_localtools.config import parse_config
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # so the write fails with EFBIG instead of killing us
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
registry = build_registry(parse_config({{"paths": {{"allowed_roots": [{str(tmp_path)!r}]}}}}))
results = []
for args in (
    {{"path": "big.txt", "content": "x" * 100000, "overwrite": True}},
    {{"path": "big.txt", "content": "y" * 100000, "append": True}},
    {{"path": "new/deeper/fresh.txt", "content": "z" * 100000, "createParents": True}},
):
    result = anyio.run(registry.call, "writefile", args)
    results.append([result.error.code, result.error.message] if result.error else [None, ""])
print(json.dumps(results))
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)
    assert [code for code, _ in results] == ["os_error"] * 3, results
    assert (tmp_path / "big.txt").read_bytes() == original
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.txt"]  # no temp file, no new directories


def test_a_writer_killed_mid_write_leaves_no_temp_file(tmp_path: Path) -> None:
    """SIGKILL cannot run cleanup: on Linux the temp file has no name until its content is on
    disk (O_TMPFILE), so nothing is left behind. (200 kills used to leave 65-122 MiB of hidden
    ``.NAME.*.tmp`` files that nothing removed.)"""
    if not compat.O_TMPFILE:
        pytest.skip("no O_TMPFILE on this platform: a killed writer can leave a named temp file")
    (tmp_path / "big.bin").write_bytes(b"old")
    script = f"""
import os, sys, time
from mcp_localtools.files.atomic import write_atomic
def chunks():
    for n in range(10_000):
        if n == 3:
            print("writing", flush=True)
        yield b"x" * 1_000_000
        time.sleep(0.01)
fd = os.open({str(tmp_path)!r}, os.O_RDONLY | os.O_DIRECTORY)
write_atomic(fd, "big.bin", chunks(), replace=True)
"""
    for _ in range(5):
        with subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True) as child:
            assert child.stdout is not None and child.stdout.readline() == "writing\n"
            child.send_signal(signal.SIGKILL)
            child.wait(timeout=30)
    assert sorted(entry.name for entry in tmp_path.iterdir()) == ["big.bin"]
    assert (tmp_path / "big.bin").read_bytes() == b"old"
