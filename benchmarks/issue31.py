"""Issue 31's per-call targets, before and after in one interleaved run.

Three contenders per operation, their calls interleaved and their order rotated after warm-up
calls: ours (this checkout's installed command), before (``--before REV``, default ``main``,
exported with ``git archive`` and run from its ``src``) and the reference: the SDK floor
(``floor_server.py``) for the trivial call, the 1 KiB read, ``shellcommand`` (sandbox off, shell
``sh``) and the cold start; ``rg -n`` run directly for ``searchfiles`` (``matches`` mode) on trees
of 10,000 and 100,000 small files (``.py`` files cut from the standard library to 6 KB, 100 to a
directory; made under ``--work``, which should be a directory of its own under ``/tmp``). Also
the size of ``tools/list`` as sent. Ratios are medians over the reference's median; the machine
may be shared, so compare ratios, not times.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import sysconfig
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
PATTERN = r"class \w+Error\("
TREES = {"10k files": 10_000, "100k files": 100_000}
TARGETS = {
    "cold start": 1.05,
    "statpath": 1.15,
    "read 1 KiB": 1.15,
    "shellcommand": 1.25,
    "searchfiles 10k files": 1.20,
    "searchfiles 100k files": 1.20,
}
TOOLS_LIST_TARGET = 40_000


def make_tree(path: Path, files: int) -> Path:
    """``files`` small ``.py`` files (standard-library text cut to 6 KB), 100 a directory."""
    if (path / ".complete").exists():
        return path
    shutil.rmtree(path, ignore_errors=True)
    stdlib = Path(sysconfig.get_path("stdlib"))
    texts = [
        source.read_bytes()[:6000]
        for source in sorted(stdlib.rglob("*.py"))
        if "site-packages" not in source.parts and "__pycache__" not in source.parts
    ]
    for index in range(files):
        directory = path / f"d{index // 100:04d}"
        if index % 100 == 0:
            directory.mkdir(parents=True, exist_ok=True)
        (directory / f"f{index % 100:03d}.py").write_bytes(texts[index % len(texts)])
    (path / ".complete").write_text("", encoding="utf-8")
    return path


def before_src(work: Path, revision: str) -> Path:
    """``revision``'s ``src`` directory, exported under ``work``."""
    root = HERE.parent
    commit = subprocess.run(
        ["git", "-C", str(root), "rev-parse", revision], check=True, capture_output=True, text=True
    ).stdout.strip()
    target = work / f"before-{commit[:12]}"
    if not (target / "src").exists():
        target.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "-C", str(root), "archive", commit, "src"], check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
        import compileall

        compileall.compile_dir(target / "src", quiet=1)
    return target / "src"


async def rotate(runs: int, calls: dict[str, Callable[[], Awaitable[object]]]) -> dict[str, list[float]]:
    """Time ``runs`` calls of each contender, rotating which goes first."""
    times: dict[str, list[float]] = {name: [] for name in calls}
    names = list(calls)
    for index in range(runs):
        shift = index % len(names)
        for name in names[shift:] + names[:shift]:
            start = time.perf_counter()
            await calls[name]()
            times[name].append(time.perf_counter() - start)
    return times


async def ok(client: Client, name: str, args: dict[str, Any]) -> Any:
    result = await client.call_tool(name, args)
    if result.is_error:
        raise RuntimeError(f"{name} failed: {result.content}")
    return result


async def cold_start(argv: list[str]) -> None:
    async with Client(linear_stdio(argv), mode="legacy") as client:
        await client.list_tools()


async def tools_list_bytes(argv: list[str]) -> int:
    async with Client(linear_stdio(argv), mode="legacy") as client:
        listed = await client.list_tools()
    return len(json.dumps(listed.model_dump(by_alias=True, exclude_none=True), separators=(",", ":")))


def rg_run(rg: str, root: Path) -> Callable[[], Awaitable[object]]:
    async def run() -> object:
        return await anyio.run_process([rg, "-n", PATTERN, str(root)], check=False)

    return run


