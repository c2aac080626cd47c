"""Shared fixtures: the anyio backend and a client of a server rooted in ``tmp_path``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from mcp import Client

from tests.helpers import config_for, connect
from tests.support import markers


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
