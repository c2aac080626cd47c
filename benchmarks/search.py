"""The search benchmark: searchfiles (matches mode) over stdio against ``rg -n`` on the same tree.

The tree is copies of the running interpreter's standard library (without site-packages and
__pycache__) until it holds at least 5,000 ``.py`` files and 200 MB. The server is the installed
``mcp-localtools`` command, started once over stdio with the SDK client (on the harness's
transport, which gives the server's pid for its CPU time); each timed call is one ``tools/call``
round trip. ``rg -n`` runs directly, as a shell user would run it. Runs are
interleaved (the order alternates) so that load from other processes hits both alike; the
table gives medians and the median of the per-pair ratios. The pure-Python fallback is timed
the same way through a server started with the Python engine (``--serve-python-engine``).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import sysconfig
import time
from pathlib import Path
from typing import Any

import anyio
from harness import Spawned, cpu_seconds, linear_stdio, server_command
from mcp import Client

from mcp_localtools.search.rg import find_ripgrep
from mcp_localtools.tools import spec_of

PATTERN = r"class \w+Error\("
MIN_FILES = 5000
MIN_BYTES = 200 * 1024 * 1024


def _tree_size(root: Path) -> tuple[int, int, int]:
    files = py = size = 0
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            files += 1
            py += path.suffix == ".py"
            size += path.stat().st_size
    return files, py, size


def make_tree(work: Path) -> Path:
    """Copies of the standard library under ``work`` (reused when already complete)."""
    root = work / "search-tree"
    done = root / ".complete"
    if done.exists():
        return root
    shutil.rmtree(root, ignore_errors=True)
    stdlib = Path(sysconfig.get_path("stdlib"))
    ignore = shutil.ignore_patterns("site-packages", "__pycache__")
    copies = 0
    while True:
        copies += 1
        print(f"   copying {stdlib} (copy {copies}) ...", flush=True)
        shutil.copytree(stdlib, root / f"copy{copies}", ignore=ignore, symlinks=True)
        _, py, size = _tree_size(root)
        if py >= MIN_FILES and size >= MIN_BYTES:
            break
    done.write_text("", encoding="utf-8")
    return root


def rg_executable() -> str:
    """The ``rg`` the ripgrep engine would use (see ``find_ripgrep``)."""
    found = find_ripgrep()
    if found is None:
        raise SystemExit("no ripgrep 14+ found: install the package with its ripgrep dependency")
    return found


def time_rg(root: Path) -> tuple[float, int]:
    start = time.perf_counter()
    done = subprocess.run([rg_executable(), "-n", PATTERN, str(root)], capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    return elapsed, done.stdout.count(b"\n")


async def time_tool(client: Client, root: Path) -> tuple[float, Any]:
    start = time.perf_counter()
    result = await client.call_tool(
        "searchfiles", {"pattern": PATTERN, "root": str(root), "outputMode": "matches"}
    )
    elapsed = time.perf_counter() - start
    if result.is_error:
        raise RuntimeError(f"searchfiles failed: {result.content}")
    return elapsed, result.structured_content


def _cpu_self() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _cpu_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


async def compare(argv: list[str], root: Path, runs: int) -> dict[str, Any]:
    """Interleaved timings of rg -n and of searchfiles through one stdio server (started with
    ``argv``), with CPU time: rg's (as a reaped child), the server's with its rg children, and
    the SDK client's."""
    ours: list[float] = []
    theirs: list[float] = []
    cpu = {"rg": 0.0, "server": 0.0, "client": 0.0}

    def rg_run() -> None:
        before = _cpu_children()
        theirs.append(time_rg(root)[0])
        cpu["rg"] += _cpu_children() - before

    async def our_run(server: int) -> None:
        before, client_before = cpu_seconds(server), _cpu_self()
        ours.append((await time_tool(client, root))[0])
        cpu["server"] += cpu_seconds(server) - before
        cpu["client"] += _cpu_self() - client_before

    spawned = Spawned()
    async with Client(linear_stdio(argv, spawned)) as client:
        server = spawned.pid
        _, content = await time_tool(client, root)  # warm: the page cache, the server's imports
        _, lines = time_rg(root)
        for index in range(runs):
            if index % 2:
                rg_run()
                await our_run(server)
            else:
                await our_run(server)
                rg_run()
    ratios = [mine / rg for mine, rg in zip(ours, theirs, strict=True)]
    return {
        "ours": ours,
        "rg": theirs,
        "cpu": {name: total / runs for name, total in cpu.items()},
        "ratio_of_medians": statistics.median(ours) / statistics.median(theirs),
        "median_pair_ratio": statistics.median(ratios),
        "matches": content["totalMatches"],
        "rg_lines": lines,
    }


