"""The last lines of a regular file, found by reading backwards from its end: a tail costs the
bytes of its lines, not the file's (``readfile`` with ``tail`` on a file whose lines were not
counted, ``files.lineindex``)."""

from __future__ import annotations

from dataclasses import dataclass

from mcp_localtools.errors import FileSystemError
from mcp_localtools.files.lineindex import BLOCK, SCAN, read_at, utf8_prefix

__all__ = ["Tail", "last_lines"]

_FIRST_READ = BLOCK
"""First backwards read (bytes); each further read doubles, up to ``SCAN``."""


@dataclass(frozen=True, slots=True)
class Tail:
    """The last lines of a file, found by reading backwards from its end (``last_lines``).

    Attributes:
        data: the bytes from ``start`` on (at most the cap: whole lines, or a long line's prefix).
        start: byte offset of the first line in ``data``.
        first: 0-based number of that line, or None when the read did not reach the file's start.
        total: lines in the file, or None when the read did not reach the file's start.
        lines: lines that start in ``data``.
        short: fewer lines than asked for, while more lie before (the cap held no more).
        scanned: bytes read.
    """

    data: bytes
    start: int
    first: int | None
    total: int | None
    lines: int
    short: bool
    scanned: int


def last_lines(fd: int, size: int, count: int, cap: int) -> Tail:
    """The last ``count`` lines of the file open at ``fd`` (``size`` bytes), read backwards from
    its end in growing pieces: whole lines within ``cap`` bytes (the last ones), or the prefix of
    the last line when it alone is longer (its start is searched for backwards). Reads about
    what the lines hold (at most twice that, in pieces of 64 KiB doubling up to 1 MiB), and
    keeps only the returned bytes.

    Raises:
        FileSystemError: the read failed, or the file is shorter than ``size``.
    """
    position = size
    step = _FIRST_READ
    starts: list[int] = []  # line starts found, from the end (absolute offsets)
    newlines = 0  # newline bytes in [position, size)
    final = -1  # offset of the file's last byte when it is a newline (ends the last line)
    while position > 0:
        low = max(0, position - step)
        piece = read_at(fd, position - low, low)
        if len(piece) < position - low:
            raise FileSystemError("the file changed while it was being read; read it again")
        if position == size and piece.endswith(b"\n"):
            final = size - 1
        newlines += piece.count(b"\n")
        end = len(piece)
        while len(starts) < count and (at := piece.rfind(b"\n", 0, end)) >= 0:
            end = at
            if low + at != final:
                starts.append(low + at + 1)
        position = low
        step = min(2 * step, SCAN)
        # Enough lines; or every byte the cap can hold was read and a line start was found.
        if len(starts) >= count or (position <= size - cap and starts):
            break
    candidates = starts[:count]
    if position == 0 and len(candidates) < count:
        candidates.append(0)  # the file's first line
    within = [start for start in candidates if size - start <= cap]
    start = within[-1] if within else candidates[0]
    body = read_at(fd, min(cap, size - start), start)  # in the page cache: just read
    if size - start > cap:  # the last line alone is over the cap: its prefix
        body = utf8_prefix(body)
    lines = body.count(b"\n") + (0 if body.endswith(b"\n") or not body else 1)
    first = total = None
    if position == 0:
        first = newlines - sum(1 for found in starts if found > start) - (final >= 0)
        total = newlines + (1 if size and final < 0 else 0)
    short = lines < count and start > 0
    return Tail(body, start, first, total, lines, short, size - position)
