"""Fixtures of the fs tool tests."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def other_device(tmp_path: Path) -> Iterator[Path]:
    """A fresh directory on another filesystem than ``tmp_path`` (in ``/dev/shm``), removed after
    the test; skips the test when there is no such filesystem."""
    shm = Path("/dev/shm")
    if not shm.is_dir() or not os.access(shm, os.W_OK) or shm.stat().st_dev == tmp_path.stat().st_dev:
        pytest.skip("no second filesystem (/dev/shm) to move across")
    directory = Path(tempfile.mkdtemp(prefix="mcp-localtools-test-", dir=shm))
    yield directory
    shutil.rmtree(directory, ignore_errors=True)
