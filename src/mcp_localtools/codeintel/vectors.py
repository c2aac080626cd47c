"""Embeddings by WordLlama, and the in-memory table of chunk vectors that a query is scored against.

WordLlama (``l2_supercat_256``) is a static embedding model: a token table distilled from an
LLM's, 256 dimensions, whose weights and tokenizer ship inside the ``wordllama`` wheel, so it
loads with no network (``WordLlama.load(cache_dir=<the package>, disable_download=True)``: the
package directory is where its files are, and no download is allowed). A chunk's embedding is the
mean of its tokens' vectors, normalised; a query's is the mean of its words' own embeddings, each
weighted by how rare the word is in the index (``query_vector``). We pool ourselves from
WordLlama's own tokenizer and table, without padding a batch to its longest text (WordLlama's
``embed`` pads, which costs batch x longest x 256 floats).

Vectors are stored on disk as float16 (512 bytes each), kept in memory as float32 (1 KiB
each: numpy has no fast float16 product) and scored as dot products.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Iterable, Sequence
from itertools import chain
from typing import Any

__all__ = [
    "BODY_WEIGHT",
    "DIMENSIONS",
    "IDF_FLOOR",
    "Embedder",
    "VectorTable",
    "chunk_vectors",
    "query_vector",
]

logger = logging.getLogger(__name__)

DIMENSIONS = 256
BODY_WEIGHT = 0.7
"""A chunk's body in its vector, against 1 for its name and doc (tuned on benchmarks/codesearch)."""
IDF_FLOOR = 0.5
"""The least weight of a query's word in ``query_vector``: that of a word in more than about 60 %
of the chunks (e^-0.5), and of every word while nothing is indexed."""
MAX_TOKENS = 512
"""Tokens of a text that are pooled (the head of a chunk)."""
MAX_WORDS = 300_000
"""Distinct words whose token ids are remembered (a few MiB)."""
_BATCH = 64
"""Texts tokenized and pooled together: their tokens' rows are gathered at once, at most
64 x 512 x 256 float16 (16 MiB), about 64 x 150 x 256 (5 MiB) for typical chunks (256 texts
at a time held 40 MiB of float32, which the allocator kept: +34 MiB peak while indexing)."""


