"""readtextrange through the SDK client: marker blocks, numeric ranges and paging."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.helpers import config_for, connect, error_code, text_of, wire_chars

pytestmark = pytest.mark.anyio

DOC = "# Title\n  start  \nbody 1\nbody 2\nend\ntail\n"


def numbers(result: Any) -> list[int]:
    data = result.structured_content
    return list(range(data["startLine"], data["endLine"] + 1)) if data["linesReturned"] else []


async def test_no_markers_returns_the_whole_file(client: Client, tmp_path: Path) -> None:
    (tmp_path / "d.txt").write_text(DOC, encoding="utf-8")
    result = await client.call_tool("readtextrange", {"path": "d.txt"})
    data = result.structured_content
    assert data["linesReturned"] == 6 and data["totalLines"] == 6
    assert data["startLine"] == 1 and data["endLine"] == 6 and "nextStartLine" not in data
    assert "2\t  start  " in text_of(result)


async def test_a_start_marker_reads_to_the_end_with_the_marker(client: Client, tmp_path: Path) -> None:
    (tmp_path / "d.txt").write_text(DOC, encoding="utf-8")
    result = await client.call_tool("readtextrange", {"path": "d.txt", "startMatchLines": ["start"]})
    assert numbers(result) == [2, 3, 4, 5, 6]


async def test_an_end_marker_reads_from_line_one_through_it(client: Client, tmp_path: Path) -> None:
    (tmp_path / "d.txt").write_text(DOC, encoding="utf-8")
    result = await client.call_tool("readtextrange", {"path": "d.txt", "endMatchLines": ["body 2", "end"]})
    assert numbers(result) == [1, 2, 3, 4, 5]


async def test_both_markers_are_included(client: Client, tmp_path: Path) -> None:
    (tmp_path / "d.txt").write_text(DOC, encoding="utf-8")
    result = await client.call_tool(
        "readtextrange", {"path": "d.txt", "startMatchLines": ["start"], "endMatchLines": ["end"]}
    )
    assert numbers(result) == [2, 3, 4, 5]


async def test_an_end_marker_before_the_start_is_refused(client: Client, tmp_path: Path) -> None:
    (tmp_path / "d.txt").write_text(DOC, encoding="utf-8")
    result = await client.call_tool(
        "readtextrange", {"path": "d.txt", "startMatchLines": ["end"], "endMatchLines": ["body 1"]}
    )
    assert error_code(result) == "invalid_arguments"
    assert (
        "endMatchLines occurs before (or overlaps) startMatchLines (start at line 5, end at line 3)"
        in text_of(result)
    )


async def test_a_missing_marker_is_an_error_showing_the_closest_line(client: Client, tmp_path: Path) -> None:
    (tmp_path / "d.txt").write_text(DOC, encoding="utf-8")
    result = await client.call_tool("readtextrange", {"path": "d.txt", "startMatchLines": ["body 3"]})
    assert error_code(result) == "no_match" and "no match found for startMatchLines" in text_of(result)
    assert "closest region is line 3" in text_of(result)


async def test_an_ambiguous_marker_is_an_error_listing_the_lines(client: Client, tmp_path: Path) -> None:
    (tmp_path / "d.txt").write_text("x\ny\nx\n", encoding="utf-8")
    result = await client.call_tool("readtextrange", {"path": "d.txt", "endMatchLines": ["x"]})
    assert error_code(result) == "ambiguous_match"
    assert "ambiguous match for endMatchLines: found 2 occurrences (at lines 1, 3)" in text_of(result)


async def test_a_range_over_the_window_returns_the_first_window_and_where_to_go_on(
    client: Client, tmp_path: Path
) -> None:
    (tmp_path / "big.txt").write_text("".join(f"line {n}\n" for n in range(1, 5001)), encoding="utf-8")
    first = await client.call_tool("readtextrange", {"path": "big.txt"})
    data = first.structured_content
    assert not first.is_error and data["linesReturned"] == 2000 and data["truncated"]
    assert data["nextStartLine"] == 2001 and "startLine=2001" in text_of(first)
    rest = await client.call_tool("readtextrange", {"path": "big.txt", "startLine": 4001})
    assert rest.structured_content["linesReturned"] == 1000 and "nextStartLine" not in rest.structured_content


async def test_exactly_the_window_is_returned_whole(client: Client, tmp_path: Path) -> None:
    (tmp_path / "w.txt").write_text("x\n" * 2000, encoding="utf-8")
    result = await client.call_tool("readtextrange", {"path": "w.txt"})
    assert result.structured_content["linesReturned"] == 2000 and not result.structured_content["truncated"]


async def test_the_result_budget_also_pages(tmp_path: Path) -> None:
    (tmp_path / "wide.txt").write_text(("y" * 200 + "\n") * 100, encoding="utf-8")
    async with connect(config_for(tmp_path, limits={"max_result_chars": 2000})) as client:
        result = await client.call_tool("readtextrange", {"path": "wide.txt"})
    data = result.structured_content
    assert 0 < data["linesReturned"] < 100 and data["nextStartLine"] == data["linesReturned"] + 1
    assert len(text_of(result)) <= 2000


async def test_an_empty_file_returns_no_lines(client: Client, tmp_path: Path) -> None:
    (tmp_path / "e.txt").write_bytes(b"")
    result = await client.call_tool("readtextrange", {"path": "e.txt"})
    data = result.structured_content
    assert data["linesReturned"] == 0 and data["text"] == ""
    assert "startLine" not in data and "endLine" not in data


async def test_lines_come_back_untrimmed_without_their_endings(client: Client, tmp_path: Path) -> None:
    (tmp_path / "c.txt").write_bytes(b"  a  \r\n\tb\r\n")
    result = await client.call_tool("readtextrange", {"path": "c.txt"})
    assert result.structured_content["text"] == "  a  \n\tb"


async def test_numeric_start_and_end_lines_select_a_range(client: Client, tmp_path: Path) -> None:
    (tmp_path / "d.txt").write_text(DOC, encoding="utf-8")
    result = await client.call_tool("readtextrange", {"path": "d.txt", "startLine": 3, "endLine": 4})
    assert numbers(result) == [3, 4]
    past = await client.call_tool("readtextrange", {"path": "d.txt", "startLine": 5, "endLine": 99})
    assert numbers(past) == [5, 6]


async def test_a_marker_and_a_number_can_be_mixed_but_not_on_one_side(client: Client, tmp_path: Path) -> None:
    (tmp_path / "d.txt").write_text(DOC, encoding="utf-8")
    mixed = await client.call_tool(
        "readtextrange", {"path": "d.txt", "startLine": 2, "endMatchLines": ["end"]}
    )
    assert numbers(mixed) == [2, 3, 4, 5]
    both = await client.call_tool(
        "readtextrange", {"path": "d.txt", "startLine": 2, "startMatchLines": ["x"]}
    )
    assert error_code(both) == "invalid_arguments"
    assert "startMatchLines or startLine, not both" in text_of(both)


async def test_bad_line_numbers_are_refused(client: Client, tmp_path: Path) -> None:
    (tmp_path / "d.txt").write_text(DOC, encoding="utf-8")
    past = await client.call_tool("readtextrange", {"path": "d.txt", "startLine": 9})
    assert error_code(past) == "invalid_arguments" and "past the end" in text_of(past)
    backwards = await client.call_tool("readtextrange", {"path": "d.txt", "startLine": 4, "endLine": 2})
    assert error_code(backwards) == "invalid_arguments" and "before startLine" in text_of(backwards)


async def test_the_result_carries_the_sha256_for_a_later_edit(client: Client, tmp_path: Path) -> None:
    import hashlib

    (tmp_path / "d.txt").write_text(DOC, encoding="utf-8")
    result = await client.call_tool("readtextrange", {"path": "d.txt"})
    assert result.structured_content["sha256"] == hashlib.sha256(DOC.encode()).hexdigest()


async def test_a_range_over_the_budget_stays_in_it_and_continues_to_every_line(tmp_path: Path) -> None:
    body = [f'line {n} "q" \\ \t' + "x" * (n % 50) for n in range(6000)]
    (tmp_path / "big.txt").write_text("\n".join(body) + "\n", encoding="utf-8")
    got: list[str] = []
    start = 1
    async with connect(config_for(tmp_path, limits={"max_result_chars": 20_000})) as client:
        while True:
            result = await client.call_tool("readtextrange", {"path": "big.txt", "startLine": start})
            assert wire_chars(result) <= 20_000
            data = result.structured_content
            assert data["startLine"] == start and data["text"].count("\n") + 1 == data["linesReturned"]
            got.extend(data["text"].split("\n"))
            assert f"{data['endLine']}\t{body[data['endLine'] - 1]}" in text_of(result)
            if "nextStartLine" not in data:
                break
            start = data["nextStartLine"]
    assert got == body
