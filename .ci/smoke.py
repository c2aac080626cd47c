"""Start an installed mcp-localtools over stdio with the MCP SDK client, list its tools and read a file.

Usage: ``python .ci/smoke.py COMMAND [ARG...]``, e.g. ``python .ci/smoke.py mcp-localtools`` or
``python .ci/smoke.py uvx --from dist/mcp_localtools-0.1.0-py3-none-any.whl mcp-localtools``.
The command gets ``--root`` of a fresh temporary folder. Prints one line with the number of tools
and the seconds from start to the first answer; exits non-zero when anything fails. Runs on Linux,
macOS and Windows (the release workflow's matrix and ``.ci/package``).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters


async def smoke(command: list[str]) -> str:
    """Serve a temporary root with ``command``; returns the summary line."""
    with tempfile.TemporaryDirectory(prefix="mcp-localtools-smoke.") as folder:
        root = Path(folder)
        (root / "hello.txt").write_text("hello from the smoke test\n", encoding="utf-8")
        # Resolved here: the server starts in the temporary folder, where a relative path fails.
        named = Path(command[0])
        executable = str(named.resolve()) if len(named.parts) > 1 else shutil.which(command[0]) or command[0]
        params = StdioServerParameters(
            command=executable,
            args=[*command[1:], "--root", str(root)],
            cwd=folder,
            env=dict(os.environ),  # uvx needs its settings (cache, certificates); the SDK passes a few
        )
        start = time.monotonic()
        with anyio.fail_after(300):
            async with Client(params) as client:
                tools = {tool.name for tool in (await client.list_tools()).tools}
                seconds = time.monotonic() - start
                if "readfile" not in tools:
                    raise SystemExit(f"smoke: no readfile among {sorted(tools)}")
                result = await client.call_tool("readfile", {"path": "hello.txt"})
                text = "".join(getattr(item, "text", "") for item in result.content)
                if result.is_error or "hello from the smoke test" not in text:
                    raise SystemExit(f"smoke: readfile failed: {text[:300]}")
        return f"smoke: {len(tools)} tools, first answer after {seconds:.1f} s: {' '.join(command)}"


def main() -> int:
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    try:
        print(anyio.run(smoke, sys.argv[1:]))
    except Exception as exc:  # noqa: BLE001 - one line for CI; the server's stderr came through above
        raise SystemExit(f"smoke: {' '.join(sys.argv[1:])} failed: {exc!r}") from None
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
