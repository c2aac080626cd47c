"""readfile through the SDK client: text and binary modes, line windows, PDFs, escapes."""

from __future__ import annotations

import base64
import hashlib
import io
import os
import zlib
from pathlib import Path

import anyio
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp.types import EmbeddedResource, ImageContent
from PIL import Image

from mcp_localtools.files.lineindex import BLOCK, HEAD_BYTES, LineIndex
from mcp_localtools.files.lineindexes import LineIndexes
from mcp_localtools.parsers.pdf import parse_page_spec
from mcp_localtools.tools.fs.readfile import HASH_UP_TO, text_window
from tests.helpers import (
    config_for,
    connect,
    error_code,
    make_large_png,
    make_pdf,
    make_png,
    make_scanned_pdf,
    parser_workers,
    text_of,
    wire_chars,
)

pytestmark = pytest.mark.anyio


async def test_encoding_is_trimmed_and_case_insensitive(client: Client, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n", encoding="utf-8")
    result = await client.call_tool("readfile", {"path": "a.txt", "encoding": " TEXT "})
    assert not result.is_error
    assert result.structured_content["content"] == "hello\n"


async def test_an_unknown_encoding_is_refused_naming_the_choices(client: Client, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n", encoding="utf-8")
    result = await client.call_tool("readfile", {"path": "a.txt", "encoding": "base64"})
    assert error_code(result) == "invalid_arguments"
    assert "encoding" in text_of(result) and "'text' or 'binary'" in text_of(result)


async def test_a_missing_file_is_an_error_naming_the_absolute_path(client: Client, tmp_path: Path) -> None:
    result = await client.call_tool("readfile", {"path": "nope.txt"})
    assert error_code(result) == "not_found"
    assert f"path does not exist: {tmp_path / 'nope.txt'}" in text_of(result)


async def test_a_directory_is_not_a_file(client: Client, tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    result = await client.call_tool("readfile", {"path": "d"})
    assert error_code(result) == "not_a_file"
    assert "expected a file but got a directory" in text_of(result)


async def test_a_fifo_is_refused_without_hanging(client: Client, tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    result = await client.call_tool("readfile", {"path": "pipe"})
    assert error_code(result) == "not_a_file"
    assert "expected a regular file" in text_of(result) and "FIFO" in text_of(result)


async def test_an_image_in_text_mode_suggests_binary(client: Client, tmp_path: Path) -> None:
    (tmp_path / "p.png").write_bytes(make_png())
    result = await client.call_tool("readfile", {"path": "p.png"})
    assert error_code(result) == "unsupported_content"
    assert 'use encoding "binary"' in text_of(result)


async def test_binary_content_with_a_text_name_suggests_binary(client: Client, tmp_path: Path) -> None:
    (tmp_path / "data.txt").write_bytes(bytes(range(256)) * 4)
    result = await client.call_tool("readfile", {"path": "data.txt"})
    assert error_code(result) == "unsupported_content"
    assert 'use encoding "binary"' in text_of(result)


async def test_invalid_utf8_is_refused_with_a_hint(client: Client, tmp_path: Path) -> None:
    (tmp_path / "latin1.txt").write_bytes("caf\xe9 cr\xe8me\n".encode("latin-1"))
    result = await client.call_tool("readfile", {"path": "latin1.txt"})
    assert error_code(result) == "unsupported_content"
    assert "not valid UTF-8 text" in text_of(result)
    assert 'use encoding "binary"' in text_of(result)


async def test_text_comes_back_verbatim_with_crlf_bom_and_no_final_newline(
    client: Client, tmp_path: Path
) -> None:
    raw = "\ufeffline one\r\nline\ttwo  \r\n\r\nlast without newline".encode()
    (tmp_path / "crlf.txt").write_bytes(raw)
    result = await client.call_tool("readfile", {"path": "crlf.txt"})
    data = result.structured_content
    assert data["content"].encode() == raw
    assert data["totalLines"] == 4
    assert data["sha256"] == hashlib.sha256(raw).hexdigest()
    assert data["truncated"] is False and "nextOffset" not in data
    assert text_of(result).encode() == raw


async def test_the_read_cap_bounds_only_whole_images_and_pdfs(tmp_path: Path) -> None:
    """``max_read_bytes`` is for the forms read whole; text and binary pieces read only what they
    return (issue 30, item 5)."""
    (tmp_path / "big.txt").write_text("x" * 5000, encoding="utf-8")
    (tmp_path / "big.pdf").write_bytes(make_pdf(["page"]) + b"%" * 5000)
    async with connect(config_for(tmp_path, limits={"max_read_bytes": 4096})) as client:
        binary = await client.call_tool("readfile", {"path": "big.txt", "encoding": "binary"})
        text = await client.call_tool("readfile", {"path": "big.txt"})
        pdf = await client.call_tool("readfile", {"path": "big.pdf", "encoding": "binary"})
    assert base64.b64decode(binary.structured_content["contentBase64"]) == b"x" * 5000
    assert text.structured_content["content"] == "x" * 5000
    assert error_code(pdf) == "too_large" and "pass offset and length" in text_of(pdf), text_of(pdf)


async def test_a_pdf_gives_its_text_per_page_with_the_page_count(client: Client, tmp_path: Path) -> None:
    (tmp_path / "doc.pdf").write_bytes(make_pdf(["Alpha text", "Beta text", "Gamma text"]))
    result = await client.call_tool("readfile", {"path": "doc.pdf"})
    data = result.structured_content
    assert not result.is_error
    assert data["pageCount"] == 3 and data["pages"] == [1, 2, 3]
    assert "--- page 1 ---\nAlpha text" in data["content"]
    assert data["content"].index("Beta") < data["content"].index("Gamma")


async def test_pages_selects_ranges_of_a_pdf(client: Client, tmp_path: Path) -> None:
    (tmp_path / "doc.pdf").write_bytes(make_pdf([f"Page number {n}" for n in range(1, 9)]))
    result = await client.call_tool("readfile", {"path": "doc.pdf", "pages": "2-3,7"})
    data = result.structured_content
    assert data["pages"] == [2, 3, 7] and data["pageCount"] == 8
    assert "Page number 7" in data["content"] and "Page number 1\n" not in data["content"]


async def test_pdf_pages_out_of_range_are_refused_naming_the_page_count(
    client: Client, tmp_path: Path
) -> None:
    (tmp_path / "doc.pdf").write_bytes(make_pdf(["one", "two"]))
    result = await client.call_tool("readfile", {"path": "doc.pdf", "pages": "3"})
    assert error_code(result) == "invalid_arguments"
    assert "2 pages" in text_of(result)


async def test_a_pdf_without_a_text_layer_says_so(client: Client, tmp_path: Path) -> None:
    (tmp_path / "scan.pdf").write_bytes(make_scanned_pdf())
    result = await client.call_tool("readfile", {"path": "scan.pdf"})
    assert not result.is_error
    assert "no text layer" in text_of(result)


async def test_a_malformed_pdf_is_a_clear_error(client: Client, tmp_path: Path) -> None:
    (tmp_path / "bad.pdf").write_bytes(b"%PDF-1.7\n this is not really a pdf \n%%EOF")
    result = await client.call_tool("readfile", {"path": "bad.pdf"})
    assert error_code(result) == "unsupported_content"
    assert "cannot read PDF" in text_of(result)


def _encrypted_pdf(user_password: str, owner_password: str) -> bytes:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(make_pdf(["Secret text"]))))
    writer.encrypt(user_password=user_password, owner_password=owner_password, algorithm="AES-256")
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def _pdf_bomb() -> bytes:
    """A 300 KB PDF whose one page's content stream inflates to 99 MB, past pypdf's 75 MB cap."""
    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import EncodedStreamObject, NameObject

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(make_pdf(["x"]))))
    stream = EncodedStreamObject()
    stream[NameObject("/Filter")] = NameObject("/FlateDecode")
    stream._data = zlib.compress(b"BT /F1 12 Tf 72 720 Td (x) Tj ET\n" * 3_000_000, 9)  # already encoded
    writer.pages[0][NameObject("/Contents")] = writer._add_object(stream)
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


