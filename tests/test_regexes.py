"""``compile_re2``: the one place RE2 is compiled (its options, its error as text)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mcp_localtools.errors import RegexError
from mcp_localtools.regexes import compile_re2

SRC = Path(__file__).resolve().parents[1] / "src" / "mcp_localtools"


def test_a_pattern_re2_refuses_is_a_regex_error_with_re2s_reason_as_text() -> None:
    with pytest.raises(RegexError) as refused:
        compile_re2(r"(a)\1")  # a backreference: RE2 has none
    assert isinstance(refused.value.reason, str) and "escape" in refused.value.reason
    assert isinstance(refused.value, ValueError)


def test_the_options_are_re2s() -> None:
    assert compile_re2("abc", case_sensitive=False).search("xABCx") is not None
    assert compile_re2("abc").search("xABCx") is None
    assert compile_re2("a.c", literal=True).search("abc") is None
    assert compile_re2("a.c", literal=True).search("a.c") is not None
    assert compile_re2(r"a\sb", never_nl=True).search("a\nb") is None
    assert compile_re2(r"a\sb").search("a\nb") is not None
    assert compile_re2(r"\pL{200}") is not None
    with pytest.raises(RegexError, match="too large"):
        compile_re2(r"\pL{200}", max_mem=1 << 16)  # past the memory given


def test_no_other_module_compiles_re2() -> None:
    others = [
        str(path.relative_to(SRC))
        for path in sorted(SRC.rglob("*.py"))
        if path.name != "regexes.py" and re.search(r"^\s*(import re2|from re2 )", path.read_text(), re.M)
    ]
    assert others == [], f"{others} import re2: compile through mcp_localtools.regexes.compile_re2"
