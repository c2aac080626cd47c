"""Commands as models call them (issue 34): without ``sessionID``, a connection's first command, and
100 Streamable HTTP sessions at once, each with the sandbox on and off in one interleaved run.

* **first command**: a new stdio connection per sample: ``initialize``, ``tools/list``, a second of
  nothing (the client reading its tools), then ``shellcommand echo hi`` without ``sessionID``; the
  call's time, sandbox on against off (the median of pair differences). Target: at most 30 ms over
  unsandboxed.
* **load**: two HTTP servers (sandbox on, off) on 127.0.0.1; ``SESSIONS`` sessions, ``PARALLEL`` at
  a time, each making ``CALLS`` calls in turn (statpath, readfile, searchfiles, shellcommand
  ``echo hi`` without ``sessionID``); the servers run one after the other, on/off alternating in
  rounds of ``PARALLEL`` sessions. Reported: the server tree's CPU (the server and every descendant,
  reaped ones included) per run, the shell call's p50, and the most sandboxes (bwrap processes
  running the supervisor) and processes alive in the server's tree at any sample, and after the
  load. Target: on <= 1.5 x off in server-tree CPU, at most one sandbox per connection alive, none
  after.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

import anyio
import httpx2
from harness import Samples, linear_stdio, server_command
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

FIRST_TARGET_MS = 30.0
LOAD_TARGET = 1.5
SESSIONS = 100
PARALLEL = 20
CALLS = 20


def _config(work: Path, root: Path, mode: str) -> Path:
    config = work / f"connections-{mode}.toml"
    config.write_text(
        f'[paths]\nallowed_roots = ["{root}"]\n[exec.sandbox]\nmode = "{mode}"\nmax_sandboxes = 200\n'
        "[server]\nmax_sessions = 200\n",
        encoding="utf-8",
    )
    return config


def _root(work: Path) -> Path:
    root = work / "connections-root"
    root.mkdir(parents=True, exist_ok=True)
    for index in range(200):
        (root / f"f{index:03d}.txt").write_text(f"line {index}\nneedle {index}\n" * 20, encoding="utf-8")
    return root


async def _first_command(command: str, config: Path) -> float:
    async with Client(linear_stdio([command, "--config", str(config)]), mode="legacy") as client:
        await client.list_tools()
        await anyio.sleep(1.0)
        start = anyio.current_time()
        result = await client.call_tool("shellcommand", {"commands": ["echo hi"], "shell": "sh"})
        took = anyio.current_time() - start
    if result.is_error:
        raise RuntimeError(f"shellcommand failed: {result.content}")
    return took


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _tree(pid: int) -> list[int]:
    """``pid`` and its live descendants."""
    found, stack = [], [pid]
    while stack:
        current = stack.pop()
        found.append(current)
        try:
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children", encoding="ascii") as handle:
                    stack += [int(child) for child in handle.read().split()]
        except OSError:
            continue
    return found


def _sandboxes(server: int, pids: list[int]) -> int:
    """The sandboxes among ``pids``: the server's bwrap children that run the supervisor (bwrap's
    own child in the new PID namespace, with the same argv, is not counted again)."""
    count = 0
    for pid in pids:
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii")
        except OSError:
            continue
        name, parent = stat[stat.index("(") + 1 : stat.rindex(")")], int(stat.rsplit(")", 1)[1].split()[1])
        count += name == "bwrap" and parent == server and b"MCP_LOCALTOOLS_RUN" in cmdline
    return count


def _tree_cpu(pid: int) -> float:
    """CPU seconds of ``pid``, its reaped children, and its live descendants."""
    total = 0.0
    for member in _tree(pid):
        try:
            with open(f"/proc/{member}/stat", encoding="utf-8") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # utime stime cutime cstime: each live member's own time and its reaped children's
        total += sum(int(value) for value in fields[11:15])
    return total / os.sysconf("SC_CLK_TCK")


class HttpServer:
    def __init__(self, command: str, config: Path, root: Path) -> None:
        self.port = _free_port()
        self.process = subprocess.Popen(
            [
                command,
                "--config",
                str(config),
                "--transport",
                "streamable-http",
                "--port",
                str(self.port),
                "--allow-unauthenticated-loopback",
            ],
            cwd=root,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx2.get(f"http://127.0.0.1:{self.port}/healthz", timeout=1).status_code == 200:
                    break
            except httpx2.TransportError:
                time.sleep(0.1)
        self.shell = Samples()
        self.cpu = 0.0
        self.most_sandboxes = 0
        self.most_processes = 0

    async def session(self) -> None:
        http = httpx2.AsyncClient(timeout=httpx2.Timeout(60, read=300))
        async with http, Client(streamable_http_client(self.url, http_client=http), mode="legacy") as client:
            calls: list[tuple[str, dict[str, Any]]] = [
                ("statpath", {"path": "f001.txt"}),
                ("readfile", {"path": "f002.txt"}),
                ("searchfiles", {"pattern": "needle 7", "outputMode": "files"}),
                ("shellcommand", {"commands": ["echo hi"], "shell": "sh"}),
            ]
            for index in range(CALLS):
                name, args = calls[index % len(calls)]
                start = anyio.current_time()
                result = await client.call_tool(name, args)
                if name == "shellcommand":
                    self.shell.add(anyio.current_time() - start)
                if result.is_error:
                    raise RuntimeError(f"{name} failed: {result.content}")

    async def round(self, sessions: int) -> None:
        before = _tree_cpu(self.process.pid)

        async def watch(done: anyio.Event) -> None:
            while not done.is_set():
                tree = _tree(self.process.pid)
                self.most_sandboxes = max(self.most_sandboxes, _sandboxes(self.process.pid, tree))
                self.most_processes = max(self.most_processes, len(tree) - 1)
                await anyio.sleep(0.05)

        done = anyio.Event()
        async with anyio.create_task_group() as group:
            group.start_soon(watch, done)
            async with anyio.create_task_group() as clients:
                for _ in range(sessions):
                    clients.start_soon(self.session)
            done.set()
        self.cpu += _tree_cpu(self.process.pid) - before

    def left(self) -> tuple[int, int]:
        tree = _tree(self.process.pid)
        return _sandboxes(self.process.pid, tree), len(tree) - 1

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


async def measure(options: argparse.Namespace) -> dict[str, Any]:
    work: Path = options.work
    work.mkdir(parents=True, exist_ok=True)
    root = _root(work)
    command = getattr(options, "server", None) or server_command()
    configs = {mode: _config(work, root, mode) for mode in ("auto", "off")}
    firsts: dict[str, list[float]] = {"auto": [], "off": []}
    for index in range(max(4, options.runs // 5)):
        for mode in ("auto", "off") if index % 2 == 0 else ("off", "auto"):
            firsts[mode].append(await _first_command(command, configs[mode]))
    servers = {mode: HttpServer(command, configs[mode], root) for mode in ("auto", "off")}
    try:
        for index in range(SESSIONS // PARALLEL):
            for mode in ("auto", "off") if index % 2 == 0 else ("off", "auto"):
                await servers[mode].round(PARALLEL)
        await anyio.sleep(2)  # the last sessions' ends reach the server
        left = {mode: server.left() for mode, server in servers.items()}
    finally:
        for server in servers.values():
            server.stop()
    return {"firsts": firsts, "servers": servers, "left": left}


def run(options: argparse.Namespace) -> str:
    """Measure and return the section's Markdown block."""
    load = os.getloadavg()[0]
    data = anyio.run(measure, options)
    on, off = data["firsts"]["auto"], data["firsts"]["off"]
    first = statistics.median((a - b) * 1000 for a, b in zip(on, off, strict=True))
    servers, left = data["servers"], data["left"]
    ratio = servers["auto"].cpu / servers["off"].cpu if servers["off"].cpu else float("nan")
    rows = "\n".join(
        f"| {mode} | {server.cpu:.1f} | {server.cpu / (SESSIONS * CALLS) * 1000:.2f} "
        f"| {server.shell.median * 1000:.1f} | {server.most_sandboxes} | {server.most_processes} "
        f"| {left[mode][0]} / {left[mode][1]} |"
        for mode, server in servers.items()
    )
    return (
        f"Load average {load:.1f} at the start.\n\n"
        f"**A connection's first command** (a second after `tools/list`, {len(on)} connections each): "
        f"sandbox on {statistics.median(on) * 1000:.1f} ms, off {statistics.median(off) * 1000:.1f} ms, "
        f"**{first:+.1f} ms** (median of pair differences; target <= +{FIRST_TARGET_MS:g} ms: "
        f"**{'met' if first <= FIRST_TARGET_MS else 'missed'}**).\n\n"
        f"**{SESSIONS} Streamable HTTP sessions** ({PARALLEL} at a time, {CALLS} calls each: statpath, "
        "readfile, searchfiles, shellcommand `echo hi` without `sessionID`):\n\n"
        "| sandbox | server-tree CPU s | CPU ms per call | shell p50 ms | most sandboxes alive "
        "| most processes in the tree | sandboxes / processes left after |\n"
        "|---|---:|---:|---:|---:|---:|---:|\n"
        f"{rows}\n\n"
        f"Server-tree CPU on / off: **{ratio:.2f}** (target <= {LOAD_TARGET:g}: "
        f"**{'met' if ratio <= LOAD_TARGET else 'missed'}**); at most {PARALLEL} connections are open at "
        "once, so at most that many sandboxes may live.\n"
    )
