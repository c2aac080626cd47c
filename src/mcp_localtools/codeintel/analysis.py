"""A file's analysis (tags, chunks, index terms, the words its vectors are made of), in this
process or in worker processes.

tree-sitter's parse and tag extraction hold the GIL (two threads are no faster than one), so a
large update sends the files' bytes to a pool of worker processes, one per usable core (spawn
context: no fork of a threaded server), which parse, extract, chunk and tokenize and send back
plain records. The server process keeps what needs its state: reading each file through the
path policy before it is sent, embedding (one WordLlama model) and writing SQLite. A pool lives for
one update; its workers exit when it ends, and their memory goes with them.
"""

from __future__ import annotations

import functools
import multiprocessing
import os
from collections.abc import Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass

from mcp_localtools.codeintel.chunks import MAX_MEANING_CHARS, Chunk, chunks_of
from mcp_localtools.codeintel.languages import Grammars, language_of
from mcp_localtools.codeintel.tags import FileTags, extract
from mcp_localtools.codeintel.tokens import Tokenizer

__all__ = ["PARALLEL_FILES", "Analysis", "AnalysisPool", "analyse", "usable_cores"]

PARALLEL_FILES = 256
"""An update of at least this many files is analysed in worker processes (fewer: in the thread
that updates; a pool's start, about 0.3 s of CPU per worker, is not worth it)."""
_TASK_FILES = 16
"""Files sent to a worker in one task (fewer round trips; small enough to spread the load)."""


@dataclass(slots=True)
class Analysis:
    """What one file holds, ready to embed and write.

    Attributes:
        language: the grammar's name, or ``text``.
        lines: its line count.
        tags: its definitions, references and imports (None for text).
        chunks: its chunks (``chunks.chunks_of``).
        terms: per chunk, the index terms of its title and of its body.
        names, bodies: per chunk, the words embedded for its name and doc, and for its body
            (``Tokenizer.words``; no body for a window of text).
    """

    language: str
    lines: int
    tags: FileTags | None
    chunks: list[Chunk]
    terms: list[tuple[str, str]]
    names: list[list[str]]
    bodies: list[list[str]]


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
    terms = [(tokenizer.terms(chunk.title), tokenizer.terms(chunk.text)) for chunk in chunks]
    words = tokenizer.words
    names = [words(c.meaning if c.symbol else c.text[:MAX_MEANING_CHARS]) for c in chunks]
    bodies = [words(c.text[:MAX_MEANING_CHARS]) if c.symbol else [] for c in chunks]
    return Analysis(language, lines, tags, chunks, terms, names, bodies)


@functools.cache
def _worker_tools() -> tuple[Grammars, Tokenizer]:
    """The grammars and tokenizer of a worker process (made on its first task)."""
    return Grammars(), Tokenizer()


def _analyse_in_worker(files: Sequence[tuple[str, bytes]]) -> list[Analysis | None]:
    """A worker's task: ``analyse`` each (path, content), with this worker's grammars and tokenizer."""
    grammars, tokenizer = _worker_tools()
    out = [analyse(rel, data, grammars, tokenizer) for rel, data in files]
    for found in out:  # what is written only: a chunk's text, title and meaning stay here
        if found is not None:
            found.chunks = [Chunk(c.symbol, c.kind, c.start_line, c.end_line, "", "", c.summary, "")
                            for c in found.chunks]  # fmt: skip
    return out


def usable_cores() -> int:
    """The cores this process may run on (its affinity where the platform says, else all)."""
    affinity = getattr(os, "sched_getaffinity", None)
    if affinity is not None:
        return max(1, len(affinity(0)))
    return max(1, os.cpu_count() or 1)


class AnalysisPool:
    """Worker processes that analyse files (``analyse``), one per usable core, for one update.

    Use as a context manager; ``submit`` returns a future of one ``Analysis`` (or None) per file
    given, in order. Leaving the context waits for the workers to exit.

    Raises (from ``submit``'s futures): ``concurrent.futures.process.BrokenProcessPool`` when a
    worker died.
    """

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))

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
