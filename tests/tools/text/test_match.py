"""editfile's matching ladder, the closest-region finder and the diff, as pure functions."""

from __future__ import annotations

import re
from collections.abc import Callable
from itertools import pairwise

import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

from mcp_localtools.errors import AmbiguousMatch, NoMatch
from mcp_localtools.tools.text._diff import unified_diff
from mcp_localtools.tools.text._match import apply_edit, find_spans
from mcp_localtools.tools.text._similar import closest_region
from tests.helpers import best_cpu_seconds


def edit(body: str, old: str, new: str, expected: int = 1, newline: str = "\n") -> str:
    return apply_edit(body, old, new, expected=expected, newline=newline, what="oldText", where="f")[0]


def test_an_exact_match_is_replaced_and_nothing_else_changes() -> None:
    assert edit("a = 1\nb = 2\n", "b = 2", "b = 3") == "a = 1\nb = 3\n"
    assert find_spans("xyz", "y") == ("exact", [(1, 2)])


def test_new_text_is_literal_not_a_replacement_pattern() -> None:
    assert edit("x\n", "x", r"\1 \g<0> $& $1") == "\\1 \\g<0> $& $1\n"


def test_lf_old_text_matches_a_crlf_file_and_the_replacement_gets_crlf() -> None:
    body = "a\r\nb\r\nc\r\n"
    assert find_spans(body, "a\nb\n")[0] == "lineEndings"
    assert edit(body, "a\nb\n", "x\ny\nz\n", newline="\r\n") == "x\r\ny\r\nz\r\nc\r\n"


def test_a_match_that_starts_or_ends_at_a_line_break_takes_the_whole_crlf() -> None:
    body = "a\r\nb\r\n"
    assert edit(body, "a\nb", "q", newline="\r\n") == "q\r\n"
    assert edit(body, "\nb", "", newline="\r\n") == "a\r\n"


def test_an_exact_match_beside_a_crlf_is_replaced_where_it_is_not_where_str_replace_finds_it() -> None:
    # "\n\n" first occurs at offset 2, inside the CRLF ending line 1: not a match (it would leave a
    # stray "\r"); the one match is at offset 3, and only it is replaced.
    assert edit("a\r\n\n\nb\n", "\n\n", "X\n") == "a\r\nX\nb\n"


_CRLF_TEXT = st.lists(st.sampled_from(["a", "\r", "\n", "\r\n"]), min_size=1, max_size=24).map("".join)
# A text and a piece of it (1 to 4 characters) to look for.
_TEXT_AND_PIECE = _CRLF_TEXT.flatmap(
    lambda body: st.integers(0, len(body) - 1).flatmap(
        lambda i: st.integers(i + 1, min(len(body), i + 4)).map(lambda j: (body, body[i:j]))
    )
)


@example(case=("a\r\n\n\nb\n", "\n\n"))
@example(case=("a\r\n\r\n\r", "\r\n\r"))
@given(case=_TEXT_AND_PIECE)
def test_an_exact_edit_replaces_exactly_the_occurrences_that_keep_crlf_pairs_whole(
    case: tuple[str, str],
) -> None:
    """Brute force against apply_edit, whichever way (one str.replace or piece by piece) it goes."""
    body, old = case
    end = len(old)
    starts = [
        at
        for at in range(len(body))
        if body.startswith(old, at)
        and not (at > 0 and body[at - 1 : at + 1] == "\r\n")
        and body[at + end - 1 : at + end + 1] != "\r\n"
    ]
    assume(starts and all(b - a >= end for a, b in pairwise(starts)))
    assert find_spans(body, old) == ("exact", [(at, at + end) for at in starts])
    pieces, done = [], 0
    for at in starts:
        pieces += [body[done:at], "<>"]
        done = at + end
    assert edit(body, old, "<>", expected=len(starts)) == "".join([*pieces, body[done:]])


@pytest.mark.slow  # a ratio of CPU times (best of two runs): -m 'not slow' leaves it out
def test_an_edit_with_many_matches_takes_time_linear_in_their_number() -> None:
    """Four times the matches must not cost sixteen times the time (each match used to copy the
    whole text: 40k matches took 14 s, now 0.2 s); CPU time is
    what a busy machine disturbs least, and the slack covers the rest."""

    def replace_all(count: int) -> Callable[[], object]:
        # A CRLF file and LF oldText: the lineEndings rung, replaced piece by piece.
        body = ("x\r\n" + "y" * 100 + "\r\n") * count
        return lambda: edit(body, "x\ny", "z", expected=count, newline="\r\n")

    assert edit("x\r\nyy\r\n" * 3, "x\ny", "z", expected=3, newline="\r\n") == "zy\r\n" * 3
    small, big = best_cpu_seconds(replace_all(10_000)), best_cpu_seconds(replace_all(40_000))
    assert big < 8 * small + 0.5 and big < 5, f"10k matches: {small:.2f} s, 40k matches: {big:.2f} s"


def test_crlf_in_new_text_becomes_lf_in_an_lf_file() -> None:
    assert edit("a\nb\n", "a", "x\r\ny") == "x\ny\nb\n"


def test_whitespace_tolerant_match_compares_whole_lines_trimmed() -> None:
    body = "def f():\n    return 1\n"
    kind, spans = find_spans(body, "def f():\n  return 1")
    assert kind == "whitespace" and spans == [(0, len(body) - 1)]
    assert edit(body, "def f():\n  return 1\n", "def f():\n    return 2\n") == "def f():\n    return 2\n"


