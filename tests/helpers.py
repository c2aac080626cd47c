"""Test helpers: configs rooted in a directory, the SDK's in-memory client, real test files."""

from __future__ import annotations

import io
import json
import os
import queue
import shlex
import shutil
import struct
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import CallToolResult, TextContent

from mcp_localtools.config import Config, parse_config
from mcp_localtools.server import ERROR_META_KEY, build_server


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


def error_code(result: CallToolResult) -> str | None:
    """The stable error code an error result carries on the wire (``_meta``), None for a success."""
    if not result.is_error:
        return None
    meta = result.meta or {}
    assert ERROR_META_KEY in meta, f"an error result without its code: {meta!r}"
    code: str = meta[ERROR_META_KEY]["code"]
    return code


def wire_chars(result: CallToolResult) -> int:
    """What a result costs against ``max_result_chars``: the larger of its two copies, its text
    items and the compact JSON of its structuredContent (characters; ``results.wire_chars``)."""
    text = sum(len(item.text) for item in result.content if isinstance(item, TextContent))
    structured = result.structured_content
    return max(
        text, len(json.dumps(structured, ensure_ascii=False, separators=(",", ":"))) if structured else 0
    )


def text_of(result: CallToolResult) -> str:
    """All text content of a result, joined by newlines."""
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


async def callees_by_symbol(root: Path, name: str, text: str, query: str) -> dict[str, list[str]]:
    """``semanticsearch``'s results for ``query`` over one file ``name`` (``text``) written in
    ``root``: each result's callees by its symbol, through a real client and server."""
    (root / name).write_text(text, encoding="utf-8")
    async with connect(config_for(root)) as client:
        result = await client.call_tool("semanticsearch", {"query": query})
    assert result.structured_content is not None, text_of(result)
    return {hit["symbol"]: hit["callees"] for hit in result.structured_content["results"]}


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


def client_env() -> dict[str, str]:
    """The environment a client gives the server it starts (the SDK's default: ``HOME``, ``PATH``,
    ...), with the test run's cache folder (``XDG_CACHE_HOME``, ``tests/conftest.py``), so that a
    server started over stdio keeps its caches out of the user's."""
    from mcp.client.stdio import get_default_environment

    return {**get_default_environment(), "XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"]}


def installed_command() -> str:
    """The installed ``mcp-localtools`` console script of the interpreter running the tests."""
    candidate = Path(sys.executable).parent / "mcp-localtools"
    found = str(candidate) if candidate.exists() else shutil.which("mcp-localtools")
    if found is None:
        pytest.fail("the mcp-localtools console script is not installed; run pip install -e '.[test]'")
    return found


def best_cpu_seconds(run: Callable[[], object], *, tries: int = 2) -> float:
    """The least CPU time of this thread (``time.thread_time``, in seconds) over ``tries`` runs of
    ``run``: for guards against quadratic slowdowns. Not the wall clock, which the machine's load
    decides: other processes and threads do not add to it, so a ratio of two holds on a busy
    machine as on an idle one."""
    best = float("inf")
    for _ in range(tries):
        began = time.thread_time()
        run()
        best = min(best, time.thread_time() - began)
    return best


