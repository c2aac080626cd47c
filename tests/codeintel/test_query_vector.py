"""A query's embedding weighs each of its words once, by its rarity in the index (issue 37, item 2:
questions in the user's words)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import anyio
import numpy as np
import pytest

from mcp_localtools.codeintel.index import CodeIndex, IndexSettings
from mcp_localtools.codeintel.indexes import CodeIndexes
from mcp_localtools.codeintel.vectors import IDF_FLOOR, Embedder, query_vector
from mcp_localtools.policy.paths import PathPolicy
from mcp_localtools.search import default_engine

EMBEDDER = Embedder()


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_a_word_of_many_tokens_counts_once() -> None:
    many, one = EMBEDDER.embed([["obfuscate"], ["mask"]])
    tokens = EMBEDDER.embed([["obfuscate", "mask"]])[0]  # a mean of tokens: obfuscate is four
    assert _cosine(tokens, many) - _cosine(tokens, one) > 0.05
    vector = query_vector(EMBEDDER, ["obfuscate", "mask"], [3, 3], 100)
    assert _cosine(vector, many) == pytest.approx(_cosine(vector, one), abs=1e-5)
    assert float(np.linalg.norm(vector)) == pytest.approx(1.0, abs=1e-5)


def test_a_word_in_every_chunk_weighs_least() -> None:
    common, rare = EMBEDDER.embed([["value"], ["keystroke"]])
    vector = query_vector(EMBEDDER, ["value", "keystroke"], [100, 0], 100)
    expected = IDF_FLOOR * common + math.log(101) * rare
    np.testing.assert_allclose(vector, expected / np.linalg.norm(expected), atol=1e-5)
    assert _cosine(vector, rare) > _cosine(vector, common)


def test_no_words_is_no_direction() -> None:
    assert not query_vector(EMBEDDER, [], [], 10).any()


def _ready_index(root: Path, cache: Path) -> CodeIndex:
    """The index of ``root``, built."""
    indexes = CodeIndexes(PathPolicy.create([root]), IndexSettings(cache_dir=cache), default_engine(), None)
    index = indexes.index_for(root)

    async def ready() -> None:
        async def report(done: float, total: float | None, message: str) -> None:
            return None

        await indexes.ready(index, report)

    anyio.run(ready)
    return index


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    for name, doc in (
        ("tax", "compute the tax value"),
        ("mail", "send the mail value"),
        ("dates", "parse a date value"),
    ):
        (root / f"{name}.py").write_text(
            f'def {name}(value):\n    """{doc}"""\n    return value\n', encoding="utf-8"
        )
    return root


def test_the_index_weighs_a_query_by_its_own_chunks(project: Path, tmp_path: Path) -> None:
    index = _ready_index(project, tmp_path / "cache")
    total = index.store.counts()[2]
    everywhere, nowhere = index.store.frequencies(["valu", "keystrok"])[0].get("valu", 0), 0
    assert total >= 3 and everywhere == total  # "value" is in every chunk; "keystroke" in none
    expected = query_vector(EMBEDDER, ["value", "keystroke"], [everywhere, nowhere], total)
    np.testing.assert_allclose(index.embed_query("the value of a keystroke"), expected, atol=1e-6)


def test_a_query_without_words_or_without_a_model_has_no_embedding(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A query of stop words and numbers was embedded as zeros, and semanticsearch then fused
    # chunks in arbitrary order (all at cosine 0) into its results.
    assert _ready_index(project, tmp_path / "cache").embed_query("the of and 123") is None
    monkeypatch.setitem(sys.modules, "wordllama", None)  # the model cannot be imported
    index = _ready_index(project, tmp_path / "other")
    assert not index.can_embed()
    assert index.embed_query("the value") is None and index.embed_query("the of") is None


def test_frequencies_are_one_count_per_word() -> None:
    with pytest.raises(ValueError, match="1 frequencies for 2 words"):
        query_vector(EMBEDDER, ["value", "keystroke"], [3], 10)
