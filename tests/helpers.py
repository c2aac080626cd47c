"""Test helpers: configs rooted in a directory, the SDK's in-memory client, real test files."""

from __future__ import annotations

import io
import os
import shutil
import struct
import sys
import zlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import CallToolResult, TextContent

from mcp_localtools.config import Config, parse_config
from mcp_localtools.server import build_server


def config_for(root: Path, **sections: dict[str, Any]) -> Config:
    """A config whose only root is ``root``; ``sections`` add TOML tables (``paths={...}``)."""
    data: dict[str, Any] = {name: dict(values) for name, values in sections.items()}
    data.setdefault("paths", {}).setdefault("allowed_roots", [str(root)])
    return parse_config(data)


@asynccontextmanager
async def connect(config: Config, *, mode: str = "auto") -> AsyncIterator[Client]:
    """The SDK's real client, connected in memory to a server built from ``config``."""
    async with Client(build_server(config), mode=mode, raise_exceptions=True) as client:
        yield client


def text_of(result: CallToolResult) -> str:
    """All text content of a result, joined by newlines."""
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


def make_png(width: int = 4, height: int = 3, color: str = "red") -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (width, height), color).save(buffer, "PNG")
    return buffer.getvalue()


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def make_large_png(width: int, height: int) -> bytes:
    """A real RGB PNG of any size with many colours (a diagonal gradient), written row by row so
    that even 10000 x 10000 costs no memory here: every row after the first is the PNG "Up"
    filter with a constant difference, which compresses to almost nothing."""
    compressor = zlib.compressobj(6)
    first = b"\x00" + bytes((x * 3 + channel * 85) % 256 for x in range(width) for channel in range(3))
    up = b"\x02" + b"\x01" * (3 * width)
    idat = [compressor.compress(first)]
    for _ in range((height - 1) // 64):
        idat.append(compressor.compress(up * 64))
    idat += [compressor.compress(up * ((height - 1) % 64)), compressor.flush()]
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"".join(
        [
            b"\x89PNG\r\n\x1a\n",
            _png_chunk(b"IHDR", header),
            _png_chunk(b"IDAT", b"".join(idat)),
            _png_chunk(b"IEND", b""),
        ]
    )


def make_bomb_png(width: int, height: int) -> bytes:
    """A decompression bomb: a few hundred bytes whose header declares a width x height canvas."""
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    idat = zlib.compress(b"\x00" * 4096)
    return b"".join(
        [
            b"\x89PNG\r\n\x1a\n",
            _png_chunk(b"IHDR", header),
            _png_chunk(b"IDAT", idat),
            _png_chunk(b"IEND", b""),
        ]
    )


def make_pdf(pages: list[str]) -> bytes:
    """A real PDF whose pages carry the given text in a Helvetica text layer."""
    from pypdf import PdfWriter
    from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

    writer = PdfWriter()
    font = writer._add_object(
        DictionaryObject(
            {
                NameObject("/Type"): NameObject("/Font"),
                NameObject("/Subtype"): NameObject("/Type1"),
                NameObject("/BaseFont"): NameObject("/Helvetica"),
            }
        )
    )
    for text in pages:
        page = writer.add_blank_page(612, 792)
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})}
        )
        stream = DecodedStreamObject()
        stream.set_data(f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode())
        page[NameObject("/Contents")] = writer._add_object(stream)
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def make_scanned_pdf() -> bytes:
    """A PDF of one image page: no text layer, like a scan."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (60, 80), "white").save(buffer, "PDF")
    return buffer.getvalue()


def installed_command() -> str:
    """The installed ``mcp-localtools`` console script of the interpreter running the tests."""
    candidate = Path(sys.executable).parent / "mcp-localtools"
    found = str(candidate) if candidate.exists() else shutil.which("mcp-localtools")
    if found is None:
        pytest.fail("the mcp-localtools console script is not installed; run pip install -e '.[test]'")
    return found


def other_device_dir(near: Path) -> Path | None:
    """A fresh directory on a different filesystem than ``near`` (``/dev/shm``), or None.

    The caller removes it (``shutil.rmtree``).
    """
    import tempfile

    shm = Path("/dev/shm")
    if not shm.is_dir() or not os.access(shm, os.W_OK) or shm.stat().st_dev == near.stat().st_dev:
        return None
    return Path(tempfile.mkdtemp(prefix="mcp-localtools-test-", dir=shm))


def parser_workers() -> list[int]:
    """Pids of this process's live parser workers (``parsers/worker.py``), from /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text(encoding="utf-8")
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        state, parent = fields[0], int(fields[1])
        if parent == os.getpid() and state != "Z" and b"parsers/worker.py" in cmdline:
            found.append(int(entry.name))
    return found
