"""The benchmark suite of issue 9: mcp-localtools against the SDK floor and the physical limits.

Every server is a stdio subprocess driven by the SDK client (legacy handshake, as desktop hosts
speak it) over ``harness.linear_stdio``. Ours is the installed ``mcp-localtools`` with raised
result limits; the floor is ``floor_server.py``. The contenders of each operation run
interleaved, alternating their order, after warm-up calls, so that background load hits both
alike; the ratio is ours' median over the reference's median.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from harness import Samples, Spawned, linear_stdio, peak_rss_kib, server_command
from mcp import Client

import search

HERE = Path(__file__).resolve().parent
FLOOR = [sys.executable, str(HERE / "floor_server.py")]
ONE_MIB_LINES = 16 * 1024  # 16384 lines of 64 bytes = 1 MiB
TEN_MIB_LINES = 160 * 1024


@dataclass
class Row:
    """One line of the results table."""

    operation: str
    reference: str
    ours: Samples
    theirs: Samples
    target: float | None
    unit: str = "ms"

    @property
    def ratio(self) -> float:
        return self.ours.median / self.theirs.median


def prepare(work: Path) -> tuple[Path, Path]:
    """The data files and our config; returns (data directory, config path)."""
    data = work / "suite"
    data.mkdir(parents=True, exist_ok=True)
    (data / "small.txt").write_text("small file\n", encoding="utf-8")
    line = "x" * 59
    (data / "one-mib.txt").write_text(
        "".join(f"{n:04x} {line}\n" for n in range(ONE_MIB_LINES)), encoding="utf-8"
    )
    (data / "ten-mib.txt").write_text(
        "".join(f"{n:05x} {line[:58]}\n" for n in range(TEN_MIB_LINES)), encoding="utf-8"
    )
    shutil.copyfile(data / "ten-mib.txt", data / "ten-mib-raw.txt")
    config = data / "bench.toml"
    config.write_text(
        f'[paths]\nallowed_roots = ["{data}"]\n'
        "[limits]\nmax_result_chars = 4000000\nread_max_lines = 100000\n",
        encoding="utf-8",
    )
    return data, config


async def interleave(
    runs: int, ours: Callable[[], Awaitable[None]], theirs: Callable[[], Awaitable[None]]
) -> tuple[Samples, Samples]:
    """Time ``runs`` calls of each, alternating which goes first."""
    mine, other = Samples(), Samples()
    for index in range(runs):
        pair = [(ours, mine), (theirs, other)]
        for call, samples in pair if index % 2 == 0 else reversed(pair):
            start = time.perf_counter()
            await call()
            samples.add(time.perf_counter() - start)
    return mine, other


async def checked(client: Client, name: str, args: dict[str, Any]) -> Any:
    result = await client.call_tool(name, args)
    if result.is_error:
        raise RuntimeError(f"{name} failed: {result.content}")
    return result


async def cold_start(argv: list[str]) -> None:
    async with Client(linear_stdio(argv), mode="legacy") as client:
        await client.list_tools()


def raw_edit(path: Path, old: str, new: str) -> None:
    """The physical limit of editfile: read, replace once, write a temp file, fsync, rename."""
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        handle.write(text.replace(old, new, 1))
        handle.flush()
        os.fsync(handle.fileno())
    tmp.replace(path)


async def measure(options: argparse.Namespace) -> tuple[list[Row], dict[str, int]]:
    data, config = prepare(options.work)
    ours_argv = [server_command(), "--config", str(config)]
    runs = options.runs
    rows: list[Row] = []

    ours, theirs = await interleave(
        max(5, runs // 2), lambda: cold_start(ours_argv), lambda: cold_start(FLOOR)
    )
    rows.append(Row("cold start: spawn → initialized → tools/list", "SDK floor", ours, theirs, 1.10))

    ours_proc, floor_proc = Spawned(), Spawned()
    async with (
        Client(linear_stdio(ours_argv, ours_proc), mode="legacy") as mine,
        Client(linear_stdio(FLOOR, floor_proc), mode="legacy") as floor,
    ):
        small = str(data / "small.txt")
        big = str(data / "one-mib.txt")
        for _ in range(10):  # warm-up: imports, thread pools, page cache
            await checked(mine, "statpath", {"path": small})
            await checked(floor, "stat", {"path": small})
        await checked(mine, "readfile", {"path": big})
        await checked(floor, "read", {"path": big})
        await checked(mine, "shellcommand", {"commands": ["echo hi"]})  # pays the login-shell bootstrap
        await checked(floor, "echo", {})

        ours, theirs = await interleave(
            200,
            lambda: checked(mine, "statpath", {"path": small}),
            lambda: checked(floor, "stat", {"path": small}),
        )
        rows.append(
            Row("trivial call: statpath on a small file (200 calls)", "SDK floor stat", ours, theirs, 1.15)
        )

        ours, theirs = await interleave(
            runs,
            lambda: checked(mine, "readfile", {"path": big}),
            lambda: checked(floor, "read", {"path": big}),
        )
        rows.append(Row("readfile of a 1 MiB text file, whole file", "SDK floor read", ours, theirs, 1.25))

        edited = data / "ten-mib.txt"
        raw_file = data / "ten-mib-raw.txt"
        states = ["1f3a0 " + "x" * 58, "1f3a0 edited line"]
        flip = {"ours": 0, "raw": 0}

        async def our_edit() -> None:
            old, new = states[flip["ours"]], states[1 - flip["ours"]]
            await checked(
                mine, "editfile", {"path": str(edited), "edits": [{"oldText": old, "newText": new}]}
            )
            flip["ours"] = 1 - flip["ours"]

        async def raw() -> None:
            old, new = states[flip["raw"]], states[1 - flip["raw"]]
            raw_edit(raw_file, old, new)
            flip["raw"] = 1 - flip["raw"]

        await our_edit()
        await raw()
        ours, theirs = await interleave(runs, our_edit, raw)
        rows.append(
            Row(
                "editfile: one line in a 10 MiB file",
                "raw Python read-replace-atomic-write",
                ours,
                theirs,
                3.0,
            )
        )

        # The same shell on both sides (the floor runs `sh -c`): the server's overhead is compared,
        # not the start-up of two different shells. The default (`auto`: the user's $SHELL, bash
        # here) is measured too, for information.
        ours, theirs = await interleave(
            max(runs, 50),
            lambda: checked(mine, "shellcommand", {"commands": ["echo hi"], "shell": "sh"}),
            lambda: checked(floor, "echo", {}),
        )
        rows.append(
            Row(
                "shellcommand `echo hi` (shell `sh`, as the floor)", "SDK floor echo tool", ours, theirs, 1.25
            )
        )
        ours, theirs = await interleave(
            max(runs, 50),
            lambda: checked(mine, "shellcommand", {"commands": ["echo hi"]}),
            lambda: checked(floor, "echo", {}),
        )
        rows.append(
            Row(
                "shellcommand `echo hi` (default shell `auto`: $SHELL)",
                "SDK floor echo tool",
                ours,
                theirs,
                None,
            )
        )

        async def burst(client: Client, name: str) -> None:
            async with anyio.create_task_group() as group:
                for _ in range(50):
                    group.start_soon(checked, client, name, {"path": small})

        ours, theirs = await interleave(runs, lambda: burst(mine, "statpath"), lambda: burst(floor, "stat"))
        rows.append(Row("50 concurrent statpath calls on one session", "SDK floor stat", ours, theirs, 1.25))

        rss = {"ours": peak_rss_kib(ours_proc.pid), "floor": peak_rss_kib(floor_proc.pid)}

    tree = search.make_tree(options.work)
    found = await search.compare([server_command(), "--root", str(tree)], tree, runs)
    rows.append(
        Row(
            f"searchfiles `matches` over {search._tree_size(tree)[1]} .py files / "
            f"{search._tree_size(tree)[2] / 2**20:.0f} MiB",
            "`rg -n` direct",
            Samples(found["ours"]),
            Samples(found["rg"]),
            1.25,
        )
    )
    return rows, rss


def raw_references(data: Path) -> list[str]:
    """The physical limits, for scale: the same work with no protocol at all."""
    lines = []
    for label, action in (
        ("os.stat of the small file", lambda: os.stat(data / "small.txt")),
        ("read the 1 MiB file", lambda: (data / "one-mib.txt").read_text(encoding="utf-8")),
        (
            "sh -c 'echo hi' as a process",
            lambda: subprocess.run(["sh", "-c", "echo hi"], capture_output=True),
        ),
    ):
        samples = Samples()
        for _ in range(20):
            start = time.perf_counter()
            action()
            samples.add(time.perf_counter() - start)
        lines.append(f"| {label} | {samples.median * 1000:.3f} | {samples.p95 * 1000:.3f} |")
    return lines


def run(options: argparse.Namespace) -> str:
    """Run the suite and return its Markdown block."""
    header = options.machine()
    rows, rss = anyio.run(measure, options)
    table = [
        "| operation | reference | ours median ms | ours p95 ms | ref median ms | ref p95 ms | ratio "
        "| target | |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    missed = []
    for row in rows:
        ok = row.target is None or row.ratio <= row.target
        if not ok:
            missed.append(row.operation)
        target = "(info)" if row.target is None else f"≤ {row.target:.2f}"
        verdict = "" if row.target is None else ("met" if ok else "**missed**")
        table.append(
            f"| {row.operation} | {row.reference} | {row.ours.median * 1000:.1f} | "
            f"{row.ours.p95 * 1000:.1f} | {row.theirs.median * 1000:.1f} | {row.theirs.p95 * 1000:.1f} | "
            f"{row.ratio:.2f} | {target} | {verdict} |"
        )
    rss_ratio = rss["ours"] / rss["floor"]
    if rss_ratio > 1.5:
        missed.append("peak RSS")
    table.append(
        f"| peak RSS of the server after the run (VmHWM) | SDK floor | {rss['ours'] / 1024:.1f} MiB | | "
        f"{rss['floor'] / 1024:.1f} MiB | | {rss_ratio:.2f} | ≤ 1.50 | "
        f"{'met' if rss_ratio <= 1.5 else '**missed**'} |"
    )
    data = options.work / "suite"
    load = " / ".join(f"{value:.2f}" for value in os.getloadavg())
    lines = [
        header.rstrip(),
        f"- load average at the end: {load}",
        f"- runs per operation: {options.runs} (cold start {max(5, options.runs // 2)}, trivial call 200, "
        f"shellcommand {max(options.runs, 50)}); each interleaved with its reference, order alternating",
        "- ours: `mcp-localtools --config bench.toml` (roots: the data directory; `max_result_chars` "
        "4,000,000 "
        "and `read_max_lines` 100,000 so readfile returns the whole 1 MiB file); the floor: "
        "`benchmarks/floor_server.py` (an `MCPServer` with `stat`, `read` and `echo` tools); both over stdio "
        "through the SDK client with the harness's linear-time line framing",
        "",
        *table,
        "",
        "Physical limits on the same machine, no MCP (for scale):",
        "",
        "| work | median ms | p95 ms |",
        "|---|---|---|",
        *raw_references(data),
        "",
        ("Every target met." if not missed else "Missed: " + "; ".join(missed) + " (see the notes below)."),
    ]
    return "\n".join(lines) + "\n"
