"""readfile's text window: which lines a call wants, their bytes read through the line index, and
the window cut to the result budget (numbered when asked; from the end for a forward read, from
the start for ``tail``), with the notes that say where to continue.

Lines are split on ``\\n`` only, so CRLF and stray CR bytes come back as they are. Used for text
files (``read_lines`` reads only the window's bytes) and for a PDF's extracted text.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import partial
from itertools import accumulate
from pathlib import Path
from typing import Any, TypeVar

from mcp_localtools.errors import InvalidArguments, UnsupportedContent, from_os_error
from mcp_localtools.files.lineindex import LineIndex, pread, utf8_prefix
from mcp_localtools.results import TextContent, ToolResult, fit_within, json_chars_around
from mcp_localtools.spec import ToolOutput
from mcp_localtools.toolnames import served

__all__ = [
    "TextWindow",
    "count_lines",
    "decode_window",
    "lines_wanted",
    "number_lines",
    "read_lines",
    "text_result",
    "text_window",
]

ResultT = TypeVar("ResultT", bound=ToolOutput)


@dataclass(frozen=True, slots=True)
class TextWindow:
    """A window of lines cut from a text.

    Attributes:
        text: the window's text, verbatim (line endings kept).
        total_lines: lines in the whole text (a final line without newline counts).
        start_line: 1-based first line, or None when the window is empty.
        end_line: 1-based last line (inclusive), or None when the window is empty.
        next_offset: offset of the first line not returned, or None when the text ended.
        cut_line: the 1-based line that was cut mid-line to fit the budget, if any.
    """

    text: str
    total_lines: int
    start_line: int | None
    end_line: int | None
    next_offset: int | None
    cut_line: int | None = None


def text_window(text: str, *, offset: int, limit: int, budget: int, total: int | None = None) -> TextWindow:
    """Cut ``text`` to ``limit`` lines after skipping ``offset``, within ``budget`` characters;
    ``total``: its lines (``count_lines``) when the caller knows them already.

    Lines are split on ``\\n`` only, so CRLF and stray CR bytes come back as they are. A single
    line longer than the budget is cut mid-line (``cut_line`` says which).

    Raises:
        InvalidArguments: ``offset`` is past the last line of a non-empty text.
    """
    if total is None:
        total = count_lines(text)
    if offset and offset >= total:
        raise InvalidArguments(
            f"offset {offset} is past the end of the text ({total} lines); use a smaller offset"
        )
    if not offset and total <= limit and len(text) <= budget:  # the common case: all of it fits
        return TextWindow(text, total, 1 if total else None, total or None, None)
    parts = text.split("\n", offset + limit)
    count = min(limit, total - offset)
    selected = parts[offset : offset + count]
    # Line k of the window ends lengths[k] + k characters in, plus 1 for its own newline, which
    # every line has but the text's last one when the text does not end with "\n" (the window's
    # lines from with_newline on: none, or that last line). The first line always goes in (cut
    # below when it alone is over the budget). Cumulated in C, searched in log time.
    lengths = list(accumulate(map(len, selected)))
    with_newline = len(parts) - offset - 1
    used = (
        max(1, bisect_right(range(count), budget, key=lambda k: lengths[k] + k + (k < with_newline)))
        if count
        else 0
    )
    chunk = "\n".join(selected[:used])
    if used and offset + used < len(parts):  # the last returned line had its newline
        chunk += "\n"
    cut_line = None
    if len(chunk) > budget:  # one line alone is over the budget
        chunk = chunk[:budget]
        cut_line = offset + 1
    next_offset = offset + used if offset + used < total else None
    first = offset + 1 if used else None
    return TextWindow(chunk, total, first, offset + used if used else None, next_offset, cut_line)


def count_lines(text: str) -> int:
    """Lines in ``text``, split on ``\\n`` (a final line without newline counts)."""
    return text.count("\n") + (0 if text.endswith("\n") or not text else 1)


def lines_wanted(
    total: int, *, offset: int, limit: int | None, tail: int | None, default_limit: int
) -> tuple[int, int]:
    """``(first, count)``: the 0-based first line and the number of lines a call asks for, in a
    text of ``total`` lines (``limit`` None: ``default_limit``; ``tail``: the last lines).

    Raises:
        InvalidArguments: ``offset`` is past the last line of a non-empty text.
    """
    if tail is not None:
        first = max(0, total - tail)
        return first, total - first
    if offset and offset >= total:
        raise InvalidArguments(
            f"offset {offset} is past the end of the text ({total} lines); use a smaller offset"
        )
    return offset, min(limit or default_limit, total - offset)


_LOOKAHEAD = 16 * 1024
"""Bytes a forward read takes past its ``enough`` first, to end on a whole line (``read_lines``)."""


def read_lines(
    fd: int,
    index: LineIndex,
    path: Path,
    first: int,
    count: int,
    *,
    tail: bool,
    cap: int,
    enough: int | None = None,
) -> tuple[str, int]:
    """The text of lines ``first`` .. ``first + count - 1`` of the file open at ``fd``, located
    through ``index``; at most ``cap`` bytes are read (whole lines only, or a long first line's
    prefix; for a ``tail``, the last whole lines the cap holds). ``enough``: a forward read first
    takes ``enough`` bytes and a little more (``_LOOKAHEAD``), and stops at their whole lines when
    those hold more than ``enough`` characters (a window of ``enough`` characters shows no more),
    so a window of a plain-text file reads about the bytes it shows, not ``cap``.

    Returns:
        ``(text, first)``: the decoded text and the 0-based number of its first line.

    Raises:
        UnsupportedContent: the bytes are not valid UTF-8.
        FileSystemError: the read failed.
    """
    start, end = index.line_start(fd, first), index.line_start(fd, first + count)
    if tail and end - start > cap:  # the last whole lines the cap holds
        fits = bisect_left(
            range(first, first + count), True, key=lambda line: end - index.line_start(fd, line) <= cap
        )
        first, count = (first + fits, count - fits) if fits < count else (first + count - 1, 1)
        start = index.line_start(fd, first)
    size = min(end - start, cap)
    if not tail and enough is not None and size > enough + _LOOKAHEAD:
        data = _pread(fd, enough + _LOOKAHEAD, start, path)
        lines_end = data.rfind(b"\n") + 1
        if lines_end > enough:  # a character is at least one byte: possibly enough
            text, whole = _valid_lines(data[:lines_end], path, start)
            if len(text) > enough or not whole:
                return text, first
        # Wide characters or long lines: read as far as the cap.
    data = _pread(fd, size, start, path)
    if len(data) < end - start:  # cut at the cap: whole lines only, or a long first line's prefix
        newline = data.rfind(b"\n")
        data = data[: newline + 1] if newline >= 0 else utf8_prefix(data)
    return (decode_window(data, path, start) if tail else _valid_lines(data, path, start)[0]), first


def _valid_lines(data: bytes, path: Path, start: int) -> tuple[str, bool]:
    """``data`` (read from byte ``start`` of ``path``) decoded, or its lines before the first
    invalid UTF-8 byte (the window that reaches that line refuses it).

    Returns:
        ``(text, whole)``: ``whole`` is False when the text stops before an invalid byte.

    Raises:
        UnsupportedContent: the first line holds an invalid byte.
    """
    try:
        return data.decode("utf-8"), True
    except UnicodeDecodeError as exc:
        valid = data.rfind(b"\n", 0, exc.start) + 1
        if not valid:
            decode_window(data, path, start)  # raises, naming the offset
        return data[:valid].decode("utf-8"), False


def _pread(fd: int, size: int, offset: int, path: Path) -> bytes:
    """``size`` bytes of the file open at ``fd`` from ``offset`` (fewer at its end).

    Raises:
        FileSystemError: the read failed.
    """
    try:
        return pread(fd, size, offset)
    except OSError as exc:
        raise from_os_error(exc, str(path)) from exc


def decode_window(data: bytes, path: Path, start: int) -> str:
    """``data``, read from byte offset ``start`` of the file at ``path``, decoded as UTF-8.

    Raises:
        UnsupportedContent: the bytes are not valid UTF-8 (the message gives the file offset).
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UnsupportedContent(
            f"not valid UTF-8 text: {path} (invalid byte at offset {start + exc.start}); "
            'use encoding "binary"'
        ) from exc


