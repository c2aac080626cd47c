"""Fixtures of the fs tool tests: a second filesystem, and clients of servers serving the search
tools with each engine (``engine_name``, ``engine``, ``connect_search``; a module whose tests
should run once per engine overrides ``client`` with one of these)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from mcp_localtools.config import Config
from mcp_localtools.search import Engine
from mcp_localtools.server import create_server
from tests.helpers import config_for
from tests.search.engines import ENGINES, make_engine, search_registry


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


@asynccontextmanager
async def search_client(config: Config, engine: Engine) -> AsyncIterator[Client]:
    """The SDK's client, in memory, to a server serving the search tools with ``engine``."""
    server = create_server(search_registry(config, engine))
    async with Client(server, raise_exceptions=True) as client:
        yield client


Connect = Callable[..., AbstractAsyncContextManager[Client]]


@pytest.fixture(params=ENGINES)
def engine_name(request: pytest.FixtureRequest) -> str:
    """Each engine's name in turn."""
    return str(request.param)


@pytest.fixture
def engine(engine_name: str) -> Engine:
    """Each engine in turn."""
    return make_engine(engine_name)


@pytest.fixture
def connect_search(tmp_path: Path, engine: Engine) -> Connect:
    """``connect_search(**sections)``: a client rooted in ``tmp_path`` with extra config tables."""

    def connect(root: Path | None = None, **sections: dict[str, Any]) -> AbstractAsyncContextManager[Client]:
        return search_client(config_for(root or tmp_path, **sections), engine)

    return connect
