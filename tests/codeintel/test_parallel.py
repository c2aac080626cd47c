"""A large update is analysed on every core: worker processes parse, the server writes, and the
index is the same as one built in a single thread (issue 37, item 5)."""

from __future__ import annotations

import resource
import sqlite3
from contextlib import closing
from pathlib import Path

import anyio
import pytest

from mcp_localtools.codeintel import analysis
from mcp_localtools.codeintel.analysis import usable_cores
from mcp_localtools.codeintel.index import IndexSettings
from mcp_localtools.codeintel.indexes import CodeIndexes
from mcp_localtools.policy.paths import PathPolicy
from mcp_localtools.search import default_engine
from tests.helpers import config_for, connect, text_of

pytestmark = pytest.mark.anyio

FILES = 150


def _project(root: Path) -> None:
    root.mkdir(exist_ok=True)
    (root / ".git").mkdir()
    for number in range(FILES):
        (root / f"m{number:03}.py").write_text(
            f'def function_{number}(value):\n    """Scale the value by {number}."""\n'
            f"    return value * {number}\n\n"
            f"class Holder{number}:\n    def take(self):\n        return function_{number}(1)\n",
            encoding="utf-8",
        )
    (root / "app.js").write_text("export const shorten = (text) => text.slice(0, 10);\n", encoding="utf-8")
    (root / "notes.md").write_text("# Notes\n\nHow values are scaled.\n", encoding="utf-8")
    (root / "latin.py").write_bytes(b"# caf\xe9\ndef latin():\n    pass\n")  # not UTF-8: not indexed


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _rows(database: Path) -> dict[str, list[tuple[object, ...]]]:
    with closing(sqlite3.connect(database)) as db:
        return {
            "files": db.execute("SELECT path, sha256, language, lines FROM files ORDER BY path").fetchall(),
            "symbols": db.execute(
                "SELECT f.path, s.name, s.qualified, s.kind, s.start_line, s.end_line, s.signature, s.doc "
                "FROM symbols s JOIN files f ON f.id = s.file_id ORDER BY f.path, s.rowid"
            ).fetchall(),
            "refs": db.execute(
                "SELECT f.path, r.name, r.kind, r.line, r.scope FROM refs r JOIN files f ON f.id = r.file_id "
                "ORDER BY f.path, r.rowid"
            ).fetchall(),
            "chunks": db.execute(
                "SELECT f.path, c.symbol, c.kind, c.start_line, c.end_line, c.summary, c.vector, t.title, "
                "t.body "
                "FROM chunks c JOIN files f ON f.id = c.file_id JOIN chunk_terms t ON t.rowid = c.id "
                "ORDER BY f.path, c.start_line, c.symbol"
            ).fetchall(),
        }


def _build(root: Path, cache: Path) -> Path:
    async def run() -> Path:
        indexes = CodeIndexes(
            PathPolicy.create([root]), IndexSettings(cache_dir=cache), default_engine(), None
        )
        index = indexes.index_for(root)
        await indexes.ready(index, _no_report)
        database = indexes.database(index)
        assert database is not None
        index.store.close()
        return database

    return anyio.run(run)


async def _no_report(done: float, total: float | None, message: str) -> None:
    return None


@pytest.mark.skipif(usable_cores() < 2, reason="one core: no worker processes")
def test_workers_build_the_same_index_as_one_thread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _project(tmp_path / "project")
    before = _children_cpu()
    single = _rows(_build(tmp_path / "project", tmp_path / "one"))
    listing = _children_cpu() - before  # the file list's ripgrep
    assert single["files"] and len(single["symbols"]) >= 3 * FILES
    monkeypatch.setattr(analysis, "PARALLEL_FILES", 1)
    before = _children_cpu()
    parallel = _rows(_build(tmp_path / "project", tmp_path / "many"))
    # Worker processes ran (each starts an interpreter: 0.1 s of CPU at least) and were reaped.
    assert _children_cpu() - before > listing + 0.2
    for table, rows in single.items():
        assert parallel[table] == rows, table
    assert not any(path == "latin.py" for path, *_ in parallel["files"])


@pytest.mark.skipif(usable_cores() < 2, reason="one core: no worker processes")
async def test_a_server_answers_from_an_index_its_workers_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _project(tmp_path)
    monkeypatch.setattr(analysis, "PARALLEL_FILES", 1)
    async with connect(config_for(tmp_path)) as client:
        found = await client.call_tool("findsymbol", {"name": "function_140", "includeReferences": False})
        assert not found.is_error, text_of(found)
        assert found.structured_content is not None
        assert [d["path"] for d in found.structured_content["definitions"]] == ["m140.py"]
        searched = await client.call_tool("semanticsearch", {"query": "shorten text", "maxResults": 3})
        assert not searched.is_error, text_of(searched)
        assert "app.js" in text_of(searched)


def _streams() -> tuple[bool, bytes]:
    """In a worker: whether its standard output is its standard error, and what its stdin holds."""
    import os

    one, two = os.fstat(1), os.fstat(2)
    return (one.st_dev, one.st_ino) == (two.st_dev, two.st_ino), os.read(0, 16)


def test_a_worker_cannot_write_to_the_wire_or_read_from_it() -> None:
    # A worker inherits the server's stdin and stdout, the stdio transport's wire: what a library
    # in it prints goes to stderr, and it reads nothing of the client's.
    with analysis.AnalysisPool(1) as pool:
        to_stderr, read = pool._pool.submit(_streams).result(timeout=60)
    assert to_stderr and read == b""
