"""Result sizes on the wire (issue 14, the one result budget): what a few large results cost.

For each case it prints the characters of the text items, of the compact JSON of
``structuredContent``, their sum (what ``[limits] max_result_chars`` bounds), and the bytes of the
whole ``CallToolResult`` as JSON. Cases: ``readfile`` of a 200 KB text file, ``shellcommand``
``seq 1 200000``, ``directorytree`` of 20,000 files (``maxEntries`` 10,000), ``readtextrange`` of
2000 lines. The server is built in process and called through the SDK's in-memory client.

Run it against any checkout: ``PYTHONPATH=CHECKOUT/src python benchmarks/result_sizes.py``.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from mcp_localtools.config import parse_config
from mcp_localtools.server import build_server


def _sizes(result: Any) -> tuple[int, int, int]:
    text = sum(len(item.text) for item in result.content if getattr(item, "type", "") == "text")
    structured = result.structured_content
    data = len(json.dumps(structured, ensure_ascii=False, separators=(",", ":"))) if structured else 0
    wire = len(result.model_dump_json(by_alias=True, exclude_none=True).encode())
    return text, data, wire


async def main() -> None:
    with tempfile.TemporaryDirectory() as name:
        root = Path(name)
        (root / "big.txt").write_text("".join(f"line {n} of a 200 KB file\n" for n in range(8000)))
        for top in range(100):
            directory = root / "tree" / f"dir{top:03}"
            directory.mkdir(parents=True)
            for index in range(200):
                (directory / f"file-{index:03}.txt").write_bytes(b"x")
        config = parse_config({"paths": {"allowed_roots": [str(root)]}})
        cases = [
            ("readfile 200 KB", "readfile", {"path": "big.txt"}),
            ("readtextrange 2000 lines", "readtextrange", {"path": "big.txt"}),
            ("shellcommand seq 1 200000", "shellcommand", {"commands": ["seq 1 200000"]}),
            ("directorytree 20k files", "directorytree", {"path": "tree", "maxEntries": 10_000}),
        ]
        async with Client(build_server(config, environ=dict(os.environ))) as client:
            print("| case | text chars | structured JSON chars | sum | CallToolResult bytes |")
            print("|---|---|---|---|---|")
            for label, tool, arguments in cases:
                text, data, wire = _sizes(await client.call_tool(tool, arguments))
                print(f"| {label} | {text:,} | {data:,} | {text + data:,} | {wire:,} |")


if __name__ == "__main__":
    anyio.run(main)
