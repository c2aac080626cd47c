"""Issue 38's targets, before and after in one interleaved run, with server CPU per call.

Contenders per operation, their calls interleaved and their order rotated after warm-up calls:
ours (this checkout's installed command), before (``--before REV``, default ``main``, exported
with ``git archive`` and run from its ``src``; ``--before none`` leaves it out) and the
references: the reference filesystem server (``@modelcontextprotocol/server-filesystem``,
installed with ``npm install`` under ``--work``; left out without npm) for the head and the tail
of a new 500 MiB file and a whole 50 MiB file; the SDK floor (``floor_server.py``) for
the whole 50 MiB file in as many calls as ours (its ``window`` tool: for scale, what the SDK's
per-call cost comes to), ``statpath``, a 1 KiB ``readfile`` and ``shellcommand``
(``[exec.sandbox] mode = "off"``, shell ``sh``); ``rg -n`` run directly for ``searchfiles``
(``matches`` mode) on trees of 10,000 and 100,000 small files (``issue31.make_tree``). Raw
Python (open, read the lines) for the head and the tail, for scale.

Before any operation each of our servers runs one command, so that the login-shell probe its
exec tools start with each connection has ended (and its CPU is not charged to a measured call).
Wall time is the client's round trip; CPU per call is the server process's: the run time of all
its threads, live and ended (its CPU-time clock, ns) and that of the children it reaped, such as
rg (``/proc/PID/stat``, 10 ms ticks), read around each call; for
``rg -n`` it is the benchmark's reaped children (``getrusage``), for raw Python the benchmark
thread's own.
``ISSUE38_ONLY=head,tail`` runs only the operations whose names hold one of the words;
``ISSUE38_BUDGET=80000`` runs our servers with that ``[limits] max_result_chars`` (and the floor
with windows that much shorter than 45,000 too: ``budget - 1000`` bytes). The
load average is read at the start of each operation. Use ``--work /tmp/DIR`` (about 1.3 GB: the
500 MiB file, the 50 MiB file and the trees) and delete it afterwards.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from harness import Spawned, cpu_seconds, linear_stdio, server_command
from issue31 import PATTERN, TREES, before_src, make_tree
from mcp import Client
from reads import big_files

HERE = Path(__file__).resolve().parent
FLOOR = [sys.executable, str(HERE / "floor_server.py")]
REFERENCE_PACKAGE = "@modelcontextprotocol/server-filesystem"

# operation -> (reference contender, bound on ours / reference, measured on "wall", "cpu" or both)
TARGETS: dict[str, tuple[str, float, tuple[str, ...]]] = {
    "head of a new 500 MiB file (100 lines)": ("reference", 2.0, ("cpu",)),
    "tail of a new 500 MiB file (100 lines)": ("reference", 2.0, ("cpu",)),
    "whole 50 MiB file through continuations": ("reference", 2.0, ("cpu",)),
    "statpath": ("floor", 1.15, ("cpu",)),
    "readfile 1 KiB": ("floor", 1.15, ("cpu",)),
    "shellcommand, sandbox off": ("floor", 1.25, ("wall", "cpu")),
    "searchfiles 10k files": ("rg", 1.15, ("cpu",)),
    "searchfiles 100k files": ("rg", 1.15, ("cpu",)),
}
ABSOLUTE = {"head of a new 500 MiB file (100 lines)": 0.050, "tail of a new 500 MiB file (100 lines)": 0.050}
CONTENDERS = ("ours", "before", "floor", "reference", "rg", "raw")


@dataclass
class Cell:
    """One contender's calls of one operation: wall seconds per call, CPU seconds in total."""

    wall: list[float] = field(default_factory=list)
    cpu: float = 0.0
    calls: int = 0


@dataclass
class Contender:
    """A timed call and how its CPU is read (seconds so far)."""

    call: Callable[[], Awaitable[object]]
    cpu: Callable[[], float]
    prepare: Callable[[], None] | None = None


@dataclass
class Operation:
    name: str
    cells: dict[str, Cell]
    load: float
    calls_per_run: dict[str, int] = field(default_factory=dict)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