async def test_a_pdf_encrypted_with_a_password_is_a_clear_error(client: Client, tmp_path: Path) -> None:
    (tmp_path / "locked.pdf").write_bytes(_encrypted_pdf("open sesame", "owner"))
    with anyio.fail_after(60):
        result = await client.call_tool("readfile", {"path": "locked.pdf"})
    assert error_code(result) == "unsupported_content"
    assert f"cannot read PDF {tmp_path / 'locked.pdf'}: it is encrypted with a password" in text_of(result)


async def test_a_pdf_with_only_an_owner_password_reads_normally(client: Client, tmp_path: Path) -> None:
    (tmp_path / "owned.pdf").write_bytes(_encrypted_pdf("", "owner"))
    result = await client.call_tool("readfile", {"path": "owned.pdf"})
    assert not result.is_error, text_of(result)
    assert "Secret text" in result.structured_content["content"]


async def test_a_pdf_that_inflates_past_the_parser_limits_is_a_clear_error(
    client: Client, tmp_path: Path
) -> None:
    (tmp_path / "bomb.pdf").write_bytes(_pdf_bomb())
    with anyio.fail_after(120):
        result = await client.call_tool("readfile", {"path": "bomb.pdf"})
    assert error_code(result) == "too_large"
    assert "exceeds a PDF parser safety limit" in text_of(result)
    assert parser_workers() == []


async def test_a_pdf_over_the_read_cap_is_refused_before_parsing(tmp_path: Path) -> None:
    (tmp_path / "long.pdf").write_bytes(make_pdf([f"page {n}" for n in range(60)]))
    async with connect(config_for(tmp_path, limits={"max_read_bytes": 4096})) as client:
        result = await client.call_tool("readfile", {"path": "long.pdf"})
    assert error_code(result) == "too_large"


@pytest.fixture(scope="module")
def pdf_500_pages() -> bytes:
    return make_pdf([f"Text of page {n} ends here" for n in range(1, 501)])


async def test_a_500_page_pdf_gives_the_text_of_pages_10_to_12_only(
    client: Client, tmp_path: Path, pdf_500_pages: bytes
) -> None:
    (tmp_path / "book.pdf").write_bytes(pdf_500_pages)
    with anyio.fail_after(120):
        result = await client.call_tool("readfile", {"path": "book.pdf", "pages": "10-12"})
    data = result.structured_content
    assert data["pageCount"] == 500 and data["pages"] == [10, 11, 12]
    assert data["content"] == "".join(f"--- page {n} ---\nText of page {n} ends here\n" for n in (10, 11, 12))
    assert data["truncated"] is False


