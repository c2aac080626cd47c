"""Pure functions on the lines of a text file: parsing, rendering, block matching, splicing, and
listing line numbers in messages. No I/O.

The model:

* A leading UTF-8 BOM (U+FEFF) is set aside as a flag and written back; line 1 starts after it.
* Lines are split on ``\\n``; a ``\\r`` right before it belongs to that line's ending. Every line
  keeps its own ending (``\\r\\n``, ``\\n``, or none for a last line without a final newline),
  and a lone ``\\r`` is ordinary text, so a rewrite reproduces every byte it was not asked to
  change, even in a file with mixed endings.
* Lines that an edit adds take the file's newline style: the more common ending, CRLF on a tie.
* Whether the file ends with a newline is kept by every edit (an empty result stays empty).
* Blocks match when every line equals the file's line after trimming leading and trailing
  whitespace on both sides; case and inner whitespace matter.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice, pairwise

from mcp_localtools.errors import AmbiguousMatch, NoMatch
from mcp_localtools.tools.text._similar import closest_hint

__all__ = [
    "BOM",
    "LISTED_LINES",
    "TextLines",
    "block_starts",
    "check_no_overlap",
    "context_starts",
    "format_line_numbers",
    "line_list",
    "newline_style",
    "parse_text",
    "splice",
    "splice_many",
    "trimmed",
    "unique_block",
]

BOM = "\ufeff"
LISTED_LINES = 200  # line numbers a message lists at most
_INPUT_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True, slots=True)
class TextLines:
    """A text file as lines.

    Attributes:
        lines: the lines without their endings (a lone ``\\r`` stays in the text).
        ends: each line's ending: ``"\\r\\n"``, ``"\\n"``, or ``""`` (only the last line, when the
            file does not end with a newline).
        bom: the file starts with a UTF-8 BOM.
        newline: the ending given to lines an edit adds.
    """

    lines: tuple[str, ...]
    ends: tuple[str, ...]
    bom: bool
    newline: str

    @property
    def final_newline(self) -> bool:
        """True when the last line has an ending (an empty file has none)."""
        return bool(self.ends) and self.ends[-1] != ""

    def render(self) -> str:
        """The whole text, BOM and endings included, exactly as it is to be written."""
        ends = self.ends
        if not ends:
            body = ""
        elif ends[0] and ends[-1] in (ends[0], "") and ends[:-1].count(ends[0]) == len(ends) - 1:
            body = ends[0].join(self.lines) + ends[-1]  # one ending throughout (the last may be none)
        else:
            body = "".join(line + end for line, end in zip(self.lines, ends, strict=True))
        return BOM + body if self.bom else body

    def __len__(self) -> int:
        return len(self.lines)


def newline_style(body: str) -> str:
    """The ending for lines an edit adds to ``body``: the more common of CRLF and LF, CRLF on a
    tie, LF for a text without line breaks (counted in C, no split)."""
    crlf = body.count("\r\n")
    return "\r\n" if crlf and crlf >= body.count("\n") - crlf else "\n"


def parse_text(text: str) -> TextLines:
    """Split decoded file text into ``TextLines`` (``render()`` gives back ``text`` exactly)."""
    bom = text.startswith(BOM)
    body = text[1:] if bom else text
    lines = body.split("\n")
    last = lines.pop()  # what follows the final newline: "" when the file ends with one
    crlf = body.count("\r\n")  # exactly the lines that end in "\r" before their "\n"
    if not crlf:  # all LF: no per-line work at all (these loops run in C)
        ends = ["\n"] * len(lines)
    elif crlf == len(lines):  # all CRLF
        lines = [line[:-1] for line in lines]
        ends = ["\r\n"] * len(lines)
    else:
        ends = ["\r\n" if line.endswith("\r") else "\n" for line in lines]
        lines = [line[:-1] if end == "\r\n" else line for line, end in zip(lines, ends, strict=True)]
    if last:
        lines.append(last)
        ends.append("")
    return TextLines(lines=tuple(lines), ends=tuple(ends), bom=bom, newline=newline_style(body))


def line_list(items: Sequence[str]) -> list[str]:
    """Normalise a caller's line array: an item with embedded ``\\n``, ``\\r\\n`` or ``\\r``
    becomes several lines, trailing line breaks of an item are dropped (``"a\\n"`` is one line
    ``a``), and ``""`` is one empty line."""
    out: list[str] = []
    for item in items:
        out.extend(_INPUT_BREAK.split(item.rstrip("\r\n")))
    return out


def trimmed(lines: Sequence[str]) -> list[str]:
    """The lines with leading and trailing whitespace removed, for matching."""
    return [line.strip() for line in lines]


def _iter_block_starts(file_trimmed: Sequence[str], block: Sequence[str]) -> Iterator[int]:
    want = trimmed(block)
    size = len(want)
    if not size or size > len(file_trimmed):
        return
    first = want[0]
    for i in range(len(file_trimmed) - size + 1):
        if file_trimmed[i] == first and list(file_trimmed[i : i + size]) == want:
            yield i


def block_starts(file_trimmed: Sequence[str], block: Sequence[str], *, limit: int | None = None) -> list[int]:
    """0-based indexes where ``block`` matches ``file_trimmed`` line for line, after trimming,
    overlapping ones included; at most ``limit`` of them (a block of one blank line in a huge
    file must not cost a list of millions)."""
    return list(islice(_iter_block_starts(file_trimmed, block), limit))


def context_starts(
    file_trimmed: Sequence[str],
    block: Sequence[str],
    *,
    before: Sequence[str] = (),
    after: Sequence[str] = (),
    limit: int | None = None,
) -> list[int]:
    """Starts of ``block`` that have ``before`` immediately above and ``after`` immediately below
    (no gap, no blank-line tolerance; trimmed comparison); at most ``limit`` of them."""
    above = trimmed(before)
    below = trimmed(after)
    size = len(block)

    def fits(i: int) -> bool:
        if above and (i < len(above) or list(file_trimmed[i - len(above) : i]) != above):
            return False
        return not below or list(file_trimmed[i + size : i + size + len(below)]) == below

    return list(islice(filter(fits, _iter_block_starts(file_trimmed, block)), limit))


def check_no_overlap(starts: Sequence[int], size: int, what: str) -> None:
    """Refuse overlapping matches of a ``size``-line block (``[x, x]`` in ``x, x, x``).

    Raises:
        AmbiguousMatch: two starts are closer than ``size`` lines; the message gives the lines.
    """
    for a, b in pairwise(starts):
        if b - a < size:
            raise AmbiguousMatch(
                f"overlapping matches for {what}: the block matches at lines {a + 1} and {b + 1}, which "
                "share lines; make the block longer or add beforeLines/afterLines"
            )


def _new_ends(old_ends: Sequence[str], count: int, newline: str) -> list[str]:
    """The endings of ``count`` new lines that replace lines ending in ``old_ends``."""
    ends = [old_ends[t] if t < len(old_ends) - 1 else newline for t in range(count)]
    if ends and old_ends:
        ends[-1] = old_ends[-1]
    return ends


def splice_many(doc: TextLines, edits: Iterable[tuple[int, int, Sequence[str]]]) -> TextLines:
    """Replace several spans of lines at once, in one pass over the file's lines.

    Args:
        doc: the lines to edit.
        edits: ``(start, stop, new)`` triples: lines ``start:stop`` (0-based, ``stop``
            exclusive, numbered in ``doc``) become the lines ``new``; sorted by ``start`` and not
            overlapping (one may end where the next starts).

    Returns:
        The edited lines: the same as applying ``splice`` to each span from the bottom up (save
        that the file's final-newline state is kept even where that would empty the file before
        the last span), but in time linear in the file's size however many spans there are.

    Raises:
        ValueError: the spans are not sorted, overlap, or have ``stop < start``.
    """
    lines: list[str] = []
    ends: list[str] = []
    seams: list[int] = []  # new indexes of the lines that may have lost their ending
    pos = 0
    for start, stop, new in edits:
        if start < pos or stop < start:
            raise ValueError(
                f"splice_many needs sorted, non-overlapping spans; got {start}:{stop} after {pos}"
            )
        lines += doc.lines[pos:start]
        ends += doc.ends[pos:start]
        seams.append(len(lines) - 1)  # the line above the span
        lines += new
        ends += _new_ends(doc.ends[start:stop], len(new), doc.newline)
        seams.append(len(lines) - 1)  # the span's last new line
        pos = stop
    lines += doc.lines[pos:]
    ends += doc.ends[pos:]
    if lines:
        for i in seams:
            if 0 <= i < len(lines) - 1 and not ends[i]:
                ends[i] = doc.newline
        if doc.final_newline:
            ends[-1] = ends[-1] or doc.newline
        else:
            ends[-1] = ""
    return TextLines(lines=tuple(lines), ends=tuple(ends), bom=doc.bom, newline=doc.newline)


def splice(doc: TextLines, start: int, stop: int, new: Sequence[str]) -> TextLines:
    """Replace lines ``start:stop`` (0-based, ``stop`` exclusive) with ``new`` lines.

    ``start == stop`` inserts, an empty ``new`` deletes. Endings: replaced lines hand their
    endings to the new lines in order, the last new line takes the last replaced line's ending,
    and any other new line gets ``doc.newline``. Lines outside the span keep theirs, except
    that the file's final-newline state is restored when the edit reaches the end.

    Raises:
        ValueError: ``stop < start``.
    """
    return splice_many(doc, [(start, stop, new)])


def format_line_numbers(numbers: Sequence[int | tuple[int, int]], *, complete: bool = True) -> str:
    """1-based line numbers, or ``(first, last)`` ranges written ``first-last``, joined by ``", "``
    for a message: at most ``LISTED_LINES`` of them, then ``"and N more"``, or ``"and more"``
    when ``complete`` is false (the search stopped at a limit, so how many more is unknown)."""
    shown = [
        str(n) if isinstance(n, int) else str(n[0]) if n[0] == n[1] else f"{n[0]}-{n[1]}"
        for n in numbers[:LISTED_LINES]
    ]
    if not complete:
        shown.append("and more")
    elif len(numbers) > LISTED_LINES:
        shown.append(f"and {len(numbers) - LISTED_LINES} more")
    return ", ".join(shown)


def unique_block(
    file_lines: Sequence[str], file_trimmed: Sequence[str], block: Sequence[str], name: str, path: object
) -> int:
    """The 0-based start of ``block`` in the file, which must match exactly once.

    Args:
        file_lines: the file's lines; ``file_trimmed``: the same, trimmed (``trimmed``).
        block: the wanted lines; ``name`` names them in messages (``anchorMatchLines``) and
            ``path`` the file.

    Raises:
        NoMatch: no match; the message shows the closest region.
        AmbiguousMatch: several matches; the message lists their lines.
    """
    starts = block_starts(file_trimmed, block, limit=LISTED_LINES + 1)
    if not starts:
        raise NoMatch(f"no match found for {name} in {path}. {closest_hint(file_lines, block)}")
    if len(starts) > 1:
        capped = len(starts) > LISTED_LINES
        count = f"more than {LISTED_LINES}" if capped else str(len(starts))
        listed = format_line_numbers([s + 1 for s in starts], complete=not capped)
        raise AmbiguousMatch(
            f"ambiguous match for {name}: found {count} occurrences (at lines {listed}); provide a more "
            "specific match"
        )
    return starts[0]
