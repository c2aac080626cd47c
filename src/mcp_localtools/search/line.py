"""One line of a search result as the engines report it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass

__all__ = ["LINE_WIDTH", "Line"]


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
