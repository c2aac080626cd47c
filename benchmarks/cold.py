"""Cold start against the SDK floor (issue 35, item 2: ready before the client asks).

One interleaved run of fresh server processes over stdio: ours (this checkout, and optionally
another source tree given with ``--before-src``) and the bare-SDK floor (``floor_server.py``).
For each spawn it measures:

- spawn → the ``initialize`` result (ms): a client such as Claude Code's ``-p`` mode sends its
  model's first request without waiting long for a server;
- spawn → the first ``tools/call`` result (ms): ``statpath`` on ours, ``stat`` on the floor, sent
  right after ``notifications/initialized`` and ``tools/list``;
- the server process's own CPU (user + system) up to that result (ms); a command sandbox started
  in the background is another process, and its CPU (with its children's) is given apart;
- modules loaded before the ``initialize`` result (all, and the server's own package), counted
  from ``python -X importtime`` output in a separate spawn of each, so the timed spawns pay no
  import tracing;
- the bytes of the whole ``tools/list`` result as JSON;

with the load average before and after. Targets: initialize ≤ 1.05 x floor, CPU to the first
result ≤ 1.10 x floor.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import anyio
from anyio.abc import ByteReceiveStream
from harness import Samples, cpu_seconds

HERE = Path(__file__).resolve().parent
FLOOR = [sys.executable, str(HERE / "floor_server.py")]
PROTOCOL = "2025-11-25"


@dataclass
class Contender:
    """One server to spawn: its command, its environment, and what was measured."""

    name: str
    argv: list[str]
    env: dict[str, str]
    call: tuple[str, dict[str, object]]
    package: str
    initialize: Samples = field(default_factory=Samples)
    first_result: Samples = field(default_factory=Samples)
    cpu: Samples = field(default_factory=Samples)
    sandbox_cpu: Samples = field(default_factory=Samples)
    modules: tuple[int, int] = (0, 0)
    list_bytes: int = 0


def _descendants_cpu(pid: int) -> float:
    """CPU seconds (user + system, with reaped children) of every live descendant of ``pid``."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8") as handle:
                parent = int(handle.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(parent, []).append(int(entry))
    total, stack = 0.0, list(children.get(pid, []))
    while stack:
        child = stack.pop()
        try:
            total += cpu_seconds(child)
        except OSError:
            continue
        stack.extend(children.get(child, []))
    return total


def _request(ident: int, method: str, params: dict[str, object]) -> bytes:
    return (json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, "params": params}) + "\n").encode()


def _imports(trace: IO[bytes], package: str) -> tuple[int, int]:
    """(modules, modules of ``package``) in ``python -X importtime`` output so far."""
    trace.seek(0)
    lines = [line for line in trace.read().decode().splitlines() if line.startswith("import time:")]
    names = [line.rsplit("|", 1)[1].strip() for line in lines[1:]]
    return len(names), sum(1 for name in names if name.startswith(package))


class _Replies:
    """JSON-RPC replies read off a server's stdout, by id."""

    def __init__(self, stdout: ByteReceiveStream) -> None:
        self.stdout = stdout
        self.buffer = bytearray()

    async def of(self, ident: int) -> dict[str, object]:
        while True:
            while (end := self.buffer.find(b"\n")) != -1:
                message = json.loads(bytes(self.buffer[:end]))
                del self.buffer[: end + 1]
                if message.get("id") == ident:
                    return dict(message)
            self.buffer.extend(await self.stdout.receive())


async def _spawn_once(contender: Contender, cwd: str, *, trace: bool = False) -> dict[str, float]:
    """Spawn the server, initialize, list the tools, call one tool; the timings (seconds)."""
    argv = [contender.argv[0], "-X", "importtime", *contender.argv[1:]] if trace else contender.argv
    with tempfile.TemporaryFile() as traced:
        start = time.perf_counter()
        process = await anyio.open_process(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=traced if trace else subprocess.DEVNULL,
            cwd=cwd,
            env=contender.env,
        )
        assert process.stdin is not None and process.stdout is not None
        replies = _Replies(process.stdout)
        out: dict[str, float] = {}
        try:
            init = {
                "protocolVersion": PROTOCOL,
                "capabilities": {},
                "clientInfo": {"name": "cold", "version": "1"},
            }
            await process.stdin.send(_request(1, "initialize", init))
            await replies.of(1)
            out["initialize"] = time.perf_counter() - start
            if trace:
                out["modules"], out["own_modules"] = _imports(traced, contender.package)
            notice = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            await process.stdin.send((json.dumps(notice) + "\n").encode())
            await process.stdin.send(_request(2, "tools/list", {}))
            listed = await replies.of(2)
            out["list_bytes"] = len(json.dumps(listed["result"], separators=(",", ":")).encode())
            name, arguments = contender.call
            await process.stdin.send(_request(3, "tools/call", {"name": name, "arguments": arguments}))
            called = await replies.of(3)
            out["first_result"] = time.perf_counter() - start
            out["cpu"] = cpu_seconds(process.pid)
            out["sandbox_cpu"] = _descendants_cpu(process.pid)
            result = called.get("result")
            if not isinstance(result, dict) or result.get("isError"):
                raise RuntimeError(f"{contender.name}: {name} failed: {called}")
        finally:
            await process.stdin.aclose()
            with anyio.move_on_after(5):
                await process.wait()
            if process.returncode is None:
                process.kill()
                await process.wait()
    return out


