"""Reads at any size, per-call cost and cold start (issue 14, part 2), against the SDK floor,
the code before the change, and the npm peers.

Contenders, each a stdio subprocess driven by the SDK client over ``harness.linear_stdio``:

- ``ours``: this checkout's ``mcp-localtools`` with its default limits (only the root set).
- ``before``: the same command on another revision (``--before REV``, default ``main``),
  exported with ``git archive`` and put first on ``PYTHONPATH``; its whole-file cap is raised to
  the hard maximum (256 MiB) so that it can read the 50 MiB file at all.
- ``floor``: ``floor_server.py`` (the SDK floor: ``stat`` and ``read``).
- ``reference``: ``@modelcontextprotocol/server-filesystem`` (``get_file_info``,
  ``read_text_file`` with ``head``/``tail``), and ``desktop-commander``:
  ``@wonderwhy-er/desktop-commander`` (``get_file_info``, ``read_file`` with ``offset``/``length``
  in lines, negative offset for a tail), both installed with ``npm install`` into
  ``benchmarks/.work/npm`` (skipped when npm is missing or the install fails). Desktop
  Commander runs with ``HOME`` in the work directory, telemetry off (config and environment)
  and its feature-flag URL pointed at a closed port on 127.0.0.1.

Each operation runs 3 times; in each run every contender makes its calls in turn (order
rotating between runs), and the table gives the median of the 3 per-run medians with their
spread (min-max). Runs: ``python benchmarks/run.py reads``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
from harness import linear_stdio, server_command
from mcp import Client

HERE = Path(__file__).resolve().parent
FLOOR = [sys.executable, str(HERE / "floor_server.py")]
RUNS = 3
NPM_PACKAGES = ("@modelcontextprotocol/server-filesystem", "@wonderwhy-er/desktop-commander")
BIG_LINE = 80  # bytes per line of the 50 MiB file
BIG_LINES = 50 * 1024 * 1024 // BIG_LINE
LOG_BYTES = 1024 * 1024 * 1024
LARGE_BYTES = 500 * 1024 * 1024

Call = Callable[[], Awaitable[Any]]


def big_files(data: Path) -> tuple[Path, Path]:
    """In ``data``: a 50 MiB file of 80-byte numbered lines, and a 500 MiB one (the 50 MiB one ten
    times); each written once and kept while its size is right."""
    big = data / "fifty-mib.txt"
    if not big.exists() or big.stat().st_size != BIG_LINES * BIG_LINE:
        with big.open("w", encoding="utf-8") as handle:
            for start in range(0, BIG_LINES, 65536):
                handle.write(
                    "".join(
                        f"{n:08d} {'y' * (BIG_LINE - 10)}\n"
                        for n in range(start, min(start + 65536, BIG_LINES))
                    )
                )
    large = data / "five-hundred-mib.txt"
    if not large.exists() or large.stat().st_size != 10 * BIG_LINES * BIG_LINE:
        with large.open("wb") as out:
            for _ in range(10):
                with big.open("rb") as source:
                    shutil.copyfileobj(source, out, 16 * 1024 * 1024)
    return big, large


def _prepare(work: Path) -> Path:
    """The data files: 1 KiB, 50 MiB (80-byte numbered lines), a 500 MiB file (the 50 MiB one ten
    times) and a 1 GiB log."""
    data = work / "reads"
    data.mkdir(parents=True, exist_ok=True)
    (data / "one-kib.txt").write_text(("k" * 63 + "\n") * 16, encoding="utf-8")
    big_files(data)
    log = data / "one-gib.log"
    if not log.exists() or log.stat().st_size < LOG_BYTES:
        line = "2026-11-23T00:00:00.000Z INFO request id={:08d} path=/api/v1/items status=200 took=12ms\n"
        block = "".join(line.format(n) for n in range(1024 * 1024 // len(line.format(0)) + 1))
        chunk = block.encode()[: 1024 * 1024]
        chunk = chunk[: chunk.rfind(b"\n") + 1].ljust(1024 * 1024, b"\n")
        with log.open("wb") as handle:
            for _ in range(LOG_BYTES // len(chunk)):
                handle.write(chunk)
    return data


def _before_argv(work: Path, revision: str, data: Path) -> list[str] | None:
    """The command running ``revision``'s server, or None when git cannot export it."""
    root = HERE.parent
    target = work / "before"
    try:
        commit = subprocess.run(
            ["git", "-C", str(root), "rev-parse", revision], check=True, capture_output=True, text=True
        ).stdout.strip()
        stamp = target / "COMMIT"
        if not stamp.exists() or stamp.read_text() != commit:
            shutil.rmtree(target, ignore_errors=True)
            target.mkdir(parents=True)
            archive = subprocess.run(
                ["git", "-C", str(root), "archive", commit, "src"], check=True, capture_output=True
            ).stdout
            subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
            stamp.write_text(commit)
    except (OSError, subprocess.CalledProcessError):
        return None
    config = work / "before.toml"
    config.write_text(
        f'[paths]\nallowed_roots = ["{data}"]\n[limits]\nmax_read_bytes = 268435456\n', encoding="utf-8"
    )
    return [
        "env",
        f"PYTHONPATH={target / 'src'}",
        sys.executable,
        "-m",
        "mcp_localtools",
        "--config",
        str(config),
    ]