def number_lines(text: str, first: int) -> str:
    """``text`` with each line prefixed like ``cat -n``: its number right-aligned in 6 columns
    (wider when needed), then a tab; ``first`` is the 1-based number of the first line."""
    if not text:
        return text
    ends = text.endswith("\n")
    lines = (text[:-1] if ends else text).split("\n")
    numbered = "\n".join([f"{number:>6}\t{line}" for number, line in enumerate(lines, first)])
    return numbered + "\n" if ends else numbered


def _lines_over(text: str, budget: int) -> int:
    """How many leading lines of ``text`` to drop so that the rest fits ``budget`` characters
    (never the last line)."""
    if len(text) <= budget:
        return 0
    sizes = [len(line) + 1 for line in text.split("\n")]
    if text.endswith("\n"):
        sizes.pop()
    ends = list(accumulate(sizes))
    return min(bisect_left(ends, len(text) - budget) + 1, len(sizes) - 1)


@dataclass(frozen=True, slots=True)
class _Request:
    """What the window of one call is cut from: ``text``, whole lines ``first``, ``first + 1``,
    ... (0-based; None: not counted) of a text of ``total`` lines (None: not counted; then
    ``rest`` tells whether lines follow the text); ``tail``: the call's tail argument."""

    text: str
    first: int | None
    total: int | None
    tail: int | None
    line_numbers: bool
    cut: bool
    notes: Sequence[str]
    rest: bool
    lines: int


