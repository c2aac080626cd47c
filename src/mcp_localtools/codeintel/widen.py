"""Widening a query with the code base's own vocabulary: the terms that co-occur with its words.

Issue 37 asks that a question in the user's words meet the code's words through the code base's
own statistics, not a synonym list. For each prose word of a query (letters only, lower case or
capitalised; a run of two to four of the query's words that, joined with or without ``_``, is a
term of the index spells an identifier and is left as it is, as is any identifier written as
one), the titles of the chunks holding its term ``t`` (name, signature and doc; the terms of the
chunk's path left out) are counted. A term ``u`` is associated with ``t`` when it is in at least
``MIN_TOGETHER`` of those chunks and in at least ``MIN_CHUNKS`` in all, and its normalised
pointwise mutual information, ``NPMI = log(P(t,u) / (P(t) P(u))) / -log P(t,u)`` over the index's
chunks, is at least ``MIN_NPMI``: the ``PER_TERM`` strongest per word. A term in more than
``MAX_SHARE`` of all chunks says little and is not widened (nor are those with fewer than
``MIN_TOGETHER`` chunks).

semanticsearch adds the associated terms to a second BM25 ranking (the query's terms and them)
weighed ``WIDEN_WEIGHT`` in the fusion, never in place of the query's words, when asked
(``search(..., widen=True)``); it is off by default: it did not carry over to the held-out
questions (own set +0.007 overall, held-out -0.003) and costs 140-160 ms of CPU a query on Django
(``benchmarks/RESULTS.md``, "codesearch: issue 37").
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, Protocol

__all__ = ["MIN_CHUNKS", "MIN_NPMI", "MIN_TOGETHER", "PER_TERM", "associated", "prose_terms", "widened"]

MIN_TOGETHER = 3
"""Chunks that must hold both terms (fewer is noise)."""
MIN_CHUNKS = 5
"""Chunks that must hold an associated term."""
MIN_NPMI = 0.5
"""The weakest association kept (NPMI: 0 for independent terms, 1 for terms always together)."""
PER_TERM = 2
"""Associated terms per prose word at most."""
MAX_SHARE = 0.05
"""A prose word in more than this share of the chunks is not widened."""
SAMPLE = 1000
"""Chunks of a word read at most (counts scaled up from them)."""

_TOKEN = re.compile(r"[A-Za-z0-9_$.]+")
_PROSE = re.compile(r"[A-Za-z][a-z]+")


class Vocabulary(Protocol):
    """What the association reads of an index (``store.Store``)."""

    def frequencies(self, terms: Sequence[str]) -> tuple[dict[str, int], int]: ...

    def select(self, sql: str, parameters: Sequence[object]) -> list[tuple[Any, ...]]: ...


def prose_terms(
    query: str, terms: Callable[[str], list[str]], known: Callable[[list[str]], set[str]]
) -> list[str]:
    """The index terms of ``query``'s prose words, in order, without repeats.

    Args:
        query: the question.
        terms: the index's tokenizer (a text's terms).
        known: which of some candidate terms the index holds.
    """
    words = [token.lower() if _PROSE.fullmatch(token) else "" for token in _TOKEN.findall(query)]
    runs: dict[str, list[range]] = {}
    for length in range(2, 5):
        for start in range(len(words) - length + 1):
            part = words[start : start + length]
            if all(part):
                for joined in ("".join(part), "_".join(part)):
                    runs.setdefault(joined, []).append(range(start, start + length))
    named = {i for run in known(list(runs)) if run in runs for span in runs[run] for i in span}
    picked = (terms(word) for i, word in enumerate(words) if word and i not in named)
    return list(dict.fromkeys(term for found in picked for term in found))


def associated(
    store: Vocabulary, term: str, chunks: int, total: int, path_terms: Callable[[str], set[str]]
) -> list[str]:
    """The terms most associated with ``term`` across the index's chunk titles (module
    docstring), strongest first.

    Args:
        store: the index's vocabulary and titles.
        term: an index term held by ``chunks`` of the ``total`` chunks.
        path_terms: the terms of a path (left out of its chunks' titles).
    """
    if chunks < MIN_TOGETHER or chunks > total * MAX_SHARE:
        return []
    rows = store.select(
        "SELECT t.title, f.path FROM chunk_terms t JOIN chunks c ON c.id = t.rowid "
        "JOIN files f ON f.id = c.file_id WHERE chunk_terms MATCH ? LIMIT ?",
        (f'title: "{term}"', SAMPLE),
    )  # the titles holding the term, with their paths
    counts: Counter[str] = Counter()
    for title, path in rows:
        counts.update(set(title.split()) - path_terms(path))
    scale = chunks / max(len(rows), 1)
    candidates = [
        other
        for other, together in counts.items()
        if together * scale >= MIN_TOGETHER and other != term and len(other) > 2
        and not other[0].isdigit() and "_" not in other
    ]  # fmt: skip
    frequency, _ = store.frequencies(candidates) if candidates else ({}, total)
    scored = []
    for other in candidates:
        alone = frequency.get(other, 0)
        if alone < MIN_CHUNKS:
            continue
        together = min(counts[other] * scale, chunks, alone)
        if together >= total:
            continue
        npmi = math.log(together * total / (chunks * alone)) / -math.log(together / total)
        if npmi >= MIN_NPMI:
            scored.append((-npmi, other))
    return [other for _, other in sorted(scored)[:PER_TERM]]


def widened(store: Vocabulary, query: str, terms: Callable[[str], list[str]]) -> list[str]:
    """The terms that widen ``query`` (``associated`` with each of its prose words, none of its
    own terms), in order, without repeats; ``terms`` is the index's tokenizer."""

    def known(candidates: list[str]) -> set[str]:
        return set(store.frequencies(candidates)[0]) if candidates else set()

    paths: dict[str, set[str]] = {}

    def path_terms(path: str) -> set[str]:
        if path not in paths:
            paths[path] = set(terms(path))
        return paths[path]

    prose = prose_terms(query, terms, known)
    if not prose:
        return []
    frequency, total = store.frequencies(prose)
    own = set(terms(query))
    found = (associated(store, term, frequency.get(term, 0), total, path_terms) for term in prose)
    return list(dict.fromkeys(other for group in found for other in group if other not in own))