async def test_a_500_page_pdf_read_whole_is_cut_to_the_budget_with_a_continuation(
    tmp_path: Path, pdf_500_pages: bytes
) -> None:
    (tmp_path / "book.pdf").write_bytes(pdf_500_pages)
    async with connect(config_for(tmp_path, limits={"max_result_chars": 5000})) as client:
        with anyio.fail_after(120):
            first = await client.call_tool("readfile", {"path": "book.pdf"})
        data = first.structured_content
        assert data["pageCount"] == 500 and len(data["pages"]) == 500 and data["totalLines"] == 1000
        assert wire_chars(first) <= 5000 and data["truncated"] is True  # each copy in the budget
        assert data["content"].startswith("--- page 1 ---\nText of page 1 ends here\n")
        later = await client.call_tool("readfile", {"path": "book.pdf", "offset": data["nextOffset"]})
    assert later.structured_content["startLine"] == data["nextOffset"] + 1
    assert "offset=" in text_of(first)


@pytest.mark.parametrize("pages", ["3-1", "0", "1;2", "two"])
async def test_malformed_pages_are_refused_with_the_expected_form(
    client: Client, tmp_path: Path, pages: str
) -> None:
    (tmp_path / "doc.pdf").write_bytes(make_pdf(["one", "two", "three"]))
    result = await client.call_tool("readfile", {"path": "doc.pdf", "pages": pages})
    assert error_code(result) == "invalid_arguments"
    assert f"invalid pages {pages!r}" in text_of(result)


async def test_overlapping_and_adjacent_page_ranges_are_merged(client: Client, tmp_path: Path) -> None:
    (tmp_path / "doc.pdf").write_bytes(make_pdf([f"Page number {n}" for n in range(1, 9)]))
    result = await client.call_tool("readfile", {"path": "doc.pdf", "pages": "7, 2-3,1-2,3,4"})
    data = result.structured_content
    assert data["pages"] == [1, 2, 3, 4, 7]
    assert data["content"].count("--- page 3 ---") == 1


def test_page_specs_are_sorted_and_merged() -> None:
    assert parse_page_spec("7,1-3,2-4") == [(1, 4), (7, 7)]
    assert parse_page_spec("5,6,8-9,10") == [(5, 6), (8, 10)]
    assert parse_page_spec("3-3,3") == [(3, 3)]


async def test_a_pages_argument_over_the_limit_is_refused_as_an_argument(
    client: Client, tmp_path: Path
) -> None:
    (tmp_path / "doc.pdf").write_bytes(make_pdf(["one"]))
    at_limit = await client.call_tool("readfile", {"path": "doc.pdf", "pages": ("1," * 500)[:-1] + " "})
    assert not at_limit.is_error, text_of(at_limit)
    assert at_limit.structured_content["pages"] == [1]
    result = await client.call_tool("readfile", {"path": "doc.pdf", "pages": "1," * 40_000 + "1"})
    assert error_code(result) == "invalid_arguments"
    assert "pages" in text_of(result) and "1000 characters" in text_of(result)
    assert "parser" not in text_of(result)


async def test_a_page_past_the_last_names_it_and_the_page_count(client: Client, tmp_path: Path) -> None:
    (tmp_path / "doc.pdf").write_bytes(make_pdf(["one", "two"]))
    result = await client.call_tool("readfile", {"path": "doc.pdf", "pages": "1,2-5"})
    assert error_code(result) == "invalid_arguments"
    assert (
        f"cannot read PDF {tmp_path / 'doc.pdf'}: invalid pages: page 5 was asked for but the document "
        "has 2 pages"
    ) in text_of(result)


async def test_binary_mode_on_a_png_gives_image_content(client: Client, tmp_path: Path) -> None:
    png = make_png(5, 7)
    (tmp_path / "p.png").write_bytes(png)
    result = await client.call_tool("readfile", {"path": "p.png", "encoding": "binary"})
    images = [block for block in result.content if isinstance(block, ImageContent)]
    assert len(images) == 1
    assert images[0].mime_type == "image/png"
    assert base64.b64decode(images[0].data) == png
    assert result.structured_content["sizeBytes"] == len(png)


async def test_binary_mode_on_a_large_image_fits_it_to_client_limits_and_says_so(
    client: Client, tmp_path: Path
) -> None:
    png = make_large_png(4000, 3000)
    (tmp_path / "wide.png").write_bytes(png)
    result = await client.call_tool("readfile", {"path": "wide.png", "encoding": "binary"})
    data = result.structured_content
    [block] = [block for block in result.content if isinstance(block, ImageContent)]
    returned = data["returned"]
    assert (data["width"], data["height"], data["sizeBytes"]) == (4000, 3000, len(png))
    assert data["sha256"] == hashlib.sha256(png).hexdigest()
    assert (returned["width"], returned["height"]) == (1568, 1176) and len(block.data) <= 1_000_000
    assert (
        len(base64.b64decode(block.data)) == returned["sizeBytes"] and block.mime_type == returned["mimeType"]
    )
    assert Image.open(io.BytesIO(base64.b64decode(block.data))).size == (1568, 1176)
    assert "4000x3000" in text_of(result) and "original=true" in text_of(result)


