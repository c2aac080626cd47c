"""The reference graph is built again only when what it ranks changed (issue 37: one changed file
re-indexed in well under 0.5 s): a file indexed again keeps its place (its id), and the index's
graph generation rises exactly when the graph's rows (files, definitions, uses) change."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from mcp_localtools.codeintel.index import CodeIndex, IndexSettings
from mcp_localtools.codeintel.indexes import CodeIndexes
from mcp_localtools.codeintel.ranking import Graph
from mcp_localtools.policy.paths import PathPolicy
from mcp_localtools.search import default_engine

pytestmark = pytest.mark.anyio

SHOP = (
    'def compute_tax(amount):\n    """The tax owed on an amount."""\n    return amount * 0.2\n\n\n'
    "def checkout(cart):\n    return compute_tax(sum(cart))\n"
)
APP = "from shop import checkout\n\n\ndef main():\n    return checkout([1, 2])\n"


async def _no_report(done: float, total: float | None, message: str) -> None:
    return None


async def _index(root: Path, cache: Path) -> CodeIndex:
    indexes = CodeIndexes(PathPolicy.create([root]), IndexSettings(cache_dir=cache), default_engine(), None)
    index = indexes.index_for(root)
    await indexes.ready(index, _no_report)
    return index


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / ".git").mkdir()
    (root / "shop.py").write_text(SHOP, encoding="utf-8")
    (root / "app.py").write_text(APP, encoding="utf-8")
    return root


def _edit(index: CodeIndex, root: Path, name: str, text: str | None) -> None:
    """Write (None: delete) the file ``name`` and index it again."""
    if text is None:
        (root / name).unlink()
    else:
        (root / name).write_text(text, encoding="utf-8")
    assert index.refresh([name])


async def test_the_graph_generation_rises_exactly_when_the_graph_rows_change(
    project: Path, tmp_path: Path
) -> None:
    index = await _index(project, tmp_path / "cache")
    store = index.store
    edits: list[tuple[str, str | None, bool]] = [  # (file, new text or None, graph rows change)
        ("app.py", APP + "\n# a comment\n", False),  # the first file indexed, indexed again
        ("shop.py", SHOP.replace("0.2", "0.25"), False),  # other text, the same uses
        ("app.py", APP + "\n\ndef again():\n    return checkout([])\n", True),  # a use, a definition more
        ("shop.py", SHOP.replace("compute_tax(sum(cart))", "sum(cart)"), True),  # a use less
        ("extra.py", "def extra():\n    return 1\n", True),  # a new file
        ("extra.py", None, True),  # a file gone
    ]
    for name, text, changes in edits:
        rows, graph_generation, generation = store.graph_rows(), store.graph_generation(), store.generation()
        _edit(index, project, name, text)
        assert store.generation() > generation
        assert (store.graph_rows() != rows) is changes, name
        assert (store.graph_generation() != graph_generation) is changes, name


async def test_a_kept_graph_is_the_graph_built_again(project: Path, tmp_path: Path) -> None:
    index = await _index(project, tmp_path / "cache")
    kept = index.graph()
    _edit(index, project, "app.py", APP + "\n# a comment\n")  # the first file indexed
    assert index.graph() is kept
    fresh = Graph(*index.store.graph_rows())
    assert fresh.files == kept.files
    assert fresh.file_ranks() == kept.file_ranks()
    assert fresh.rank_definitions() == kept.rank_definitions()


async def test_a_new_use_is_ranked_after_the_graph_is_built_again(project: Path, tmp_path: Path) -> None:
    index = await _index(project, tmp_path / "cache")
    before = index.graph()
    assert ("app.py", "compute_tax") not in {(p, n) for p, n, _ in before.rank_definitions()}
    uses_tax = "from shop import compute_tax\n\n\ndef main():\n    return compute_tax(3)\n"
    _edit(index, project, "app.py", uses_tax)
    deadline = time.monotonic() + 10
    while index.graph() is before and time.monotonic() < deadline:  # built again in the background
        time.sleep(0.05)
    after = index.graph()
    assert after is not before
    assert after.file_ranks() == Graph(*index.store.graph_rows()).file_ranks()
    assert index.file_ranks() == after.file_ranks()
