"""What the sandbox costs a command: shellcommand ``echo hi`` with ``[exec.sandbox]`` on and off, on
an empty root, a 10,000-file root and a 100,000-file root.

Six servers from one install (``--server``, default the one next to this interpreter), and six more
from another with ``--before-server`` (the install before a change), over stdio through the SDK
client: for each root one with the default sandbox (bubblewrap here) and one with ``mode =
"off"``, all with shell ``sh``. Two kinds of call, all interleaved in one run (on/off
alternating, roots in turn):

* **without sessionID** (the "first" columns): a shellcommand without ``sessionID``, as models
  call it: a new exec session (a directory and an environment) in the connection's sandbox (before
  issue 34: a new sandbox each, left running);
* **steady state**: a shellcommand in an exec session that already ran one.

Issue 34's target for the sessionless path: at most 1.5 ms over unsandboxed (median of pair
differences). A connection's first command and 100 HTTP sessions: ``connections.py``.

Target (issue 25): in the steady state, sandboxed ``echo hi`` at most 1.5 ms over unsandboxed at
the median, on the empty and on the 100,000-file root.

``run_checks`` (section ``commandcheck``) times what comes before any of that:
``ExecutionPolicy.check_command`` on 65,536-byte commands of the shapes that made its patterns
backtrack (issue 34: one long word took 21 s, on the event loop).
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import time
from pathlib import Path
from typing import Any

import anyio
from harness import Samples, linear_stdio, server_command
from mcp import Client

from mcp_localtools.config import ExecConfig
from mcp_localtools.errors import ToolError
from mcp_localtools.policy.execution import ExecutionPolicy

TARGET_OVERHEAD_MS = 1.5
ROOTS = {"empty": 0, "10k files": 10_000, "100k files": 100_000}
_PER_DIRECTORY = 100


def make_root(path: Path, files: int) -> Path:
    """A root with ``files`` small files, 100 a directory (made once, kept in the work dir)."""
    marker = path / ".complete"
    if marker.exists():
        return path
    path.mkdir(parents=True, exist_ok=True)
    for index in range(files):
        directory = path / f"d{index // _PER_DIRECTORY:04d}"
        if index % _PER_DIRECTORY == 0:
            directory.mkdir(exist_ok=True)
        (directory / f"f{index % _PER_DIRECTORY:03d}.txt").write_text(f"{index}\n", encoding="utf-8")
    marker.write_text("", encoding="utf-8")
    return path


def prepare(work: Path) -> dict[str, tuple[Path, Path]]:
    """For each root, two configs that differ only in the sandbox mode."""
    configs: dict[str, tuple[Path, Path]] = {}
    for name, files in ROOTS.items():
        slug = name.replace(" ", "-")
        root = make_root(work / f"sandbox-root-{slug}", files)
        pair = []
        for mode in ("auto", "off"):
            config = work / f"sandbox-{slug}-{mode}.toml"
            config.write_text(
                f'[paths]\nallowed_roots = ["{root}"]\n[exec.sandbox]\nmode = "{mode}"\n', encoding="utf-8"
            )
            pair.append(config)
        configs[name] = (pair[0], pair[1])
    return configs


async def _call(client: Client, args: dict[str, Any]) -> tuple[float, dict[str, Any]]:
    start = anyio.current_time()
    result = await client.call_tool("shellcommand", args)
    took = anyio.current_time() - start
    if result.is_error:
        raise RuntimeError(f"shellcommand failed: {result.content}")
    return took, dict(result.structured_content or {})


class Contender:
    """One server: its client, exec session, and samples."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.session = ""
        self.first = Samples()
        self.steady = Samples()
        self.backend = "?"

    async def warm(self) -> None:
        for _ in range(3):  # the login-shell probe, imports, page cache
            _, data = await _call(self.client, {"commands": ["echo hi"], "shell": "sh"})
        self.session = str(data["sessionID"])
        self.backend = str(data.get("sandbox", "?"))

    async def first_command(self) -> None:
        took, _ = await _call(self.client, {"commands": ["echo hi"], "shell": "sh"})
        self.first.add(took)

    async def steady_command(self) -> None:
        args = {"commands": ["echo hi"], "shell": "sh", "sessionID": self.session}
        took, _ = await _call(self.client, args)
        self.steady.add(took)


