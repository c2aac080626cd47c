"""replacetextlines through the SDK client: blocks with their context, counts, what a failed match
shows, newline styles."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from mcp_localtools.config import LimitsConfig
from mcp_localtools.files.locks import FileLocks
from mcp_localtools.policy.paths import PathPolicy
from mcp_localtools.tools.text.replacetextlines import ReplaceTextLinesArgs, replace_text_lines
from tests.helpers import best_cpu_seconds, error_code, text_of

pytestmark = pytest.mark.anyio

SECTIONS = (
    "## A\n<!-- A START -->\nTODO: old\n<!-- A END -->\n\n## B\n<!-- B START -->\nTODO: old\n<!-- B END -->\n"
)


async def replace(client: Client, **arguments: Any) -> Any:
    return await client.call_tool("replacetextlines", {"path": "f.txt", **arguments})


async def test_match_lines_and_replace_with_lines_are_required(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("a\n", encoding="utf-8")
    no_match = await replace(client, matchLines=[], replaceWithLines=["x"])
    assert error_code(no_match) == "invalid_arguments" and "matchLines" in text_of(no_match)
    absent = await replace(client, matchLines=["a"])
    assert error_code(absent) == "invalid_arguments" and "replaceWithLines: required" in text_of(absent)
    empty = await replace(client, matchLines=["a"], replaceWithLines=[])
    assert error_code(empty) == "invalid_arguments"
    assert "deletion is not supported here, use deletetextlines" in text_of(empty)
    assert (tmp_path / "f.txt").read_text(encoding="utf-8") == "a\n"


async def test_an_empty_string_replacement_leaves_one_blank_line(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("a\nb\nc\n", encoding="utf-8")
    await replace(client, matchLines=["b"], replaceWithLines=[""])
    assert (tmp_path / "f.txt").read_bytes() == b"a\n\nc\n"


async def test_expected_replacements_below_one_is_refused(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("a\n", encoding="utf-8")
    result = await replace(client, matchLines=["a"], replaceWithLines=["b"], expectedReplacements=0)
    assert error_code(result) == "invalid_arguments" and "expectedReplacements" in text_of(result)


async def test_context_must_sit_directly_around_and_is_not_modified(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("ctx\n\nt\nctx\nt\n", encoding="utf-8")
    result = await replace(client, matchLines=["t"], replaceWithLines=["T"], beforeLines=["  ctx"])
    assert result.structured_content["replacedAtLines"] == [5]
    assert (tmp_path / "f.txt").read_bytes() == b"ctx\n\nt\nctx\nT\n"


async def test_overlapping_candidates_are_refused(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("x\nx\nx\n", encoding="utf-8")
    result = await replace(client, matchLines=["x", "x"], replaceWithLines=["y"])
    assert error_code(result) == "ambiguous_match" and "overlapping matches" in text_of(result)
    assert (tmp_path / "f.txt").read_bytes() == b"x\nx\nx\n"


async def test_a_count_mismatch_lists_the_lines_and_changes_nothing(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text(SECTIONS, encoding="utf-8")
    before = (tmp_path / "f.txt").read_bytes()
    result = await replace(client, matchLines=["TODO: old"], replaceWithLines=["TODO: new"])
    assert error_code(result) == "ambiguous_match"
    assert "replace match count mismatch: expected 1, found 2 (at lines 3, 8)" in text_of(result)
    assert "tighter beforeLines/afterLines" in text_of(result)
    assert (tmp_path / "f.txt").read_bytes() == before


async def test_no_match_shows_the_closest_region(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text(SECTIONS, encoding="utf-8")
    result = await replace(client, matchLines=["TODO: olde"], replaceWithLines=["x"])
    assert error_code(result) == "no_match" and "expected 1, found 0" in text_of(result)
    assert "closest region is line 3" in text_of(result)


async def test_a_block_found_without_its_context_says_so(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text(SECTIONS, encoding="utf-8")
    result = await replace(
        client, matchLines=["TODO: old"], replaceWithLines=["x"], afterLines=["<!-- C END -->"]
    )
    assert error_code(result) == "no_match"
    assert "occurs at lines 3, 8, but not with the given beforeLines/afterLines" in text_of(result)


async def test_a_block_found_hundreds_of_times_without_its_context_lists_200_and_says_more(
    client: Client, tmp_path: Path
) -> None:
    (tmp_path / "f.txt").write_text("t\n" * 300, encoding="utf-8")
    result = await replace(client, matchLines=["t"], replaceWithLines=["x"], afterLines=["nope"])
    assert error_code(result) == "no_match" and "occurs at lines 1, 2, 3, " in text_of(result)
    assert ", 199, 200, and more, but not with the given beforeLines/afterLines" in text_of(result)


async def test_all_matches_are_replaced_and_reported_by_original_line(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("x\na\nx\nb\nx\n", encoding="utf-8")
    result = await replace(client, matchLines=["x"], replaceWithLines=["y1", "y2"], expectedReplacements=3)
    data = result.structured_content
    assert data["replacementsMade"] == 3 and data["replacedAtLines"] == [1, 3, 5]
    assert (tmp_path / "f.txt").read_bytes() == b"y1\ny2\na\ny1\ny2\nb\ny1\ny2\n"


async def test_replacement_lines_are_verbatim_and_crlf_is_kept(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"def f():\r\n    return 1\r\nend")
    await replace(client, matchLines=["return 1"], replaceWithLines=["\treturn  2 "])
    assert (tmp_path / "f.txt").read_bytes() == b"def f():\r\n\treturn  2 \r\nend"


async def test_the_section_b_scenario_changes_only_section_b(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text(SECTIONS, encoding="utf-8")
    result = await replace(
        client,
        matchLines=["TODO: old"],
        replaceWithLines=["TODO: new"],
        beforeLines=["<!-- B START -->"],
        afterLines=["<!-- B END -->"],
    )
    assert result.structured_content["replacedAtLines"] == [8]
    assert (tmp_path / "f.txt").read_text(encoding="utf-8") == SECTIONS.replace(
        "B START -->\nTODO: old", "B START -->\nTODO: new"
    )


@pytest.mark.slow  # a ratio of CPU times (best of two runs): -m 'not slow' leaves it out
def test_replacing_many_blocks_takes_time_linear_in_their_number(tmp_path: Path) -> None:
    """Four times the blocks must not cost sixteen times the time (each block used to copy every
    line of the file: 20k blocks took 7 s or more, 40k now take well under 1 s); CPU time
    is what a busy machine disturbs least, and the slack covers the rest."""
    paths = PathPolicy.create([tmp_path])

    def replace_all(count: int) -> Callable[[], object]:
        def run() -> None:
            (tmp_path / "f.txt").write_text("x\ny\n" * count, encoding="utf-8")
            args = ReplaceTextLinesArgs.model_validate(
                {
                    "path": "f.txt",
                    "matchLines": ["x"],
                    "replaceWithLines": ["z"],
                    "expectedReplacements": count,
                }
            )
            replace_text_lines(args, paths=paths, limits=LimitsConfig(), locks=FileLocks())

        return run

    replace_all(3)()
    assert (tmp_path / "f.txt").read_text(encoding="utf-8") == "z\ny\n" * 3
    small, big = best_cpu_seconds(replace_all(10_000)), best_cpu_seconds(replace_all(40_000))
    assert big < 8 * small + 0.5 and big < 5, f"10k blocks: {small:.2f} s, 40k blocks: {big:.2f} s"