def _npm_peers(work: Path, data: Path) -> dict[str, list[str]]:
    """Commands of the npm peers that installed; none when npm is missing."""
    npm = shutil.which("npm")
    node = shutil.which("node")
    if not npm or not node:
        return {}
    prefix = work / "npm"
    modules = prefix / "node_modules"
    if not all((modules / name).exists() for name in NPM_PACKAGES):
        prefix.mkdir(parents=True, exist_ok=True)
        environment = {**os.environ, "PUPPETEER_SKIP_DOWNLOAD": "1"}  # Desktop Commander pulls puppeteer
        subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--prefix", str(prefix), *NPM_PACKAGES],
            env=environment,
            capture_output=True,
            check=False,
        )
    peers: dict[str, list[str]] = {}
    reference = modules / "@modelcontextprotocol/server-filesystem/dist/index.js"
    if reference.exists():
        peers["reference"] = [node, str(reference), str(data)]
    commander = modules / "@wonderwhy-er/desktop-commander/dist/index.js"
    if commander.exists():
        home = work / "dc-home"
        (home / ".claude-server-commander").mkdir(parents=True, exist_ok=True)
        (home / ".claude-server-commander" / "config.json").write_text(
            json.dumps(
                {"telemetryEnabled": False, "allowedDirectories": [str(data)], "fileReadLineLimit": 1000}
            )
        )
        peers["desktop-commander"] = [
            "env",
            f"HOME={home}",
            "DESKTOP_COMMANDER_DISABLE_TELEMETRY=1",
            "DC_FLAG_URL=http://127.0.0.1:9/",  # its feature-flag fetch stays on this machine
            node,
            str(commander),
        ]
    return peers


CALL_TIMEOUT = 120.0
"""Seconds one call may take before its contender is dropped from the operation."""


async def _ok(client: Client, name: str, args: dict[str, Any]) -> Any:
    with anyio.fail_after(CALL_TIMEOUT):
        result = await client.call_tool(name, args)
    if result.is_error:
        raise RuntimeError(f"{name} {args} failed: {result.content}")
    return result


async def _timed(call: Call, count: int) -> float:
    """Median seconds of ``count`` calls."""
    values = []
    for _ in range(count):
        start = time.perf_counter()
        await call()
        values.append(time.perf_counter() - start)
    return statistics.median(values)


class Table:
    """Rows of per-run medians: operation → contender → [seconds per run]."""

    def __init__(self) -> None:
        self.rows: dict[str, dict[str, list[float]]] = {}
        self.notes: dict[str, str] = {}

    def add(self, operation: str, contender: str, seconds: float) -> None:
        self.rows.setdefault(operation, {}).setdefault(contender, []).append(seconds)

    def median(self, operation: str, contender: str) -> float | None:
        values = self.rows.get(operation, {}).get(contender)
        return statistics.median(values) if values else None


async def _rounds(table: Table, operation: str, contenders: dict[str, Call], count: int) -> None:
    """RUNS runs of ``count`` calls per contender, order rotating."""
    names = list(contenders)
    failed: set[str] = set()
    for run in range(RUNS):
        order = names[run % len(names) :] + names[: run % len(names)]
        for name in order:
            if name in failed:
                continue
            print(f"   {operation}: {name}, run {run + 1}", file=sys.stderr, flush=True)
            try:
                table.add(operation, name, await _timed(contenders[name], count))
            except (TimeoutError, RuntimeError) as exc:
                failed.add(name)
                table.notes[f"{operation}/{name}"] = f"{type(exc).__name__}: {str(exc)[:200]}"


async def _appended(path: str, call: Call) -> Any:
    """``call()`` timed after one log line was appended to ``path`` (the append not timed)."""
    with open(path, "ab") as handle:
        handle.write(b"2026-11-27T00:00:00.000Z INFO appended by the benchmark\n")
    return await call()


async def _touched(path: str, call: Call) -> Any:
    """``call()`` on a new version of ``path`` (its mtime moved; the same bytes)."""
    os.utime(path, ns=(time.time_ns(), time.time_ns()))
    return await call()


async def _cold(argv: list[str]) -> None:
    async with Client(linear_stdio(argv), mode="legacy") as client:
        await client.list_tools()