def text_result(
    base: ResultT,
    text: str,
    *,
    first: int | None,
    total: int | None,
    tail: int | None,
    line_numbers: bool,
    budget: int,
    cut: bool = False,
    notes: Sequence[str] = (),
    rest: bool = False,
) -> ToolResult:
    """The text-mode result: the window ``text`` numbered when asked, and cut to the result
    budget (from the end for a forward read, from the start for ``tail``).

    Args:
        base: the result model with everything but the window's fields (``content``,
            ``totalLines``, ``startLine``, ``endLine``, ``nextOffset``, ``truncated``) set.
        text: whole lines ``first``, ``first + 1``, ... of a text of ``total`` lines (the
            lines the call asked for, or fewer when the read was capped; a long first line may
            be a prefix only).
        first: the 0-based number of the window's first line; None when the lines before a
            tail were not counted (then ``line_numbers`` must be false).
        total: lines in the whole text; None when not counted (a large file's head or tail).
        tail: the call's ``tail`` argument (None for a forward read).
        budget: the result budget (``max_result_chars``).
        cut: the text was already cut before it got here (PDF extraction stopped at its cap).
        notes: further notes for the caller, after the window's.
        rest: with ``total`` None, whether lines follow ``text`` (a forward read).
    """
    lines = count_lines(text)
    request = _Request(text, first, total, tail, line_numbers, cut, notes, rest, lines)
    # The text goes twice (the text content and structuredContent.content), each copy within the
    # budget (results.wire_chars): the whole budget less the metadata and the JSON escapes of the
    # line breaks (and of the tabs of numbered lines) the window will hold, so that the first
    # window built fits; less again only when other escapes or the notes put a copy over it.
    breaks = lines if len(text) <= budget else lines * budget // len(text) + 1
    escapes = breaks * (2 if line_numbers else 1)
    return fit_within(partial(_window_result, base, request), budget, budget - 500 - escapes)


