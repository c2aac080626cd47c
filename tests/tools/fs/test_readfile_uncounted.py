"""readfile on large files whose lines were not counted (issue 38): the head and the tail of a
file cost their own bytes, ``totalLines`` is null until the lines are counted, ``countLines``
counts them, and a tail read backwards from the end is right at every edge."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from mcp_localtools.files.lineindex import BLOCK
from mcp_localtools.files.lineindexes import LineIndexes
from mcp_localtools.files.linetail import last_lines
from mcp_localtools.results import json_chars
from mcp_localtools.tools.fs.readfile import HASH_UP_TO
from tests.helpers import config_for, connect, error_code, text_of

pytestmark = pytest.mark.anyio

HOLE = 256 * 1024 * 1024
"""Bytes of the hole in the middle of the sparse test file (reads as NUL bytes)."""


def _sparse(path: Path) -> tuple[list[str], list[str]]:
    """A sparse file: 1000 numbered lines, a 256 MiB hole (NUL bytes: one more line), then
    1000 numbered lines. Returns the head and the tail lines (with their newlines)."""
    head = [f"head {n}\n" for n in range(1, 1001)]
    tail = [f"tail {n}\n" for n in range(1, 1001)]
    with path.open("wb") as handle:
        handle.write("".join(head).encode())
        handle.seek(HOLE, os.SEEK_CUR)
        handle.write(b"\n" + "".join(tail).encode())
    return head, tail


async def test_head_and_tail_of_a_large_file_never_read_leave_its_lines_uncounted(tmp_path: Path) -> None:
    head, tail = _sparse(tmp_path / "sparse.log")
    async with connect(config_for(tmp_path)) as client:
        first = await client.call_tool("readfile", {"path": "sparse.log", "limit": 5})
        last = await client.call_tool("readfile", {"path": "sparse.log", "tail": 3})
    top = first.structured_content
    assert top["content"] == "".join(head[:5])
    assert (top["startLine"], top["endLine"], top["nextOffset"], top["truncated"]) == (1, 5, 5, True)
    assert top["totalLines"] is None and top["sizeBytes"] == (tmp_path / "sparse.log").stat().st_size
    assert "showing lines 1-5 (lines not counted" in text_of(first)
    end = last.structured_content
    assert end["content"] == "".join(tail[-3:]) and end["truncated"] is False
    assert end["totalLines"] is None and not {"startLine", "endLine", "nextOffset"} & set(end)


async def test_count_lines_counts_them_and_later_tails_of_the_grown_file_know_them(tmp_path: Path) -> None:
    head, tail = _sparse(tmp_path / "sparse.log")
    total = len(head) + 1 + len(tail)  # the hole is one line of NUL bytes
    async with connect(config_for(tmp_path)) as client:
        counted = await client.call_tool("readfile", {"path": "sparse.log", "tail": 2, "countLines": True})
        with (tmp_path / "sparse.log").open("ab") as handle:
            handle.write(b"appended\n")
        grown = await client.call_tool("readfile", {"path": "sparse.log", "tail": 2})
    data = counted.structured_content
    assert (data["totalLines"], data["startLine"], data["endLine"]) == (total, total - 1, total)
    assert data["content"] == "".join(tail[-2:])
    after = grown.structured_content  # extended from the counted version: what was appended
    assert (after["totalLines"], after["startLine"], after["endLine"]) == (total + 1, total, total + 1)
    assert after["content"] == tail[-1] + "appended\n"


async def test_numbered_tail_lines_are_counted_first(tmp_path: Path) -> None:
    _, tail = _sparse(tmp_path / "sparse.log")
    async with connect(config_for(tmp_path)) as client:
        result = await client.call_tool("readfile", {"path": "sparse.log", "tail": 1, "lineNumbers": True})
    assert result.structured_content["content"] == f"  2001\t{tail[-1]}"
    assert result.structured_content["totalLines"] == 2001


def _lines(count: int, width: int = 70) -> bytes:
    return "".join(f"{n:08d} {'z' * width}\n" for n in range(count)).encode()


async def test_a_window_deep_in_a_file_never_read_says_what_it_counted(tmp_path: Path) -> None:
    raw = _lines(60_000)  # 4.7 MB
    (tmp_path / "big.txt").write_bytes(raw)
    async with connect(config_for(tmp_path)) as client:
        deep = await client.call_tool("readfile", {"path": "big.txt", "offset": 50_000, "limit": 2})
        again = await client.call_tool("readfile", {"path": "big.txt", "offset": 50_002, "limit": 2})
        end = await client.call_tool("readfile", {"path": "big.txt", "offset": 59_999})
    lines = raw.decode().splitlines(keepends=True)
    data = deep.structured_content
    assert data["content"] == "".join(lines[50_000:50_002]) and data["totalLines"] is None
    assert (data["startLine"], data["endLine"], data["nextOffset"]) == (50_001, 50_002, 50_002)
    assert "counted the lines of the first" in text_of(deep) and "to find line 50001" in text_of(deep)
    assert again.structured_content["content"] == "".join(lines[50_002:50_004])
    assert "counted the lines" not in text_of(again)
    last = end.structured_content  # the window reached the end: the lines are all counted now
    assert (last["content"], last["totalLines"], last["startLine"]) == (lines[-1], 60_000, 60_000)
    assert "nextOffset" not in last and last["truncated"] is False


async def test_an_offset_past_the_end_of_an_uncounted_file_names_its_line_count(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_bytes(_lines(20_000))
    async with connect(config_for(tmp_path)) as client:
        result = await client.call_tool("readfile", {"path": "big.txt", "offset": 20_000})
    assert result.is_error and "past the end of the text (20000 lines)" in text_of(result)


async def test_a_large_file_never_read_comes_back_byte_exact_through_continuations(tmp_path: Path) -> None:
    raw = _lines(30_000)[:-1] + b"\r\nlast line, no newline \xf0\x9f\x99\x82"
    assert len(raw) > HASH_UP_TO
    (tmp_path / "big.txt").write_bytes(raw)
    got: list[str] = []
    offset: int | None = 0
    async with connect(config_for(tmp_path)) as client:
        while offset is not None:
            result = await client.call_tool("readfile", {"path": "big.txt", "offset": offset})
            data = result.structured_content
            got.append(data["content"])
            offset = data.get("nextOffset")
    assert "".join(got).encode() == raw
    assert data["totalLines"] == 30_001  # the last window reached the end


async def test_an_uncounted_tail_keeps_crlf_and_a_last_line_without_newline(tmp_path: Path) -> None:
    raw = b"x" * (HASH_UP_TO + 10) + b"\r\nalpha\r\n\r\nbeta\r\nno newline"
    (tmp_path / "crlf.txt").write_bytes(raw)
    async with connect(config_for(tmp_path)) as client:
        result = await client.call_tool("readfile", {"path": "crlf.txt", "tail": 4})
    assert result.structured_content["content"] == "alpha\r\n\r\nbeta\r\nno newline"


async def test_an_uncounted_tail_over_the_budget_keeps_the_last_whole_lines(tmp_path: Path) -> None:
    raw = _lines(20_000)
    (tmp_path / "big.txt").write_bytes(raw)
    async with connect(config_for(tmp_path, limits={"max_result_chars": 5000})) as client:
        result = await client.call_tool("readfile", {"path": "big.txt", "tail": 500})
    data = result.structured_content
    lines = raw.decode().splitlines(keepends=True)
    shown = data["content"].count("\n")
    assert 0 < shown < 500 and data["content"] == "".join(lines[-shown:]) and data["truncated"] is True
    assert "countLines=true" in text_of(result)


async def test_an_uncounted_tail_whose_last_line_is_over_the_budget_gives_its_start(tmp_path: Path) -> None:
    raw = _lines(20_000) + "é".encode() * 600_000  # a 1.2 MB last line without newline
    (tmp_path / "min.js").write_bytes(raw)
    async with connect(config_for(tmp_path, limits={"max_result_chars": 5000})) as client:
        result = await client.call_tool("readfile", {"path": "min.js", "tail": 3})
    data = result.structured_content
    assert set(data["content"]) == {"é"} and 0 < len(data["content"]) <= 5000 and data["truncated"] is True
    assert "longer than the result budget" in text_of(result)


# last_lines against a reference: the last lines of bytes split on \n, whole lines within the cap.


def _reference(raw: bytes, count: int, cap: int) -> tuple[int, bytes]:
    starts = [0, *(k + 1 for k, byte in enumerate(raw) if byte == 10 and k + 1 < len(raw))]
    wanted = starts[-count:] if raw else [0]
    within = [start for start in wanted if len(raw) - start <= cap]
    start = within[0] if within else wanted[-1]
    return start, raw[start : start + cap]


@settings(max_examples=300, deadline=None)
@given(
    lines=st.lists(
        st.sampled_from([b"", b"a", b"\r", b"x" * 70, b"y" * (BLOCK + 5), "é".encode()]), max_size=40
    ),
    final=st.booleans(),
    count=st.integers(1, 12),
    cap=st.integers(1, 3 * BLOCK),
)
@example(lines=[b"y" * (BLOCK + 5)] * 3, final=False, count=1, cap=10)
def test_last_lines_agrees_with_the_reference(
    tmp_path_factory: pytest.TempPathFactory, lines: list[bytes], final: bool, count: int, cap: int
) -> None:
    raw = b"\n".join(lines) + (b"\n" if final and lines else b"")
    path = tmp_path_factory.mktemp("tail") / "f"
    path.write_bytes(raw)
    fd = os.open(path, os.O_RDONLY)
    try:
        tail = last_lines(fd, len(raw), count, cap)
    finally:
        os.close(fd)
    start, body = _reference(raw, count, cap)
    assert tail.start == start
    if len(raw) - start <= cap:
        assert tail.data == body
    else:  # a long line's prefix, cut at a character boundary
        assert body.startswith(tail.data) and len(body) - len(tail.data) < 4
    if tail.total is not None:
        assert tail.total == raw.count(b"\n") + (1 if raw and not raw.endswith(b"\n") else 0)
        assert tail.first == raw[:start].count(b"\n")


def test_an_uncounted_index_counts_only_what_windows_need(tmp_path: Path) -> None:
    raw = _lines(100_000)  # 7.9 MB
    path = tmp_path / "f"
    path.write_bytes(raw)
    starts = [0, *(k + 1 for k, byte in enumerate(raw) if byte == 10)]
    indexes = LineIndexes()
    fd = os.open(path, os.O_RDONLY)
    try:
        index = indexes.index(fd, os.fstat(fd), "f", count=False)
        assert (index.complete, index.total_lines, index.scanned) == (False, None, 0)
        assert index.line_start(fd, 10) == starts[10] and index.scanned == BLOCK
        assert index.line_start(fd, 50_000) == starts[50_000] and not index.complete
        assert indexes.index(fd, os.fstat(fd), "f", count=False) is index  # cached, as far as counted
        assert indexes.index(fd, os.fstat(fd), "f").total_lines == 100_000  # counted to the end
        assert [index.line_start(fd, n) for n in range(0, 100_001, 997)] == starts[::997]
    finally:
        os.close(fd)


def _wide_and_long() -> bytes:
    """Lines of three-byte characters, ASCII lines, a line longer than the first read of a window
    (``_textwindow._LOOKAHEAD``) and four-byte characters: a window read as its bytes would come
    back a third full, or cut inside a line."""
    wide = "".join(f"{n:05d} 漢字かな交じり文の行です、読めますか\n" for n in range(4000))
    ascii_lines = "".join(f"{n:05d} plain ascii line\n" for n in range(3000))
    return (wide + ascii_lines + "x" * 40_000 + "\n" + "🙂 smile\n" * 2000).encode()


async def test_continuations_of_wide_characters_and_long_lines_are_full_and_byte_exact(
    tmp_path: Path,
) -> None:
    raw = _wide_and_long()
    (tmp_path / "wide.txt").write_bytes(raw)
    got: list[str] = []
    offset: int | None = 0
    async with connect(config_for(tmp_path)) as client:  # the default budget
        budget = 45_000
        while offset is not None:
            result = await client.call_tool("readfile", {"path": "wide.txt", "offset": offset})
            data = result.structured_content
            assert data is not None and not result.is_error
            assert json_chars(data) <= budget and len(text_of(result)) <= budget
            offset = data.get("nextOffset")
            if offset is not None:  # a window stops only where the next line would not fit
                assert len(data["content"]) > budget // 2, data["startLine"]
            got.append(data["content"])
    assert "".join(got).encode() == raw


@pytest.mark.parametrize(("bad", "wide"), [(1500, False), (651, False), (1300, True)])
async def test_invalid_utf8_past_what_a_window_shows_does_not_refuse_the_window(
    tmp_path: Path, bad: int, wide: bool
) -> None:
    # Past the window, inside the bytes read beyond it (651: in the look-ahead of a plain file;
    # 1300: in the cap a file of wide characters is read to): the lines before it are shown, and
    # the window that reaches the bad line refuses it, naming its offset.
    text = "漢字かな交じり文" * 3 if wide else "y" * 70
    lines = [f"{n:08d} {text}\n".encode() for n in range(2000)]
    lines[bad] = b"caf\xe9\n"
    (tmp_path / "late.txt").write_bytes(b"".join(lines))
    async with connect(config_for(tmp_path)) as client:
        first = await client.call_tool("readfile", {"path": "late.txt"})
        data = first.structured_content
        assert data is not None and not first.is_error, text_of(first)
        assert data["content"].startswith("00000000 ") and data["nextOffset"] <= bad
        deep = await client.call_tool("readfile", {"path": "late.txt", "offset": bad})
    assert error_code(deep) == "unsupported_content"
    assert f"offset {sum(map(len, lines[:bad])) + 3}" in text_of(deep)