INITIALIZE: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"},
    },
}
INITIALIZED: dict[str, Any] = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def call_message(request_id: int, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A raw JSON-RPC ``tools/call`` request."""
    params = {"name": tool, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def raw_stdio_exchange(
    root: Path,
    messages: list[dict[str, Any]],
    *,
    trailing: str = "",
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> tuple[dict[Any, dict[str, Any]], list[dict[str, Any]]]:
    """Run the installed server over stdio with ``root`` as its only root (and ``env`` as its
    environment, default ours), write ``messages`` as one JSON line each (then ``trailing`` as
    is), wait for a reply to every request, close stdin and return ``(replies by id,
    notifications)``. Fails the test if any stdout line is not JSON,
    two replies share an id, or the server does not exit 0 after stdin closes (60 s for each
    stdout line, 30 s to exit; the server's stderr goes to the test's stderr)."""
    expected = {message["id"] for message in messages if "id" in message}
    proc = subprocess.Popen(
        [installed_command(), "--root", str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=None,
        text=True,
        cwd=cwd,
        env=env,
    )
    assert proc.stdin is not None and proc.stdout is not None
    stdout = proc.stdout
    lines: queue.Queue[str] = queue.Queue()

    def feed() -> None:
        for line in stdout:
            lines.put(line)

    reader = threading.Thread(target=feed, daemon=True)
    reader.start()
    replies: list[dict[str, Any]] = []
    try:
        proc.stdin.write("".join(json.dumps(m) + "\n" for m in messages) + trailing)
        proc.stdin.flush()
        while expected - {reply.get("id") for reply in replies}:
            replies.append(json.loads(lines.get(timeout=60)))  # every line must be one JSON-RPC message
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
        reader.join(timeout=30)
        while not lines.empty():
            replies.append(json.loads(lines.get()))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        reader.join(timeout=10)
        if not reader.is_alive():
            stdout.close()
    assert all(reply["jsonrpc"] == "2.0" for reply in replies)
    notifications = [reply for reply in replies if "id" not in reply]
    by_id = {reply["id"]: reply for reply in replies if "id" in reply}
    assert len(by_id) + len(notifications) == len(replies), "two replies share an id"
    return by_id, notifications


@dataclass(frozen=True)
class LiveProcess:
    """One live (non-zombie) process as /proc shows it."""

    pid: int
    name: str
    parent: int
    argv: list[bytes]


def live_processes() -> list[LiveProcess]:
    """Every live (non-zombie) process on the machine, read from /proc."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as handle:
                stat = handle.read()
            with open(f"/proc/{entry.name}/cmdline", "rb") as handle:
                argv = handle.read().split(b"\0")
        except OSError:
            continue
        name, _, rest = stat[stat.index(b"(") + 1 :].rpartition(b")")
        state, parent = rest.split()[:2]
        if state != b"Z":
            found.append(LiveProcess(int(entry.name), name.decode(errors="replace"), int(parent), argv))
    return found


def child_processes(name: str) -> list[int]:
    """Pids of this test process's live children whose command name (``/proc/PID/stat``'s comm,
    the executable's name cut to 15 bytes) is ``name``, such as ``rg``."""
    return [p.pid for p in live_processes() if p.parent == os.getpid() and p.name == name]


def parser_workers() -> list[int]:
    """Pids of this process's live parser workers (``parsers/worker.py``)."""
    return [
        p.pid
        for p in live_processes()
        if p.parent == os.getpid() and any(b"parsers/worker.py" in arg for arg in p.argv)
    ]


def processes_with(marker: str) -> list[int]:
    """Pids of live processes with an argument that starts with ``marker`` (so not the shell
    whose script merely mentions it)."""
    prefix = marker.encode()
    return [p.pid for p in live_processes() if any(arg.startswith(prefix) for arg in p.argv)]


async def wait_until_gone(marker: str, seconds: float = 5) -> None:
    """Return once no process carries ``marker``; fail after ``seconds``."""
    with anyio.fail_after(seconds):
        while processes_with(marker):
            await anyio.sleep(0.02)


_MEASURED_CALL = """
import asyncio, json, sys
from mcp_localtools.config import parse_config
from mcp_localtools.tools import build_registry

def hwm_kib():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM"))

config, calls = json.loads(sys.argv[1]), json.loads(sys.argv[2])
registry = build_registry(parse_config(config))
for tool, arguments in calls[:-1]:  # warm: imports, first calls
    asyncio.run(registry.call(tool, arguments))
before = hwm_kib()
tool, arguments = calls[-1]
result = asyncio.run(registry.call(tool, arguments))
grown = hwm_kib() - before
text = "\\n".join(getattr(item, "text", "") for item in result.content)
error = result.error.code if result.error else None
print(json.dumps({"error": error, "grown_kib": grown, "structured": result.structured, "text": text}))
"""


def measured_call(
    config: dict[str, Any],
    tool: str,
    arguments: dict[str, Any],
    *,
    warm: Sequence[tuple[str, dict[str, Any]]] = (),
    timeout: float = 300,
) -> dict[str, Any]:
    """Run ``registry.call(tool, arguments)`` in a child process of its own (built from the config
    table ``config``) after the ``warm`` calls, and report what it cost: ``grown_kib`` (the growth
    of the child's peak resident memory, VmHWM, during the call), the result's ``error`` code (None
    for a success), ``structured`` and ``text``. Linux only (``/proc``)."""
    done = subprocess.run(
        [sys.executable, "-c", _MEASURED_CALL, json.dumps(config), json.dumps([*warm, (tool, arguments)])],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


def small_disk_command(mounts: dict[Path, str], argv: list[str]) -> list[str] | None:
    """A command running ``argv`` in a private mount namespace where each directory of ``mounts``
    is a fresh tmpfs with those options (``size=64k``, ``nr_inodes=16``): a disk that fills up,
    without ever filling a real one. ``unshare -m`` as root, ``unshare -Urm`` (a user namespace)
    otherwise; None where neither works (not Linux, no unshare, namespaces refused)."""
    unshare = shutil.which("unshare")
    if sys.platform != "linux" or unshare is None:
        return None
    flags = "-m" if os.geteuid() == 0 else "-Urm"
    mounting = " && ".join(
        f"mount -t tmpfs -o {options} tmpfs {shlex.quote(str(where))}" for where, options in mounts.items()
    )
    probe = subprocess.run([unshare, flags, "sh", "-c", "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        return None
    return [unshare, flags, "sh", "-c", f'{mounting} && exec "$@"', "sh", *argv]


def direct_children(*, defunct: bool = False) -> list[tuple[int, str]]:
    """``(pid, name)`` of this process's children (only those exited but never collected:
    ``defunct``)."""
    found = []
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        try:
            children = (task / "children").read_text(encoding="ascii").split()
        except OSError:  # a thread that ended meanwhile
            continue
        for child in children:
            try:
                stat = Path(f"/proc/{child}/stat").read_text(encoding="ascii", errors="replace")
            except OSError:
                continue
            name, state = stat[stat.index("(") + 1 : stat.rindex(")")], stat[stat.rindex(")") + 2]
            if state == "Z" or not defunct:
                found.append((int(child), name))
    return found


LONG_BYTES = 65_536
"""The longest command the default policy takes (``max_command_length``)."""


def filled(head: str, unit: str, tail: str = "", size: int = LONG_BYTES, *, whole: bool = False) -> str:
    """``head``, then ``unit`` repeated, then ``tail``: ``size`` characters in all. The last
    ``unit`` is cut, or with ``whole`` only whole ones are written and a comment (``#...``) fills
    the rest."""
    room = size - len(head) - len(tail)
    if whole:
        count = room // len(unit)
        return head + unit * count + "#" * (room - count * len(unit)) + tail
    return head + (unit * (room // len(unit) + 1))[:room] + tail


LONG_SHAPES: dict[str, Callable[[int], str]] = {
    "one long word": lambda n: filled("echo ", "a", size=n),
    "many short words": lambda n: filled("echo", " ab", size=n),
    "nested quotes and substitutions": lambda n: filled(
        "", 'echo "$(echo "\'$x\'" `echo y`)";', size=n, whole=True
    ),
    "many semicolons": lambda n: filled("", "true;", size=n, whole=True),
    "a fork-bomb-like prefix": lambda n: filled("", "a", "(){ a|a& };", size=n),
    "colons": lambda n: filled("", ":", size=n),
    "dd words": lambda n: filled("echo ", "dd ", size=n),
    "curl words": lambda n: filled("echo ", "curl ", size=n),
    "chmod options": lambda n: filled("echo ", "chmod -", size=n),
    "shell words": lambda n: filled("echo ", "sh ", size=n),
    "quoted pipes": lambda n: filled("echo '", "|", "'", size=n),
    "quoted substitutions": lambda n: filled("echo '", "$(", "'", size=n),
    "nested braces": lambda n: "{" * (n // 4) + "a,}" * (n // 4),
}
"""Commands of one shape at any length: each pattern, heuristic and scanner step has one that
made it backtrack (quadratic: ``echo aaa...`` of 65,536 bytes took 21 s, ``dd dd dd ...`` 12 s)."""