async def measure(options: argparse.Namespace) -> tuple[dict[str, dict[str, list[float]]], dict[str, int]]:
    from mcp_localtools.search.rg import find_ripgrep

    work: Path = options.work
    work.mkdir(parents=True, exist_ok=True)
    data = work / "data"
    data.mkdir(exist_ok=True)
    small, kib = data / "small.txt", data / "one-kib.txt"
    small.write_text("small file\n", encoding="utf-8")
    kib.write_text("".join(f"{n:03d} {'x' * 59}\n" for n in range(16)), encoding="utf-8")
    trees = {name: make_tree(work / name.replace(" ", "-"), count) for name, count in TREES.items()}
    roots = ", ".join(json.dumps(str(path)) for path in [data, *trees.values()])
    config = work / "issue31.toml"
    config.write_text(f'[paths]\nallowed_roots = [{roots}]\n[exec.sandbox]\nmode = "off"\n', encoding="utf-8")
    src = before_src(work, options.before)
    argv = {
        "ours": [server_command(), "--config", str(config)],
        "before": [
            *("env", f"PYTHONPATH={src}", sys.executable, "-m", "mcp_localtools"),
            *("--config", str(config)),
        ],
        "floor": FLOOR,
    }
    rg = find_ripgrep()
    assert rg is not None
    runs = options.runs
    results: dict[str, dict[str, list[float]]] = {}
    sizes = {name: await tools_list_bytes(argv[name]) for name in ("ours", "before")}
    results["cold start"] = await rotate(
        max(5, runs // 2), {name: (lambda a=command: cold_start(a)) for name, command in argv.items()}
    )
    async with AsyncExitStack() as stack:
        clients = {
            name: await stack.enter_async_context(Client(linear_stdio(command), mode="legacy"))
            for name, command in argv.items()
        }
        ours, before, floor = clients["ours"], clients["before"], clients["floor"]
        ops: dict[str, dict[str, Callable[[], Awaitable[object]]]] = {
            "statpath": {
                "ours": lambda: ok(ours, "statpath", {"path": str(small)}),
                "before": lambda: ok(before, "statpath", {"path": str(small)}),
                "floor": lambda: ok(floor, "stat", {"path": str(small)}),
            },
            "read 1 KiB": {
                "ours": lambda: ok(ours, "readfile", {"path": str(kib)}),
                "before": lambda: ok(before, "readfile", {"path": str(kib)}),
                "floor": lambda: ok(floor, "read", {"path": str(kib)}),
            },
            "shellcommand": {
                "ours": lambda: ok(ours, "shellcommand", {"commands": ["echo hi"], "shell": "sh"}),
                "before": lambda: ok(before, "shellcommand", {"commands": ["echo hi"], "shell": "sh"}),
                "floor": lambda: ok(floor, "echo", {}),
            },
        }
        for name, tree in trees.items():
            args = {"pattern": PATTERN, "root": str(tree), "outputMode": "matches"}
            ops[f"searchfiles {name}"] = {
                "ours": lambda a=args: ok(ours, "searchfiles", a),
                "before": lambda a=args: ok(before, "searchfiles", a),
                "floor": rg_run(rg, tree),
            }
        for op, calls in ops.items():
            print(f"   {op}", flush=True)
            await rotate(3, calls)  # warm-up: imports, thread pools, page cache
            count = runs * 10 if op in ("statpath", "read 1 KiB") else runs
            count = max(5, runs // 3) if "100k" in op else count
            results[op] = await rotate(count, calls)
    return results, sizes


def run(options: argparse.Namespace) -> str:
    """Run the section and return its Markdown block."""
    header = options.machine()
    results, sizes = anyio.run(measure, options)
    lines = [
        header.rstrip(),
        f"- ours: this checkout; before: `{options.before}`; reference: `floor_server.py` (searchfiles: "
        '`rg -n` run directly); servers over stdio with the SDK client; `[exec.sandbox] mode = "off"`',
        "- calls interleaved, order rotated, after 3 warm-up calls each; the machine is shared (2 cores): "
        "compare the ratios, not the times",
        "",
        "| operation | runs | ours ms | before ms | reference ms | ours / ref | before / ref | target | |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for op, times in results.items():
        median = {name: statistics.median(values) * 1000 for name, values in times.items()}
        ratio = median["ours"] / median["floor"]
        target = TARGETS[op]
        verdict = "met" if ratio <= target else "**missed**"
        lines.append(
            f"| {op} | {len(times['ours'])} | {median['ours']:.1f} | {median['before']:.1f} | "
            f"{median['floor']:.1f} | {ratio:.2f} | {median['before'] / median['floor']:.2f} | "
            f"≤ {target:.2f} | {verdict} |"
        )
    verdict = "met" if sizes["ours"] <= TOOLS_LIST_TARGET else "**missed**"
    lines.append(
        f"| tools/list as sent (bytes) | 1 | {sizes['ours']:,} | {sizes['before']:,} | | | | "
        f"≤ {TOOLS_LIST_TARGET:,} | {verdict} |"
    )
    return "\n".join(lines) + "\n"
