"""What the sandbox costs a command: shellcommand ``echo hi`` with ``[exec.sandbox]`` on and off.

Two servers from the same install, over stdio through the SDK client, one with the default
sandbox (bubblewrap here) and one with ``mode = "off"``, both with shell ``sh``; calls alternate.
Target (the containment issue): at most 10 ms of overhead per command at the median, and still
under Desktop Commander's 16 ms for the same command (its figure from the peers' measurements).
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

import anyio
from harness import Samples, linear_stdio, server_command
from mcp import Client

TARGET_OVERHEAD_MS = 10.0
DESKTOP_COMMANDER_MS = 16.0


def prepare(work: Path) -> tuple[Path, Path]:
    """A root and two configs that differ only in the sandbox mode."""
    root = work / "sandbox-root"
    root.mkdir(parents=True, exist_ok=True)
    configs = []
    for mode in ("auto", "off"):
        config = work / f"sandbox-{mode}.toml"
        config.write_text(
            f'[paths]\nallowed_roots = ["{root}"]\n[exec.sandbox]\nmode = "{mode}"\n', encoding="utf-8"
        )
        configs.append(config)
    return configs[0], configs[1]


async def measure(options: argparse.Namespace) -> tuple[Samples, Samples, str]:
    boxed_config, open_config = prepare(options.work)
    boxed, bare = Samples(), Samples()
    args = {"commands": ["echo hi"], "shell": "sh"}
    async with (
        Client(linear_stdio([server_command(), "--config", str(boxed_config)]), mode="legacy") as inside,
        Client(linear_stdio([server_command(), "--config", str(open_config)]), mode="legacy") as outside,
    ):
        first = await inside.call_tool("shellcommand", args)
        backend = str((first.structured_content or {}).get("sandbox", "?"))
        if first.is_error:
            raise RuntimeError(f"the sandboxed server refused: {first.content}")
        for _ in range(5):  # warm-up: the login-shell probe, imports, page cache
            await inside.call_tool("shellcommand", args)
            await outside.call_tool("shellcommand", args)
        for index in range(options.runs):
            pair = [(inside, boxed), (outside, bare)]
            for client, samples in pair if index % 2 == 0 else reversed(pair):
                start = anyio.current_time()
                result = await client.call_tool("shellcommand", args)
                samples.add(anyio.current_time() - start)
                if result.is_error:
                    raise RuntimeError(f"shellcommand failed: {result.content}")
    return boxed, bare, backend


def run(options: argparse.Namespace) -> str:
    """Measure and return the section's Markdown block."""
    boxed, bare, backend = anyio.run(measure, options)
    overhead = [(a - b) * 1000 for a, b in zip(boxed.values, bare.values, strict=True)]
    median_overhead = statistics.median(overhead)
    ratio = boxed.median / bare.median
    met = median_overhead <= TARGET_OVERHEAD_MS and boxed.median * 1000 < DESKTOP_COMMANDER_MS
    print(f"   sandbox ({backend}): +{median_overhead:.1f} ms per command ({ratio:.2f} x)", flush=True)
    return (
        f"{options.runs} interleaved calls each, after 5 warm-up calls; shell `sh`; backend `{backend}`.\n\n"
        "| shellcommand `echo hi` | median ms | p95 ms |\n|---|---:|---:|\n"
        f"| sandbox on ({backend}) | {boxed.median * 1000:.1f} | {boxed.p95 * 1000:.1f} |\n"
        f"| sandbox off | {bare.median * 1000:.1f} | {bare.p95 * 1000:.1f} |\n\n"
        f"Overhead: median of the per-pair differences **{median_overhead:.1f} ms**, ratio of the medians "
        f"{ratio:.2f}. Target: at most {TARGET_OVERHEAD_MS:g} ms, and under Desktop Commander's "
        f"{DESKTOP_COMMANDER_MS:g} ms: **{'met' if met else 'missed'}**.\n"
    )
