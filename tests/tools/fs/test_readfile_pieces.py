"""readfile's binary pieces (issue 30, item 5; the llmtools-go seed's ranged binary read): with
``encoding: "binary"``, ``offset`` and ``length`` count bytes, a file other than an image or PDF
comes in pieces that fit the result budget, and ``nextOffset`` continues, so a binary of any size
is read whole in pieces; through the SDK client, on files under ``tmp_path``."""

from __future__ import annotations

import base64
import hashlib
import os
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import config_for, connect, error_code, make_png, text_of, wire_chars

pytestmark = pytest.mark.anyio

BUDGET = 20_000


async def test_a_binary_larger_than_a_result_is_read_whole_in_pieces_within_the_budget(
    tmp_path: Path,
) -> None:
    payload = b"PK\x03\x04" + os.urandom(200_000)
    (tmp_path / "big.zip").write_bytes(payload)
    digest = hashlib.sha256(payload).hexdigest()
    pieces: list[bytes] = []
    offset: int | None = 0
    async with connect(config_for(tmp_path, limits={"max_result_chars": BUDGET})) as client:
        while offset is not None and len(pieces) < 100:
            result = await client.call_tool(
                "readfile", {"path": "big.zip", "encoding": "binary", "offset": offset}
            )
            assert not result.is_error, text_of(result)
            assert wire_chars(result) <= BUDGET and "result cut" not in text_of(result)
            data: dict[str, Any] = result.structured_content or {}
            assert data["sha256"] == digest and data["sizeBytes"] == len(payload)
            assert data["mimeType"] == "application/zip"
            pieces.append(base64.b64decode(data["contentBase64"]))
            assert base64.b64decode(text_of(result).split("base64:\n", 1)[1]) == pieces[-1]
            offset = data.get("nextOffset")
            assert data["truncated"] is (offset is not None)
    assert b"".join(pieces) == payload
    assert len(pieces) <= len(payload) // (BUDGET // 3) + 1, len(
        pieces
    )  # pieces near the budget, not tiny ones
    assert "the end of the file" in text_of(result)


async def test_offset_and_length_read_a_byte_range_of_any_file_an_image_too(tmp_path: Path) -> None:
    png = make_png()
    (tmp_path / "p.png").write_bytes(png)
    async with connect(config_for(tmp_path)) as client:
        ranged = await client.call_tool(
            "readfile", {"path": "p.png", "encoding": "binary", "offset": 8, "length": 16}
        )
        start = await client.call_tool("readfile", {"path": "p.png", "encoding": "binary", "length": 8})
        rest = await client.call_tool("readfile", {"path": "p.png", "encoding": "binary", "offset": 8})
    data: dict[str, Any] = ranged.structured_content or {}
    assert base64.b64decode(data["contentBase64"]) == png[8:24], text_of(ranged)
    assert data["nextOffset"] == 24 and data["truncated"] is True and data["mimeType"] == "image/png"
    assert all(block.type == "text" for block in ranged.content)  # the bytes, not an image
    assert "bytes 8-23 (16), nextOffset 24 continues" in text_of(ranged)
    first: dict[str, Any] = start.structured_content or {}
    assert base64.b64decode(first["contentBase64"]) == png[:8] == b"\x89PNG\r\n\x1a\n"
    last: dict[str, Any] = rest.structured_content or {}
    assert base64.b64decode(last["contentBase64"]) == png[8:]
    assert "nextOffset" not in last and last["truncated"] is False


async def test_a_file_over_the_read_cap_is_paged(tmp_path: Path) -> None:
    """Over ``max_read_bytes`` (which bounds only images and PDFs read whole), a sparse 64 MiB
    file: it is hashed once per version (its line index), then each piece is read by itself."""
    with (tmp_path / "disk.img").open("wb") as out:
        out.truncate(64 * 1024 * 1024)
        out.seek(40 * 1024 * 1024)
        out.write(b"MARK")
    async with connect(config_for(tmp_path, limits={"max_read_bytes": 4096})) as client:
        result = await client.call_tool(
            "readfile", {"path": "disk.img", "encoding": "binary", "offset": 40 * 1024 * 1024, "length": 4}
        )
    data: dict[str, Any] = result.structured_content or {}
    assert base64.b64decode(data["contentBase64"]) == b"MARK", text_of(result)
    assert data["nextOffset"] == 40 * 1024 * 1024 + 4 and data["sizeBytes"] == 64 * 1024 * 1024


async def test_byte_and_line_arguments_are_refused_where_they_mean_nothing(tmp_path: Path) -> None:
    (tmp_path / "blob.bin").write_bytes(bytes(range(256)))
    (tmp_path / "a.txt").write_text("a\n", encoding="utf-8")
    async with connect(config_for(tmp_path)) as client:
        past = await client.call_tool("readfile", {"path": "blob.bin", "encoding": "binary", "offset": 256})
        text_length = await client.call_tool("readfile", {"path": "a.txt", "length": 10})
        binary_limit = await client.call_tool(
            "readfile", {"path": "blob.bin", "encoding": "binary", "limit": 10}
        )
        binary_tail = await client.call_tool(
            "readfile", {"path": "blob.bin", "encoding": "binary", "tail": 1}
        )
        zero = await client.call_tool("readfile", {"path": "blob.bin", "encoding": "binary", "length": 0})
    assert (
        error_code(past) == "invalid_arguments"
        and "past the end" in text_of(past)
        and "256 bytes" in text_of(past)
    )
    assert error_code(text_length) == "invalid_arguments" and "length counts bytes" in text_of(text_length)
    for refused in (binary_limit, binary_tail):
        assert error_code(refused) == "invalid_arguments" and "offset and length in bytes" in text_of(refused)
    assert error_code(zero) == "invalid_arguments"


async def test_an_empty_binary_reads_as_no_bytes(tmp_path: Path) -> None:
    (tmp_path / "empty.bin").write_bytes(b"")
    async with connect(config_for(tmp_path)) as client:
        result = await client.call_tool("readfile", {"path": "empty.bin", "encoding": "binary"})
    data: dict[str, Any] = result.structured_content or {}
    assert data["contentBase64"] == "" and data["sizeBytes"] == 0 and "nextOffset" not in data
