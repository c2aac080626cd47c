"""Atomic writes: a write that fails part-way leaves the original byte for byte and no temp file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

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
