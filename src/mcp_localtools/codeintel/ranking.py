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
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

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
    edges: Sequence[tuple[int, int, float]],
    personalization: Mapping[int, float] | None = None,
    *,
    damping: float = 0.85,
    iterations: int = 100,
    tolerance: float = 1e-8,
) -> list[float]:
    """PageRank of a weighted directed graph of ``nodes`` nodes (ids ``0..nodes-1``).

    Dangling nodes (no out-edges) give their rank to the personalization vector (uniform when
    none is given), as networkx does. Returns one score per node, summing to 1.
    """
    import numpy as np

    if nodes == 0:
        return []
    source = np.array([e[0] for e in edges], dtype=np.int64)
    target = np.array([e[1] for e in edges], dtype=np.int64)
    weight = np.array([e[2] for e in edges], dtype=np.float64)
    out = np.bincount(source, weights=weight, minlength=nodes) if len(edges) else np.zeros(nodes)
    share = weight / np.where(out[source] > 0, out[source], 1.0) if len(edges) else weight
    base = np.full(nodes, 1.0 / nodes)
    if personalization:
        base = np.zeros(nodes)
        for node, value in personalization.items():
            base[node] = value
        base = base / base.sum() if base.sum() > 0 else np.full(nodes, 1.0 / nodes)
    dangling = out == 0
    rank = np.full(nodes, 1.0 / nodes)
    for _ in range(iterations):
        spread = np.bincount(target, weights=rank[source] * share, minlength=nodes) if len(edges) else 0.0
        new = damping * (spread + rank[dangling].sum() * base) + (1 - damping) * base
        if np.abs(new - rank).sum() < tolerance * nodes:
            rank = new
            break
        rank = new
    return [float(value) for value in rank]


def _is_compound(name: str) -> bool:
    snake = "_" in name.strip("_") and any(c.isalpha() for c in name)
    camel = any(c.isupper() for c in name) and any(c.islower() for c in name)
    return (snake or camel) and len(name) >= 8


@dataclass(frozen=True, slots=True)
class Graph:
    """The definition/reference graph of an index, ready to rank.

    Attributes:
        files: the files (node ids are indexes into it).
        defines: name → the ids of files that define it.
        uses: (file id, name) → how many times that file uses that name.
    """

    files: tuple[str, ...]
    defines: Mapping[str, frozenset[int]]
    uses: Mapping[tuple[int, str], int]

    @classmethod
    def build(cls, definitions: Iterable[tuple[str, str]], references: Iterable[tuple[str, str]]) -> Graph:
        """The graph of (path, name) definitions and (path, name) references."""
        ids: dict[str, int] = {}
        defines: dict[str, set[int]] = defaultdict(set)
        for path, name in definitions:
            defines[name].add(ids.setdefault(path, len(ids)))
        uses: Counter[tuple[int, str]] = Counter()
        for path, name in references:
            if name in defines:
                uses[(ids.setdefault(path, len(ids)), name)] += 1
        files = tuple(sorted(ids, key=ids.__getitem__))
        return cls(files, {name: frozenset(found) for name, found in defines.items()}, uses)

    def _edges(self, mentioned: frozenset[str]) -> tuple[list[tuple[int, int, float]], list[str]]:
        edges: list[tuple[int, int, float]] = []
        names: list[str] = []
        used_names = {name for _, name in self.uses}
        for name, definers in self.defines.items():
            if name in used_names:
                continue
            for definer in definers:  # a small self-edge keeps unused definitions on the map
                edges.append((definer, definer, 0.1))
                names.append(name)
        for (user, name), count in self.uses.items():
            definers = self.defines[name]
            weight = self._weight(name, len(definers), name in mentioned) * math.sqrt(count)
            for definer in definers:
                edges.append((user, definer, weight))
                names.append(name)
        return edges, names

    def file_ranks(
        self, personal_files: Iterable[str] = (), mentioned: Iterable[str] = ()
    ) -> dict[str, float]:
        """PageRank of every file (see ``rank_definitions`` for the arguments)."""
        edges, _ = self._edges(frozenset(mentioned))
        ranks = pagerank(len(self.files), edges, self._personal(personal_files))
        return dict(zip(self.files, ranks, strict=True))

    def _personal(self, personal_files: Iterable[str]) -> dict[int, float] | None:
        index = {path: node for node, path in enumerate(self.files)}
        personal = {index[path]: 1.0 for path in personal_files if path in index}
        return personal or None

    def rank_definitions(
        self, personal_files: Iterable[str] = (), mentioned: Iterable[str] = ()
    ) -> list[tuple[str, str, float]]:
        """(path, name, score) of every definition that is used or defined, best first.

        Args:
            personal_files: paths whose neighbourhood ranks higher (PageRank personalization).
            mentioned: names whose edges weigh 10 times more.
        """
        edges, edge_names = self._edges(frozenset(mentioned))
        ranks = pagerank(len(self.files), edges, self._personal(personal_files))
        out_weight: dict[int, float] = defaultdict(float)
        for source, _, weight in edges:
            out_weight[source] += weight
        scores: dict[tuple[int, str], float] = defaultdict(float)
        for (source, target, weight), name in zip(edges, edge_names, strict=True):
            scores[(target, name)] += ranks[source] * weight / out_weight[source]
        ranked = sorted(scores.items(), key=lambda item: (-item[1], self.files[item[0][0]], item[0][1]))
        return [(self.files[node], name, score) for (node, name), score in ranked]

    @staticmethod
    def _weight(name: str, definers: int, mentioned: bool) -> float:
        weight = 1.0
        if mentioned:
            weight *= 10
        if _is_compound(name):
            weight *= 10
        if name.startswith("_"):
            weight *= 0.1
        if definers > 5:
            weight *= 0.1
        return weight
