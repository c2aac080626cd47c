"""Search and navigation: searchfiles, globfiles and directorytree.

The engine (``engine.py``) is ripgrep when an ``rg`` of version 14 or later is installed (the
``ripgrep`` wheel puts one next to this interpreter), else the pure-Python fallback; the tools
give the same results with either.
"""

from __future__ import annotations

import logging
from typing import Any

from mcp_localtools.config import LimitsConfig
from mcp_localtools.policy.paths import PathPolicy
from mcp_localtools.registry import ToolSpec

from .engine import Engine
from .globfiles import globfiles_spec
from .native import NativeEngine
from .rg import RipgrepEngine, find_ripgrep
from .searchfiles import searchfiles_spec
from .tree import tree_spec

__all__ = ["Engine", "NativeEngine", "RipgrepEngine", "default_engine", "search_specs"]

logger = logging.getLogger(__name__)


def default_engine() -> Engine:
    """Ripgrep when it is installed (see ``find_ripgrep``), else the Python engine."""
    executable = find_ripgrep()
    if executable is None:
        logger.info("no ripgrep 14+ found; searching with the Python engine")
        return NativeEngine()
    logger.debug("searching with %s", executable)
    return RipgrepEngine(executable)


def search_specs(
    paths: PathPolicy, limits: LimitsConfig, engine: Engine | None = None
) -> list[ToolSpec[Any]]:
    """The searchfiles, globfiles and directorytree specs; ``engine`` defaults to ``default_engine()``."""
    chosen = engine or default_engine()
    return [
        searchfiles_spec(paths, limits, chosen),
        globfiles_spec(paths, limits, chosen),
        tree_spec(paths, limits),
    ]