async def measure(options: argparse.Namespace) -> dict[tuple[str, str], tuple[Contender, Contender]]:
    """Every (install, root) pair of servers, measured in one interleaved run."""
    configs = prepare(options.work)
    installs = {"after": getattr(options, "server", None) or server_command()}
    if getattr(options, "before_server", None):
        installs = {"before": options.before_server, **installs}
    async with contextlib.AsyncExitStack() as stack:
        results: dict[tuple[str, str], tuple[Contender, Contender]] = {}
        for label, command in installs.items():
            for name, (on, off) in configs.items():
                pair = []
                for config in (on, off):
                    client = Client(linear_stdio([command, "--config", str(config)]), mode="legacy")
                    pair.append(Contender(await stack.enter_async_context(client)))
                results[(label, name)] = (pair[0], pair[1])
        for pair in results.values():
            for contender in pair:
                await contender.warm()
        firsts = max(5, options.runs // 3)
        for index in range(options.runs):
            for boxed, bare in results.values():
                order = (boxed, bare) if index % 2 == 0 else (bare, boxed)
                for contender in order:
                    await contender.steady_command()
                if index < firsts:
                    for contender in order:
                        await contender.first_command()
    return results


def _overhead(boxed: Samples, bare: Samples) -> float:
    return statistics.median((a - b) * 1000 for a, b in zip(boxed.values, bare.values, strict=True))


def run(options: argparse.Namespace) -> str:
    """Measure and return the section's Markdown block."""
    results = anyio.run(measure, options)
    backend = next(iter(results.values()))[0].backend
    rows = []
    met = True
    for (label, name), (boxed, bare) in results.items():
        steady = _overhead(boxed.steady, bare.steady)
        first = _overhead(boxed.first, bare.first)
        if label == "after" and name in ("empty", "100k files"):
            met = met and steady <= TARGET_OVERHEAD_MS
        print(f"   {label}, {name}: steady +{steady:.1f} ms, first +{first:.1f} ms", flush=True)
        ratio = boxed.steady.median / bare.steady.median
        rows.append(
            f"| {label} | {name} | {boxed.steady.median * 1000:.1f} | {bare.steady.median * 1000:.1f} "
            f"| **{steady:+.1f}** | {ratio:.2f} | {boxed.first.median * 1000:.1f} "
            f"| {bare.first.median * 1000:.1f} | {first:+.1f} |"
        )
    firsts = max(5, options.runs // 3)
    return (
        f"{options.runs} interleaved steady-state calls and {firsts} first calls per server, after 3 "
        f"warm-up calls; shell `sh`; backend `{backend}`; {2 * len(results)} servers in one run "
        "(`before`: `--before-server`, the install before the change).\n\n"
        "| install | root | steady on ms | steady off ms | steady overhead ms | ratio | first on ms "
        "| first off ms | first overhead ms |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n"
        + "\n".join(rows)
        + "\n\n"
        "Medians; the overheads are medians of the per-pair differences. Target: steady overhead at most "
        f"{TARGET_OVERHEAD_MS:g} ms on the empty and the 100k-file root: **{'met' if met else 'missed'}**.\n"
    )


LONG_COMMAND_BYTES = 65_536


def _filled(head: str, unit: str, tail: str = "") -> str:
    """``head``, ``unit`` repeated (the last one cut) and ``tail``: ``LONG_COMMAND_BYTES`` in all."""
    room = LONG_COMMAND_BYTES - len(head) - len(tail)
    return head + (unit * (room // len(unit) + 1))[:room] + tail


def long_commands() -> dict[str, str]:
    """The 65,536-byte commands timed, by shape (``tests/helpers.py`` has the same shapes)."""
    return {
        "one long word": _filled("echo ", "a"),
        "many short words": _filled("echo", " ab"),
        "nested quotes and substitutions": _filled("", 'echo "$(echo "\'$x\'" `echo y`)";', "#"),
        "many semicolons": _filled("", "true;", "true"),
        "a fork-bomb-like prefix": _filled("", "a", "(){ a|a& };"),
        "dd words": _filled("echo ", "dd "),
        "quoted pipes": _filled("echo '", "|", "'"),
        "nested braces": "{" * (LONG_COMMAND_BYTES // 4) + "a,}" * (LONG_COMMAND_BYTES // 4),
    }


def check_times(runs: int) -> dict[str, tuple[float, float, str]]:
    """Per shape: the median time in ms of ``check_command`` under the default policy and under
    ``deny_by_default`` (strict preset; ``echo``, ``true`` and ``sh`` allowed), and the default
    policy's verdict (``ok`` or the start of its refusal)."""
    policies = (
        ExecutionPolicy.from_config(ExecConfig()),
        ExecutionPolicy.from_config(
            ExecConfig(preset="strict", deny_by_default=True, allowed_commands=["echo", "true", "sh"])
        ),
    )
    times: dict[str, tuple[float, float, str]] = {}
    for shape, command in long_commands().items():
        medians, verdict = [], ""
        for index, policy in enumerate(policies):
            samples = []
            for _ in range(runs):
                began = time.perf_counter()
                try:
                    policy.check_command(command, "sh")
                    outcome = "ok"
                except ToolError as exc:
                    outcome = exc.message.split(":")[0]
                samples.append((time.perf_counter() - began) * 1000)
            medians.append(statistics.median(samples))
            verdict = outcome if index == 0 else verdict
        print(f"   {shape}: {medians[0]:.1f} ms, deny_by_default {medians[1]:.1f} ms ({verdict})", flush=True)
        times[shape] = (medians[0], medians[1], verdict)
    return times


def run_checks(options: argparse.Namespace) -> str:
    """Time the command checks and return the ``commandcheck`` section's Markdown block."""
    runs = max(3, options.runs // 3)
    rows = [
        f"| {shape} | {default:.1f} | {strict:.1f} | {verdict} |"
        for shape, (default, strict, verdict) in check_times(runs).items()
    ]
    return (
        f"{options.machine()}\n`ExecutionPolicy.check_command` on {LONG_COMMAND_BYTES:,}-byte commands, "
        f"median of {runs} runs, in this process (no server).\n\n"
        "| shape | default policy ms | deny_by_default ms | default verdict |\n|---|---:|---:|---|\n"
        + "\n".join(rows)
        + "\n"
    )
