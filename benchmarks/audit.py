"""What the audit log costs a call: statpath with ``[audit]`` on and off.

Two servers from the same install, over stdio through the SDK client, one writing the audit log
(scrubbed arguments, one JSON line per call, written from a worker thread) and one without;
calls alternate. Target (issue 17, ours): at most 1 ms of overhead per call at the median.
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

import anyio
from harness import Samples, linear_stdio, server_command
from mcp import Client

TARGET_OVERHEAD_MS = 1.0


def prepare(work: Path) -> tuple[Path, Path, Path]:
    """A root with a small file, two configs that differ only in ``[audit]``, and the log path."""
    root = work / "audit-root"
    root.mkdir(parents=True, exist_ok=True)
    (root / "small.txt").write_text("hello\n", encoding="utf-8")
    log = work / "audit-state" / "audit.jsonl"
    log.unlink(missing_ok=True)
    configs = []
    for name, audit in (("on", f'enabled = true\npath = "{log}"\n'), ("off", "enabled = false\n")):
        config = work / f"audit-{name}.toml"
        config.write_text(f'[paths]\nallowed_roots = ["{root}"]\n[audit]\n{audit}', encoding="utf-8")
        configs.append(config)
    return configs[0], configs[1], log


async def measure(options: argparse.Namespace) -> tuple[Samples, Samples, int]:
    on_config, off_config, log = prepare(options.work)
    audited, bare = Samples(), Samples()
    args = {"path": "small.txt"}
    runs = max(options.runs, 200)
    async with (
        Client(linear_stdio([server_command(), "--config", str(on_config)]), mode="legacy") as with_log,
        Client(linear_stdio([server_command(), "--config", str(off_config)]), mode="legacy") as without,
    ):
        for _ in range(20):  # warm-up: imports, page cache
            await with_log.call_tool("statpath", args)
            await without.call_tool("statpath", args)
        for index in range(runs):
            pair = [(with_log, audited), (without, bare)]
            for client, samples in pair if index % 2 == 0 else reversed(pair):
                start = anyio.current_time()
                result = await client.call_tool("statpath", args)
                samples.add(anyio.current_time() - start)
                if result.is_error:
                    raise RuntimeError(f"statpath failed: {result.content}")
    lines = len(log.read_text(encoding="utf-8").splitlines())
    if lines != runs + 20:
        raise RuntimeError(f"the log holds {lines} lines for {runs + 20} calls")
    return audited, bare, runs


def run(options: argparse.Namespace) -> str:
    """Measure and return the section's Markdown block."""
    header = options.machine()
    audited, bare, runs = anyio.run(measure, options)
    overhead = [(a - b) * 1000 for a, b in zip(audited.values, bare.values, strict=True)]
    median_overhead = statistics.median(overhead)
    ratio = audited.median / bare.median
    met = median_overhead <= TARGET_OVERHEAD_MS
    print(f"   audit: +{median_overhead:.2f} ms per call ({ratio:.2f} x)", flush=True)
    return (
        f"{header}\n"
        f"{runs} interleaved statpath calls each over stdio, after 20 warm-up calls; the log held one "
        "line per call.\n\n"
        "| statpath on a small file | median ms | p95 ms |\n|---|---:|---:|\n"
        f"| audit log on | {audited.median * 1000:.2f} | {audited.p95 * 1000:.2f} |\n"
        f"| audit log off | {bare.median * 1000:.2f} | {bare.p95 * 1000:.2f} |\n\n"
        f"Overhead: median of the per-pair differences **{median_overhead:.2f} ms**, ratio of the medians "
        f"{ratio:.2f}. Target: at most {TARGET_OVERHEAD_MS:g} ms: **{'met' if met else 'missed'}**.\n"
    )
