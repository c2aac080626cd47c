"""findtext through the SDK client: substring, regex and line blocks, context, limits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.helpers import config_for, connect, error_code, text_of, wire_chars

pytestmark = pytest.mark.anyio

DOC = "".join(f"line {n}\n" for n in range(1, 21)) + "  TODO: fix  \nend\n"


def starts(result: Any) -> list[int]:
    return [m["matchStartLine"] for m in result.structured_content["matches"]]


async def test_a_trimmed_substring_is_found_once_per_line(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("a TODO TODO\nnone\n\tTODO\n", encoding="utf-8")
    result = await client.call_tool("findtext", {"path": "f.txt", "query": "  TODO "})
    assert starts(result) == [1, 3]


async def test_substring_is_case_sensitive(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("todo\nTODO\n", encoding="utf-8")
    result = await client.call_tool("findtext", {"path": "f.txt", "query": "TODO"})
    assert starts(result) == [2]


async def test_regex_applies_to_each_trimmed_line(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("    def f():\nx = 1\n  def g():\n", encoding="utf-8")
    result = await client.call_tool(
        "findtext", {"path": "f.txt", "queryType": "regex", "query": r"^def \w+\("}
    )
    assert starts(result) == [1, 3]


async def test_a_bad_regex_is_an_error_naming_the_syntax(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("x\n", encoding="utf-8")
    result = await client.call_tool("findtext", {"path": "f.txt", "queryType": "regex", "query": "(unclosed"})
    assert error_code(result) == "invalid_arguments"
    assert "invalid regex" in text_of(result) and "RE2" in text_of(result)


async def test_regex_runs_in_linear_time_on_a_pathological_pattern(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("a" * 100_000 + "b\n", encoding="utf-8")
    with anyio.fail_after(60):  # a backtracking engine would not finish at all
        result = await client.call_tool(
            "findtext", {"path": "f.txt", "queryType": "REGEX", "query": "^(a+)+$"}
        )
    assert not result.is_error and starts(result) == []


async def test_line_block_matches_trimmed_lines_and_spans_them(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("a\n  b\nc\nb\nc\n", encoding="utf-8")
    result = await client.call_tool(
        "findtext", {"path": "f.txt", "queryType": "lineblock", "matchLines": ["b", "c"], "contextLines": 0}
    )
    matches = result.structured_content["matches"]
    assert [(m["matchStartLine"], m["matchEndLine"]) for m in matches] == [(2, 3), (4, 5)]


async def test_overlapping_line_blocks_are_refused(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("x\nx\nx\n", encoding="utf-8")
    result = await client.call_tool(
        "findtext", {"path": "f.txt", "queryType": "lineBlock", "matchLines": ["x", "x"]}
    )
    assert error_code(result) == "ambiguous_match" and "overlapping matches" in text_of(result)


async def test_context_defaults_to_five_lines_clamped_to_the_file(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text(DOC, encoding="utf-8")
    result = await client.call_tool("findtext", {"path": "f.txt", "query": "TODO"})
    window = result.structured_content["matches"][0]["matchedLinesWithContext"]
    assert [line["lineNumber"] for line in window] == [16, 17, 18, 19, 20, 21, 22]
    assert window[5]["text"] == "  TODO: fix  "
    assert "21: TODO" not in text_of(result) and "21:   TODO: fix" in text_of(result)


async def test_windows_of_nearby_matches_may_repeat_lines(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("m\nx\nm\n", encoding="utf-8")
    result = await client.call_tool("findtext", {"path": "f.txt", "query": "m", "contextLines": 1})
    windows = [
        [ln["lineNumber"] for ln in m["matchedLinesWithContext"]]
        for m in result.structured_content["matches"]
    ]
    assert windows == [[1, 2], [2, 3]]


async def test_context_lines_and_max_matches_over_their_limits_are_refused(
    client: Client, tmp_path: Path
) -> None:
    (tmp_path / "f.txt").write_text("x\n", encoding="utf-8")
    context = await client.call_tool("findtext", {"path": "f.txt", "query": "x", "contextLines": 2001})
    assert error_code(context) == "invalid_arguments" and "contextLines" in text_of(context)
    many = await client.call_tool("findtext", {"path": "f.txt", "query": "x", "maxMatches": 501})
    assert error_code(many) == "invalid_arguments" and "maxMatches" in text_of(many)


async def test_a_result_over_the_budget_is_cut_and_says_so(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("".join(f"hit {n} {'z' * 80}\n" for n in range(200)), encoding="utf-8")
    async with connect(config_for(tmp_path, limits={"max_result_chars": 3000})) as client:
        result = await client.call_tool("findtext", {"path": "f.txt", "query": "hit", "maxMatches": 100})
    data = result.structured_content
    assert not result.is_error and data["truncated"] and 0 < data["matchesReturned"] < 100
    assert "reduce contextLines" in text_of(result) and len(text_of(result)) < 3500


async def test_a_line_over_the_budget_is_cut_in_the_structured_result_too(tmp_path: Path) -> None:
    long = "x" * 200_000 + " TODO"
    (tmp_path / "f.txt").write_text(f"before\n{long}\nafter\n", encoding="utf-8")
    async with connect(config_for(tmp_path, limits={"max_result_chars": 2000})) as client:
        result = await client.call_tool("findtext", {"path": "f.txt", "query": "TODO"})
    data = result.structured_content
    assert not result.is_error and data["truncated"] and data["matchesReturned"] == 1
    window = data["matches"][0]["matchedLinesWithContext"]
    assert [line["lineNumber"] for line in window] == [2]
    assert 500 < len(window[0]["text"]) < 1000 and long.startswith(window[0]["text"])
    assert wire_chars(result) <= 2000
    assert f"line 2 shows {len(window[0]['text'])} of its {len(long)} characters" in text_of(result)


async def test_one_window_over_4000_lines_keeps_as_much_context_as_fits(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("".join(f"l{n}\n" for n in range(1, 5001)), encoding="utf-8")
    async with connect(config_for(tmp_path, limits={"max_result_chars": 400_000})) as client:
        arguments = {"path": "f.txt", "query": "l2500", "contextLines": 2000}
        result = await client.call_tool("findtext", arguments)
    data = result.structured_content
    assert not result.is_error and data["truncated"] and data["matchesReturned"] == 1
    window = data["matches"][0]["matchedLinesWithContext"]
    assert [line["lineNumber"] for line in window] == list(range(501, 4500))  # 1999 lines each side
    assert "its context was cut to 1999 line(s) each side" in text_of(result)


async def test_reached_max_matches_only_when_more_exist(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("x\nx\nx\n", encoding="utf-8")
    exact = await client.call_tool("findtext", {"path": "f.txt", "query": "x", "maxMatches": 3})
    assert (
        exact.structured_content["matchesReturned"] == 3 and not exact.structured_content["reachedMaxMatches"]
    )
    fewer = await client.call_tool("findtext", {"path": "f.txt", "query": "x", "maxMatches": 2})
    assert fewer.structured_content["matchesReturned"] == 2 and fewer.structured_content["reachedMaxMatches"]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"query": "  "}, "query is required for queryType substring"),
        ({"queryType": "regex"}, "query is required for queryType regex"),
        ({"query": "x", "matchLines": ["x"]}, "matchLines is only for queryType lineBlock"),
        ({"queryType": "lineBlock", "query": "x", "matchLines": ["x"]}, "query must be empty"),
        ({"queryType": "lineBlock"}, "matchLines is required"),
        ({"queryType": "fuzzy", "query": "x"}, "queryType"),
    ],
)
async def test_argument_mixes_are_refused(
    client: Client, tmp_path: Path, arguments: dict[str, Any], message: str
) -> None:
    (tmp_path / "f.txt").write_text("x\n", encoding="utf-8")
    result = await client.call_tool("findtext", {"path": "f.txt", **arguments})
    assert error_code(result) == "invalid_arguments" and message in text_of(result)


async def test_an_empty_file_or_no_match_is_an_empty_result(client: Client, tmp_path: Path) -> None:
    (tmp_path / "e.txt").write_bytes(b"")
    (tmp_path / "f.txt").write_text("abc\n", encoding="utf-8")
    for name in ("e.txt", "f.txt"):
        result = await client.call_tool("findtext", {"path": name, "query": "zzz"})
        assert not result.is_error
        assert (
            result.structured_content["matchesReturned"] == 0 and result.structured_content["matches"] == []
        )


async def test_findtext_refuses_a_file_that_is_not_utf8(client: Client, tmp_path: Path) -> None:
    (tmp_path / "l1.txt").write_bytes("caf\xe9\n".encode("latin-1"))
    result = await client.call_tool("findtext", {"path": "l1.txt", "query": "caf"})
    assert error_code(result) == "unsupported_content" and "not valid UTF-8" in text_of(result)


async def test_matches_over_the_budget_stay_in_it_with_text_and_structure_cut_alike(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("".join(f'TODO "{n}" \\ {"w" * (n % 90)}\n' for n in range(3000)))
    async with connect(config_for(tmp_path, limits={"max_result_chars": 20_000})) as client:
        result = await client.call_tool(
            "findtext", {"path": "f.txt", "query": "TODO", "maxMatches": 500, "contextLines": 0}
        )
    data = result.structured_content
    assert wire_chars(result) <= 20_000 and data["truncated"] and 50 < data["matchesReturned"] < 500
    last = data["matches"][-1]["matchStartLine"]
    assert f"-- match {data['matchesReturned']}: line {last}" in text_of(result)
