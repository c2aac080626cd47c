"""One line of a search result as the engines report it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

__all__ = ["LINE_WIDTH", "CappedLines", "Line", "cap_lines"]


LINE_WIDTH = 400
"""Longest line (in bytes, with its newline) whose text an engine returns."""


@dataclass(frozen=True, slots=True)
class Line:
    """One reported line of a file.

    Attributes:
        number: 1-based line number.
        offset: byte offset of the line's first byte in the file.
        is_match: a matching line (else a context line).
        text: the line's bytes without its newline; None when the line is longer than LINE_WIDTH.
    """

    number: int
    offset: int
    is_match: bool
    text: bytes | None


def cap_lines(lines: Iterable[Line], take: int, context: int) -> list[Line]:
    """The lines (in order) that belong to the first ``take`` matching lines and their
    ``context``: every line up to the ``take``-th match, then context lines up to ``context``
    after it, and nothing from the next match on."""
    capped = CappedLines(take, context)
    for line in lines:
        capped.add(line)
    return capped.lines


@dataclass(slots=True)
class CappedLines:
    """A file's reported lines, added in line order, of which only those of the first
    ``max_matches`` matching lines (and their ``context``) are kept (``cap_lines``); every
    matching line is counted. None keeps them all. This is what bounds a search's memory by what
    its result can show rather than by what matches.

    Attributes:
        lines: the kept lines, in order.
        matches: every matching line added.
    """

    max_matches: int | None
    context: int
    lines: list[Line] = field(default_factory=list)
    matches: int = 0
    closed: bool = False
    """A match past ``max_matches`` was added: no line is kept any more, matches are only counted."""
    _last: int = 0  # the line number of the last kept match

    def add(self, line: Line) -> None:
        """Count ``line`` and keep it when it belongs to the kept matches."""
        if line.is_match:
            self.matches += 1
            if not self.closed and self.max_matches is not None and self.matches > self.max_matches:
                self.closed = True
            if not self.closed:
                self.lines.append(line)
                self._last = line.number
        elif not self.closed and (
            self.max_matches is None
            or self.matches < self.max_matches
            or line.number <= self._last + self.context
        ):
            self.lines.append(line)

    def count_match(self) -> None:
        """Count a matching line without building it (only once ``closed``)."""
        self.matches += 1
