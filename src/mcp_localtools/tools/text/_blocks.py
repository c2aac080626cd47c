"""Finding a block of lines for replacetextlines and deletetextlines.

A block matches where its lines equal the file's after trimming, with ``beforeLines`` directly
above and ``afterLines`` directly below when given. The number of matches must be exactly the
expected one (default 1), or nothing is written and the error lists every match's line (or, with
none, the closest region).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import Field

from mcp_localtools.errors import AmbiguousMatch, NoMatch
from mcp_localtools.spec import ToolArgs
from mcp_localtools.tools.text._lines import (
    LISTED_LINES,
    TextLines,
    block_starts,
    check_no_overlap,
    context_starts,
    format_line_numbers,
    line_list,
    trimmed,
)
from mcp_localtools.tools.text._report import expected_sha256_field
from mcp_localtools.tools.text._similar import closest_hint

__all__ = ["BlockArgs", "block_numbers", "find_blocks"]


class BlockArgs(ToolArgs):
    """The arguments replacetextlines and deletetextlines share: the file, the block and its context."""

    path: str = Field(description="UTF-8 text file.")
    match_lines: list[str] = Field(min_length=1, description="Block to find; lines compared trimmed.")
    before_lines: list[str] = Field(default_factory=list, description="Must be just above the block (kept).")
    after_lines: list[str] = Field(default_factory=list, description="Must be just below the block (kept).")
    expected_sha256: str | None = expected_sha256_field()


def find_blocks(
    doc: TextLines, args: BlockArgs, expected: int, verb: str, path: Path
) -> tuple[list[str], list[int]]:
    """Where ``args``' block (with its context) stands in ``doc``: ``(block, starts)``, the block's
    lines and the 0-based first line of each of its ``expected`` matches.

    Raises:
        AmbiguousMatch: it matches a different, non-zero number of times (the error lists them).
        NoMatch: it does not match; the error shows where the block alone occurs, or the closest
            region.
    """
    block = line_list(args.match_lines)
    before = line_list(args.before_lines)
    after = line_list(args.after_lines)
    file_trimmed = trimmed(doc.lines)
    limit = expected + LISTED_LINES
    starts = context_starts(file_trimmed, block, before=before, after=after, limit=limit)
    check_no_overlap(starts, len(block), "matchLines")
    if len(starts) == expected:
        return block, starts
    capped = len(starts) == limit
    found = f"more than {limit - 1}" if capped else str(len(starts))
    head = f"{verb} match count mismatch: expected {expected}, found {found}"
    if starts:
        raise AmbiguousMatch(
            f"{head} (at lines {block_numbers(starts, complete=not capped)}) in {path}; provide tighter "
            "beforeLines/afterLines to disambiguate, or set the expected count"
        )
    alone = block_starts(file_trimmed, block, limit=LISTED_LINES + 1)
    if alone:
        raise NoMatch(
            f"{head} in {path}: matchLines occurs at lines "
            f"{block_numbers(alone, complete=len(alone) <= LISTED_LINES)}, but not with the given "
            "beforeLines/afterLines directly around it"
        )
    raise NoMatch(f"{head}: matchLines is not in {path}. {closest_hint(doc.lines, block)}")


def block_numbers(starts: Sequence[int], *, complete: bool = True) -> str:
    """0-based block starts as a list of 1-based line numbers for messages (``3, 7-9``)."""
    return format_line_numbers([s + 1 for s in starts], complete=complete)
