"""The embedder's remembered words: when they fill up, a batch is still embedded whole."""

from __future__ import annotations

import numpy as np
import pytest

from mcp_localtools.codeintel import vectors
from mcp_localtools.codeintel.vectors import Embedder

TEXTS = [["parse", "header"], ["read", "file", "header"], ["stream", "body", "chunk", "parse"]]


def test_a_full_word_cache_still_embeds_every_word(monkeypatch: pytest.MonkeyPatch) -> None:
    whole = Embedder().embed(TEXTS)
    embedder = Embedder()
    embedder.embed([["stream", "body"]])  # remembered before the cache fills
    monkeypatch.setattr(vectors, "MAX_WORDS", 4)  # the next batch's new words overflow it
    np.testing.assert_array_equal(embedder.embed(TEXTS), whole)
