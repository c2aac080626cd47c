"""The fs tool group: read, list, search, inspect, type, write, trash, create, move and copy files."""

from __future__ import annotations

from typing import Any

from mcp_localtools.config import LimitsConfig
from mcp_localtools.fswrite import FileLocks
from mcp_localtools.parsers import ParserRunner
from mcp_localtools.policy.paths import PathPolicy
from mcp_localtools.registry import ToolSpec
from mcp_localtools.tools.fs.listing import listing_specs
from mcp_localtools.tools.fs.manage import manage_specs
from mcp_localtools.tools.fs.mime import mime_specs
from mcp_localtools.tools.fs.read import read_specs
from mcp_localtools.tools.fs.search import search_specs
from mcp_localtools.tools.fs.stat import stat_specs
from mcp_localtools.tools.fs.trash import trash_specs
from mcp_localtools.tools.fs.write import write_specs

__all__ = ["fs_specs"]


def fs_specs(
    paths: PathPolicy, limits: LimitsConfig, parsers: ParserRunner, locks: FileLocks
) -> list[ToolSpec[Any]]:
    """Every fs tool, bound to ``paths`` and ``limits``; readfile parses PDFs and images with
    ``parsers`` (shared with the image group), writefile holds ``locks`` (shared with the text
    edits) for appends and ``expectedSha256`` checks."""
    return [
        *read_specs(paths, limits, parsers),
        *listing_specs(paths, limits),
        *search_specs(paths, limits),
        *stat_specs(paths),
        *mime_specs(paths),
        *write_specs(paths, limits, locks),
        *trash_specs(paths),
        *manage_specs(paths),
    ]