async def test_original_true_returns_the_image_file_bytes_unchanged(client: Client, tmp_path: Path) -> None:
    png = make_large_png(2000, 1600)
    (tmp_path / "big.png").write_bytes(png)
    result = await client.call_tool("readfile", {"path": "big.png", "encoding": "binary", "original": True})
    [block] = [block for block in result.content if isinstance(block, ImageContent)]
    assert base64.b64decode(block.data) == png and block.mime_type == "image/png"
    assert "returned" not in result.structured_content


async def test_original_applies_to_binary_mode_only(client: Client, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n", encoding="utf-8")
    result = await client.call_tool("readfile", {"path": "a.txt", "original": True})
    assert error_code(result) == "invalid_arguments" and 'encoding "binary"' in text_of(result)


async def test_a_truncated_image_in_binary_mode_is_an_error_that_offers_the_original(
    client: Client, tmp_path: Path
) -> None:
    buffer = io.BytesIO()
    Image.effect_noise((200, 200), 60).convert("RGB").save(buffer, "PNG")
    (tmp_path / "cut.png").write_bytes(buffer.getvalue()[:3000])
    result = await client.call_tool("readfile", {"path": "cut.png", "encoding": "binary"})
    assert error_code(result) == "unsupported_content"
    assert f"cannot read image {tmp_path / 'cut.png'}" in text_of(result) and "original=true" in text_of(
        result
    )
    raw = await client.call_tool("readfile", {"path": "cut.png", "encoding": "binary", "original": True})
    assert not raw.is_error


async def test_binary_mode_on_another_file_gives_text_every_client_accepts_and_round_trips(
    client: Client, tmp_path: Path
) -> None:
    """Not an embedded resource: anthropic's MCP helper raises on one of a type other than image or
    PDF and the whole result is lost (clients.md). Issue 15."""
    payload = bytes(range(256)) * 3
    (tmp_path / "blob.bin").write_bytes(payload)
    result = await client.call_tool("readfile", {"path": "blob.bin", "encoding": "binary"})
    assert all(block.type == "text" for block in result.content)
    text = text_of(result)
    assert text.startswith(f"{tmp_path / 'blob.bin'}: 768 bytes, application/octet-stream, sha256 ")
    assert base64.b64decode(text.split("base64:\n", 1)[1]) == payload
    assert base64.b64decode(result.structured_content["contentBase64"]) == payload


async def test_binary_mode_on_a_pdf_gives_an_embedded_resource(client: Client, tmp_path: Path) -> None:
    (tmp_path / "doc.pdf").write_bytes(make_pdf(["page one"]))
    result = await client.call_tool("readfile", {"path": "doc.pdf", "encoding": "binary"})
    resources = [block for block in result.content if isinstance(block, EmbeddedResource)]
    assert len(resources) == 1 and resources[0].resource.mime_type == "application/pdf"


async def test_a_symlinked_file_is_refused_when_symlinks_are_blocked(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("real", encoding="utf-8")
    (tmp_path / "alias.txt").symlink_to(tmp_path / "real.txt")
    async with connect(config_for(tmp_path, paths={"block_symlinks": True})) as client:
        result = await client.call_tool("readfile", {"path": "alias.txt"})
    assert error_code(result) == "symlink_refused"


async def test_an_empty_file_reads_as_empty_text(client: Client, tmp_path: Path) -> None:
    (tmp_path / "empty.txt").write_bytes(b"")
    result = await client.call_tool("readfile", {"path": "empty.txt"})
    data = result.structured_content
    assert data["content"] == "" and data["totalLines"] == 0 and data["truncated"] is False


async def test_offset_and_limit_return_a_window_and_the_next_offset(client: Client, tmp_path: Path) -> None:
    (tmp_path / "n.txt").write_text("".join(f"line {n}\n" for n in range(1, 11)), encoding="utf-8")
    result = await client.call_tool("readfile", {"path": "n.txt", "offset": 3, "limit": 4})
    data = result.structured_content
    assert data["content"] == "line 4\nline 5\nline 6\nline 7\n"
    assert (data["startLine"], data["endLine"], data["nextOffset"], data["totalLines"]) == (4, 7, 7, 10)
    assert data["truncated"] is True
    assert "offset=7" in text_of(result)
    last = await client.call_tool("readfile", {"path": "n.txt", "offset": 7})
    assert last.structured_content["content"] == "line 8\nline 9\nline 10\n"
    assert "nextOffset" not in last.structured_content


async def test_the_default_window_is_the_configured_line_count(tmp_path: Path) -> None:
    (tmp_path / "n.txt").write_text("x\n" * 50, encoding="utf-8")
    async with connect(config_for(tmp_path, limits={"read_max_lines": 20})) as client:
        result = await client.call_tool("readfile", {"path": "n.txt"})
    assert result.structured_content["endLine"] == 20
    assert result.structured_content["nextOffset"] == 20


async def test_an_offset_past_the_end_is_an_error_with_the_line_count(client: Client, tmp_path: Path) -> None:
    (tmp_path / "n.txt").write_text("a\nb\n", encoding="utf-8")
    result = await client.call_tool("readfile", {"path": "n.txt", "offset": 5})
    assert error_code(result) == "invalid_arguments"
    assert "2 lines" in text_of(result)


async def test_the_result_budget_cuts_at_a_line_and_gives_the_next_offset(tmp_path: Path) -> None:
    (tmp_path / "wide.txt").write_text(("y" * 99 + "\n") * 100, encoding="utf-8")
    async with connect(config_for(tmp_path, limits={"max_result_chars": 3000})) as client:
        result = await client.call_tool("readfile", {"path": "wide.txt"})
    data = result.structured_content
    assert wire_chars(result) <= 3000 and len(data["content"]) >= 1000
    assert data["content"].endswith("\n") and data["content"] in text_of(result)
    assert data["nextOffset"] == data["endLine"] == len(data["content"]) // 100


async def test_a_200kb_file_comes_back_byte_exact_through_continuations_each_within_the_budget(
    tmp_path: Path,
) -> None:
    body = "".join(
        f'line {n}: "quoted" \\ tab\there é\r\n' if n % 7 == 0 else f"line {n}\n" for n in range(20000)
    )
    (tmp_path / "big.txt").write_bytes(body.encode())
    assert len(body.encode()) > 200_000
    parts, offset, calls = [], 0, 0
    async with connect(config_for(tmp_path, limits={"max_result_chars": 20_000})) as client:
        while True:
            result = await client.call_tool("readfile", {"path": "big.txt", "offset": offset})
            calls += 1
            assert wire_chars(result) <= 20_000
            data = result.structured_content
            assert text_of(result).startswith(data["content"])
            parts.append(data["content"])
            if "nextOffset" not in data:
                break
            offset = data["nextOffset"]
    assert "".join(parts).encode() == body.encode() and calls > 10


async def test_a_single_line_over_the_budget_is_cut_and_says_so(tmp_path: Path) -> None:
    (tmp_path / "min.js").write_text("z" * 5000, encoding="utf-8")
    async with connect(config_for(tmp_path, limits={"max_result_chars": 3000})) as client:
        result = await client.call_tool("readfile", {"path": "min.js"})
    assert 1500 < len(result.structured_content["content"]) <= 3000 and wire_chars(result) <= 3000
    assert result.structured_content["truncated"] is True
    assert "line 1 is longer than the result budget" in text_of(result)


async def test_an_svg_reads_as_text(client: Client, tmp_path: Path) -> None:
    svg = '<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>\n'
    (tmp_path / "i.svg").write_text(svg, encoding="utf-8")
    result = await client.call_tool("readfile", {"path": "i.svg"})
    assert result.structured_content["content"] == svg


async def test_pages_on_a_text_file_is_an_error(client: Client, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n", encoding="utf-8")
    result = await client.call_tool("readfile", {"path": "a.txt", "pages": "1"})
    assert error_code(result) == "invalid_arguments" and "PDF files only" in text_of(result)


@pytest.fixture
def escape_tree(tmp_path: Path) -> Path:
    """root/ plus an outside secret, and every kind of link from inside the root to it."""
    root = tmp_path / "root"
    root.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("TOP-SECRET", encoding="utf-8")
    (tmp_path / "root_evil").mkdir()
    (tmp_path / "root_evil" / "secret.txt").write_text("TOP-SECRET", encoding="utf-8")
    (root / "file-link").symlink_to(outside / "secret.txt")
    (root / "dir-link").symlink_to(outside)
    (root / "dangling").symlink_to(outside / "later.txt")
    (root / "parent").mkdir()
    (root / "parent" / "up").symlink_to(outside)
    return root


@pytest.mark.parametrize(
    "given",
    [
        "../outside/secret.txt",
        "parent/../../outside/secret.txt",
        "{tmp}/outside/secret.txt",
        "{tmp}/root_evil/secret.txt",
        "../root_evil/secret.txt",
        "file-link",
        "dir-link/secret.txt",
        "dangling",
        "parent/up/secret.txt",
    ],
)
async def test_escapes_are_refused_and_nothing_is_read(escape_tree: Path, given: str) -> None:
    async with connect(config_for(escape_tree)) as client:
        result = await client.call_tool("readfile", {"path": given.format(tmp=escape_tree.parent)})
    assert error_code(result) == "outside_roots"
    assert "TOP-SECRET" not in text_of(result)


async def test_a_nul_byte_in_the_path_is_refused(client: Client, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a", encoding="utf-8")
    result = await client.call_tool("readfile", {"path": "a.txt\x00/../../etc/passwd"})
    assert error_code(result) == "invalid_path"
    assert "NUL" in text_of(result)


def _reference_window(text: str, offset: int, limit: int, budget: int) -> tuple[str, int | None, int | None]:
    """The obvious line-by-line version of text_window: (text, end_line, next_offset)."""
    lines = text.split("\n")
    total = len(lines) - 1 if text.endswith("\n") or not text else len(lines)
    chosen: list[str] = []
    size = 0
    for index in range(offset, min(total, offset + limit)):
        line = lines[index] + ("\n" if index < len(lines) - 1 else "")
        if chosen and size + len(line) > budget:
            break
        chosen.append(line)
        size += len(line)
    out = "".join(chosen)[:budget]
    end = offset + len(chosen) if chosen else None
    return out, end, (offset + len(chosen) if offset + len(chosen) < total else None)


@settings(max_examples=1000)
@example(text="\n\n\na\na", offset=3, limit=2, budget=3)  # a last line without newline that just fits
@given(
    text=st.text(alphabet="ab\n\r", max_size=200),
    offset=st.integers(0, 30),
    limit=st.integers(1, 40),
    budget=st.integers(1, 120),
)
def test_text_window_agrees_with_the_line_by_line_reference(
    text: str, offset: int, limit: int, budget: int
) -> None:
    total = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    if offset and offset >= total:
        return
    window = text_window(text, offset=offset, limit=limit, budget=budget)
    assert (window.text, window.end_line, window.next_offset) == _reference_window(
        text, offset, limit, budget
    )


# Windows of files of any size: the line index (files/lineindex.py), tail and line numbers.

CAPPED = {"max_read_bytes": 4096, "max_result_chars": 5000, "read_max_lines": 50}
"""A whole-file cap far below the test files' size, and a small budget so windows are cut."""


def _numbered_lines(count: int) -> bytes:
    return "".join(f"line {n} {'é' * (n % 7)}\n" for n in range(1, count + 1)).encode()


async def test_windows_and_tail_read_a_file_larger_than_the_whole_file_cap(tmp_path: Path) -> None:
    raw = _numbered_lines(20_000)  # ~250 KB, far over the 4 KiB cap and over many index blocks
    (tmp_path / "big.log").write_bytes(raw)
    lines = raw.decode().splitlines(keepends=True)
    async with connect(config_for(tmp_path, limits=CAPPED)) as client:
        middle = await client.call_tool("readfile", {"path": "big.log", "offset": 12_345, "limit": 3})
        tail = await client.call_tool("readfile", {"path": "big.log", "tail": 4})
    data = middle.structured_content
    assert data["content"] == "".join(lines[12_345:12_348])
    assert (data["startLine"], data["endLine"], data["nextOffset"]) == (12_346, 12_348, 12_348)
    assert data["totalLines"] == 20_000 and data["sizeBytes"] == len(raw)
    assert data["sha256"] == hashlib.sha256(raw).hexdigest()
    last = tail.structured_content
    assert last["content"] == "".join(lines[-4:])
    assert (last["startLine"], last["endLine"], last["truncated"]) == (19_997, 20_000, False)
    assert "nextOffset" not in last


async def test_the_whole_file_is_rebuilt_byte_exact_by_following_continuations(tmp_path: Path) -> None:
    raw = _numbered_lines(3000) + b"\r\nno final newline \xf0\x9f\x99\x82"
    (tmp_path / "big.log").write_bytes(raw)
    got: list[str] = []
    offset: int | None = 0
    calls = 0
    async with connect(config_for(tmp_path, limits=CAPPED)) as client:
        while offset is not None:
            result = await client.call_tool("readfile", {"path": "big.log", "offset": offset})
            data = result.structured_content
            assert len(data["content"]) <= CAPPED["max_result_chars"]
            assert data["sha256"] == hashlib.sha256(raw).hexdigest()
            got.append(data["content"])
            offset = data.get("nextOffset")
            calls += 1
    assert "".join(got).encode() == raw
    assert calls > len(raw) // CAPPED["max_result_chars"]


async def test_tail_keeps_the_last_lines_that_fit_the_budget_and_points_at_the_rest(tmp_path: Path) -> None:
    raw = ("w" * 99 + "\n").encode() * 100
    (tmp_path / "wide.log").write_bytes(raw)
    async with connect(config_for(tmp_path, limits=CAPPED)) as client:
        result = await client.call_tool("readfile", {"path": "wide.log", "tail": 80})
    data = result.structured_content
    start = data["startLine"]
    assert 21 < start < 100 and (data["endLine"], data["truncated"]) == (100, True)
    assert data["content"] == ("w" * 99 + "\n") * (101 - start)  # the last lines, whole
    assert f"offset=20, limit={start - 21}" in text_of(result)


async def test_tail_of_a_short_file_is_the_whole_file(client: Client, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"a\nb")
    result = await client.call_tool("readfile", {"path": "a.txt", "tail": 10})
    data = result.structured_content
    assert (data["content"], data["startLine"], data["endLine"], data["truncated"]) == ("a\nb", 1, 2, False)


async def test_tail_with_offset_or_limit_is_refused(client: Client, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"a\nb\n")
    for extra in ({"offset": 1}, {"limit": 1}):
        result = await client.call_tool("readfile", {"path": "a.txt", "tail": 1, **extra})
        assert error_code(result) == "invalid_arguments"
        assert "tail" in text_of(result)


async def test_line_numbers_use_the_cat_n_format(client: Client, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"alpha\n\tbeta\n\ngamma")
    result = await client.call_tool("readfile", {"path": "a.txt", "lineNumbers": True, "offset": 1})
    assert result.structured_content["content"] == "     2\t\tbeta\n     3\t\n     4\tgamma"
    tail = await client.call_tool("readfile", {"path": "a.txt", "lineNumbers": True, "tail": 1})
    assert tail.structured_content["content"] == "     4\tgamma"


async def test_numbered_lines_count_against_the_budget(tmp_path: Path) -> None:
    (tmp_path / "wide.txt").write_bytes(("y" * 99 + "\n").encode() * 100)  # 100 characters a line
    async with connect(config_for(tmp_path, limits=CAPPED)) as client:
        plain = await client.call_tool("readfile", {"path": "wide.txt"})
        numbered = await client.call_tool("readfile", {"path": "wide.txt", "lineNumbers": True})
    shown = numbered.structured_content["endLine"]
    assert 0 < shown < plain.structured_content["endLine"] < 50  # 107 characters a line with the number
    assert numbered.structured_content["content"] == "".join(
        f"{n:>6}\t{'y' * 99}\n" for n in range(1, shown + 1)
    )
    assert numbered.structured_content["nextOffset"] == shown


async def test_a_long_line_deep_in_a_big_file_is_cut_at_the_budget(tmp_path: Path) -> None:
    raw = b"short\n" * 1000 + "é".encode() * 50_000 + b"\nafter\n"  # 100 KB line: read is capped
    (tmp_path / "min.js").write_bytes(raw)
    async with connect(config_for(tmp_path, limits=CAPPED)) as client:
        result = await client.call_tool("readfile", {"path": "min.js", "offset": 1000})
        after = await client.call_tool("readfile", {"path": "min.js", "offset": 1001})
    data = result.structured_content
    assert set(data["content"]) == {"é"} and 0 < len(data["content"]) <= CAPPED["max_result_chars"]
    assert (data["startLine"], data["endLine"], data["nextOffset"]) == (1001, 1001, 1001)
    assert "line 1001 is longer than the result budget" in text_of(result)
    assert after.structured_content["content"] == "after\n"


async def test_invalid_utf8_in_a_window_names_its_offset_in_the_file(client: Client, tmp_path: Path) -> None:
    raw = b"good\n" * 100 + b"caf\xe9\n"
    (tmp_path / "mixed.txt").write_bytes(raw)
    fine = await client.call_tool("readfile", {"path": "mixed.txt", "limit": 10})
    bad = await client.call_tool("readfile", {"path": "mixed.txt", "tail": 1})
    assert fine.structured_content["content"] == "good\n" * 10
    assert error_code(bad) == "unsupported_content"
    assert f"offset {len(raw) - 2}" in text_of(bad)


async def test_a_changed_file_is_indexed_again_same_size_new_mtime(client: Client, tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_bytes(b"one\ntwo\n")
    first = await client.call_tool("readfile", {"path": "a.txt", "tail": 1})
    with target.open("r+b") as handle:  # in place: same inode, same size
        handle.write(b"ONE\nTWO\n")
    stat = target.stat()
    os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    second = await client.call_tool("readfile", {"path": "a.txt", "tail": 1})
    assert first.structured_content["content"] == "two\n"
    assert second.structured_content["content"] == "TWO\n"
    assert second.structured_content["sha256"] == hashlib.sha256(b"ONE\nTWO\n").hexdigest()


def test_the_line_index_finds_every_line_start_across_blocks(tmp_path: Path) -> None:
    from mcp_localtools.files.lineindex import line_index

    lengths = [0, 1, BLOCK - 1, 5, BLOCK, 2 * BLOCK + 3, 0, 7]  # lines ending on and across blocks
    raw = b"".join(b"x" * n + b"\n" for n in lengths) + b"tail"
    (tmp_path / "f").write_bytes(raw)
    fd = os.open(tmp_path / "f", os.O_RDONLY)
    try:
        index = line_index(fd, os.fstat(fd), "f")
        starts = [0, *(k + 1 for k, byte in enumerate(raw) if byte == 10)]
        assert index.total_lines == len(starts)
        assert [index.line_start(fd, n) for n in range(len(starts) + 1)] == [*starts, len(raw)]
        assert index.sha256 == hashlib.sha256(raw).hexdigest()
    finally:
        os.close(fd)


# A growing file is indexed from its old last block on; other changes are indexed again.


def _indexed(indexes: LineIndexes, path: Path, *, sha256: bool = False) -> LineIndex:
    fd = os.open(path, os.O_RDONLY)
    try:
        return indexes.index(fd, os.fstat(fd), path.name, sha256=sha256)
    finally:
        os.close(fd)


def _starts(raw: bytes) -> list[int]:
    return [0, *(k + 1 for k, byte in enumerate(raw) if byte == 10)]


def _check(index: LineIndex, path: Path) -> None:
    raw = path.read_bytes()
    starts = _starts(raw)
    assert (index.size, index.total_lines) == (len(raw), len(starts) - (raw.endswith(b"\n") or not raw))
    fd = os.open(path, os.O_RDONLY)
    try:
        assert [index.line_start(fd, n) for n in range(0, len(starts), 97)] == starts[::97]
    finally:
        os.close(fd)


def test_a_grown_file_is_indexed_from_its_old_last_block_on(tmp_path: Path) -> None:
    target = tmp_path / "grow.log"
    raw = _numbered_lines(20_000)  # ~250 KB: several blocks, the last one partial
    target.write_bytes(raw)
    indexes = LineIndexes()
    first = _indexed(indexes, target)
    assert first.sha256 is None  # not asked for
    with target.open("ab") as handle:
        handle.write(b"appended line\nand a partial one")
    grown = _indexed(indexes, target)
    _check(grown, target)
    assert (
        grown.newlines[: first.last_block_start // BLOCK + 1]
        == first.newlines[: first.last_block_start // BLOCK + 1]
    )
    assert _indexed(indexes, target, sha256=True).sha256 == hashlib.sha256(target.read_bytes()).hexdigest()
    # Only the bytes from the old last block on were read: a newline blanked before it (in place,
    # past the head) is not seen by the next extension, which a full scan would see.
    with target.open("r+b") as handle:
        handle.seek(HEAD_BYTES + 10)
        at = HEAD_BYTES + 10 + handle.read(200).index(b"\n")
        handle.seek(at)
        handle.write(b" ")
        handle.seek(0, os.SEEK_END)
        handle.write(b"\n")
    assert _indexed(indexes, target).total_lines == grown.total_lines


@pytest.mark.parametrize("change", ["same size", "truncated", "replaced", "old last block rewritten"])
def test_a_file_changed_otherwise_is_indexed_again(tmp_path: Path, change: str) -> None:
    target = tmp_path / "f.log"
    raw = _numbered_lines(20_000)
    target.write_bytes(raw)
    indexes = LineIndexes()
    _indexed(indexes, target, sha256=True)
    if change == "same size":
        target.write_bytes(raw.replace(b"line", b"LINE"))
        stat = target.stat()
        os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    elif change == "truncated":
        os.truncate(target, len(raw) // 3)
    elif change == "replaced":  # a new inode, longer than the old file and starting like it
        spare = tmp_path / "new.log"
        spare.write_bytes(raw[:1000] + b"\n" * 5000 + raw)
        os.replace(spare, target)
    else:  # grown, but the block that held the old end is not what it was
        target.write_bytes(raw[:-10] + b"\n\n\n\n\n\n\n\n\n\n" + b"more\n")
    index = _indexed(indexes, target, sha256=True)
    _check(index, target)
    assert index.sha256 == hashlib.sha256(target.read_bytes()).hexdigest()


async def test_readfile_hashes_a_large_text_file_only_when_asked(tmp_path: Path) -> None:
    raw = b"x" * 99 + b"\n"
    (tmp_path / "big.log").write_bytes(raw * (HASH_UP_TO // 100 + 1))
    (tmp_path / "small.log").write_bytes(raw)
    async with connect(config_for(tmp_path)) as client:
        big = await client.call_tool("readfile", {"path": "big.log", "tail": 1})
        asked = await client.call_tool("readfile", {"path": "big.log", "tail": 1, "sha256": True})
        small = await client.call_tool("readfile", {"path": "small.log"})
    assert "sha256" not in big.structured_content and big.structured_content["content"] == raw.decode()
    whole = (tmp_path / "big.log").read_bytes()
    assert asked.structured_content["sha256"] == hashlib.sha256(whole).hexdigest()
    assert small.structured_content["sha256"] == hashlib.sha256(raw).hexdigest()


async def test_the_tail_of_a_growing_large_file_is_right(tmp_path: Path) -> None:
    target = tmp_path / "big.log"
    with target.open("wb") as handle:  # 8 MiB of numbered lines
        for start in range(0, 100_000, 10_000):
            handle.write("".join(f"{n:08d} {'y' * 74}\n" for n in range(start, start + 10_000)).encode())
    async with connect(config_for(tmp_path)) as client:
        for more in range(3):  # counted once (over HASH_UP_TO: not by a tail), then extended
            args = {"path": "big.log", "tail": 2, **({} if more else {"countLines": True})}
            result = await client.call_tool("readfile", args)
            data = result.structured_content
            total = 100_000 + more
            assert data["totalLines"] == total and (data["startLine"], data["endLine"]) == (total - 1, total)
            assert (
                data["content"].splitlines()[-1].startswith(f"{total - 1:08d} " if not more else "appended")
            )
            with target.open("ab") as handle:
                handle.write(b"appended\n")


async def test_the_budget_counts_the_text_once(tmp_path: Path) -> None:
    """Each copy of the window (the text item, structuredContent) may use the whole budget: the
    window of an explicit limit is cut at the budget, not at half of it (issue 31)."""
    (tmp_path / "wide.txt").write_bytes(("z" * 99 + "\n").encode() * 200)  # 20,000 characters
    async with connect(config_for(tmp_path, limits={"max_result_chars": 10_000})) as client:
        result = await client.call_tool("readfile", {"path": "wide.txt", "limit": 200})
    data = result.structured_content
    assert wire_chars(result) <= 10_000
    assert 9000 <= len(data["content"]) <= 10_000 and data["truncated"] is True
    assert text_of(result).startswith(data["content"])


async def test_the_server_keeps_the_line_index_between_calls(tmp_path: Path) -> None:
    """The workspace's index cache is used from the first call on (an empty cache once read as
    false, so every call scanned the whole file): a newline blanked in place before the old last
    block, then a line appended, is not seen, because only the appended part is read."""
    target = tmp_path / "grow.log"
    target.write_bytes(_numbered_lines(100_000))  # over HASH_UP_TO: not hashed, so extended
    assert target.stat().st_size > HASH_UP_TO
    async with connect(config_for(tmp_path)) as client:
        first = await client.call_tool("readfile", {"path": "grow.log", "tail": 1, "countLines": True})
        with target.open("r+b") as handle:
            handle.seek(HEAD_BYTES + 10)
            at = HEAD_BYTES + 10 + handle.read(200).index(b"\n")
            handle.seek(at)
            handle.write(b" ")
            handle.seek(0, os.SEEK_END)
            handle.write(b"appended\n")
        second = await client.call_tool("readfile", {"path": "grow.log", "tail": 1})
    assert second.structured_content["totalLines"] == first.structured_content["totalLines"] + 1
    assert second.structured_content["content"] == "appended\n"
