"""The text group: read, find and edit lines of UTF-8 text files, and editfile's exact-text edits.

``lines.py`` holds the pure line model (no I/O); ``textfile.py`` loads a file and saves it back;
each tool module holds one tool or one close family.
"""

from __future__ import annotations

from typing import Any

from mcp_localtools.config import LimitsConfig
from mcp_localtools.fswrite import FileLocks
from mcp_localtools.policy.paths import PathPolicy
from mcp_localtools.registry import ToolSpec
from mcp_localtools.tools.text.blocks import block_specs
from mcp_localtools.tools.text.edit import edit_specs
from mcp_localtools.tools.text.find import find_specs
from mcp_localtools.tools.text.insert import insert_specs
from mcp_localtools.tools.text.read import read_specs

__all__ = ["text_specs"]


def text_specs(paths: PathPolicy, limits: LimitsConfig, locks: FileLocks) -> list[ToolSpec[Any]]:
    """Every text tool, bound to ``paths`` and ``limits``; the edits hold ``locks`` (the server's
    per-file locks, shared with writefile) while they read, change and save a file."""
    return [
        *read_specs(paths, limits),
        *find_specs(paths, limits),
        *insert_specs(paths, limits, locks),
        *block_specs(paths, limits, locks),
        *edit_specs(paths, limits, locks),
    ]
