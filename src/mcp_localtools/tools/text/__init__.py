"""The text group: read, find and edit lines of UTF-8 text files, and editfile's exact-text edits.

One module per tool, named for it; each exposes ``spec(workspace)``. Private helpers:
``_lines`` (the pure line model, no I/O), ``_textfile`` (load a file, save it back), ``_blocks``
(finding a block of lines), ``_match`` and ``_similar`` (exact-text matching, the closest region),
``_diff`` and ``_report`` (what every edit returns).
"""

from __future__ import annotations

from mcp_localtools.tools.text import (
    deletetextlines,
    editfile,
    findtext,
    inserttextlines,
    readtextrange,
    replaceinfiles,
    replacetextlines,
)

__all__ = ["MODULES"]

MODULES = (
    readtextrange,
    findtext,
    inserttextlines,
    replacetextlines,
    deletetextlines,
    editfile,
    replaceinfiles,
)
"""The group's tool modules."""
