"""Shared fixtures: the anyio backend, a client of a server rooted in ``tmp_path``, and a cache
folder of the run's own for every server the suite starts."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from mcp import Client

from tests.helpers import config_for, connect
from tests.support import markers


def pytest_configure(config: pytest.Config) -> None:
    """The servers the suite starts keep their caches (code indexes, start-up entries) in a
    folder of this run, removed at its end: never in the user's cache (``XDG_CACHE_HOME``, which
    every process started from here inherits)."""
    cache = tempfile.mkdtemp(prefix="mcp-localtools-test-cache-")
    os.environ["XDG_CACHE_HOME"] = cache
    config.add_cleanup(lambda: shutil.rmtree(cache, ignore_errors=True))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Markers by cause (``tests/support/markers.py``). First: a pytest-xdist worker reads the
    ``xdist_group`` markers in its own hook of this name, and runs after this one only so."""
    markers.mark(items)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[Client]:
    """A client of a server whose only root is ``tmp_path``."""
    async with connect(config_for(tmp_path)) as connected:
        yield connected
