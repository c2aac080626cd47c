"""Idle indexes give their memory back: ``[index] idle_seconds`` after the last answer, the vectors,
graph, caches and embedding model are dropped and the next answer loads them again (issue 37, item 5)."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest

from mcp_localtools.codeintel.indexes import CodeIndexes
from mcp_localtools.spec import CallContext
from mcp_localtools.tools.code._group import code_indexes, open_scope
from mcp_localtools.tools.code.semanticsearch import search
from mcp_localtools.workspace import Workspace
from tests.helpers import config_for

pytestmark = pytest.mark.anyio


def _project(root: Path) -> None:
    (root / "shop.py").write_text(
        'def compute_tax(amount):\n    """The tax owed on an amount."""\n    return amount * 0.2\n\n'
        "def checkout(cart):\n    return compute_tax(sum(cart))\n",
        encoding="utf-8",
    )


async def _answer(indexes: CodeIndexes, root: Path) -> None:
    scope = await open_scope(indexes, str(root), CallContext())
    found = await anyio.to_thread.run_sync(search, scope, "how much tax is owed", 3)
    assert [chunk.symbol for chunk, _ in found][:1] == ["compute_tax"]
    await anyio.to_thread.run_sync(scope.index.graph)


def _held(indexes: CodeIndexes, root: Path) -> bool:
    index = indexes.index_for(root)
    return index.holds_memory() or indexes.embedder.loaded()


async def _wait_released(indexes: CodeIndexes, root: Path, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while _held(indexes, root) and time.monotonic() < deadline:
        await anyio.sleep(0.1)
    return not _held(indexes, root)


async def test_memory_is_released_after_the_configured_idle_time_and_loaded_again(tmp_path: Path) -> None:
    _project(tmp_path)
    indexes = code_indexes(Workspace.from_config(config_for(tmp_path, index={"idle_seconds": 1})))
    assert indexes.idle.seconds == 1
    await _answer(indexes, tmp_path)
    assert _held(indexes, tmp_path)
    assert await _wait_released(indexes, tmp_path, 10)
    await _answer(indexes, tmp_path)  # loaded again, same answer
    assert _held(indexes, tmp_path)


async def test_by_default_memory_stays_for_ten_minutes(tmp_path: Path) -> None:
    _project(tmp_path)
    indexes = code_indexes(Workspace.from_config(config_for(tmp_path)))
    assert indexes.idle.seconds == 600
    await _answer(indexes, tmp_path)
    assert not await _wait_released(indexes, tmp_path, 2)
