"""Re-ranking semantic search's fused candidates: code before prose.

A question about behaviour wants the code that does it, not the changelog entry, the guide or
the test that mentions it, nor the declaration file (``.d.ts``, ``.pyi``) that only names it;
those are ranked below code (their fused score multiplied by ``PROSE_FACTOR``, ``TEST_FACTOR``
or ``DECLARATION_FACTOR``), prose and tests unless the question asks for them (``docs``,
``readme``, ``changelog``, ``test``, ...). A symbol whose name the question spells in words
(``debounce time``: ``debounceTime``) weighs ``NAME_FACTOR`` times more; ``name_forms`` gives the
lower-cased names such a question may spell, which semanticsearch looks up among the index's
definitions to widen its BM25 query with them.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Sequence

__all__ = [
    "DECLARATION_FACTOR",
    "NAME_FACTOR",
    "PROSE_FACTOR",
    "TEST_FACTOR",
    "file_prior",
    "longest",
    "name_factor",
    "name_forms",
    "named",
    "reranked",
    "wants",
]

PROSE_FACTOR = 0.5
"""A documentation or history file's share of its fused score (tuned on benchmarks/codesearch)."""
TEST_FACTOR = 0.5
"""A test file's share of its fused score (tuned on benchmarks/codesearch)."""

NAME_FACTOR = 1.5
"""A symbol whose name the query spells in words weighs this many times more (tuned on
benchmarks/codesearch)."""
MAX_NAMED_WORDS = 64
"""A query's words that ``name_forms`` spells names from (as semanticsearch's 64 BM25 terms)."""
DECLARATION_FACTOR = 0.5
"""A declaration file's (``.d.ts``, ``.pyi``: signatures without the code) share of its fused score."""

_DECLARATIONS = (".d.ts", ".d.mts", ".d.cts", ".pyi")
_PROSE_EXTENSIONS = frozenset({".md", ".markdown", ".rst", ".txt", ".adoc"})
_HISTORY = re.compile(
    r"^(change ?log|changes|history|news|releases?|authors|contributors|licen[cs]e)\b", re.I
)
_TEST_DIRECTORIES = frozenset({"test", "tests", "__tests__", "spec", "specs", "testing"})
_TEST_FILE = re.compile(r"^(test_.*|.*_test|conftest|.*\.(test|spec))\.[a-z]+$", re.I)
_ASKS_PROSE = frozenset(
    "doc docs documentation documented readme changelog history release releases guide tutorial "
    "example examples manual".split()
)
_ASKS_TESTS = frozenset("test tests tested testing spec specs fixture fixtures".split())


def wants(query: str) -> tuple[bool, bool]:
    """Whether ``query`` asks for prose (documentation, history) and for tests."""
    words = set(re.findall(r"[a-z]+", query.lower()))
    return bool(words & _ASKS_PROSE), bool(words & _ASKS_TESTS)


def file_prior(path: str, kind: str, asks: tuple[bool, bool]) -> float:
    """The factor of a chunk's fused score by what its file is: 1 for code, ``PROSE_FACTOR`` for
    documentation and history (a window of text in ``.md``/``.rst``/..., a changelog), ``TEST_FACTOR``
    for a test, each 1 when the question (``wants``) asks for it; ``DECLARATION_FACTOR`` for a
    declaration file."""
    base = posixpath.basename(path)
    stem, extension = posixpath.splitext(base)
    prose, tests = asks
    if not prose and (_HISTORY.match(stem) or (kind == "text" and extension.lower() in _PROSE_EXTENSIONS)):
        return PROSE_FACTOR
    if not tests and (_TEST_FILE.match(base) or _TEST_DIRECTORIES.intersection(path.split("/")[:-1])):
        return TEST_FACTOR
    if base.endswith(_DECLARATIONS):
        return DECLARATION_FACTOR
    return 1.0


def named(query: str) -> frozenset[str]:
    """The names a query may spell in words: each run of two to four of its words, joined
    (``throttle time`` -> ``throttletime``), or a one-word query's word; at least four letters."""
    words = re.findall(r"[a-z0-9]+", query.lower())
    shortest = 1 if len(words) == 1 else 2  # one word of many names too much (help, text, file)
    runs = ("".join(words[i : i + n]) for n in range(shortest, 5) for i in range(len(words) - n + 1))
    return frozenset(run for run in runs if len(run) >= 4)


def name_forms(query: str) -> list[str]:
    """The lower-cased names (as ``symbols.folded`` holds them) a query may spell in words, in
    both spellings of a compound: each run of two to four of its words joined as camelCase folds
    (``observe on`` -> ``observeon``), in snake case, and in snake case
    with a leading underscore (``_redirect_headers``); at least four letters, sorted. Of the
    first ``MAX_NAMED_WORDS`` words: at most 558 forms, under SQLite's oldest limit of 999
    parameters a statement."""
    words = re.findall(r"[a-z0-9]+", query.lower())[:MAX_NAMED_WORDS]
    runs = [words[i : i + n] for n in range(2, 5) for i in range(len(words) - n + 1)]
    forms = {form for run in runs for form in ("".join(run), "_".join(run), "_" + "_".join(run))}
    return sorted(form for form in forms if len(form.strip("_").replace("_", "")) >= 4)


def longest(names: Iterable[str]) -> list[str]:
    """Those of ``names`` (lower case, snake or folded) not inside a longer one of them once their
    underscores are left out (``unknownoption`` in ``allowunknownoption``: the query spells the
    longer), longest first; ``get_user`` and ``getuser``, the same name in two spellings, both stay."""
    kept: list[str] = []
    for name in sorted(set(names), key=lambda name: (-len(name.replace("_", "")), name)):
        bare = name.replace("_", "")
        if not any(bare != other and bare in other for other in (k.replace("_", "") for k in kept)):
            kept.append(name)
    return kept


def name_factor(symbol: str, spelled: frozenset[str]) -> float:
    """``NAME_FACTOR`` when the symbol's own name, without case and underscores, is one that the
    query spells (``named``): ``debounceTime`` for "debounce time"; else 1."""
    own = symbol.rpartition(".")[2].replace("_", "").lower()
    return NAME_FACTOR if own and own in spelled else 1.0


def reranked(candidates: Sequence[tuple[int, float, str, str, str]], query: str) -> list[tuple[int, float]]:
    """``candidates`` (chunk id, fused score, path, kind, symbol), best first, re-scored by
    ``file_prior`` and ``name_factor``."""
    asks, spelled = wants(query), named(query)
    scored = [
        (chunk, score * file_prior(path, kind, asks) * name_factor(symbol, spelled))
        for chunk, score, path, kind, symbol in candidates
    ]
    return sorted(scored, key=lambda pair: (-pair[1], pair[0]))
