"""Result sizes on the wire (issue 14, the one result budget; issue 35, what a model sees whole):
the largest result of every tool, both copies.

For every tool it runs the cases of ``tests/test_result_budget.py`` (big files, trees, outputs
and a 2.4 MB page in a temporary directory, under the default configuration) and prints, for the
largest result of each tool, the characters of its text items, of the compact JSON of its
``structuredContent`` (``ensure_ascii=False``, as Claude Code forwards it), the bytes of the whole
``CallToolResult`` as JSON, and whether it was cut. Either copy must stay within
``[limits] max_result_chars`` (45,000 by default; Claude Code shows about 50,000 inline).

Run it from a checkout: ``.venv/bin/python benchmarks/result_sizes.py``.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import anyio
from mcp import Client

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the cases live in tests/

from tests.test_result_budget import (
    copies,
    largest_results,
    make_project,
    page_site,
    server_config,
    was_cut,
)

from mcp_localtools.server import build_server


async def main() -> None:
    with tempfile.TemporaryDirectory() as name, page_site() as url:
        root = Path(name)
        make_project(root)
        config = server_config(root)
        budget = config.limits.max_result_chars
        async with Client(build_server(config, environ=dict(os.environ)), mode="legacy") as client:
            results = await largest_results(client, root, url)
        print(f"max_result_chars = {budget:,} (per copy)\n")
        print("| tool | text chars | structured JSON chars | CallToolResult bytes | cut |")
        print("|---|---|---|---|---|")
        worst = 0
        for tool, calls in sorted(results.items()):
            largest = max(calls, key=lambda result: max(copies(result)))
            text, data = copies(largest)
            wire = len(largest.model_dump_json(by_alias=True, exclude_none=True).encode())
            worst = max(worst, text, data)
            print(f"| {tool} | {text:,} | {data:,} | {wire:,} | {'yes' if was_cut(largest) else ''} |")
        print(f"\nlargest copy: {worst:,} characters ({'within' if worst <= budget else 'OVER'} the budget)")


if __name__ == "__main__":
    anyio.run(main)
