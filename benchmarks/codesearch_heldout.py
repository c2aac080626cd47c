"""Held-out code search: do the ranking's gains carry over to code the project has not seen?

The questions (``codesearch_heldout.json``) were written against httpx 0.27.2 and koa 2.15.3, and
later against mobx 6.13.5's TypeScript sources, each answer read in the pinned archive before any
search or run on it, and are never used to tune anything. The same measure as the codesearch
section's quality table (MRR@10 and recall@10 of ``semanticsearch`` against ripgrep on the
question's words), per question type and language.
Run: ``python benchmarks/codesearch_heldout.py [--work DIR]``; a source tree given with
``PYTHONPATH=OTHER/src`` measures another version (its ``semanticsearch.search`` and
``open_scope`` as today's).
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path

import anyio
from codesearch import LANGUAGES, TOP, Archive, _scope, fetch, rg_ranking, score, unpack

from mcp_localtools.search.rg import find_ripgrep
from mcp_localtools.tools.code.semanticsearch import search

HERE = Path(__file__).resolve().parent
HELD_OUT = (
    Archive(
        "httpx-0.27.2.tar.gz", "pip", "httpx==0.27.2",
        "f7c2be1d2f3c3c3160d441802406b206c2b76f5947b11115e6df10c6c65e66c2",
    ),
    Archive(
        "koa-2.15.3.tgz", "npm", "koa@2.15.3",
        "23b9a334640c93f61306e1941dc87b6001b0273230482fb9138243de870727f1", "koa-2.15.3", "lib",
    ),
    Archive(
        "mobx-6.13.5.tgz", "npm", "mobx@6.13.5",
        "b85a7f765065c081724a7c49e91f59950151607b2f1c5a77c8ec4231f7129a1b", "mobx-6.13.5", "src",
    ),
)  # fmt: skip


def run(work: Path) -> str:
    """Index the held-out code bases, ask every question, and return the Markdown table."""
    root = work / "heldout"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    (root / ".git").mkdir()  # one project
    for archive in HELD_OUT:
        unpack(fetch(archive, work / "downloads"), root, archive)
    queries = json.loads((HERE / "codesearch_heldout.json").read_text(encoding="utf-8"))["queries"]
    began = time.perf_counter()
    scope = anyio.run(_scope, root)
    build = time.perf_counter() - began
    rg = find_ripgrep() or "rg"
    ours: list[list[tuple[str, int, int]]] = []
    grep: list[list[tuple[str, int, int]]] = []
    targets: list[list[tuple[str, int, int]]] = []
    for item in queries:
        wanted = [
            (found.path, found.symbol.start_line, found.symbol.end_line)
            for found in scope.index.store.symbols_where(
                "s.name = ? AND f.path = ?", [item["symbol"], item["file"]], 10
            )
        ]
        if not wanted:
            raise SystemExit(f"{item['file']} defines no {item['symbol']} in the index")
        targets.append(wanted)
        ours.append([(c.path, c.start_line, c.end_line) for c, _ in search(scope, item["query"], TOP)])
        grep.append(rg_ranking(rg, root, item["query"]))
    lines = ["| question type (n) | semanticsearch | ripgrep |", "|---|---|---|"]
    groups: dict[str, list[int]] = {}
    for i, item in enumerate(queries):
        language = LANGUAGES.get(Path(item["file"]).suffix, "other")
        for label in (f"{item['kind']} {language}", item["kind"], "all"):
            groups.setdefault(label, []).append(i)
    for label, picked in groups.items():
        cells = []
        for ranked in (ours, grep):
            mrr, recall = score([ranked[i] for i in picked], [targets[i] for i in picked])
            cells.append(f"{mrr:.3f} ({recall:.2f})")
        lines.append(f"| {label} ({len(picked)}) | {' | '.join(cells)} |")
    misses = [
        f"- {q['kind']} `{q['query']}` -> {q['file']}:{q['symbol']}"
        for i, q in enumerate(queries)
        if score([ours[i]], [targets[i]])[0] < 1 / 3
    ]
    return (
        "Cells: MRR@10 (recall@10). Index built in-process in "
        f"{build:.1f} s.\n\n" + "\n".join(lines) + "\n\nMisses (rank > 3):\n" + "\n".join(misses) + "\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=HERE / ".work", help="downloads and the unpacked code")
    print(run(parser.parse_args().work))


if __name__ == "__main__":
    main()
