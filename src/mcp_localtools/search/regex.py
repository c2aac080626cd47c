"""The search pattern: validation, path matching, and line matching on bytes with RE2.

Patterns use the syntax RE2 and Rust's regex crate share (linear time: no backreferences or
look-around, so no catastrophic backtracking). Every pattern is compiled with RE2 here, whichever
engine searches content, so an invalid one fails the same way for both. Matching is per line:
a match never spans a newline, ``^``/``$`` and ``\\A``/``\\z`` match at line boundaries.

Known difference between the engines: ripgrep's ``\\w``, ``\\d``, ``\\s`` and ``\\b`` are
Unicode-aware, RE2's are ASCII-only; on ASCII text the two agree.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from mcp_localtools.errors import InvalidArguments, RegexError
from mcp_localtools.regexes import compile_re2
from mcp_localtools.search.line import LINE_WIDTH, Line

__all__ = ["ContentRegex", "check_pattern", "compile_path_regex"]

_MAX_MEM = 64 * 1024 * 1024
_NL = 0x0A


_NEWLINE_ESCAPE = re.compile(r"(?<!\\)(?:\\\\)*\\n")
"""A ``\\n`` escape: a backslash and ``n`` after an even number of backslashes (``\\\\n`` is an
escaped backslash, then the letter)."""


def check_pattern(pattern: str, *, fixed_strings: bool = False) -> None:
    """Refuse what no engine can search for.

    Args:
        pattern: the search pattern.
        fixed_strings: the pattern is literal text, where a backslash is only a backslash.

    Raises:
        InvalidArguments: the pattern is empty, contains a NUL or a newline character, or (as a
            regex) a ``\\n`` escape.
    """
    if not pattern:
        raise InvalidArguments("pattern is required: give a regular expression (or literal text)")
    if "\n" in pattern or (not fixed_strings and _NEWLINE_ESCAPE.search(pattern)):
        raise InvalidArguments(
            "the pattern contains a newline: matching is line by line, so a match cannot span lines"
        )
    if "\x00" in pattern:
        raise InvalidArguments("the pattern contains a NUL byte")


def _compile(source: str | bytes, pattern: str, case_sensitive: bool, fixed_strings: bool) -> Any:
    try:
        return compile_re2(
            source, case_sensitive=case_sensitive, literal=fixed_strings, never_nl=True, max_mem=_MAX_MEM
        )
    except RegexError as exc:
        raise InvalidArguments(
            f"invalid regex {pattern!r}: {exc.reason}; the syntax is RE2's "
            "(no backreferences or look-around); pass fixedStrings=true to search for the text literally"
        ) from exc


def compile_path_regex(pattern: str, *, case_sensitive: bool, fixed_strings: bool) -> Any:
    """An RE2 object matching display paths (``str``) with ``.search``.

    Raises:
        InvalidArguments: the pattern is invalid.
    """
    check_pattern(pattern, fixed_strings=fixed_strings)
    return _compile(pattern if fixed_strings else f"(?m){pattern}", pattern, case_sensitive, fixed_strings)


@dataclass(frozen=True, slots=True)
class _Hit:
    number: int
    start: int
    end: int


class ContentRegex:
    """A pattern compiled for searching file contents (bytes), line by line.

    Raises:
        InvalidArguments: the pattern is invalid.
    """

    def __init__(self, pattern: str, *, case_sensitive: bool, fixed_strings: bool) -> None:
        check_pattern(pattern, fixed_strings=fixed_strings)
        source = pattern.encode("utf-8")
        source = source if fixed_strings else b"(?m)" + source
        self._regex = _compile(source, pattern, case_sensitive, fixed_strings)
        # \A and \z anchor at the haystack's ends: search each line as its own haystack.
        self._per_line = not fixed_strings and ("\\A" in pattern or "\\z" in pattern)

    def _hits(self, data: bytes) -> Iterator[_Hit]:
        """The matching lines of ``data``, in order."""
        size = len(data)
        number = 1
        counted = 0  # newlines before this offset are counted in number
        pos = 0
        search = self._regex.search
        while pos < size:
            if self._per_line:
                end = data.find(b"\n", pos)
                end = size if end < 0 else end
                match = search(data[pos:end])
                if match is not None:
                    number += data.count(b"\n", counted, pos)
                    counted = pos
                    yield _Hit(number, pos, end)
                pos = end + 1
                continue
            match = search(data, pos)
            if match is None:
                return
            first = match.start()
            newline = data.rfind(b"\n", pos, first)
            start = newline + 1 if newline >= 0 else pos
            if start == size and (size == 0 or data[-1] == _NL):
                return  # an empty match after the final newline is not on a line
            end = data.find(b"\n", first)
            end = size if end < 0 else end
            number += data.count(b"\n", counted, start)
            counted = start
            yield _Hit(number, start, end)
            pos = end + 1

    def first_match(self, line: bytes) -> int | None:
        """Byte offset of the first match in one line (without its newline), or None."""
        match = self._regex.search(line)
        return None if match is None else int(match.start())

    def any_line(self, data: bytes) -> bool:
        """Whether a line of ``data`` has a match (the search stops at the first)."""
        return next(self._hits(data), None) is not None

    def count(self, data: bytes) -> int:
        """Number of lines of ``data`` with a match."""
        return sum(1 for _ in self._hits(data))

    def occurrences(self, data: bytes) -> int:
        """Number of matches in ``data``, line by line: several on one line count apart, and no
        match spans a line break (as ``rg --count-matches``)."""
        total = 0
        for hit in self._hits(data):
            line = data[hit.start : hit.end]
            total += (
                sum(1 for _ in self._regex.finditer(line))
                if self._per_line
                else sum(1 for _ in self._regex.finditer(data, hit.start, hit.end))
            )
        return total

    def lines(self, data: bytes, context: int, max_lines: int | None = None) -> tuple[int, tuple[Line, ...]]:
        """The matching lines of ``data`` and ``context`` lines around each, in line order; with
        ``max_lines``, only those of the first ``max_lines`` matching lines (as
        ``line.cap_lines`` cuts them), the rest counted.

        Returns:
            ``(number of matching lines, lines)``.
        """
        size = len(data)
        found: dict[int, Line] = {}

        def line_at(number: int, start: int, is_match: bool) -> tuple[Line, int]:
            end = data.find(b"\n", start)
            end = size if end < 0 else end
            width = end - start + (1 if end < size else 0)
            text = data[start:end] if width <= LINE_WIDTH else None
            return Line(number, start, is_match, text), end

        matches = 0
        following: int | None = None  # the first matching line past max_lines
        for hit in self._hits(data):
            matches += 1
            if following is not None:
                continue
            if max_lines is not None and matches > max_lines:
                following = hit.number
                continue
            found[hit.number], _ = line_at(hit.number, hit.start, True)
            start = hit.start
            for back in range(1, context + 1):  # the lines before, nearest first
                if start == 0:
                    break
                start = data.rfind(b"\n", 0, start - 1) + 1
                if hit.number - back not in found:
                    found[hit.number - back], _ = line_at(hit.number - back, start, False)
            end = hit.end
            for ahead in range(1, context + 1):
                start = end + 1
                if start >= size:
                    break
                line, end = line_at(hit.number + ahead, start, False)
                if hit.number + ahead not in found:
                    found[hit.number + ahead] = line
        kept = sorted(number for number in found if following is None or number < following)
        return matches, tuple(found[number] for number in kept)
