"""The SDK floor: the smallest useful MCPServer on the same SDK, for the benchmark's reference.

Four tools doing the same work as ours with nothing around it: ``stat`` (an os.stat), ``read``
(a whole UTF-8 file), ``window`` (whole lines from a byte offset, for a walk through a file in
as many calls as ours) and ``echo`` (``sh -c 'echo hi'`` as an async subprocess). What any Python
server on this SDK pays is what this pays; the difference to ours is what mcp-localtools adds.
Run: ``python benchmarks/floor_server.py`` (stdio).
"""

from __future__ import annotations

import os
import subprocess

import anyio
from mcp.server import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("sdk-floor")
READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)


@server.tool(annotations=READ_ONLY)
def stat(path: str) -> dict[str, object]:
    """Size, modification time and type of a path."""
    info = os.stat(path)
    return {"path": path, "sizeBytes": info.st_size, "modTime": info.st_mtime, "isDir": os.path.isdir(path)}


@server.tool(annotations=READ_ONLY)
def read(path: str) -> str:
    """The whole content of a UTF-8 text file."""
    with open(path, encoding="utf-8") as handle:
        return handle.read()


@server.tool(annotations=READ_ONLY)
def window(path: str, offset: int = 0, length: int = 44_000) -> dict[str, object]:
    """Whole lines of a UTF-8 text file from byte ``offset``, at most ``length`` bytes of them,
    and the byte offset of the next window (None at the end)."""
    with open(path, "rb") as handle:
        handle.seek(offset)
        data = handle.read(length)
    end = data.rfind(b"\n") + 1 if len(data) == length else len(data)
    end = end or len(data)
    following = offset + end if len(data) == length else None
    return {"content": data[:end].decode(errors="replace"), "nextOffset": following}


@server.tool()
async def echo(command: str = "echo hi") -> str:
    """Run a shell command and return its standard output."""
    done = await anyio.run_process(["sh", "-c", command], stdin=subprocess.DEVNULL, check=False)
    return done.stdout.decode()


if __name__ == "__main__":
    server.run()
