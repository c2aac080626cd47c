"""Entries a search or listing could not read, as result items and a note."""

from __future__ import annotations

from pydantic import Field

from mcp_localtools.search.engine import Skipped
from mcp_localtools.spec import ToolOutput
from mcp_localtools.tools.fs._roots import SearchRoot

__all__ = ["MAX_SKIPPED", "SkippedPath", "skipped_note", "skipped_paths"]


MAX_SKIPPED = 50
"""Most unreadable entries a result lists (the text note gives the total)."""


class SkippedPath(ToolOutput):
    path: str = Field(description="File or directory that could not be read (display form).")
    reason: str = Field(description="Why, in the operating system's words.")


def skipped_paths(root: SearchRoot, skipped: list[Skipped]) -> list[SkippedPath]:
    """Engine ``Skipped`` entries as sorted, de-duplicated result items."""
    unique = sorted({(entry.path, entry.reason) for entry in skipped})
    return [SkippedPath(path=root.display(path), reason=reason) for path, reason in unique]


def skipped_note(skipped: list[SkippedPath], *, shown: int = 5) -> str | None:
    """A note naming the first unreadable entries, or None."""
    if not skipped:
        return None
    names = ", ".join(f"{item.path[:200]} ({item.reason})" for item in skipped[:shown])
    more = f" and {len(skipped) - shown} more" if len(skipped) > shown else ""
    return f"[skipped {len(skipped)} unreadable: {names}{more}]"