async def rotate(runs: int, contenders: dict[str, Contender]) -> dict[str, Cell]:
    """``runs`` timed calls of each contender, order rotating; CPU read around each call."""
    cells = {name: Cell() for name in contenders}
    names = list(contenders)
    for index in range(runs):
        shift = index % len(names)
        for name in names[shift:] + names[:shift]:
            contender = contenders[name]
            if contender.prepare is not None:
                contender.prepare()
            cpu = contender.cpu()
            start = time.perf_counter()
            await contender.call()
            wall = time.perf_counter() - start
            cells[name].cpu += contender.cpu() - cpu
            cells[name].wall.append(wall)
            cells[name].calls += 1
    return cells


async def ok(client: Client, name: str, args: dict[str, Any]) -> Any:
    with anyio.fail_after(300):
        result = await client.call_tool(name, args)
    if result.is_error:
        raise RuntimeError(f"{name} {args} failed: {result.content}")
    return result


def prepare_files(data: Path) -> tuple[Path, Path, Path]:
    """A 1 KiB file, a 50 MiB file (80-byte numbered lines) and a 500 MiB one (ten of it)."""
    data.mkdir(parents=True, exist_ok=True)
    kib = data / "one-kib.txt"
    kib.write_text("".join(f"{n:03d} {'x' * 59}\n" for n in range(16)), encoding="utf-8")
    (data / "small.txt").write_text("small file\n", encoding="utf-8")
    big, large = big_files(data)
    return kib, big, large


def reference_argv(work: Path, data: Path) -> list[str] | None:
    """The reference filesystem server's command, installed with npm under ``work``."""
    npm, node = shutil.which("npm"), shutil.which("node")
    if not npm or not node:
        return None
    prefix = work / "npm"
    script = prefix / "node_modules" / REFERENCE_PACKAGE / "dist" / "index.js"
    if not script.exists():
        prefix.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--prefix", str(prefix), REFERENCE_PACKAGE],
            capture_output=True,
            check=False,
        )
    return [node, str(script), str(data)] if script.exists() else None


def _touch(path: Path) -> Callable[[], None]:
    """Move ``path``'s mtime: the next read is of a file version nobody has read."""

    def touch() -> None:
        now = time.time_ns()
        os.utime(path, ns=(now, now))

    return touch


def _raw_head(path: Path) -> Callable[[], Awaitable[object]]:
    async def head() -> object:
        with path.open(encoding="utf-8") as handle:
            return [handle.readline() for _ in range(100)]

    return head


def _raw_tail(path: Path) -> Callable[[], Awaitable[object]]:
    async def tail() -> object:
        with path.open("rb") as handle:
            handle.seek(-64 * 1024, os.SEEK_END)
            return handle.read().decode("utf-8").splitlines()[-100:]

    return tail


