"""The search pattern's checks: what no engine can search for is refused, and nothing more."""

from __future__ import annotations

import pytest

from mcp_localtools.errors import InvalidArguments
from mcp_localtools.search.regex import ContentRegex, check_pattern, compile_path_regex


@pytest.mark.parametrize("pattern", ["\\n", "a\\nb", "\\\\\\n", "[^\\n]", "a\nb"])
def test_a_regex_with_a_newline_or_a_newline_escape_is_refused(pattern: str) -> None:
    with pytest.raises(InvalidArguments, match="newline"):
        check_pattern(pattern)


def test_literal_text_with_a_newline_character_is_refused() -> None:
    with pytest.raises(InvalidArguments, match="newline"):
        check_pattern("a\nb", fixed_strings=True)


@pytest.mark.parametrize(
    ("pattern", "matching_lines"),
    [("\\\\n", [1]), ("x[^\\\\n]y", [4]), ("x\\\\\\\\n", [])],
)
def test_an_escaped_backslash_before_n_is_not_a_newline_escape(
    pattern: str, matching_lines: list[int]
) -> None:
    check_pattern(pattern)
    compile_path_regex(pattern, case_sensitive=True, fixed_strings=False)
    regex = ContentRegex(pattern, case_sensitive=True, fixed_strings=False)
    count, lines = regex.lines(b"C:\\new\nx\\y\nxny\nxay\n", 0)
    assert [line.number for line in lines] == matching_lines and count == len(matching_lines)


def test_literal_text_may_hold_a_backslash_and_n() -> None:
    check_pattern("\\n", fixed_strings=True)
    regex = ContentRegex("\\n", case_sensitive=True, fixed_strings=True)
    assert regex.count(b"C:\\new\nplain\n") == 1