class Embedder:
    """Loads WordLlama on first use (thread-safe) and embeds texts.

    Raises (from ``embed``): ``RuntimeError`` when WordLlama is not installed or its files are
    missing; the index then runs without embeddings and says so.
    """

    def __init__(self) -> None:
        self._model: Any = None
        self._lock = threading.Lock()
        self._word_ids: dict[str, tuple[int, ...]] = {}
        self._gathered: Any = None  # a batch's token rows (reused: a new block each batch is mapped,
        # faulted in and unmapped again under ``idle.fixed_mmap_threshold``: +2 s of CPU on Django)
        self._gather_lock = threading.Lock()
        self.error: str | None = None

    def _load(self) -> Any:
        with self._lock:
            if self._model is not None or self.error is not None:
                return self._model
            root = logging.getLogger()
            handlers, level = list(root.handlers), root.level
            try:
                from pathlib import Path

                import wordllama  # its __init__ calls logging.basicConfig: undone below

                self._model = wordllama.WordLlama.load(
                    config="l2_supercat", dim=DIMENSIONS, cache_dir=Path(wordllama.__file__).parent,
                    disable_download=True,
                )  # fmt: skip
                self._model.tokenizer.no_padding()  # WordLlama pads a batch to its longest text
                # The token table as the wheel ships it (float16: 16 MiB, not the 31 MiB of float32
                # WordLlama makes of it); pooled into float32 sums.
                self._model.embedding = self._model.embedding.astype("float16")
            except (ImportError, OSError, ValueError) as exc:
                self.error = f"WordLlama could not be loaded: {exc}"
                logger.warning("%s; semantic search ranks by words only", self.error)
            finally:
                root.handlers[:] = handlers
                root.setLevel(level)
            return self._model

    def release(self) -> None:
        """Drop the model and the remembered words (loaded again on the next ``embed``)."""
        with self._lock, self._gather_lock:
            self._model = None
            self._word_ids = {}
            self._gathered = None

    def loaded(self) -> bool:
        """Whether the model is in memory now."""
        return self._model is not None

    def available(self) -> bool:
        """Whether embeddings can be made (loads the model)."""
        return self._load() is not None

    def _remember(self, model: Any, words: Iterable[str]) -> None:
        """Tokenize and remember those of ``words`` not remembered yet; when they would make more
        than ``MAX_WORDS``, the remembered ones are forgotten and all of ``words`` tokenized again
        (those of them remembered before went too)."""
        distinct = dict.fromkeys(words)
        missing = [word for word in distinct if word not in self._word_ids]
        if missing and len(self._word_ids) + len(missing) > MAX_WORDS:
            self._word_ids.clear()
            missing = list(distinct)
        # One word at a time: as fast, and no thread pool (``encode_batch``'s spins while
        # other processes hold the cores: 12 times slower while a build's workers parse).
        encode = model.tokenizer.encode
        for word in missing:
            self._word_ids[word] = tuple(encode(word, add_special_tokens=False).ids)

    def embed(self, texts: Sequence[Sequence[str]]) -> Any:
        """The normalised embeddings of ``texts``, each given as its words
        (``Tokenizer.words``): the mean of the WordLlama vectors of their tokens, as a float32
        array of shape (len, 256). Each distinct word is tokenized once (remembered).

        Raises:
            RuntimeError: the model could not be loaded.
        """
        import numpy as np

        model = self._load()
        if model is None:
            raise RuntimeError(self.error or "WordLlama is not available")
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        table = model.embedding
        for start in range(0, len(texts), _BATCH):
            batch = texts[start : start + _BATCH]
            with self._lock:
                self._remember(model, chain.from_iterable(batch))
                known = self._word_ids.__getitem__  # every word of the batch is remembered now
                ids = [list(chain.from_iterable(map(known, words)))[:MAX_TOKENS] for words in batch]
            lengths = np.array([len(row) for row in ids], dtype=np.int64)
            filled = lengths > 0
            if not filled.any():
                continue
            flat = np.fromiter(chain.from_iterable(ids), dtype=np.int64, count=int(lengths.sum()))
            np.clip(flat, 0, table.shape[0] - 1, out=flat)
            starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))[filled]
            with self._gather_lock:  # the tokens' rows gathered into one reused buffer
                if self._gathered is None or len(self._gathered) < len(flat):
                    self._gathered = np.empty((max(len(flat), 16_384), DIMENSIONS), dtype=table.dtype)
                rows = np.take(table, flat, axis=0, out=self._gathered[: len(flat)])
                sums = np.add.reduceat(rows, starts, axis=0, dtype=np.float32)
            out[start : start + len(ids)][filled] = sums / lengths[filled, None]
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out


def chunk_vectors(
    embedder: Embedder, names: Sequence[Sequence[str]], bodies: Sequence[Sequence[str]]
) -> list[bytes | None]:
    """Chunks' vectors as float16 bytes: the words of each one's name, file name and doc embedded,
    plus ``BODY_WEIGHT`` times those of its body embedded (each normalised first), normalised;
    all None without a model."""
    if not names:
        return []
    try:
        import numpy as np

        matrix = embedder.embed(names) + BODY_WEIGHT * embedder.embed(bodies)
    except RuntimeError:
        return [None] * len(names)
    matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
    return [row.astype(np.float16).tobytes() for row in matrix]