async def _new_versions(table: Table, clients: dict[str, Client], log: str, large: str) -> None:
    """Calls on file versions not read before: the tail of a growing log, the first window of a
    500 MiB file whose mtime moved."""
    # A log being written: one line appended before every tail (every call a new version).
    grow = {
        "ours": lambda: _appended(log, lambda: _ok(clients["ours"], "readfile", {"path": log, "tail": 100}))
    }
    if "before" in clients:
        grow["before"] = lambda: _appended(
            log, lambda: _ok(clients["before"], "readfile", {"path": log, "tail": 100})
        )
    if "reference" in clients:
        grow["reference"] = lambda: _appended(
            log, lambda: _ok(clients["reference"], "read_text_file", {"path": log, "tail": 100})
        )
    for call in grow.values():
        await call()
    await _rounds(table, "tail of a growing 1 GiB log (one line appended before each call)", grow, 5)

    # The first window of a file version nobody read yet (its mtime moved before each call).
    first = {
        name: (lambda client=client: _touched(large, lambda: _ok(client, "readfile", {"path": large})))
        for name, client in clients.items()
        if name in ("ours", "before")
    }
    if "reference" in clients:
        first["reference"] = lambda: _touched(
            large, lambda: _ok(clients["reference"], "read_text_file", {"path": large, "head": 2000})
        )
    await _rounds(table, "first window of a new 500 MiB file version", first, 3)


async def measure(options: argparse.Namespace) -> tuple[Table, dict[str, list[str]], str]:  # noqa: PLR0915 - one measurement script, step by step
    work: Path = options.work
    data = _prepare(work)
    config = work / "reads.toml"
    config.write_text(f'[paths]\nallowed_roots = ["{data}"]\n', encoding="utf-8")
    ours_argv = [server_command(), "--config", str(config)]
    revision = getattr(options, "before", None) or "main"
    before_argv = _before_argv(work, revision, data)
    peers = _npm_peers(work, data)
    table = Table()
    small, big, log = str(data / "one-kib.txt"), str(data / "fifty-mib.txt"), str(data / "one-gib.log")
    large = str(data / "five-hundred-mib.txt")
    middle = BIG_LINES // 2

    starters = {"ours": ours_argv, "floor": FLOOR}
    if before_argv:
        starters["before"] = before_argv
    await _rounds(
        table,
        "cold start: spawn → initialized → tools/list",
        {k: (lambda a=a: _cold(a)) for k, a in starters.items()},
        5,
    )

    async with AsyncExitStack() as stack:
        clients: dict[str, Client] = {}
        for name, argv in {**starters, **peers}.items():
            clients[name] = await stack.enter_async_context(Client(linear_stdio(argv), mode="legacy"))
        ours = clients["ours"]

        stat = {
            "ours": lambda: _ok(ours, "statpath", {"path": small}),
            "floor": lambda: _ok(clients["floor"], "stat", {"path": small}),
        }
        read = {
            "ours": lambda: _ok(ours, "readfile", {"path": small}),
            "floor": lambda: _ok(clients["floor"], "read", {"path": small}),
        }
        window = {"ours": lambda: _ok(ours, "readfile", {"path": big, "offset": middle, "limit": 100})}
        tail = {"ours": lambda: _ok(ours, "readfile", {"path": log, "tail": 100})}
        if "before" in clients:
            old = clients["before"]
            stat["before"] = lambda: _ok(old, "statpath", {"path": small})
            read["before"] = lambda: _ok(old, "readfile", {"path": small})
            window["before"] = lambda: _ok(old, "readfile", {"path": big, "offset": middle, "limit": 100})
        if "reference" in clients:
            ref = clients["reference"]
            stat["reference"] = lambda: _ok(ref, "get_file_info", {"path": small})
            read["reference"] = lambda: _ok(ref, "read_text_file", {"path": small})
            tail["reference"] = lambda: _ok(ref, "read_text_file", {"path": log, "tail": 100})
        if "desktop-commander" in clients:
            dc = clients["desktop-commander"]
            stat["desktop-commander"] = lambda: _ok(dc, "get_file_info", {"path": small})
            read["desktop-commander"] = lambda: _ok(dc, "read_file", {"path": small})
            window["desktop-commander"] = lambda: _ok(
                dc, "read_file", {"path": big, "offset": middle, "length": 100}
            )
            tail["desktop-commander"] = lambda: _ok(dc, "read_file", {"path": log, "offset": -100})

        print("   warm-up", file=sys.stderr, flush=True)
        for calls in (stat, read):  # warm-up: imports, thread pools, page cache
            for call in calls.values():
                for _ in range(3):
                    await call()
        await _rounds(table, "statpath (a trivial call)", stat, 50)
        await _rounds(table, "read a 1 KiB file", read, 50)

        await _new_versions(table, clients, log, large)

        # The first call on a file version pays the index (one scan: SHA-256 and line counts).
        for run in range(RUNS):
            for path, operation, args in (
                (
                    big,
                    "first call on a new 50 MiB file version (index build)",
                    {"offset": middle, "limit": 100},
                ),
                (log, "first call on a new 1 GiB file version (index build)", {"tail": 100}),
            ):
                os.utime(path, ns=(time.time_ns(), time.time_ns() + run + 1))
                start = time.perf_counter()
                await _ok(ours, "readfile", {"path": path, **args})
                table.add(operation, "ours", time.perf_counter() - start)
        print("   first calls done", file=sys.stderr, flush=True)
        for call in [*window.values(), *tail.values()]:
            await call()
        await _rounds(table, "window of 100 lines in the middle of 50 MiB (after the first call)", window, 10)
        await _rounds(table, "tail: last 100 lines of a 1 GiB log (after the first call)", tail, 5)

        async def ours_whole() -> None:
            offset: int | None = 0
            calls = 0
            while offset is not None:
                result = await _ok(ours, "readfile", {"path": big, "offset": offset})
                offset = result.structured_content.get("nextOffset")
                calls += 1
            table.notes["ours-calls"] = str(calls)

        whole: dict[str, Call] = {"ours": ours_whole}
        if "reference" in clients:
            whole["reference"] = lambda: _ok(clients["reference"], "read_text_file", {"path": big})
        # Desktop Commander is left out here: over this harness its 655-call walk stalled (every
        # process idle, the client's per-call timeout not firing) on 2026-11-23; issue 14 measured
        # it at 26.5 s.
        await _rounds(table, "whole 50 MiB file (continuations; the reference server: one call)", whole, 1)
    return table, peers, revision


