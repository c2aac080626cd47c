"""The result budget's search for a payload that fits (``results.fit_within``), its last guard
(``results.enforce_budget``) and how it counts a copy (``json_chars_around``)."""

from __future__ import annotations

import json

from hypothesis import example, given
from hypothesis import strategies as st

from mcp_localtools.results import (
    TextContent,
    ToolResult,
    enforce_budget,
    fit_within,
    json_chars,
    json_chars_around,
    wire_chars,
)


def test_a_payload_cut_back_to_the_same_line_break_twice_does_not_collapse_to_nothing() -> None:
    """A payload cut at line breaks can come out the same size for two limits (the lines are
    long): that step used to read as a flat slope and send the limit to 0 (an edit's whole diff
    dropped from its result)."""
    lines = ["x" * 9999 + "\n"] * 10

    def build(limit: int) -> ToolResult:
        kept, size = [], 0
        for line in lines:
            if size + len(line) > limit:
                break
            kept.append(line)
            size += len(line)
        payload = "".join(kept)
        return ToolResult(content=(TextContent(payload), TextContent(payload)))

    result = fit_within(build, 70_000, 49_000)  # 40,000 x 2 over; 42,017 gives 40,000 again
    assert wire_chars(result) == 60_000


def test_the_last_guard_cuts_inside_a_list_of_one_item_instead_of_emptying_it() -> None:
    """A shellcommand whose one command was a 50 KB heredoc came back as ``results: []`` with
    ``is_error`` false: the guard halved the longest list, the list of its one result, to nothing."""
    command = "cat > f <<'EOF'\n" + "a line\n" * 7000 + "EOF"
    structured = {"sessionID": "s", "results": [{"command": command, "stdout": "done\n"}], "truncated": False}
    result = ToolResult(content=(TextContent(json_text(structured)),), structured=structured)
    cut = enforce_budget(result, 20_000)
    assert cut.structured is not None and wire_chars(cut) <= 20_000
    assert len(cut.structured["results"]) == 1
    assert cut.structured["results"][0]["stdout"] == "done\n"
    assert cut.structured["results"][0]["command"].endswith("…[cut]")


def json_text(data: object) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


@given(st.text(), st.text(max_size=20))
@example("a lone surrogate \udc80 is counted by the json module", "")
def test_json_chars_around_a_long_string_counts_what_json_chars_counts(text: str, other: str) -> None:
    data = {"path": other, "content": text, "startLine": 3, "truncated": True}
    assert json_chars_around(data, "content") == json_chars(data)
