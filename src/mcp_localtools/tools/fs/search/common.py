"""What the three search tools share: their root argument, display paths, globs, notes and the
result text's character budget."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

from mcp_localtools.errors import InvalidArguments
from mcp_localtools.policy.paths import PathPolicy
from mcp_localtools.registry import ToolOutput
from mcp_localtools.results import cut_text
from mcp_localtools.tools.fs.search.engine import Skipped

__all__ = [
    "MAX_RESULTS",
    "MAX_SKIPPED",
    "LineBudget",
    "SearchRoot",
    "SkippedPath",
    "check_globs",
    "join_within",
    "open_root",
    "opened_root",
    "skipped_note",
    "skipped_paths",
]

MAX_RESULTS = 10_000
MAX_SKIPPED = 50
"""Most unreadable entries a result lists (the text note gives the total)."""


class SkippedPath(ToolOutput):
    path: str = Field(description="File or directory that could not be read (display form).")
    reason: str = Field(description="Why, in the operating system's words.")


@dataclass(frozen=True, slots=True)
class SearchRoot:
    """A directory a tool walks.

    Attributes:
        real: its real path (what the engine walks).
        prefix: what display paths start with: ``""`` for the base directory, ``"sub/"`` for a
            relative root, the absolute path plus ``/`` for an absolute one (SF-4, SF-10).
    """

    real: Path
    prefix: str

    def display(self, rel: str) -> str:
        """The display form of a path relative to the root."""
        text = self.prefix + rel
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


@contextmanager
def opened_root(paths: PathPolicy, given: str, *, field: str) -> Iterator[tuple[SearchRoot, int]]:
    """Resolve a root argument and open it as a directory (SF-2), for a caller that reads it.

    Yields:
        The root and a descriptor of the opened directory, closed when the block ends.

    Raises:
        NotFound, NotADirectory, OutsideAllowedRoots, SymlinkRefused, FileSystemError.
    """
    resolved = paths.resolve(given, field=field)
    with paths.opened(resolved, os.O_RDONLY | os.O_DIRECTORY) as fd:
        text = given.strip()
        base = str(resolved.path) if Path(text).is_absolute() else os.path.normpath(text)
        prefix = "" if base == "." else base.rstrip("/") + "/"
        yield SearchRoot(real=resolved.real, prefix=prefix), fd


def open_root(paths: PathPolicy, given: str, *, field: str) -> SearchRoot:
    """Resolve a root argument and check it is a readable directory (SF-2). Blocking: call it
    from a worker thread.

    Raises:
        NotFound, NotADirectory, OutsideAllowedRoots, SymlinkRefused, FileSystemError.
    """
    with opened_root(paths, given, field=field) as (root, _):
        return root


class LineBudget:
    """The lines of a result's text, kept within a character budget.

    Args:
        budget: characters the lines may take, one newline each included.
    """

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.lines: list[str] = []
        self.cut = False

    def fits(self, texts: list[str]) -> bool:
        """Append ``texts`` if all of them fit in what is left; else append none, set ``cut``
        and return False."""
        cost = sum(len(text) + 1 for text in texts)
        if cost > self.budget:
            self.cut = True
            return False
        self.budget -= cost
        self.lines.extend(texts)
        return True


def check_globs(globs: list[str], field: str) -> tuple[str, ...]:
    """Refuse empty globs and ones with a newline or NUL.

    Raises:
        InvalidArguments: a glob is unusable.
    """
    for glob in globs:
        if not glob.strip() or any(char in glob for char in "\n\r\x00"):
            raise InvalidArguments(f"{field}: {glob!r} is not a usable glob")
    return tuple(globs)


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


def join_within(lines: list[str], budget: int) -> str:
    """The lines as one text, cut to ``budget`` characters as a last guard (the tools budget
    their lines already; this bounds the header and notes too)."""
    text, _ = cut_text("\n".join(lines), budget)
    return text
