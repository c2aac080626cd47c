"""deletetextlines through the SDK client: blocks with their context, counts, newline styles;
deleting every line leaves an empty file."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from mcp_localtools.config import LimitsConfig
from mcp_localtools.files.locks import FileLocks
from mcp_localtools.policy.paths import PathPolicy
from mcp_localtools.tools.text.deletetextlines import DeleteTextLinesArgs, delete_text_lines
from tests.helpers import best_cpu_seconds, error_code, text_of

pytestmark = pytest.mark.anyio


async def delete(client: Client, **arguments: Any) -> Any:
    return await client.call_tool("deletetextlines", {"path": "f.txt", **arguments})


async def test_match_lines_is_required(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("a\n", encoding="utf-8")
    result = await delete(client)
    assert error_code(result) == "invalid_arguments" and "matchLines" in text_of(result)


async def test_a_count_mismatch_changes_nothing(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("x\ny\nx\n", encoding="utf-8")
    result = await delete(client, matchLines=["x"])
    assert error_code(result) == "ambiguous_match"
    assert "delete match count mismatch: expected 1, found 2 (at lines 1, 3)" in text_of(result)
    assert (tmp_path / "f.txt").read_bytes() == b"x\ny\nx\n"
    zero = await delete(client, matchLines=["x"], expectedDeletions=0)
    assert error_code(zero) == "invalid_arguments" and "expectedDeletions" in text_of(zero)


async def test_context_and_expected_deletions_choose_the_blocks_deleted(
    client: Client, tmp_path: Path
) -> None:
    (tmp_path / "f.txt").write_text("A\nx\nB\nx\nA\nx\n", encoding="utf-8")
    result = await delete(client, matchLines=["x"], beforeLines=["A"], expectedDeletions=2)
    assert result.structured_content["deletedAtLines"] == [2, 6]
    assert (tmp_path / "f.txt").read_bytes() == b"A\nB\nx\nA\n"


async def test_blocks_and_padded_lines_are_deleted_whole(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("keep\n  one  \n\ttwo\nkeep\n", encoding="utf-8")
    result = await delete(client, matchLines=["one\ntwo"])
    assert result.structured_content["deletionsMade"] == 1
    assert (tmp_path / "f.txt").read_bytes() == b"keep\nkeep\n"


async def test_deleting_every_line_leaves_an_empty_file(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("a\nb\n", encoding="utf-8")
    await delete(client, matchLines=["a", "b"])
    assert (tmp_path / "f.txt").read_bytes() == b""


async def test_crlf_is_kept_and_lines_are_reported_as_before_the_edit(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"a\r\nx\r\nb\r\nx\r\n")
    result = await delete(client, matchLines=["x"], expectedDeletions=2)
    assert result.structured_content["deletedAtLines"] == [2, 4]
    assert (tmp_path / "f.txt").read_bytes() == b"a\r\nb\r\n"


async def test_deleting_the_last_line_keeps_a_missing_final_newline(client: Client, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"a\nb\nc")
    await delete(client, matchLines=["c"])
    assert (tmp_path / "f.txt").read_bytes() == b"a\nb"


@pytest.mark.slow  # a ratio of CPU times (best of two runs): -m 'not slow' leaves it out
def test_deleting_many_blocks_takes_time_linear_in_their_number(tmp_path: Path) -> None:
    """Four times the blocks must not cost sixteen times the time (each block used to copy every
    line of the file: 20k blocks took 7 s or more, 40k now take well under 1 s); CPU time
    is what a busy machine disturbs least, and the slack covers the rest."""
    paths = PathPolicy.create([tmp_path])

    def delete_all(count: int) -> Callable[[], object]:
        def run() -> None:
            (tmp_path / "f.txt").write_text("x\ny\n" * count, encoding="utf-8")
            args = DeleteTextLinesArgs.model_validate(
                {"path": "f.txt", "matchLines": ["x"], "expectedDeletions": count}
            )
            delete_text_lines(args, paths=paths, limits=LimitsConfig(), locks=FileLocks())

        return run

    delete_all(3)()
    assert (tmp_path / "f.txt").read_text(encoding="utf-8") == "y\n" * 3
    small, big = best_cpu_seconds(delete_all(10_000)), best_cpu_seconds(delete_all(40_000))
    assert big < 8 * small + 0.5 and big < 5, f"10k blocks: {small:.2f} s, 40k blocks: {big:.2f} s"
