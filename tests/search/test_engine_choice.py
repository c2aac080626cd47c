"""Which engine searches (``search/__init__.py``): picked at the first search, not at start-up."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import anyio
import pytest

import mcp_localtools.search as search_package
from mcp_localtools.registry import Registry
from mcp_localtools.tools import spec_of
from mcp_localtools.tools.fs import directorytree, globfiles, searchfiles
from mcp_localtools.workspace import Workspace
from tests.helpers import config_for

pytestmark = pytest.mark.anyio


async def test_the_engine_is_picked_once_at_the_first_search_off_the_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    picks: list[bool] = []  # whether each pick ran on the event loop's thread
    loop = threading.get_ident()

    def find_ripgrep() -> str | None:
        picks.append(threading.get_ident() == loop)
        return None  # no rg: the Python engine

    monkeypatch.setattr(search_package, "find_ripgrep", find_ripgrep)
    config = config_for(tmp_path)
    registry = Registry()
    workspace = Workspace.from_config(config)
    for module in (searchfiles, globfiles, directorytree):
        registry.register(spec_of(module, workspace))
    assert picks == [], "building the specs runs no rg --version"

    (tmp_path / "a.txt").write_text("needle\n", encoding="utf-8")
    results: list[Any] = []

    async def call(tool: str, pattern: str) -> None:
        results.append(await registry.call(tool, {"pattern": pattern}))

    with anyio.fail_after(20):
        async with anyio.create_task_group() as group:
            for _ in range(3):
                group.start_soon(call, "searchfiles", "needle")
                group.start_soon(call, "globfiles", "*.txt")
    assert picks == [False], "one pick for six concurrent first calls, in a worker thread"
    assert len(results) == 6
    for result in results:
        assert not result.is_error and result.structured is not None
        assert result.structured.get("files", result.structured.get("paths")) == ["a.txt"]
