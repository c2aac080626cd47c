"""Run mcp-localtools benchmarks and record them in benchmarks/RESULTS.md.

Usage: ``.venv/bin/python benchmarks/run.py [SECTION ...] [--runs N] [--fallback-runs N]``
(default: every section). Each section writes its own ``## name`` block of RESULTS.md (machine,
date, command, table) and leaves the other sections' blocks as they were. Work files go to
``benchmarks/.work/`` (git-ignored). A section is a module here with
``run(options) -> str`` returning its Markdown block, registered in ``SECTIONS``.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import re
import shlex
import sys
from collections.abc import Callable
from pathlib import Path

import audit
import codesearch
import cold
import connections
import issue31
import issue38
import reads
import suite

import sandbox
import search

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "RESULTS.md"
WORK = HERE / ".work"

SECTIONS: dict[str, Callable[[argparse.Namespace], str]] = {
    "suite": suite.run,
    "search": search.run,
    "sandbox": sandbox.run,
    "connections": connections.run,
    "commandcheck": sandbox.run_checks,
    "audit": audit.run,
    "reads": reads.run,
    "codesearch": codesearch.run,
    "issue31": issue31.run,
    "cold": cold.run,
    "issue38": issue38.run,
}

_PREAMBLE = (
    "# Benchmark results\n\n"
    "Written by `benchmarks/run.py` (see `benchmarks/README.md`); each section is replaced when it is "
    "run again.\n"
)


def machine() -> str:
    """One Markdown paragraph describing where and when the benchmark ran."""
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (ValueError, OSError):
        memory = 0.0
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    load = " / ".join(f"{value:.2f}" for value in os.getloadavg())
    return (
        f"- date: {now}\n"
        f"- machine: {platform.system()} {platform.release()} {platform.machine()}, {cpu}, "
        f"{os.cpu_count()} cores, {memory:.0f} GiB\n"
        f"- Python {platform.python_version()}; load average at start (1/5/15 min): {load}\n"
        f"- command: `{' '.join(shlex.quote(arg) for arg in ['python', *sys.argv])}`\n"
    )


def write_section(name: str, block: str) -> None:
    """Replace (or append) the ``## name`` block of RESULTS.md."""
    text = RESULTS.read_text(encoding="utf-8") if RESULTS.exists() else _PREAMBLE
    pattern = re.compile(rf"^## {re.escape(name)}\n.*?(?=^## |\Z)", re.DOTALL | re.MULTILINE)
    block = f"## {name}\n\n{block.strip()}\n\n"
    text = pattern.sub(lambda _: block, text) if pattern.search(text) else text.rstrip() + "\n\n" + block
    RESULTS.write_text(text.rstrip() + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sections", nargs="*", help=f"sections to run: {', '.join(SECTIONS)} (default: all)")
    parser.add_argument("--runs", type=int, default=15, help="timed runs of each fast contender (default 15)")
    parser.add_argument(
        "--before", default="main", help="revision the reads section compares with (default main)"
    )
    parser.add_argument(
        "--server",
        default="",
        help="the mcp-localtools command the sandbox section runs (default: this install's)",
    )
    parser.add_argument(
        "--before-server", default="", help="sandbox section: also run this install's command, interleaved"
    )
    parser.add_argument(
        "--before-src",
        default="",
        help="cold section: also spawn the server from this source tree (its src/), interleaved",
    )
    parser.add_argument(
        "--fallback-runs", type=int, default=5, help="timed runs of the slow pure-Python fallback (default 5)"
    )
    parser.add_argument(
        "--work",
        type=Path,
        default=WORK,
        help="generated data (default benchmarks/.work; big trees: a directory of your own in /tmp)",
    )
    options = parser.parse_args(argv)
    unknown = sorted(set(options.sections) - set(SECTIONS))
    if unknown:
        parser.error(f"unknown section(s): {', '.join(unknown)}; known: {', '.join(SECTIONS)}")
    options.machine = machine
    # A pip install byte-compiles the package; an editable checkout run with
    # PYTHONDONTWRITEBYTECODE=1 (as here) would compile ~70 modules on every server start.
    import compileall

    import mcp_localtools

    compileall.compile_dir(Path(mcp_localtools.__file__).parent, quiet=1)
    for name in options.sections or list(SECTIONS):
        print(f"== {name}", flush=True)
        write_section(name, SECTIONS[name](options))
    print(f"results in {RESULTS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