def query_vector(embedder: Embedder, words: Sequence[str], frequencies: Sequence[int], total: int) -> Any:
    """A query's normalised embedding (float32, shape (256,); zeros for no ``words``): the mean
    of its ``words``' own normalised embeddings, word i weighted by its inverse document
    frequency ``ln((total + 1) / (frequencies[i] + 1))``, at least ``IDF_FLOOR`` (``frequencies[i]``:
    how many chunks hold word i's index term, its stem; ``total``: how many chunks there are).
    A mean of the query's tokens let a rare word split into four tokens (``obfuscate``) weigh four
    times one word, and the words the code base uses everywhere as much as those that tell its
    chunks apart (own question set: paraphrases MRR@10 0.366 -> 0.403; chunks embedded by words
    too measured no better).

    Raises:
        RuntimeError: the model could not be loaded.
        ValueError: ``frequencies`` is not one count per word.
    """
    import numpy as np

    if len(frequencies) != len(words):
        raise ValueError(f"{len(frequencies)} frequencies for {len(words)} words")
    if not words:
        return np.zeros(DIMENSIONS, dtype=np.float32)
    weights = np.array(
        [max(math.log((total + 1) / (found + 1)), IDF_FLOOR) for found in frequencies], dtype=np.float32
    )
    vector = weights @ embedder.embed([[word] for word in words])
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0 else vector


class VectorTable:
    """Chunk vectors in memory: add, remove and top-k by cosine similarity.

    Rows of removed chunks are masked and reused only after a compaction (when more than half
    are dead). Not thread-safe: the index calls it under its lock.

    Args:
        capacity: rows to allocate at once (the count of a table about to be loaded: no
            regrowth, so no second copy of the matrix while it loads).
    """

    def __init__(self, capacity: int = 0) -> None:
        import numpy as np

        self._np = np
        self._ids = np.zeros(capacity, dtype=np.int64)
        self._matrix = np.zeros((capacity, DIMENSIONS), dtype=np.float32)
        self._alive = np.zeros(capacity, dtype=bool)
        self._row: dict[int, int] = {}
        self._size = 0

    def __len__(self) -> int:
        return len(self._row)

    def _grow(self, needed: int) -> None:
        np = self._np
        capacity = len(self._ids)
        if self._size + needed <= capacity:
            return
        new = max(1024, capacity * 2, self._size + needed)
        self._ids = np.resize(self._ids, new)
        matrix = np.zeros((new, DIMENSIONS), dtype=np.float32)
        matrix[: self._size] = self._matrix[: self._size]
        self._matrix = matrix
        alive = np.zeros(new, dtype=bool)
        alive[: self._size] = self._alive[: self._size]
        self._alive = alive

    def add(self, ids: Sequence[int], vectors: Iterable[bytes]) -> None:
        """Add chunks by id with their float16 vector bytes (``DIMENSIONS`` x 2 bytes each)."""
        np = self._np
        rows = np.frombuffer(b"".join(vectors), dtype=np.float16).reshape(-1, DIMENSIONS)
        if not len(rows):
            return
        self._grow(len(rows))
        start = self._size
        self._matrix[start : start + len(rows)] = rows
        self._ids[start : start + len(rows)] = ids
        self._alive[start : start + len(rows)] = True
        for offset, chunk_id in enumerate(ids):
            self._row[chunk_id] = start + offset
        self._size += len(rows)

    def remove(self, ids: Iterable[int]) -> None:
        """Forget chunks by id (unknown ids are ignored)."""
        for chunk_id in ids:
            row = self._row.pop(chunk_id, None)
            if row is not None:
                self._alive[row] = False
        if self._size > 4096 and len(self._row) < self._size // 2:
            self._compact()

    def _compact(self) -> None:
        keep = self._alive[: self._size]
        ids = self._ids[: self._size][keep]
        matrix = self._matrix[: self._size][keep]
        self._ids, self._matrix, self._alive = ids.copy(), matrix.copy(), self._np.ones(len(ids), dtype=bool)
        self._size = len(ids)
        self._row = {int(chunk_id): row for row, chunk_id in enumerate(ids)}

    def top(self, query: Any, k: int) -> list[tuple[int, float]]:
        """The ``k`` chunks most similar to the normalised vector ``query``, best first, as
        (chunk id, cosine similarity)."""
        np = self._np
        if not self._row:
            return []
        scores = self._matrix[: self._size] @ query.astype(np.float32)
        scores = np.where(self._alive[: self._size], scores, -np.inf)
        k = min(k, len(self._row))
        best = np.argpartition(-scores, k - 1)[:k]
        best = best[np.argsort(-scores[best])]
        return [(int(self._ids[row]), float(scores[row])) for row in best if np.isfinite(scores[row])]