def _forward_cut(text: str, lines: int, budget: int) -> tuple[str, int | None]:
    """``text`` (of ``lines`` lines, ``count_lines``) cut to its whole lines within ``budget``
    characters (or a prefix of its first line), and the lines that leaves (None: not known,
    count them); the newlines are counted only after the cut."""
    end = text.rfind("\n", 0, budget)
    if end < 0:
        return text[: budget + 1], None
    newlines = lines - (0 if text.endswith("\n") else 1)
    return text[: end + 1], newlines - text.count("\n", end + 1)


def _window_result(base: ToolOutput, request: _Request, payload: int) -> ToolResult:
    """``text_result`` with the window cut to ``payload`` characters."""
    budget = max(payload, 1)
    text, first, total, tail = request.text, request.first, request.total, request.tail
    lines = request.lines
    shown_lines: int | None = lines  # the lines of ``text`` as it is shown (None: count them)
    if tail is None and len(text) > budget:  # only the lines that can fit are numbered and cut
        text, shown_lines = _forward_cut(text, lines, budget)
    if request.line_numbers:
        assert first is not None, "numbered lines need the first line's number"
        shown = number_lines(text, first + 1)
    else:
        shown = text
    skip = _lines_over(shown, budget) if tail is not None else 0
    if skip:
        shown = shown.split("\n", skip)[-1]
        shown_lines = None if shown_lines is None else shown_lines - skip
    if shown_lines is None:
        shown_lines = count_lines(shown)
    window = text_window(shown, offset=0, limit=shown_lines, budget=budget, total=shown_lines)
    begin = first + skip if first is not None else None
    used = window.end_line or 0
    if total is not None and first is not None:
        remains = first + skip + used < total
    else:
        remains = skip + used < lines or request.rest
    next_offset = (
        begin + used
        if begin is not None and remains and (tail is None or window.cut_line is not None)
        else None
    )
    missing = (
        max(0, total - tail) if tail is not None and total is not None else None
    )  # the tail's first line
    uncounted_cut = tail is not None and begin is None and (skip > 0 or request.cut)
    fields: dict[str, Any] = {
        "content": window.text,
        "total_lines": total,
        "start_line": begin + 1 if used and begin is not None else None,
        "end_line": begin + used if used and begin is not None else None,
        "next_offset": next_offset,
        "truncated": next_offset is not None
        or window.cut_line is not None
        or request.cut
        or uncounted_cut
        or (begin != missing and missing is not None),
    }
    result = base.model_copy(update=fields)
    told: list[str] = []
    if window.cut_line is not None:
        which = f"line {begin + 1}" if begin is not None else "the line shown"
        told.append(
            f"{which} is longer than the result budget and was cut after {len(window.text)} characters"
        )
    if missing is not None and begin is not None and begin > missing:
        told.append(
            f"showing the last {used} lines ({begin + 1}-{begin + used} of {total}), what fits the result "
            f"budget; call {served('readfile')} with offset={missing}, limit={begin - missing} for the "
            "lines before"
        )
    elif uncounted_cut:
        told.append(
            f"showing the last {used} lines, what fits the result budget; the file's lines were not "
            f"counted: call {served('readfile')} with tail={tail} and countLines=true for their numbers, "
            "then offset and limit for the lines before"
        )
    elif next_offset is not None and begin is not None:
        of = f"of {total}" if total is not None else "(lines not counted: countLines=true counts them)"
        told.append(
            f"showing lines {begin + 1}-{begin + used} {of}; call {served('readfile')} with "
            f"offset={next_offset} to continue"
        )
    notes = [f"[{'; '.join(told)}]", *request.notes] if told else request.notes
    made = ToolResult.of(result, *map(TextContent, notes), text=window.text)
    assert made.structured is not None, "a window's result has structured content"
    if total is None:  # said, not left out: the lines were not counted
        made.structured["totalLines"] = None
    return replace(made, structured_chars=json_chars_around(made.structured, "content"))
