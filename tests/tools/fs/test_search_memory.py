"""searchfiles' memory is bounded by what its result can carry, not by what matches: a search
where every line of a tree matches, in every output mode and with both engines, grows the
server's peak resident memory (VmHWM, read in a child process that runs only the search) by at
most 100 MiB. Before (a 1 GiB tree, 40 s budget): ripgrep +939 MiB (matches), +431 MiB (20 lines
of context), the Python engine +266 MiB; after: +5 to +24 MiB. The unbounded code had grown past
the bound after about 1 M matching lines with ripgrep and 200,000 with the Python engine, so each
run searches the whole of a tree past that and counts every line: 2,097,152 lines (128 MiB) for
ripgrep, 524,288 (32 MiB) for the slower Python engine. Counts decide, not a time budget."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.search.engines import ENGINES

MiB = 1024 * 1024
LINE_BYTES = 64
FILE_LINES = 4 * MiB // LINE_BYTES
FILES = {"ripgrep": 32, "python": 8}  # files of 4 MiB each engine searches (the Python engine's: tree/d0)

SCRIPT = """
import asyncio, json, sys, time
from mcp_localtools.config import parse_config
from tests.search.engines import make_engine, search_registry

def hwm_kib():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM"))

root, warm, engine, arguments = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
# The whole tree is searched (the budget is far off): the counts below say how much.
config = parse_config({"paths": {"allowed_roots": [root]}, "limits": {"search_seconds": 600}})
registry = search_registry(config, make_engine(engine))
asyncio.run(registry.call("searchfiles", {**arguments, "root": warm}))  # imports, first call
before = hwm_kib()
began = time.monotonic()
result = asyncio.run(registry.call("searchfiles", arguments))
print(json.dumps({"grown_kib": hwm_kib() - before, "seconds": time.monotonic() - began,
                  "error": result.error.code if result.error else None, "structured": result.structured}))
"""


@pytest.fixture(scope="session")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``tree/d0`` to ``tree/d3``, eight files of 4 MiB each, every line of them matching
    ``needle`` (64-byte lines); the Python engine searches ``tree/d0``, ripgrep all of ``tree``."""
    root = tmp_path_factory.mktemp("search-memory")
    line = b"every line of this file matches the pattern needle, line %06d\n"
    assert len(line % 0) == LINE_BYTES
    block = b"".join(line % n for n in range(FILE_LINES))
    for index in range(FILES["ripgrep"]):
        directory = root / "tree" / f"d{index // 8}"
        directory.mkdir(parents=True, exist_ok=True)
        (directory / f"f{index:04d}.txt").write_bytes(block)
    (root / "warm").mkdir()
    (root / "warm" / "a.txt").write_bytes(block[:4096])
    return root


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="VmHWM comes from /proc")
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    "arguments",
    [
        {"outputMode": "matches"},
        {"outputMode": "matches", "contextLines": 20, "maxResults": 1000},
        {"outputMode": "count"},
        {"outputMode": "count", "countOccurrences": True},
        {"outputMode": "files"},
    ],
    ids=["matches", "matches-context", "count", "occurrences", "files"],
)
def test_an_every_line_search_costs_at_most_100_mib(
    tree: Path, engine: str, arguments: dict[str, object]
) -> None:
    searched = tree / "tree" if engine == "ripgrep" else tree / "tree" / "d0"
    call = {"pattern": "needle", "root": str(searched), **arguments}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tree), str(tree / "warm"), engine, json.dumps(call)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=Path(__file__).resolve().parents[3],
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    grown, seconds = report["grown_kib"] / 1024, report["seconds"]
    structured = report["structured"]
    found = structured.get("totalMatches", structured["totalFiles"])
    print(f"[search memory] {engine} {arguments}: +{grown:.0f} MiB in {seconds:.1f} s, {found} found")
    assert report["error"] is None
    assert report["grown_kib"] < 100 * 1024, report["grown_kib"]
    # Every line was searched and counted: past where the unbounded code had grown by more than
    # 100 MiB (about 1 M matching lines with ripgrep, 200,000 with the Python engine).
    if arguments["outputMode"] == "files":
        assert structured["totalFiles"] == FILES[engine], structured
    else:
        assert structured["totalMatches"] == FILES[engine] * FILE_LINES, structured
    if arguments["outputMode"] == "matches":
        assert structured["truncated"] is True  # the matches past what a result carries are left out
