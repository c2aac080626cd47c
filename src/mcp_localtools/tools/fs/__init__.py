"""The fs tool group: reading, listing, searching, inspecting and typing files."""

from __future__ import annotations

from typing import Any

from mcp_localtools.config import LimitsConfig
from mcp_localtools.policy.paths import PathPolicy
from mcp_localtools.registry import ToolSpec

from .listing import listing_specs
from .mime import mime_specs
from .read import read_specs
from .search import search_specs
from .stat import stat_specs

__all__ = ["fs_specs"]


def fs_specs(paths: PathPolicy, limits: LimitsConfig) -> list[ToolSpec[Any]]:
    """Every fs tool, bound to ``paths`` and ``limits``."""
    return [
        *read_specs(paths, limits),
        *listing_specs(paths, limits),
        *search_specs(paths, limits),
        *stat_specs(paths),
        *mime_specs(paths),
    ]
