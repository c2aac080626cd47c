"""Parsing what ``rg --null`` prints into ``FileHits``: one regex pass per chunk of plain records.

rg's records are ``PATH\\0LINE:OFFSET:TEXT`` (a match), ``PATH\\0LINE-OFFSET-TEXT`` (context),
``--`` between context groups (``-n -b --no-heading``) or ``PATH\\0COUNT`` (``--count``), each
ending with a newline. A chunk of whole records in which every path is free of newlines is
checked and split by two regexes in C and walked once; a chunk holding anything else (a path
with a newline, rg's binary-file warning) goes record by record through ``JoinNewlinePaths``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable

from mcp_localtools.search.engine import FileHits
from mcp_localtools.search.line import CappedLines, Line

__all__ = ["CountRecords", "JoinNewlinePaths", "LineRecords", "rel_path"]

_MATCH = re.compile(rb"(\d+)(:)(\d+):(.*)", re.DOTALL)
_IS_MATCH = re.compile(rb"\d+:")
_CONTEXT = re.compile(rb"(\d+)(-)(\d+)-(.*)", re.DOTALL)
# Whole chunks of plain records (a path without newline or NUL): checked, then split, in C.
_LINE_RECORD = re.compile(rb"(?:--\n)*([^\n\x00]*)\x00(\d+)([:-])(\d+)\3([^\n]*)\n")
_PLAIN_LINES = re.compile(rb"(?:(?:--\n)*[^\n\x00]*\x00\d+([:-])\d+\1[^\n]*\n)*")
_COUNT_RECORD = re.compile(rb"([^\n\x00]*)\x00(\d+)\n")
_PLAIN_COUNTS = re.compile(rb"(?:[^\n\x00]*\x00\d+\n)*")
_OMITTED = re.compile(rb"\[Omitted long (?:context |matching )?line(?: with \d+ matches)?\]")


def rel_path(raw: bytes) -> str:
    """A path rg printed (``./a/b``) relative to the walk root, decoded as ``os.fsdecode`` does."""
    return os.fsdecode(raw[2:] if raw.startswith(b"./") else raw)


class JoinNewlinePaths:
    """Puts back together the records of a file whose name holds newlines.

    rg ends each record with a newline and puts a NUL after the path (``--null``), so a path with
    newlines arrives as pieces without a NUL followed by the record that has one; those pieces
    are the start of that record's path. Without this, ``n\\nFAKE.txt`` would be reported as a
    match in ``FAKE.txt``. A piece that is a context separator (``--``) or rg's binary-file warning
    is passed on as it is.
    """

    def __init__(self, feed: Callable[[bytes], None]) -> None:
        self._feed = feed
        self._pieces: list[bytes] = []

    @property
    def pending(self) -> bool:
        """Whether pieces of a path with newlines wait for the rest of their record."""
        return bool(self._pieces)

    def feed(self, record: bytes) -> None:
        if b"\x00" not in record:
            if not self._pieces and (record == b"--" or b": WARNING: " in record):
                self._feed(record)
            else:
                self._pieces.append(record)
            return
        if self._pieces:
            record = b"\n".join([*self._pieces, record])
            self._pieces = []
        self._feed(record)

    def feed_all(self, chunk: bytes) -> None:
        """Feed every record of ``chunk`` (whole records, each ending with a newline)."""
        for record in chunk[:-1].split(b"\n"):
            self.feed(record)


class LineRecords:
    """Parses ``rg --null -n -b`` output into one ``FileHits`` per file.

    A chunk of plain records (every path free of newlines, no binary-file warning: nearly always)
    is checked and split by two regex passes in C, then walked once; any other chunk goes record
    by record through ``JoinNewlinePaths`` and ``feed``, which handle every case.

    (No ``--column``: rg leaves the column out when it cannot place the match again, as for
    ``\\A``, which makes the record ambiguous; the tools find the column themselves when needed.)
    """

    def __init__(self, sink: Callable[[FileHits], None], max_lines: int | None, context: int) -> None:
        self._sink = sink
        self._path: bytes | None = None
        self._max_lines = max_lines
        self._context = context
        self._lines = CappedLines(max_lines, context)
        self._joined = JoinNewlinePaths(self.feed)
        self.files = 0

    def _flush(self) -> None:
        if self._path is not None and self._lines.matches:
            self._sink(FileHits(rel_path(self._path), self._lines.matches, tuple(self._lines.lines)))
            self.files += 1
        self._path, self._lines = None, CappedLines(self._max_lines, self._context)

    def feed_chunk(self, chunk: bytes) -> None:
        """Take in whole records (``chunk`` ends with a newline)."""
        if self._joined.pending or _PLAIN_LINES.fullmatch(chunk) is None:
            self._joined.feed_all(chunk)
            return
        lines = self._lines
        for path, number, kind, offset, text in _LINE_RECORD.findall(chunk):
            if path != self._path:
                self._flush()
                self._path, lines = path, self._lines
            if lines.closed:  # past the kept lines: only count the matches, build nothing
                if kind == b":":
                    lines.count_match()
                continue
            lines.add(Line(int(number), int(offset), kind == b":", self._text(text)))

    def feed(self, record: bytes) -> None:
        """Take in one record (a path with newlines already joined)."""
        path, nul, rest = record.partition(b"\x00")
        if not nul:  # a "--" group separator, or the warning that a file turned out binary
            if b": WARNING: " in record and record.rpartition(b": WARNING: ")[0] == self._path:
                self._path, self._lines = None, CappedLines(self._max_lines, self._context)
            return
        if path != self._path:
            self._flush()
            self._path = path
        if self._lines.closed:
            if _IS_MATCH.match(rest):
                self._lines.count_match()
            return
        found = _MATCH.fullmatch(rest) or _CONTEXT.fullmatch(rest)
        if found is not None:
            number, kind, offset, text = found.groups()
            self._lines.add(Line(int(number), int(offset), kind == b":", self._text(text)))

    @staticmethod
    def _text(text: bytes) -> bytes | None:
        return None if text[:1] == b"[" and _OMITTED.fullmatch(text) else text

    def close(self) -> None:
        self._flush()


class CountRecords:
    """Parses ``rg --null --count`` (or ``--count-matches``) output: a ``FileHits`` per file
    with a count above zero (1 for each in files mode), in one pass per plain chunk."""

    def __init__(self, sink: Callable[[FileHits], None], *, files_only: bool) -> None:
        self._sink = sink
        self._files_only = files_only
        self._joined = JoinNewlinePaths(self.feed)
        self.files = 0

    def feed_chunk(self, chunk: bytes) -> None:
        """Take in whole records (``chunk`` ends with a newline)."""
        if self._joined.pending or _PLAIN_COUNTS.fullmatch(chunk) is None:
            self._joined.feed_all(chunk)
            return
        for path, count in _COUNT_RECORD.findall(chunk):
            self._found(path, int(count))

    def feed(self, record: bytes) -> None:
        path, _, count = record.rpartition(b"\x00")
        if path and count.strip().isdigit():
            self._found(path, int(count))

    def _found(self, path: bytes, count: int) -> None:
        if count:
            self.files += 1
            self._sink(FileHits(rel_path(path), 1 if self._files_only else count))