def test_a_blank_old_text_never_matches_tolerantly() -> None:
    with pytest.raises(NoMatch):
        edit("a\n\nb\n", "  \n", "x")


def test_ambiguous_matches_are_refused_listing_every_line() -> None:
    body = "x\ny\nx\nz\nx\n"
    with pytest.raises(AmbiguousMatch) as caught:
        edit(body, "x", "q")
    assert "lines 1, 3, 5" in caught.value.message and "expectedReplacements=3" in caught.value.message
    assert edit(body, "x", "q", expected=3) == "q\ny\nq\nz\nq\n"


def test_fewer_matches_than_expected_are_refused() -> None:
    with pytest.raises(AmbiguousMatch, match="expected 2"):
        edit("x\ny\n", "x", "q", expected=2)


def test_overlapping_matches_are_refused() -> None:
    with pytest.raises(AmbiguousMatch, match="overlapping"):
        edit("aaa", "aa", "b")


def test_a_miss_shows_the_closest_region_with_line_numbers() -> None:
    body = "".join(f"line {n}\n" for n in range(1, 50)) + "    total = price * qty\n    return total\n"
    with pytest.raises(NoMatch) as caught:
        edit(body, "total = price * quantity\nreturn total", "x")
    message = caught.value.message
    assert "lines 50-51" in message and "total = price * qty" in message
    assert "- total = price * quantity" in message


def test_a_miss_with_no_line_in_common_still_finds_the_most_similar_lines() -> None:
    lines = [f"value_{n} = compute({n})" for n in range(200)]
    region = closest_region(lines, ["value_120 = compute(12O)"])
    assert region is not None and region.start == 120


def test_the_closest_region_of_a_large_file_is_found_quickly() -> None:
    lines = [f"item {n}: {'x' * (n % 50)}" for n in range(100_000)]
    region = closest_region(lines, ["item 77777: " + "x" * 27 + "y"])
    assert region is not None and region.start == 77777


def test_the_diff_keeps_file_line_numbers_after_cutting_the_unchanged_head() -> None:
    old = [f"l{n}" for n in range(1, 101)]
    new = [*old[:59], "changed", *old[60:]]
    diff = unified_diff("\n".join(old) + "\n", "\n".join(new) + "\n", name="f.txt")
    assert diff.splitlines()[:3] == ["--- a/f.txt", "+++ b/f.txt", "@@ -57,7 +57,7 @@"]
    assert "-l60\n+changed\n" in diff


def test_the_diff_of_equal_texts_is_empty() -> None:
    assert unified_diff("a\n", "a\n", name="f") == ""


def test_a_mistyped_fragment_of_a_long_line_finds_that_line() -> None:
    lines = [f"    value_{n} = compute(price_{n}, quantity_{n})  # net of tax, rounded" for n in range(500)]
    lines.append("x = 1")
    with pytest.raises(NoMatch) as caught:
        edit("\n".join(lines) + "\n", "compute(price_321, quantiy_321)", "x")
    assert "closest region is line 322 " in caught.value.message


def test_a_line_block_is_compared_as_whole_lines_not_as_a_fragment() -> None:
    region = closest_region(["line 100: abc def", "other"], ["line 100:"])
    assert region is not None and region.start == 0 and region.similarity < 1


def test_a_text_that_matches_thousands_of_places_is_refused_without_listing_them_all() -> None:
    with pytest.raises(AmbiguousMatch) as caught:
        edit("x\n" * 5000, "x", "y")
    message = caught.value.message
    assert "matches more than 200 places" in message and ", and more" in message
    assert "expectedReplacements=" not in message  # the real count is unknown, so no count is suggested


def _lines(text: str) -> list[str]:
    parts = text.split("\n")
    if parts and parts[-1] == "":
        parts.pop()
    return [part[:-1] if part.endswith("\r") else part for part in parts]


def _apply(diff: str, old: list[str]) -> list[str]:
    """Apply a unified diff to ``old`` lines, checking every context and removed line."""
    out: list[str] = []
    at = 0  # next line of old not yet copied
    rows = diff.split("\n")[2:-1]  # not splitlines(): a lone \r is text here
    index = 0
    while index < len(rows):
        header = re.match(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", rows[index])
        assert header, rows[index]
        start, length = int(header[1]), int(header[2] or 1)
        first = start - 1 if length else start  # difflib writes an empty range as the line before it
        out += old[at:first]
        at = first
        index += 1
        while index < len(rows) and not rows[index].startswith("@@"):
            kind, line = rows[index][0], rows[index][1:]
            if kind in " -":
                assert old[at] == line, (at, old[at], line)
                at += 1
            if kind in " +":
                out.append(line)
            index += 1
    return out + old[at:]


_TEXT = st.lists(st.sampled_from(["a", "b", "\n", "\r\n", "xy\n", "\r"]), max_size=80).map("".join)


@given(old=_TEXT, new=_TEXT)
def test_the_diff_turns_the_old_lines_into_the_new_ones(old: str, new: str) -> None:
    diff = unified_diff(old, new, name="f")
    assert (diff == "") == (_lines(old) == _lines(new))
    assert _apply(diff, _lines(old)) == _lines(new)


@given(old=_TEXT, start=st.integers(0, 80), stop=st.integers(0, 80), insert=_TEXT)
def test_the_diff_of_a_local_edit_turns_the_old_lines_into_the_new_ones(
    old: str, start: int, stop: int, insert: str
) -> None:
    start, stop = sorted((min(start, len(old)), min(stop, len(old))))
    new = old[:start] + insert + old[stop:]
    assert _apply(unified_diff(old, new, name="f"), _lines(old)) == _lines(new)
