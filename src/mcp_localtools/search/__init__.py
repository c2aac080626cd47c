"""The search engines behind searchfiles, globfiles and directorytree.

The engine (``engine.py``) is ripgrep when an ``rg`` of version 14 or later is installed (the
``ripgrep`` wheel puts one next to this interpreter), else the pure-Python fallback; the tools
give the same results with either. It is chosen at the first search, not at start-up (finding
ripgrep runs ``rg --version``).

Its modules: ripgrep (``rg.py``; ``rgrecords.py`` parses its output, one regex pass per chunk) and a
pure-Python fallback (``native.py``, ``walk.py``, ``ignore.py``, ``regex.py``) with identical
results; ``DeferredEngine`` picks one at the first search. The engines' modules are imported
then too (``default_engine``; the package's ``NativeEngine``, ``RipgrepEngine`` and
``find_ripgrep`` at their first use), so a server that never searches never imports them.
"""

from __future__ import annotations

import importlib
import logging
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio.to_thread

if TYPE_CHECKING:
    from mcp_localtools.search.engine import (
        ContentQuery,
        Engine,
        FileHits,
        ListingReport,
        Progress,
        WalkFilters,
    )
    from mcp_localtools.search.native import NativeEngine
    from mcp_localtools.search.rg import RipgrepEngine, find_ripgrep

__all__ = ["DeferredEngine", "Engine", "NativeEngine", "RipgrepEngine", "default_engine", "find_ripgrep"]

logger = logging.getLogger(__name__)

_LAZY = {
    "Engine": "mcp_localtools.search.engine",
    "NativeEngine": "mcp_localtools.search.native",
    "RipgrepEngine": "mcp_localtools.search.rg",
    "find_ripgrep": "mcp_localtools.search.rg",
}
"""Each public name imported at its first use → its module."""


if not TYPE_CHECKING:  # type checkers read the imports above: a misspelt name stays an error

    def __getattr__(name: str) -> Any:
        """``NativeEngine``, ``RipgrepEngine``, ``find_ripgrep`` and ``Engine``, imported at
        their first use (PEP 562); looked up in their module each time, so a test that patches
        one there is seen, and undone with it."""
        if name not in _LAZY:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        return getattr(importlib.import_module(_LAZY[name]), name)


def default_engine() -> Engine:
    """Ripgrep when it is installed (the package's ``find_ripgrep``), else the Python engine
    (blocking: runs ``rg --version`` once)."""
    package = sys.modules[__name__]
    executable = package.find_ripgrep()
    if executable is None:
        logger.info("no ripgrep 14+ found; searching with the Python engine")
        native: type[NativeEngine] = package.NativeEngine
        return native()
    logger.debug("searching with %s", executable)
    ripgrep: type[RipgrepEngine] = package.RipgrepEngine
    return ripgrep(executable)


class DeferredEngine:
    """An ``Engine`` that picks the real one at its first use, in a worker thread.

    Concurrent first calls pick once (a lock in the worker threads); later calls go straight
    to the picked engine.

    Args:
        choose: picks the engine (blocking); default ``default_engine``.
    """

    def __init__(self, choose: Callable[[], Engine] = default_engine) -> None:
        self._choose = choose
        self._chosen: Engine | None = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        """The picked engine's name; ``auto`` before the first use."""
        return "auto" if self._chosen is None else self._chosen.name

    def pick(self) -> Engine:
        """The engine, picked now if it was not yet (blocking: runs ``rg --version``)."""
        return self._pick()

    def _pick(self) -> Engine:
        with self._lock:
            if self._chosen is None:
                self._chosen = self._choose()
            return self._chosen

    async def _engine(self) -> Engine:
        if self._chosen is not None:
            return self._chosen
        return await anyio.to_thread.run_sync(self._pick, abandon_on_cancel=True)

    async def search(
        self, query: ContentQuery, sink: Callable[[FileHits], None], progress: Progress
    ) -> ListingReport:
        """See ``Engine.search``."""
        return await (await self._engine()).search(query, sink, progress)

    async def list_files(
        self,
        directory: Path,
        filters: WalkFilters,
        sink: Callable[[str], None],
        progress: Progress,
        *,
        max_file_size: int | None = None,
    ) -> ListingReport:
        """See ``Engine.list_files``."""
        engine = await self._engine()
        return await engine.list_files(directory, filters, sink, progress, max_file_size=max_file_size)