def _row(name: str, samples: list[float], ratio: str, cpu: str) -> str:
    ms = [value * 1000 for value in samples]
    median, low, high = statistics.median(ms), min(ms), max(ms)
    return f"| {name} | {len(ms)} | {median:.0f} | {low:.0f} | {high:.0f} | {ratio} | {cpu} |"


def _cpu(result: dict[str, Any], *names: str) -> str:
    return " + ".join(f"{result['cpu'][name] * 1000:.0f}" for name in names)


def _ratio(result: dict[str, Any], digits: int) -> str:
    return (
        f"{result['ratio_of_medians']:.{digits}f} "
        f"(median of pair ratios {result['median_pair_ratio']:.{digits}f})"
    )


def run(options: argparse.Namespace) -> str:
    """Run the benchmark and return its Markdown block."""
    header = options.machine()
    root = make_tree(options.work)
    files, py, size = _tree_size(root)
    print(f"   tree: {files} files ({py} .py), {size / 2**20:.0f} MiB", flush=True)
    rg_version = subprocess.run([rg_executable(), "--version"], capture_output=True, text=True, check=True)
    ripgrep = anyio.run(compare, [server_command(), "--root", str(root)], root, options.runs)
    print(f"   ripgrep engine: {ripgrep['ratio_of_medians']:.2f} x rg", flush=True)
    fallback = [sys.executable, str(Path(__file__).resolve()), "--serve-python-engine", str(root)]
    native = anyio.run(compare, fallback, root, options.fallback_runs)
    print(f"   Python engine: {native['ratio_of_medians']:.2f} x rg", flush=True)
    load = " / ".join(f"{value:.2f}" for value in os.getloadavg())
    verdict = "met" if ripgrep["ratio_of_medians"] <= 1.25 else "MISSED"
    lines = [
        header.rstrip(),
        f"- {rg_version.stdout.splitlines()[0]} (the `ripgrep` wheel); load average at the end: {load}",
        f"- tree: {files} files ({py} `.py`), {size / 2**20:.0f} MiB: copies of the Python "
        f"{sys.version.split()[0]} standard library without site-packages and `__pycache__`, in "
        "`benchmarks/.work/search-tree`",
        f'- query `{PATTERN}`. Ours: `searchfiles` with `outputMode: "matches"` (other arguments default, '
        "so maxResults 100) as one `tools/call` round trip over stdio to `mcp-localtools --root TREE`. "
        f"Theirs: `rg -n '{PATTERN}' TREE` as a process, output captured. rg printed "
        f"{ripgrep['rg_lines']} lines; searchfiles reported totalMatches {ripgrep['matches']}.",
        "- runs interleaved, order alternating, after one warm-up run of each (page cache, server imports);"
        " CPU time: rg's own; for searchfiles the server process with its rg children + the SDK client"
        " (its JSON parsing and output-schema validation); /proc ticks are 10 ms, averaged over the runs",
        "",
        "| contender | runs | median ms | min ms | max ms | vs rg -n (wall) | CPU ms per search |",
        "|---|---|---|---|---|---|---|",
        _row("rg -n (direct)", ripgrep["rg"], "1.00", _cpu(ripgrep, "rg")),
        _row(
            "searchfiles, ripgrep engine",
            ripgrep["ours"],
            _ratio(ripgrep, 2),
            _cpu(ripgrep, "server", "client"),
        ),
        _row("rg -n (direct), paired with the fallback", native["rg"], "1.00", _cpu(native, "rg")),
        _row(
            "searchfiles, pure-Python engine",
            native["ours"],
            _ratio(native, 1),
            _cpu(native, "server", "client"),
        ),
        "",
        f"Target (issue 3): searchfiles' median at most 1.25 x rg's: **{verdict}** "
        f"({ripgrep['ratio_of_medians']:.2f}).",
    ]
    return "\n".join(lines) + "\n"


def serve_python_engine(root: str) -> None:
    """Serve the search tools over stdio with the pure-Python engine (for the fallback timing)."""
    from mcp_localtools.config import parse_config
    from mcp_localtools.registry import Registry
    from mcp_localtools.search import NativeEngine
    from mcp_localtools.server import create_server
    from mcp_localtools.tools.fs import directorytree, globfiles, searchfiles
    from mcp_localtools.workspace import Workspace

    config = parse_config({"paths": {"allowed_roots": [root]}})
    workspace = Workspace.from_config(config, search=NativeEngine())
    registry = Registry()
    for module in (searchfiles, globfiles, directorytree):
        registry.register(spec_of(module, workspace))
    create_server(registry).run()


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--serve-python-engine":
        serve_python_engine(sys.argv[2])
    else:
        sys.exit("run benchmarks/run.py search")
