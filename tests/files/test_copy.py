"""Copies never leave a partial destination, not even after their call timed out."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from mcp_localtools.tools import build_registry
from tests.helpers import config_for

pytestmark = pytest.mark.anyio


async def test_a_copy_that_timed_out_never_lands_later(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    for n in range(400):
        (tree / f"f{n:03}.txt").write_bytes(b"x" * 4096)
    registry = build_registry(config_for(tmp_path))
    args = {"source": "tree", "destination": "copy", "recursive": True}
    result = await registry.call("copypath", args, timeout=0.05)
    assert result.error is not None and result.error.code == "timeout"
    # The abandoned worker thread stops at its next entry and removes its partial copy.
    with anyio.fail_after(30):
        while [p for p in tmp_path.iterdir() if p.name not in ("tree",)]:
            await anyio.sleep(0.05)
    assert not (tmp_path / "copy").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tree"]
