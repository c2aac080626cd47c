"""A file's analysis (tags, chunks, index terms, the words its vectors are made of), in this process or
in worker processes.

tree-sitter's parse and tag extraction hold the GIL (two threads are no faster than one), so a large
update sends the files' bytes to a pool of worker processes, one per usable core but one (spawn
context: no fork of a threaded server), which parse, extract, chunk and tokenize and send back plain
records; the remaining core is the updating thread's. The server process keeps what needs its state:
reading each file through the path policy before it is sent, embedding (one WordLlama model) and
writing SQLite. A pool lives for one update; its workers exit when it ends, and their memory goes
with them.
"""

from __future__ import annotations

import functools
import multiprocessing
import os
from collections.abc import Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass

from mcp_localtools.codeintel.chunks import MAX_MEANING_CHARS, chunks_of
from mcp_localtools.codeintel.languages import Grammars, language_of
from mcp_localtools.codeintel.tags import extract
from mcp_localtools.codeintel.tokens import Tokenizer

__all__ = ["PARALLEL_FILES", "Analysis", "AnalysisPool", "analyse", "usable_cores"]

PARALLEL_FILES = 256
"""An update of at least this many files is analysed in worker processes (fewer: in the thread
that updates; a pool's start, about 0.3 s of CPU per worker, is not worth it)."""
_TASK_FILES = 16
"""Files sent to a worker in one task (fewer round trips; small enough to spread the load)."""


@dataclass(slots=True)
class Analysis:
    """What one file holds, as the rows the store writes: plain tuples and strings, which a
    worker process sends back several times faster than objects (pickled: 52 MiB of objects for
    Django took 2.7 s to pickle and 3.5 s to load again).

    Attributes:
        language: the grammar's name, or ``text``.
        lines: its line count.
        symbols: (name, qualified name, kind, start line, end line, signature, doc, depth) each.
        references: (name, kind, line, scope, qualifier) each.
        imports: (local name, imported name, module) each.
        chunks: (symbol, kind, start line, end line, summary) per chunk (``chunks.chunks_of``).
        terms: per chunk, the index terms of its title and of its body.
        names, bodies: per chunk, the words embedded for its name and doc, and for its body
            (``Tokenizer.words``, space-joined; none for a window's body).
    """

    language: str
    lines: int
    symbols: list[tuple[str, str, str, int, int, str, str, int]]
    references: list[tuple[str, str, int, str, str]]
    imports: list[tuple[str, str, str]]
    chunks: list[tuple[str, str, int, int, str]]
    terms: list[tuple[str, str]]
    names: list[str]
    bodies: list[str]


def analyse(rel: str, data: bytes, grammars: Grammars, tokenizer: Tokenizer) -> Analysis | None:
    """The analysis of the file at ``rel`` (relative, POSIX) whose content is ``data``, or None
    when it is not UTF-8."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    info = language_of(rel)
    grammar = grammars.get(info) if info is not None else None
    tags = extract(grammar, data) if grammar is not None else None
    language = grammar.info.name if grammar is not None else "text"
    lines = tags.lines if tags is not None else text.count("\n") + (not text.endswith("\n") and bool(text))
    chunks = chunks_of(rel, text, tags)
    terms: list[tuple[str, str]] = []
    names: list[str] = []
    bodies: list[str] = []
    for chunk in chunks:  # a chunk's text is read once for its terms and the words of its head
        body, head = tokenizer.terms_and_words(chunk.text, MAX_MEANING_CHARS)
        terms.append((tokenizer.terms(chunk.title), body))
        if chunk.symbol:
            names.append(" ".join(tokenizer.words(chunk.meaning)))
            bodies.append(" ".join(head))
        else:  # a window: its head is its meaning, and it has no body of its own
            names.append(" ".join(head))
            bodies.append("")
    return Analysis(
        language,
        lines,
        [] if tags is None else [(s.name, s.qualified_name, s.kind, s.start_line, s.end_line, s.signature,
                                  s.doc, s.depth) for s in tags.symbols],
        [] if tags is None else [(r.name, r.kind, r.line, r.scope, r.qualifier) for r in tags.references],
        [] if tags is None else [(i.local, i.name, i.module) for i in tags.imports],
        [(c.symbol, c.kind, c.start_line, c.end_line, c.summary) for c in chunks],
        terms,
        names,
        bodies,
    )  # fmt: skip


@functools.cache
def _worker_tools() -> tuple[Grammars, Tokenizer]:
    """The grammars and tokenizer of a worker process (made on its first task)."""
    return Grammars(), Tokenizer()


def _analyse_in_worker(files: Sequence[tuple[str, bytes]]) -> list[Analysis | None]:
    """A worker's task: ``analyse`` each (path, content), with this worker's grammars and tokenizer."""
    grammars, tokenizer = _worker_tools()
    return [analyse(rel, data, grammars, tokenizer) for rel, data in files]


def _worker_streams() -> None:
    """A worker's first act: its standard output goes to standard error and its standard input
    is empty, so nothing a library prints can reach the stdio wire it inherited from the server
    (the answers' stream) and nothing it reads can take the client's requests."""
    import sys

    os.dup2(2, 1)
    sys.stdout = sys.stderr
    empty = os.open(os.devnull, os.O_RDONLY)
    os.dup2(empty, 0)
    os.close(empty)


def usable_cores() -> int:
    """The cores this process may run on (its affinity where the platform says, else all)."""
    affinity = getattr(os, "sched_getaffinity", None)
    if affinity is not None:
        return max(1, len(affinity(0)))
    return max(1, os.cpu_count() or 1)


class AnalysisPool:
    """Worker processes that analyse files (``analyse``) for one update.

    Use as a context manager; ``submit`` returns a future of one ``Analysis`` (or None) per file
    given, in order. Leaving the context waits for the workers to exit.

    Raises (from ``submit``'s futures): ``concurrent.futures.process.BrokenProcessPool`` when a
    worker died.
    """

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._pool = ProcessPoolExecutor(
            workers, mp_context=multiprocessing.get_context("spawn"), initializer=_worker_streams
        )

    def __enter__(self) -> AnalysisPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)

    def submit(self, files: Sequence[tuple[str, bytes]]) -> list[Future[list[Analysis | None]]]:
        """``files`` (path, content) sent in tasks of ``_TASK_FILES``: one future per task, whose
        results follow the order of ``files``."""
        return [
            self._pool.submit(_analyse_in_worker, list(files[start : start + _TASK_FILES]))
            for start in range(0, len(files), _TASK_FILES)
        ]
