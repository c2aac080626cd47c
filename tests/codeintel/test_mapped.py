"""The chunk vectors are mapped from a file beside the database, right after changes and never
taken from another build of the database (issue 37, item 5)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import anyio
import pytest

from mcp_localtools.codeintel.index import CodeIndex, IndexSettings
from mcp_localtools.codeintel.indexes import CodeIndexes
from mcp_localtools.codeintel.mapped import MappedVectors, open_vectors
from mcp_localtools.codeintel.vectors import VectorTable
from mcp_localtools.policy.paths import PathPolicy
from mcp_localtools.search import default_engine

pytestmark = pytest.mark.anyio

SOURCES = {
    "tax.py": 'def compute_tax(amount):\n    """The tax owed on an amount."""\n    return amount * 0.2\n',
    "mail.py": 'def send_mail(to, body):\n    """Send an email message to someone."""\n    return to\n',
    "dates.py": 'def parse_date(text):\n    """Read a date written as text."""\n    return text.split("-")\n',
}


async def _no_report(done: float, total: float | None, message: str) -> None:
    return None


async def _index(root: Path, cache: Path | None) -> tuple[CodeIndexes, CodeIndex]:
    indexes = CodeIndexes(PathPolicy.create([root]), IndexSettings(cache_dir=cache), default_engine(), None)
    index = indexes.index_for(root)
    await indexes.ready(index, _no_report)
    return indexes, index


def _nearest(index: CodeIndex, query: str) -> list[tuple[str, float]]:
    vector = index.embed_query(query)
    found = index.nearest(vector, 3)
    chunks = index.store.chunks([chunk for chunk, _ in found])
    return [(chunks[chunk].symbol, round(score, 5)) for chunk, score in found]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / ".git").mkdir()
    for name, text in SOURCES.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


async def test_vectors_are_mapped_and_rank_as_in_memory(project: Path, tmp_path: Path) -> None:
    _, mapped = await _index(project, tmp_path / "cache")
    _, memory = await _index(project, None)
    assert isinstance(mapped.vectors(), MappedVectors)
    assert isinstance(memory.vectors(), VectorTable)
    assert mapped.store.path is not None
    assert Path(f"{mapped.store.path}.vectors").is_file()
    for query in ("how much tax is owed", "email someone", "read a date"):
        assert _nearest(mapped, query) == _nearest(memory, query)
    assert _nearest(mapped, "how much tax is owed")[0][0] == "compute_tax"


async def test_changes_after_the_file_was_written_are_seen(project: Path, tmp_path: Path) -> None:
    _, index = await _index(project, tmp_path / "cache")
    assert isinstance(index.vectors(), MappedVectors)
    (project / "tax.py").write_text("def unrelated():\n    return 1\n", encoding="utf-8")
    (project / "ship.py").write_text(
        'def ship_parcel(box):\n    """Post a parcel to its address."""\n    return box\n', encoding="utf-8"
    )
    index.refresh(["tax.py", "ship.py"])
    table = index.vectors()
    assert isinstance(table, MappedVectors)
    assert len(table.added) >= 2  # the new chunks are in memory, the file as it was
    symbols = [symbol for symbol, _ in _nearest(index, "how much tax is owed")]
    assert "compute_tax" not in symbols
    assert _nearest(index, "post a parcel to an address")[0][0] == "ship_parcel"
    # A new server on the same cache sees the same: the removed chunk masked, the new one read.
    _, again = await _index(project, tmp_path / "cache")
    assert _nearest(again, "post a parcel to an address") == _nearest(index, "post a parcel to an address")
    assert "compute_tax" not in [symbol for symbol, _ in _nearest(again, "how much tax is owed")]


async def test_a_file_of_another_build_of_the_database_is_not_used(project: Path, tmp_path: Path) -> None:
    _, first = await _index(project, tmp_path / "one")
    first.vectors()
    _, second = await _index(project, tmp_path / "two")
    second.vectors()
    assert first.store.path is not None and second.store.path is not None
    theirs = Path(f"{first.store.path}.vectors")
    ours = Path(f"{second.store.path}.vectors")
    assert open_vectors(theirs, second.store.build()) is None  # another build id
    second.release()
    shutil.copyfile(theirs, ours)
    assert open_vectors(ours, second.store.build()) is None
    assert _nearest(second, "read a date")[0][0] == "parse_date"  # written again, then mapped
    assert open_vectors(ours, second.store.build()) is not None


async def test_a_file_cut_short_is_written_again(project: Path, tmp_path: Path) -> None:
    _, index = await _index(project, tmp_path / "cache")
    index.vectors()
    assert index.store.path is not None
    path = Path(f"{index.store.path}.vectors")
    index.release()
    path.write_bytes(path.read_bytes()[:-100])
    assert open_vectors(path, index.store.build()) is None
    await anyio.sleep(0)
    assert _nearest(index, "email someone")[0][0] == "send_mail"
    assert open_vectors(path, index.store.build()) is not None


async def test_a_temporary_file_left_by_a_dead_writer_is_removed(project: Path, tmp_path: Path) -> None:
    _, index = await _index(project, tmp_path / "cache")
    index.vectors()
    assert index.store.path is not None
    directory = index.store.path.parent
    left, fresh = directory / ".vectors-left", directory / ".vectors-writing"
    left.write_bytes(b"half")
    fresh.write_bytes(b"half")
    os.utime(left, (1, 1))
    index.release()
    Path(f"{index.store.path}.vectors").unlink()
    index.vectors()  # no file: written again
    assert not left.exists()
    assert fresh.exists()  # perhaps another server writing it
