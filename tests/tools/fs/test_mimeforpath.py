"""mimeforpath through the SDK client: the extension table first, then sniffing; what it refuses."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest
from mcp import Client

from tests.helpers import config_for, connect, error_code, make_pdf, make_png, text_of

pytestmark = pytest.mark.anyio


async def test_a_known_extension_is_answered_without_the_file(client: Client, tmp_path: Path) -> None:
    data = (await client.call_tool("mimeforpath", {"path": "not-there.md"})).structured_content
    assert data["mimeType"] == "text/markdown; charset=utf-8"
    assert data["method"] == "extension" and data["mode"] == "text"
    assert data["extension"] == ".md" and data["normalizedExtension"] == ".md"


async def test_an_unknown_extension_is_sniffed(client: Client, tmp_path: Path) -> None:
    (tmp_path / "image.dat").write_bytes(make_png())
    (tmp_path / "README").write_text("plain words\n", encoding="utf-8")
    (tmp_path / "doc.bin").write_bytes(make_pdf(["x"]))
    png = (await client.call_tool("mimeforpath", {"path": "image.dat"})).structured_content
    assert (png["mimeType"], png["mode"], png["method"]) == ("image/png", "image", "sniff")
    text = (await client.call_tool("mimeforpath", {"path": "README"})).structured_content
    assert text["baseMIMEType"] == "text/plain" and text["method"] == "sniff" and "extension" not in text
    pdf = (await client.call_tool("mimeforpath", {"path": "doc.bin"})).structured_content
    assert pdf["mimeType"] == "application/pdf" and pdf["mode"] == "document"


async def test_an_unknown_extension_needs_an_existing_regular_file(client: Client, tmp_path: Path) -> None:
    (tmp_path / "d.dat").mkdir()
    missing = await client.call_tool("mimeforpath", {"path": "nope.dat"})
    assert error_code(missing) == "not_found"
    directory = await client.call_tool("mimeforpath", {"path": "d.dat"})
    assert error_code(directory) == "not_a_file"


async def test_a_fifo_is_refused_without_hanging_and_named(client: Client, tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.dat")
    with anyio.fail_after(30):
        result = await client.call_tool("mimeforpath", {"path": "pipe.dat"})
    assert error_code(result) == "not_a_file"
    assert f"expected a regular file: {tmp_path / 'pipe.dat'} is a FIFO" in text_of(result)


async def test_binary_noise_is_an_octet_stream(client: Client, tmp_path: Path) -> None:
    (tmp_path / "noise.qqq").write_bytes(bytes(range(256)))
    data = (await client.call_tool("mimeforpath", {"path": "noise.qqq"})).structured_content
    assert data["mimeType"] == "application/octet-stream" and data["mode"] == "default"


async def test_base_mime_type_strips_parameters(client: Client) -> None:
    data = (await client.call_tool("mimeforpath", {"path": "x.txt"})).structured_content
    assert data["mimeType"] == "text/plain; charset=utf-8"
    assert data["baseMIMEType"] == "text/plain"


async def test_a_symlink_is_followed_unless_blocked_and_a_path_outside_the_roots_is_refused(
    tmp_path: Path,
) -> None:
    (tmp_path / "real.dat").write_bytes(b"abc")
    (tmp_path / "link.dat").symlink_to("real.dat")
    async with connect(config_for(tmp_path)) as client:
        followed = await client.call_tool("mimeforpath", {"path": "link.dat"})
        outside = await client.call_tool("mimeforpath", {"path": "/etc/hosts.md"})
    assert not followed.is_error and followed.structured_content["baseMIMEType"] == "text/plain"
    assert error_code(outside) == "outside_roots"
    async with connect(config_for(tmp_path, paths={"block_symlinks": True})) as client:
        blocked = await client.call_tool("mimeforpath", {"path": "link.dat"})
    assert error_code(blocked) == "symlink_refused"