async def measure(contenders: Sequence[Contender], runs: int, cwd: str) -> None:
    """Warm each once (byte-compiled files, page cache), trace its imports once, then ``runs``
    interleaved timed spawns, the order rotated each round."""
    for contender in contenders:
        await _spawn_once(contender, cwd)
        traced = await _spawn_once(contender, cwd, trace=True)
        contender.modules = (int(traced["modules"]), int(traced["own_modules"]))
        contender.list_bytes = int(traced["list_bytes"])
    for index in range(runs):
        order = list(contenders[index % len(contenders) :]) + list(contenders[: index % len(contenders)])
        for contender in order:
            out = await _spawn_once(contender, cwd)
            contender.initialize.add(out["initialize"])
            contender.first_result.add(out["first_result"])
            contender.cpu.add(out["cpu"])
            contender.sandbox_cpu.add(out["sandbox_cpu"])


def contenders(options: argparse.Namespace, root: Path, cache: Path) -> list[Contender]:
    """Ours (this checkout), ours before (``--before-src``), and the floor; ``cache`` holds
    the start-up cache (written by the warm-up spawn, read by the timed ones)."""
    base = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    base["XDG_CACHE_HOME"] = str(cache)
    ours_argv = [sys.executable, "-m", "mcp_localtools", "--root", str(root)]
    stat = ("statpath", {"path": str(root / "small.txt")})
    found = [Contender("ours", ours_argv, base, stat, "mcp_localtools")]
    if options.before_src:
        before_env = {**base, "PYTHONPATH": str(Path(options.before_src).resolve())}
        found.append(Contender("before", ours_argv, before_env, stat, "mcp_localtools"))
    found.append(Contender("floor", FLOOR, base, ("stat", {"path": str(root / "small.txt")}), "floor_server"))
    return found


def table(found: Sequence[Contender]) -> str:
    floor = found[-1]
    rows = [
        "| server | spawn → initialize (median / p95 ms) | x floor | spawn → first result (median ms) | "
        "x floor | server CPU to first result (median ms) | x floor | sandbox CPU, apart (median ms) | "
        "modules before initialize (all / own) | tools/list bytes |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for contender in found:
        rows.append(
            f"| {contender.name} | {contender.initialize.median * 1000:.0f} / "
            f"{contender.initialize.p95 * 1000:.0f} | "
            f"{contender.initialize.median / floor.initialize.median:.2f} | "
            f"{contender.first_result.median * 1000:.0f} | "
            f"{contender.first_result.median / floor.first_result.median:.2f} | "
            f"{contender.cpu.median * 1000:.0f} | {contender.cpu.median / floor.cpu.median:.2f} | "
            f"{contender.sandbox_cpu.median * 1000:.0f} | {contender.modules[0]} / {contender.modules[1]} | "
            f"{contender.list_bytes:,} |"
        )
    return "\n".join(rows)


def byte_compile(options: argparse.Namespace) -> None:
    """Byte-compile ours (and ``--before-src``) as an installed wheel is: an editable checkout
    under ``PYTHONDONTWRITEBYTECODE=1`` would compile every module without a fresh ``.pyc`` at
    every spawn (26 modules, ~40 ms of CPU, seen on this machine)."""
    import compileall

    import mcp_localtools

    trees = [Path(mcp_localtools.__file__).resolve().parent]
    if options.before_src:
        trees.append(Path(options.before_src).resolve() / "mcp_localtools")
    for tree in trees:
        compileall.compile_dir(tree, quiet=1)


def run(options: argparse.Namespace) -> str:
    """The ``cold`` section of RESULTS.md."""
    runs = max(options.runs, 5)
    byte_compile(options)
    with tempfile.TemporaryDirectory() as name, tempfile.TemporaryDirectory() as cache:
        root = Path(name)
        (root / "small.txt").write_text("small file\n", encoding="utf-8")
        found = contenders(options, root, Path(cache))
        load_before = os.getloadavg()
        anyio.run(measure, found, runs, name)
        load_after = os.getloadavg()
    block = options.machine() + (
        f"- runs: {runs} interleaved spawns of each (after byte-compiling ours, one warm-up and one "
        f"`-X importtime` spawn each); protocol {PROTOCOL}; ours: `python -m mcp_localtools --root DIR`"
        + (f", before: the same with `PYTHONPATH={options.before_src}`" if options.before_src else "")
        + "; the floor: `benchmarks/floor_server.py`\n"
        f"- load average (1/5/15 min) before: {' / '.join(f'{v:.2f}' for v in load_before)}, after: "
        f"{' / '.join(f'{v:.2f}' for v in load_after)}\n"
        "- targets: spawn → initialize ≤ 1.05 x floor; server CPU to the first result ≤ 1.10 x floor\n\n"
    )
    return block + table(found)
