"""Clients of servers serving the search tools with each engine."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from mcp_localtools.config import Config
from mcp_localtools.search import Engine
from mcp_localtools.server import create_server
from tests.helpers import config_for
from tests.tools.fs.search.engines import ENGINES, make_engine, search_registry


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


@pytest.fixture
async def client(connect_search: Connect) -> AsyncIterator[Client]:
    """A search client rooted in ``tmp_path`` (overrides the top-level fixture), per engine."""
    async with connect_search() as connected:
        yield connected
