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

import re
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


_LETTER = re.compile(r"[^\W\d_]")


def _is_compound(name: str) -> bool:
    snake = "_" in name.strip("_") and _LETTER.search(name) is not None
    camel = name != name.lower() and name != name.upper()  # an upper and a lower case letter
    return (snake or camel) and len(name) >= 8


def _name_weight(name: str) -> float:
    """A name's edge weight before its definers are counted: 10 for a long compound identifier,
    0.1 for a private one."""
    return (10.0 if _is_compound(name) else 1.0) * (0.1 if name.startswith("_") else 1.0)


class Graph:
    """The definition/reference graph of an index, ready to rank (edges as numpy arrays, built
    without a Python loop over the edges).

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
        pairs = set(definitions)
        self.names = sorted({name for _, name in pairs})
        name_id = {name: index for index, name in enumerate(self.names)}
        def_node = np.fromiter((node for node, _ in pairs), dtype=np.int64, count=len(pairs))
        def_name = np.fromiter((name_id[name] for _, name in pairs), dtype=np.int64, count=len(pairs))
        order = np.lexsort((def_node, def_name))  # definers grouped by name
        def_node, def_name = def_node[order], def_name[order]
        definers = np.bincount(def_name, minlength=len(self.names))
        first = np.concatenate(([0], np.cumsum(definers)[:-1])).astype(np.int64)
        weight_of = np.fromiter(map(_name_weight, self.names), dtype=np.float64, count=len(self.names))
        weight_of = np.where(definers > 5, weight_of * 0.1, weight_of)
        kept = [(node, name_id[name], count) for node, name, count in uses if name in name_id]
        use_node = np.fromiter((u[0] for u in kept), dtype=np.int64, count=len(kept))
        use_name = np.fromiter((u[1] for u in kept), dtype=np.int64, count=len(kept))
        use_count = np.fromiter((u[2] for u in kept), dtype=np.float64, count=len(kept))
        # One edge from each use to each definer of its name.
        fan = definers[use_name]
        ends = np.cumsum(fan)
        offset = np.arange(int(ends[-1]) if len(ends) else 0, dtype=np.int64) - np.repeat(ends - fan, fan)
        source = np.repeat(use_node, fan)
        label = np.repeat(use_name, fan)
        target = def_node[np.repeat(first[use_name], fan) + offset]
        weight = np.repeat(weight_of[use_name] * np.sqrt(use_count), fan)
        # A small self-edge keeps a definition that nothing uses on the map.
        unused = np.bincount(use_name, minlength=len(self.names))[def_name] == 0
        self._source = np.concatenate((source, def_node[unused]))
        self._target = np.concatenate((target, def_node[unused]))
        self._weight = np.concatenate((weight, np.full(int(unused.sum()), 0.1)))
        self._label = np.concatenate((label, def_name[unused]))

    def _weights(self, mentioned: Iterable[str]) -> Any:
        import numpy as np

        wanted = set(mentioned)
        ids = [index for index, name in enumerate(self.names) if name in wanted]
        if not ids:
            return self._weight
        return np.where(np.isin(self._label, ids), self._weight * 10, self._weight)

    def _ranks(self, weights: Any, personal_files: Iterable[str], mentioned: Iterable[str] = ()) -> Any:
        """PageRank personalised toward ``personal_files`` and the files that define a
        ``mentioned`` name (as Aider personalises toward the definers of the identifiers a chat
        mentions)."""
        import numpy as np

        index = {path: node for node, path in enumerate(self.files)}
        personal = {index[path]: 1.0 for path in personal_files if path in index}
        wanted = set(mentioned)
        ids = [number for number, name in enumerate(self.names) if name in wanted]
        if ids:
            for node in np.unique(self._target[np.isin(self._label, ids)]).tolist():
                personal[int(node)] = 1.0
        return pagerank(len(self.files), self._source, self._target, weights, personal or None)

    def file_ranks(
        self, personal_files: Iterable[str] = (), mentioned: Iterable[str] = ()
    ) -> dict[str, float]:
        """PageRank of every file (see ``rank_definitions`` for the arguments)."""
        ranks = self._ranks(self._weights(mentioned), personal_files, mentioned)
        return dict(zip(self.files, ranks.tolist(), strict=True))

    def rank_definitions(
        self, personal_files: Iterable[str] = (), mentioned: Iterable[str] = ()
    ) -> list[tuple[str, str, float]]:
        """(path, name, score) of every definition, best first: each file's rank spread over
        its out-edges, summed per (defining file, name).

        Args:
            personal_files: paths whose neighbourhood ranks higher (PageRank personalization).
            mentioned: names whose edges weigh 10 times more, and whose defining files are
                personalised like ``personal_files``.
        """
        import numpy as np

        if not len(self._source):
            return []
        weights = self._weights(mentioned)
        ranks = self._ranks(weights, personal_files, mentioned)
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
