"""editfile's matching: find ``oldText`` in a file's text and replace it with ``newText``. Pure.

Matching goes down a ladder and stops at the first rung that finds anything:

1. ``exact``: the text occurs verbatim (without cutting a CRLF pair in two).
2. ``lineEndings``: it occurs once CRLF is read as LF on both sides (a model that drops the
   ``\\r`` of a CRLF file still hits).
3. ``whitespace``: whole lines that are equal after trimming leading and trailing whitespace
   per line (and line endings).

The rung's matches must number exactly ``expectedReplacements`` and must not overlap, or the
edit is refused with the line numbers of every match; with no match at all the error shows the
closest region of the file (``_similar.py``). With ``replaceAll`` every match of the rung is
replaced, however many (at least one). ``match="wholeWord"`` takes only exact occurrences not
inside a longer word (no ladder); ``match="regex"`` takes the matches of an RE2 regex (linear
time; empty matches refused), multi-line as in replaceinfiles and searchfiles: ``^`` and ``$``
match at every line's start and end. ``newText`` is inserted literally, except that in regex mode
``\\1`` and ``\\g<name>`` insert groups (``_groups.py``); its line breaks are converted to the
newline style of the region it replaces, so a CRLF file stays CRLF.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import islice, pairwise
from typing import Any, Literal

from mcp_localtools.errors import AmbiguousMatch, InvalidArguments, NoMatch, RegexError
from mcp_localtools.regexes import compile_re2
from mcp_localtools.tools.text._groups import Replacement
from mcp_localtools.tools.text._lines import LISTED_LINES, block_starts, format_line_numbers, trimmed
from mcp_localtools.tools.text._similar import closest_hint

__all__ = ["Applied", "MatchKind", "MatchMode", "apply_edit", "find_spans", "replace_every"]

MatchKind = Literal["exact", "lineEndings", "whitespace", "wholeWord", "regex"]
MatchMode = Literal["literal", "wholeWord", "regex"]


@dataclass(frozen=True, slots=True)
class Applied:
    """One applied edit: how it matched, and the 1-based ``(first, last)`` lines it replaced,
    counted in the text the edit was applied to."""

    kind: MatchKind
    lines: tuple[tuple[int, int], ...]


def _occurrences(text: str, needle: str) -> Iterator[int]:
    at = text.find(needle)
    while at != -1:
        yield at
        at = text.find(needle, at + 1)


def _splits_crlf(body: str, start: int, end: int) -> bool:
    """True when the span cuts a CRLF pair in two (it would leave a stray ``\r``)."""
    return (0 < start < len(body) and body[start - 1 : start + 1] == "\r\n") or (
        0 < end < len(body) and body[end - 1 : end + 1] == "\r\n"
    )


def _line_ending_spans(body: str, old: str, limit: int) -> list[tuple[int, int]]:
    norm_old = old.replace("\r\n", "\n")
    if "\r\n" not in body and norm_old == old:
        return []  # nothing to normalise: the exact rung already answered
    removed = []  # positions in the normalised text where a "\r" was dropped
    for k, at in enumerate(_occurrences(body, "\r\n")):
        removed.append(at - k)
    norm_body = body.replace("\r\n", "\n")

    def original(pos: int) -> int:
        return pos + bisect.bisect_left(removed, pos)

    return [
        (original(at), original(at + len(norm_old)))
        for at in islice(_occurrences(norm_body, norm_old), limit)
    ]


def _body_lines(body: str) -> list[str]:
    raw = body.split("\n")
    return raw[:-1] if raw[-1] == "" else raw


def _whitespace_spans(body: str, old: str, limit: int) -> list[tuple[int, int]]:
    norm_old = old.replace("\r\n", "\n")
    if not norm_old.strip():
        return []  # a blank oldText would match any blank region: too weak to guess
    whole_lines = norm_old.endswith("\n")
    wanted = (norm_old[:-1] if whole_lines else norm_old).split("\n")
    raw = _body_lines(body)
    offsets = [0]
    for line in raw:
        offsets.append(offsets[-1] + len(line) + 1)
    spans = []
    for i in block_starts(trimmed(raw), wanted, limit=limit):
        last = i + len(wanted) - 1
        if whole_lines:
            end = min(offsets[last + 1], len(body))
        else:
            content = raw[last]
            has_break = last < len(raw) - 1 or body.endswith("\n")
            end = offsets[last] + len(content) - (1 if has_break and content.endswith("\r") else 0)
        spans.append((offsets[i], end))
    return spans


def find_spans(body: str, old: str, *, limit: int | None = None) -> tuple[MatchKind, list[tuple[int, int]]]:
    """The first rung of the ladder that finds ``old`` in ``body``, with its matches (at most
    ``limit``) as ``(start, end)`` character spans, overlapping ones included; ``("exact", [])``
    when no rung finds it."""
    most = limit if limit is not None else len(body) + 1
    exact = list(
        islice((at for at in _occurrences(body, old) if not _splits_crlf(body, at, at + len(old))), most)
    )
    if exact:
        return "exact", [(at, at + len(old)) for at in exact]
    spans = _line_ending_spans(body, old, most)
    if spans:
        return "lineEndings", spans
    spans = _whitespace_spans(body, old, most)
    return ("whitespace", spans) if spans else ("exact", [])


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


def _whole_word_spans(body: str, old: str, limit: int) -> list[tuple[int, int]]:
    """Exact occurrences of ``old`` whose word characters at either edge do not continue a word
    of ``body`` (``_expand_args`` does not match inside ``windows_expand_args``)."""
    spans: list[tuple[int, int]] = []
    check_start, check_end = _is_word(old[0]), _is_word(old[-1])
    for at in _occurrences(body, old):
        end = at + len(old)
        if check_start and at > 0 and _is_word(body[at - 1]):
            continue
        if check_end and end < len(body) and _is_word(body[end]):
            continue
        spans.append((at, end))
        if len(spans) >= limit:
            break
    return spans


def compile_regex(pattern: str, what: str) -> Any:
    """``pattern`` compiled by RE2 (linear time), multi-line: ``^`` and ``$`` at every line.

    Raises:
        InvalidArguments: not a valid RE2 regex.
    """
    try:
        return compile_re2(f"(?m){pattern}")
    except RegexError as exc:
        raise InvalidArguments(
            f"{what} is not a valid regex {pattern!r}: {exc.reason} "
            "(RE2 syntax: no backreferences or lookaround)"
        ) from exc


def _regex_matches(regex: Any, body: str, what: str, limit: int | None = None) -> list[Any]:
    """The matches of the compiled ``regex`` in ``body``, in order (at most ``limit``).

    Raises:
        InvalidArguments: a match is empty.
    """
    matches: list[Any] = []
    for found in regex.finditer(body):
        start, end = found.span()
        if start == end:
            raise InvalidArguments(
                f"{what} matches an empty string at offset {start}; make the regex match a character or more"
            )
        matches.append(found)
        if limit is not None and len(matches) >= limit:
            break
    return matches


def _every_literal(body: str, old: str, whole_word: bool) -> list[tuple[int, int]]:
    """Every non-overlapping exact occurrence of ``old`` (with ``whole_word``: not inside a longer word)."""
    spans: list[tuple[int, int]] = []
    check_start, check_end = _is_word(old[0]), _is_word(old[-1])
    at = body.find(old)
    while at != -1:
        end = at + len(old)
        inside = whole_word and (
            (check_start and at > 0 and _is_word(body[at - 1]))
            or (check_end and end < len(body) and _is_word(body[end]))
        )
        if inside:
            at = body.find(old, at + 1)
            continue
        spans.append((at, end))
        at = body.find(old, end)
    return spans


def replace_every(
    body: str, old: str, new: str, match: MatchMode, what: str, new_what: str
) -> tuple[str, int]:
    """``body`` with every non-overlapping match of ``old`` replaced by ``new``, and how many:
    ``literal`` the exact text, ``wholeWord`` the exact text not inside a longer word, ``regex``
    an RE2 regex with ``^``/``$`` at line boundaries whose groups ``new`` may insert (no ladder:
    a rename must be exact). ``what``/``new_what`` name ``old`` and ``new`` in messages.

    Raises:
        InvalidArguments: an invalid regex, one that matches an empty string, or a reference in
            ``new`` to a group the regex does not have.
    """
    pieces: list[str] = []
    done = 0
    if match == "regex":
        regex = compile_regex(old, what)
        template = Replacement.parse(new, regex, new_what)
        found = _regex_matches(regex, body, what)
        for each in found:
            start, end = each.span()
            pieces += (body[done:start], template.expand(each, str))
            done = end
        count = len(found)
    else:
        spans = _every_literal(body, old, whole_word=match == "wholeWord")
        for start, end in spans:
            pieces += (body[done:start], new)
            done = end
        count = len(spans)
    pieces.append(body[done:])
    return "".join(pieces), count


def _line_ranges(body: str, spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    ranges = []
    line, pos = 1, 0
    for start, end in spans:
        line += body.count("\n", pos, start)
        pos = start
        inside = body.count("\n", start, end) - (1 if body[start:end].endswith("\n") else 0)
        ranges.append((line, line + max(inside, 0)))
    return ranges


def _newline_of(region: str, default: str) -> str:
    crlf = region.count("\r\n")
    lf = region.count("\n") - crlf
    if crlf == lf:
        return default
    return "\r\n" if crlf > lf else "\n"


def _literal(new: str, newline: str) -> str:
    text = new.replace("\r\n", "\n")
    return text.replace("\n", "\r\n") if newline == "\r\n" else text


_RUNG_WORDS = {
    "exact": "",
    "wholeWord": " (as a whole word)",
    "regex": " (as a regex)",
    "lineEndings": " (ignoring line endings)",
    "whitespace": " (ignoring leading/trailing whitespace per line)",
}


def apply_edit(
    body: str,
    old: str,
    new: str,
    *,
    expected: int,
    newline: str,
    what: str,
    where: str,
    replace_all: bool = False,
    match: MatchMode = "literal",
    new_what: str = "newText",
) -> tuple[str, Applied]:
    """Replace the ``expected`` matches of ``old`` in ``body`` with ``new`` (with
    ``replace_all``: every match, at least one).

    Args:
        body: the text (without a BOM).
        old, new: the edit's texts.
        expected: how many matches there must be.
        newline: the file's newline style, for a region without line breaks of its own.
        what: how to name the edit in messages (``edits[1].oldText``).
        where: where the text was searched (the path, plus a note for later edits).
        replace_all: replace every match instead of exactly ``expected``.
        match: ``literal`` (the ladder), ``wholeWord`` or ``regex`` (RE2, multi-line; ``new``
            may insert its groups).
        new_what: how to name ``new`` in messages (``edits[1].newText``).

    Raises:
        InvalidArguments: ``match="regex"`` and ``old`` is not a valid RE2 regex, matches an
            empty string, or ``new`` refers to a group it does not have.
        NoMatch: no rung found ``old``; the message shows the closest region.
        AmbiguousMatch: the matches overlap or number other than ``expected``; the message
            lists the lines of each.
    """
    limit = len(body) + 1 if replace_all else expected + LISTED_LINES
    kind: MatchKind
    matches: list[Any] = []
    template: Replacement | None = None
    if match == "wholeWord":
        kind, spans = "wholeWord", _whole_word_spans(body, old, limit)
    elif match == "regex":
        regex = compile_regex(old, what)
        template = Replacement.parse(new, regex, new_what)
        matches = _regex_matches(regex, body, what, limit)
        kind, spans = "regex", [found.span() for found in matches]
    else:
        kind, spans = find_spans(body, old, limit=limit)
    if not spans and match != "literal":
        raise NoMatch(
            f"{what} ({'whole word' if match == 'wholeWord' else 'regex'}) matches nothing in {where}"
        )
    if not spans:
        wanted = old.replace("\r\n", "\n").removesuffix("\n").split("\n")
        hint = closest_hint(_body_lines(body), wanted, fragments=True)
        raise NoMatch(
            f"{what} was not found in {where}, not even ignoring line endings and leading/trailing "
            f"whitespace. {hint}\nCopy the text exactly as it is in the file and try again."
        )
    ranges = _line_ranges(body, spans)
    overlap = any(b[0] < a[1] for a, b in pairwise(spans))
    if overlap or (len(spans) != expected and not replace_all):
        count = f"more than {limit - 1}" if len(spans) == limit else str(len(spans))
        found = f"{count} overlapping places" if overlap else f"{count} places"
        fix = (
            f"or set expectedReplacements={len(spans)} (or replaceAll) to replace them all"
            if not overlap and expected < len(spans) < limit
            else "or check expectedReplacements"
        )
        raise AmbiguousMatch(
            f"{what} matches {found}{_RUNG_WORDS[kind]} in {where}, expected {expected}: lines "
            f"{format_line_numbers(ranges, complete=len(spans) < limit)}. Add neighbouring lines to oldText "
            f"to single one out, {fix}."
        )
    applied = Applied(kind=kind, lines=tuple(ranges))
    if kind == "exact" and not old.startswith("\n") and not old.endswith("\r"):
        # No occurrence can cut a CRLF in two, so the matches are every occurrence, and they do
        # not overlap: str.replace replaces exactly them, with no copy of the pieces in between.
        return body.replace(old, _literal(new, _newline_of(old, newline))), applied
    pieces: list[str] = []
    done = 0
    for k, (start, end) in enumerate(spans):
        literal = partial(_literal, newline=_newline_of(body[start:end], newline))
        pieces += (body[done:start], template.expand(matches[k], literal) if template else literal(new))
        done = end
    pieces.append(body[done:])
    return "".join(pieces), applied
