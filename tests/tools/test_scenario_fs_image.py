"""The seed's filesystem + image integration scenario, one call after another
through the SDK client on real files, as a model would drive it."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import ImageContent

from tests.helpers import make_png, text_of

pytestmark = pytest.mark.anyio


async def call(client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    assert not result.is_error, f"{tool}: {text_of(result)}"
    data: dict[str, Any] = result.structured_content or {}
    return data


async def test_the_fs_and_image_scenario(client: Client, tmp_path: Path) -> None:
    payload = bytes(range(256)) * 5
    encoded = base64.b64encode(payload).decode()
    await call(
        client,
        "writefile",
        {"path": "bin/data.bin", "content": encoded, "encoding": "binary", "createParents": True},
    )
    assert (tmp_path / "bin" / "data.bin").read_bytes() == payload

    stat = await call(client, "statpath", {"path": "bin/data.bin"})
    assert stat["sizeBytes"] == len(payload)
    mime = await call(client, "mimeforpath", {"path": "bin/data.bin"})
    assert mime["mimeType"]

    binary = await client.call_tool("readfile", {"path": "bin/data.bin", "encoding": "binary"})
    assert not binary.is_error, text_of(binary)
    # Neither an image nor a PDF: base64 as text, which every client accepts (issue 15).
    assert base64.b64decode(binary.structured_content["contentBase64"]) == payload

    await call(client, "writefile", {"path": "notes.txt", "content": "TODO: one\n"})
    await call(client, "writefile", {"path": "more.txt", "content": "x\nTODO: two\n"})
    listing = await call(client, "listdirectory", {"path": ".", "pattern": "*.txt"})
    assert [entry["name"] for entry in listing["entries"]] == ["more.txt", "notes.txt"]

    found = await call(client, "searchfiles", {"pattern": "TODO: (one|two)"})
    assert found["files"] == ["more.txt", "notes.txt"]
    lines = await call(client, "searchfiles", {"pattern": "TODO: (one|two)", "outputMode": "matches"})
    assert [(m["path"], m["lineNumber"]) for m in lines["matches"]] == [
        ("more.txt", 2),
        ("notes.txt", 1),
    ]

    trashed = await call(client, "deletefile", {"path": "notes.txt", "trashDir": "trash"})
    assert (await call(client, "statpath", {"path": "notes.txt"}))["exists"] is False
    assert (await call(client, "statpath", {"path": trashed["trashedPath"]}))["exists"] is True
    assert Path(trashed["trashedPath"]).read_text(encoding="utf-8") == "TODO: one\n"
    assert Path(trashed["trashedPath"]).is_relative_to(tmp_path / "trash")

    png = make_png(1, 1)
    await call(
        client,
        "writefile",
        {"path": "dot.png", "content": base64.b64encode(png).decode(), "encoding": "binary"},
    )
    meta = await call(client, "readimage", {"path": "dot.png"})
    assert meta["exists"] is True and (meta["width"], meta["height"]) == (1, 1)
    image = await client.call_tool("readfile", {"path": "dot.png", "encoding": "binary"})
    assert not image.is_error, text_of(image)
    [block] = [block for block in image.content if isinstance(block, ImageContent)]
    assert block.mime_type == "image/png" and base64.b64decode(block.data) == png
