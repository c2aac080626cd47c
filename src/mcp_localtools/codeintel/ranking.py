"""Ranking: PageRank over the definition/reference graph, and reciprocal rank fusion.

The repository map follows Aider's (``aider/repomap.py``): an edge goes from each file that uses
a name to each file that defines it, weighted by the square root of the number of uses, times 10
for names that are long compound identifiers or that the caller mentioned, times 0.1 for private
names (leading ``_``) and for names defined in more than five files; PageRank over the files,
optionally personalised toward files the caller named; each file's rank is then spread over its
out-edges, which ranks the (file, name) definitions. PageRank is a plain power iteration in
numpy (a dozen lines; networkx would bring a dependency for one function).

Reciprocal rank fusion (Cormack et al., 2009): ``score = Σ w / (k + rank)`` over the rankings a
candidate appears in; it needs no calibration between BM25 scores and cosines. semanticsearch
weighs BM25 1 and embeddings 0.5 with k = 30 (WordLlama's static embeddings rank code less well
than BM25 on names; measured in benchmarks/RESULTS.md).
"""

from __future__ import annotations

import math
from array import array
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["RRF_K", "Graph", "fuse", "pagerank"]

RRF_K = 30
"""The fusion's k (60 in the paper; 30 ranks best on benchmarks/codesearch)."""


def fuse(
    rankings: Sequence[Sequence[int]], weights: Sequence[float] | None = None, k: int = RRF_K
) -> list[tuple[int, float]]:
    """Weighted reciprocal rank fusion of ranked id lists (``Σ weight / (k + rank)``), best
    first, as (id, fused score); weights default to 1."""
    scores: dict[int, float] = defaultdict(float)
    for ranking, weight in zip(rankings, weights or [1.0] * len(rankings), strict=True):
        for rank, item in enumerate(ranking, start=1):
            scores[item] += weight / (k + rank)
    return sorted(scores.items(), key=lambda pair: (-pair[1], pair[0]))


def pagerank(
    nodes: int,
    source: Any,
    target: Any,
    weight: Any,
    personalization: Mapping[int, float] | None = None,
    *,
    damping: float = 0.85,
    iterations: int = 100,
    tolerance: float = 1e-8,
) -> Any:
    """PageRank of a weighted directed graph of ``nodes`` nodes (ids ``0..nodes-1``) whose edges
    are the numpy arrays ``source``, ``target`` (int64) and ``weight`` (float64).

    Dangling nodes (no out-edges) give their rank to the personalization vector (uniform when
    none is given), as networkx does. Returns a float64 array of one score per node, summing to 1.
    """
    import numpy as np

    if nodes == 0:
        return np.zeros(0)
    out = np.bincount(source, weights=weight, minlength=nodes)
    share = weight / np.where(out[source] > 0, out[source], 1.0)
    base = np.full(nodes, 1.0 / nodes)
    if personalization:
        base = np.zeros(nodes)
        for node, value in personalization.items():
            base[node] = value
        base = base / base.sum() if base.sum() > 0 else np.full(nodes, 1.0 / nodes)
    dangling = out == 0
    rank = np.full(nodes, 1.0 / nodes)
    for _ in range(iterations):
        spread = np.bincount(target, weights=rank[source] * share, minlength=nodes)
        new = damping * (spread + rank[dangling].sum() * base) + (1 - damping) * base
        done = np.abs(new - rank).sum() < tolerance * nodes
        rank = new
        if done:
            break
    return rank


def _is_compound(name: str) -> bool:
    snake = "_" in name.strip("_") and any(c.isalpha() for c in name)
    camel = any(c.isupper() for c in name) and any(c.islower() for c in name)
    return (snake or camel) and len(name) >= 8


def _weight(name: str, definers: int) -> float:
    weight = 1.0
    if _is_compound(name):
        weight *= 10
    if name.startswith("_"):
        weight *= 0.1
    if definers > 5:
        weight *= 0.1
    return weight


class Graph:
    """The definition/reference graph of an index, ready to rank (edges as numpy arrays).

    Args:
        files: the files (node ids are indexes into it).
        definitions: (file id, name) of every definition.
        uses: (file id, name, count): how many times a file uses a name.
    """

    def __init__(
        self,
        files: Sequence[str],
        definitions: Iterable[tuple[int, str]],
        uses: Iterable[tuple[int, str, int]],
    ) -> None:
        import numpy as np

        self.files = tuple(files)
        defines: dict[str, set[int]] = defaultdict(set)
        for node, name in definitions:
            defines[name].add(node)
        self.names = sorted(defines)
        name_id = {name: index for index, name in enumerate(self.names)}
        source, target, label = array("q"), array("q"), array("q")  # compact while they grow
        weight = array("d")
        used: set[str] = set()
        for node, name, count in uses:
            definers = defines.get(name)
            if not definers:
                continue
            used.add(name)
            base = _weight(name, len(definers)) * math.sqrt(count)
            for definer in definers:
                source.append(node)
                target.append(definer)
                weight.append(base)
                label.append(name_id[name])
        for name, definers in defines.items():
            if name not in used:
                for definer in definers:  # a small self-edge keeps unused definitions on the map
                    source.append(definer)
                    target.append(definer)
                    weight.append(0.1)
                    label.append(name_id[name])
        self._source = np.frombuffer(source, dtype=np.int64)
        self._target = np.frombuffer(target, dtype=np.int64)
        self._weight = np.frombuffer(weight, dtype=np.float64)
        self._label = np.frombuffer(label, dtype=np.int64)

    def _weights(self, mentioned: Iterable[str]) -> Any:
        import numpy as np

        ids = [index for index, name in enumerate(self.names) if name in set(mentioned)]
        if not ids:
            return self._weight
        return np.where(np.isin(self._label, ids), self._weight * 10, self._weight)

    def _ranks(self, weights: Any, personal_files: Iterable[str]) -> Any:

        index = {path: node for node, path in enumerate(self.files)}
        personal = {index[path]: 1.0 for path in personal_files if path in index}
        return pagerank(len(self.files), self._source, self._target, weights, personal or None)

    def file_ranks(
        self, personal_files: Iterable[str] = (), mentioned: Iterable[str] = ()
    ) -> dict[str, float]:
        """PageRank of every file (see ``rank_definitions`` for the arguments)."""
        ranks = self._ranks(self._weights(mentioned), personal_files)
        return dict(zip(self.files, ranks.tolist(), strict=True))

    def rank_definitions(
        self, personal_files: Iterable[str] = (), mentioned: Iterable[str] = ()
    ) -> list[tuple[str, str, float]]:
        """(path, name, score) of every definition, best first: each file's rank spread over
        its out-edges, summed per (defining file, name).

        Args:
            personal_files: paths whose neighbourhood ranks higher (PageRank personalization).
            mentioned: names whose edges weigh 10 times more.
        """
        import numpy as np

        if not len(self._source):
            return []
        weights = self._weights(mentioned)
        ranks = self._ranks(weights, personal_files)
        out = np.bincount(self._source, weights=weights, minlength=len(self.files))
        share = ranks[self._source] * weights / out[self._source]
        keys = self._target * len(self.names) + self._label
        unique, inverse = np.unique(keys, return_inverse=True)
        scores = np.bincount(inverse, weights=share)
        order = np.lexsort((unique, -scores))
        names, count = self.names, len(self.names)
        return [
            (self.files[int(unique[i]) // count], names[int(unique[i]) % count], float(scores[i]))
            for i in order
        ]
