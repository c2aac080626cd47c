"""The result budget's search for a payload that fits (``results.fit_within``)."""

from __future__ import annotations

from mcp_localtools.results import TextContent, ToolResult, fit_within, wire_chars


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
