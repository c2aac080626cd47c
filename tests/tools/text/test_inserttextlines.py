"""inserttextlines through the SDK client: start, end, anchors and the lineNumber position."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.helpers import error_code, text_of

pytestmark = pytest.mark.anyio


async def insert(client: Client, **arguments: Any) -> Any:
    return await client.call_tool("inserttextlines", {"path": "f.txt", **arguments})


async def test_lines_to_insert_is_required(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("a\n", encoding="utf-8")
    result = await insert(client, linesToInsert=[])
    assert error_code(result) == "invalid_arguments" and "linesToInsert is required" in text_of(result)
    assert (tmp_path / "f.txt").read_text(encoding="utf-8") == "a\n"


async def test_start_inserts_before_line_one_and_end_appends_after_the_last(
    client: Client, tmp_path: Path
) -> None:
    (tmp_path / "f.txt").write_text("a\nb\n", encoding="utf-8")
    start = await insert(client, position="START", linesToInsert=["0"])
    assert start.structured_content["insertedAtLine"] == 1
    end = await insert(client, linesToInsert=["c"])
    assert end.structured_content["insertedAtLine"] == 4
    assert (tmp_path / "f.txt").read_bytes() == b"0\na\nb\nc\n"


async def test_end_keeps_a_missing_final_newline(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"a\nb")
    await insert(client, linesToInsert=["c", "d"])
    assert (tmp_path / "f.txt").read_bytes() == b"a\nb\nc\nd"


async def test_inserting_into_an_empty_file_adds_no_final_newline(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"")
    result = await insert(client, linesToInsert=["x", "y"])
    assert result.structured_content["insertedAtLine"] == 1
    assert (tmp_path / "f.txt").read_bytes() == b"x\ny"


async def test_an_anchor_with_start_or_end_is_refused(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("a\n", encoding="utf-8")
    for position in ({}, {"position": "start"}):
        result = await insert(client, linesToInsert=["x"], anchorMatchLines=["a"], **position)
        assert error_code(result) == "invalid_arguments"
        assert "anchorMatchLines is only for beforeAnchor/afterAnchor" in text_of(result)
    assert (tmp_path / "f.txt").read_text(encoding="utf-8") == "a\n"


async def test_an_anchor_position_without_an_anchor_names_the_position(
    client: Client, tmp_path: Path
) -> None:
    (tmp_path / "f.txt").write_text("a\n", encoding="utf-8")
    result = await insert(client, position="afterAnchor", linesToInsert=["x"])
    assert error_code(result) == "invalid_arguments"
    assert "afterAnchor needs anchorMatchLines" in text_of(result)


async def test_the_anchor_must_match_exactly_once(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("a\nb\na\n", encoding="utf-8")
    missing = await insert(client, position="afterAnchor", anchorMatchLines=["zzz"], linesToInsert=["x"])
    assert error_code(missing) == "no_match" and "no match found for anchorMatchLines" in text_of(missing)
    twice = await insert(client, position="beforeAnchor", anchorMatchLines=["a"], linesToInsert=["x"])
    assert error_code(twice) == "ambiguous_match"
    assert "ambiguous match for anchorMatchLines: found 2 occurrences (at lines 1, 3)" in text_of(twice)
    assert (tmp_path / "f.txt").read_bytes() == b"a\nb\na\n"


async def test_before_and_after_an_anchor_block(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("h\n  <a>\n  </a>\nt\n", encoding="utf-8")
    after = await insert(
        client, position="afteranchor", anchorMatchLines=["<a>", "</a>"], linesToInsert=["  new"]
    )
    assert after.structured_content["insertedAtLine"] == 4
    assert after.structured_content["anchorMatchedAtLine"] == 2
    before = await insert(
        client, position="beforeAnchor", anchorMatchLines=["<a>\n</a>"], linesToInsert=["top"]
    )
    assert before.structured_content["insertedAtLine"] == 2
    assert (tmp_path / "f.txt").read_bytes() == b"h\ntop\n  <a>\n  </a>\n  new\nt\n"


async def test_an_unknown_position_is_refused(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("a\n", encoding="utf-8")
    result = await insert(client, position="middle", linesToInsert=["x"])
    assert error_code(result) == "invalid_arguments" and "position" in text_of(result)


async def test_lines_are_verbatim_and_a_crlf_file_stays_crlf(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"a\r\nb\r\n")
    await insert(client, position="afterAnchor", anchorMatchLines=["a"], linesToInsert=["  x\ty  ", "z\nw"])
    assert (tmp_path / "f.txt").read_bytes() == b"a\r\n  x\ty  \r\nz\r\nw\r\nb\r\n"


async def test_line_number_inserts_so_the_first_new_line_gets_that_number(
    client: Client, tmp_path: Path
) -> None:
    (tmp_path / "f.txt").write_text("1\n2\n3\n", encoding="utf-8")
    result = await insert(client, lineNumber=2, linesToInsert=["x"])
    assert result.structured_content["insertedAtLine"] == 2
    await insert(client, lineNumber=5, linesToInsert=["end"])
    assert (tmp_path / "f.txt").read_bytes() == b"1\nx\n2\n3\nend\n"


async def test_line_number_past_the_end_or_mixed_with_another_position_is_refused(
    client: Client, tmp_path: Path
) -> None:
    (tmp_path / "f.txt").write_text("1\n", encoding="utf-8")
    past = await insert(client, lineNumber=3, linesToInsert=["x"])
    assert error_code(past) == "invalid_arguments"
    assert "past the end" in text_of(past) and "2 appends" in text_of(past)
    mixed = await insert(client, position="start", lineNumber=1, linesToInsert=["x"])
    assert error_code(mixed) == "invalid_arguments"
    assert "lineNumber is not used with position start" in text_of(mixed)
    missing = await insert(client, position="lineNumber", linesToInsert=["x"])
    assert error_code(missing) == "invalid_arguments" and "needs lineNumber" in text_of(missing)
    assert (tmp_path / "f.txt").read_bytes() == b"1\n"


async def test_the_result_has_the_diff_and_the_new_sha256(client: Client, tmp_path: Path) -> None:
    import hashlib

    (tmp_path / "f.txt").write_text("a\n", encoding="utf-8")
    result = await insert(client, linesToInsert=["b"])
    data = result.structured_content
    assert data["sha256"] == hashlib.sha256(b"a\nb\n").hexdigest() and data["changed"]
    assert "+b" in data["diff"] and "+b" in text_of(result)


async def test_with_clamp_a_line_number_past_the_end_appends_as_llmc_does(
    client: Client, tmp_path: Path
) -> None:
    (tmp_path / "f.txt").write_text("1\n2\n", encoding="utf-8")
    result = await insert(client, lineNumber=99, clamp=True, linesToInsert=["x"])
    assert error_code(result) is None, text_of(result)
    assert result.structured_content["insertedAtLine"] == 3
    assert (tmp_path / "f.txt").read_bytes() == b"1\n2\nx\n"
    refused = await insert(client, lineNumber=99, linesToInsert=["y"])
    assert error_code(refused) == "invalid_arguments" and "clamp=true" in text_of(refused)
    unused = await insert(client, position="start", clamp=True, linesToInsert=["y"])
    assert error_code(unused) is None, text_of(unused)  # clamp only changes lineNumber
