"""The engines under test and registries serving the search tools with one of them.

Kept free of the MCP client so a child process can import it quickly (``tests/tools/fs/unprivileged.py``).
"""

from __future__ import annotations

import pytest

from mcp_localtools.config import Config
from mcp_localtools.registry import Registry
from mcp_localtools.search import Engine, NativeEngine, RipgrepEngine
from mcp_localtools.search.rg import find_ripgrep
from mcp_localtools.tools import spec_of
from mcp_localtools.tools.fs import directorytree, globfiles, searchfiles
from mcp_localtools.workspace import Workspace

ENGINES = ["ripgrep", "python"]


def make_engine(name: str) -> Engine:
    """The engine called ``name``: ``ripgrep`` (the installed wheel's rg) or ``python``."""
    if name == "python":
        return NativeEngine()
    executable = find_ripgrep()
    if executable is None:
        pytest.fail("the ripgrep wheel is a dependency: rg 14+ must be installed with the package")
    return RipgrepEngine(executable)


def search_registry(config: Config, engine: Engine) -> Registry:
    """A registry holding only the search tools, bound to ``engine``."""
    registry = Registry()
    workspace = Workspace.from_config(config, search=engine)
    for module in (searchfiles, globfiles, directorytree):
        registry.register(spec_of(module, workspace))
    return registry