TARGETS = {
    "statpath (a trivial call)": ("floor", 1.15),
    "read a 1 KiB file": ("floor", 1.15),
    "cold start: spawn → initialized → tools/list": ("floor", 1.10),
}
ABSOLUTE = {
    "tail of a growing 1 GiB log (one line appended before each call)": 0.010,
    "first window of a new 500 MiB file version": 0.050,
    "window of 100 lines in the middle of 50 MiB (after the first call)": 0.010,
    "tail: last 100 lines of a 1 GiB log (after the first call)": 0.050,
    "whole 50 MiB file (continuations; the reference server: one call)": 15.0,
}
CONTENDERS = ("ours", "before", "floor", "reference", "desktop-commander")


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f}" if seconds < 10 else f"{seconds:.1f} s"


def run(options: argparse.Namespace) -> str:
    table, peers, revision = anyio.run(measure, options)
    lines = [
        options.machine(),
        f"- ours: this checkout, default limits; before: `{revision}` (whole-file cap raised to 256 MiB); "
        "floor: `benchmarks/floor_server.py`; reference: `@modelcontextprotocol/server-filesystem`; "
        "desktop-commander: `@wonderwhy-er/desktop-commander` (npm peers: "
        + (", ".join(peers) or "not installed")
        + ")",
        f"- {RUNS} runs per operation; each cell: median of the per-run medians (min-max of them) in ms; "
        f"ours read the 50 MiB file in {table.notes.get('ours-calls', '?')} calls",
        "",
        "| operation | " + " | ".join(CONTENDERS) + " | target | |",
        "|---|" + "---|" * len(CONTENDERS) + "---|---|",
    ]
    for operation, cells in table.rows.items():
        row = [operation]
        for name in CONTENDERS:
            values = cells.get(name)
            row.append(
                f"{_ms(statistics.median(values))} ({_ms(min(values))}-{_ms(max(values))})" if values else "-"
            )
        target, verdict = "", ""
        ours = table.median(operation, "ours")
        if operation in TARGETS:
            reference, bound = TARGETS[operation]
            theirs = table.median(operation, reference)
            if ours is not None and theirs:
                ratio = ours / theirs
                target = f"≤ {bound:.2f} x {reference} (is {ratio:.2f})"
                verdict = "met" if ratio <= bound else "**missed**"
        elif operation in ABSOLUTE and ours is not None:
            target = (
                f"≤ {_ms(ABSOLUTE[operation])} ms"
                if ABSOLUTE[operation] < 10
                else f"≤ {ABSOLUTE[operation]:.0f} s"
            )
            verdict = "met" if ours <= ABSOLUTE[operation] else "**missed**"
        lines.append("| " + " | ".join([*row, target, verdict]) + " |")
    failures = [f"- {key}: {text}" for key, text in table.notes.items() if "/" in key]
    if failures:
        lines += ["", "Dropped (failed or over the per-call timeout):", *failures]
    return "\n".join(lines) + "\n"