async def measure(options: argparse.Namespace) -> list[Operation]:  # noqa: C901, PLR0915 - one script
    from mcp_localtools.search.rg import find_ripgrep

    work: Path = options.work
    work.mkdir(parents=True, exist_ok=True)
    data = work / "data"
    kib, big, large = prepare_files(data)
    small = data / "small.txt"
    trees = {name: make_tree(work / name.replace(" ", "-"), count) for name, count in TREES.items()}
    roots = ", ".join(f'"{path}"' for path in [data, *trees.values()])
    config = work / "issue38.toml"
    budget = os.environ.get("ISSUE38_BUDGET")
    limits = f"[limits]\nmax_result_chars = {int(budget)}\n" if budget else ""
    config.write_text(
        f'[paths]\nallowed_roots = [{roots}]\n[exec.sandbox]\nmode = "off"\n{limits}', encoding="utf-8"
    )
    argv: dict[str, list[str]] = {"ours": [server_command(), "--config", str(config)], "floor": FLOOR}
    if options.before != "none":
        src = before_src(work, options.before)
        argv["before"] = [
            *("env", f"PYTHONPATH={src}", sys.executable, "-m", "mcp_localtools"),
            *("--config", str(config)),
        ]
    reference = reference_argv(work, data)
    if reference is not None:
        argv["reference"] = reference
    rg = find_ripgrep()
    assert rg is not None
    runs = options.runs
    operations: list[Operation] = []
    async with AsyncExitStack() as stack:
        clients: dict[str, Client] = {}
        procs: dict[str, Spawned] = {}
        for name, command in argv.items():
            procs[name] = Spawned()
            clients[name] = await stack.enter_async_context(
                Client(linear_stdio(command, procs[name]), mode="legacy")
            )

        def server(
            name: str, tool: str, args: dict[str, Any], prepare: Callable[[], None] | None = None
        ) -> Contender:
            client, pid = clients[name], procs[name].pid
            return Contender(lambda: ok(client, tool, args), lambda: cpu_seconds(pid), prepare)

        ours_like = [name for name in ("ours", "before") if name in clients]
        for name in ours_like:
            # The exec tools probe the login shell's environment when a connection starts (100-140
            # ms of CPU here, its .bashrc included); a command waits for it. Its CPU is the
            # server's once it reaps the shell: without this it landed on whichever call was
            # running then (a head or tail call at 2 x the reference in one run, issue 38).
            await ok(clients[name], "shellcommand", {"commands": ["true"], "shell": "sh"})

        def whole(name: str) -> Contender:
            client, pid = clients[name], procs[name].pid

            async def walk() -> None:
                offset: int | None = 0
                while offset is not None:
                    result = await ok(client, "readfile", {"path": str(big), "offset": offset})
                    offset = result.structured_content.get("nextOffset")
                    counts[name] = counts.get(name, 0) + 1

            return Contender(walk, lambda: cpu_seconds(pid))

        budget = os.environ.get("ISSUE38_BUDGET")
        window = {"length": int(budget) - 1000} if budget else {}

        def floor_walk() -> Contender:
            # The SDK floor through the same file in windows of about ours' size: what any server
            # on this SDK pays for that many calls.
            client, pid = clients["floor"], procs["floor"].pid

            async def walk() -> None:
                offset: int | None = 0
                while offset is not None:
                    result = await ok(client, "window", {"path": str(big), "offset": offset, **window})
                    offset = result.structured_content.get("nextOffset")
                    counts["floor"] = counts.get("floor", 0) + 1

            return Contender(walk, lambda: cpu_seconds(pid))

        counts: dict[str, int] = {}
        thread_cpu = time.thread_time
        plan: list[tuple[str, dict[str, Contender], int]] = []
        head = {
            name: server(name, "readfile", {"path": str(large), "limit": 100}, _touch(large))
            for name in ours_like
        }
        tail = {
            name: server(name, "readfile", {"path": str(large), "tail": 100}, _touch(large))
            for name in ours_like
        }
        if "reference" in clients:
            head["reference"] = server(
                "reference", "read_text_file", {"path": str(large), "head": 100}, _touch(large)
            )
            tail["reference"] = server(
                "reference", "read_text_file", {"path": str(large), "tail": 100}, _touch(large)
            )
        head["raw"] = Contender(_raw_head(large), thread_cpu, _touch(large))
        tail["raw"] = Contender(_raw_tail(large), thread_cpu, _touch(large))
        plan.append(("head of a new 500 MiB file (100 lines)", head, runs * 2))
        plan.append(("tail of a new 500 MiB file (100 lines)", tail, runs * 2))
        walks = {name: whole(name) for name in ours_like}
        walks["floor"] = floor_walk()
        if "reference" in clients:
            walks["reference"] = server("reference", "read_text_file", {"path": str(big)})
        plan.append(("whole 50 MiB file through continuations", walks, 2))
        plan.append(
            (
                "statpath",
                {
                    **{name: server(name, "statpath", {"path": str(small)}) for name in ours_like},
                    "floor": server("floor", "stat", {"path": str(small)}),
                },
                runs * 20,
            )
        )
        plan.append(
            (
                "readfile 1 KiB",
                {
                    **{name: server(name, "readfile", {"path": str(kib)}) for name in ours_like},
                    "floor": server("floor", "read", {"path": str(kib)}),
                },
                runs * 20,
            )
        )
        shell = {"commands": ["echo hi"], "shell": "sh"}
        plan.append(
            (
                "shellcommand, sandbox off",
                {
                    **{name: server(name, "shellcommand", shell) for name in ours_like},
                    "floor": server("floor", "echo", {}),
                },
                # As many calls as statpath's: a full garbage collection of our server (70-90 ms of
                # CPU, about once in 2,000 commands) among 80 calls put 1 ms on each.
                runs * 20,
            )
        )
        for tree_name, tree in trees.items():
            args = {"pattern": PATTERN, "root": str(tree), "outputMode": "matches"}

            async def rg_run(root: Path = tree) -> object:
                return await anyio.run_process([rg, "-n", PATTERN, str(root)], check=False)

            plan.append(
                (
                    f"searchfiles {tree_name}",
                    {
                        **{name: server(name, "searchfiles", args) for name in ours_like},
                        "rg": Contender(rg_run, _children_cpu),
                    },
                    max(5, runs // 3) if "100k" in tree_name else runs,
                )
            )
        only = [part for part in os.environ.get("ISSUE38_ONLY", "").split(",") if part]
        for name, contenders, count in plan:
            if only and not any(part in name for part in only):
                continue
            print(f"   {name}", flush=True)
            await rotate(1 if "whole" in name else 3, contenders)  # warm-up
            counts.clear()
            load = os.getloadavg()[0]
            cells = await rotate(count, contenders)
            operations.append(Operation(name, cells, load, {k: v // count for k, v in counts.items()}))
    return operations


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f}" if seconds < 0.01 else f"{seconds * 1000:.1f}"


def run(options: argparse.Namespace) -> str:
    """Run the section and return its Markdown block."""
    operations = anyio.run(measure, options)
    lines = [
        options.machine().rstrip(),
        f"- ours: this checkout; before: `{options.before}`; floor: `floor_server.py`; reference: "
        f"`{REFERENCE_PACKAGE}`; rg: `rg -n` run directly; raw: Python reading the lines itself; servers "
        'over stdio with the SDK client; `[exec.sandbox] mode = "off"`',
        "- each cell: median wall ms per call / server CPU ms per call (mean over the calls); "
        "calls interleaved, order rotated, after warm-up calls; the machine is shared (2 cores): compare "
        "the ratios; load: 1-minute load average when the operation started",
        "- new file: its mtime moved before every call (a version no one has read)",
        *(
            [
                f"- result budget: `[limits] max_result_chars = {budget}` (ISSUE38_BUDGET); "
                f"the floor's windows {int(budget) - 1000} bytes"
            ]
            if (budget := os.environ.get("ISSUE38_BUDGET"))
            else []
        ),
        "",
        "| operation | calls | load | " + " | ".join(CONTENDERS) + " | ours / ref wall | ours / ref CPU "
        "| before / ref wall | before / ref CPU | target | |",
        "|---|---:|---:|" + "---:|" * len(CONTENDERS) + "---:|---:|---:|---:|---|---|",
    ]
    for operation in operations:
        cells = operation.cells
        row = [operation.name, str(len(cells["ours"].wall)), f"{operation.load:.2f}"]
        for name in CONTENDERS:
            cell = cells.get(name)
            row.append(f"{_ms(statistics.median(cell.wall))} / {_ms(cell.cpu / cell.calls)}" if cell else "-")
        reference, bound, kinds = TARGETS[operation.name]
        ratios: dict[str, str] = {}
        verdicts: list[bool] = []
        ref = cells.get(reference)
        for who in ("ours", "before"):
            cell = cells.get(who)
            if cell is None or ref is None:
                ratios[who + "wall"] = ratios[who + "cpu"] = "-"
                continue
            wall = statistics.median(cell.wall) / statistics.median(ref.wall)
            cpu = (cell.cpu / cell.calls) / max(ref.cpu / ref.calls, 1e-9)
            ratios[who + "wall"], ratios[who + "cpu"] = f"{wall:.2f}", f"{cpu:.2f}"
            if who == "ours":
                verdicts += [wall <= bound] if "wall" in kinds else []
                verdicts += [cpu <= bound] if "cpu" in kinds else []
        target = f"≤ {bound:.2f} x {reference} ({' and '.join(kinds)})"
        if operation.name in ABSOLUTE:
            target += f", ≤ {ABSOLUTE[operation.name] * 1000:.0f} ms"
            verdicts.append(statistics.median(cells["ours"].wall) <= ABSOLUTE[operation.name])
        verdict = "-" if not verdicts else "met" if all(verdicts) else "**missed**"
        row += [
            ratios["ourswall"],
            ratios["ourscpu"],
            ratios["beforewall"],
            ratios["beforecpu"],
            target,
            verdict,
        ]
        lines.append("| " + " | ".join(row) + " |")
    calls = {operation.name: operation.calls_per_run for operation in operations if operation.calls_per_run}
    for name, per in calls.items():
        lines.append("")
        lines.append(f"{name}: calls per walk: " + ", ".join(f"{k} {v}" for k, v in per.items()))
    return "\n".join(lines) + "\n"
