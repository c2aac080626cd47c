"""The code index of one directory: what is stale, reading it again, and the queries on it.

A file is identified by its size, mtime and SHA-256: a file whose size and mtime match the
index is taken as indexed; one whose size or mtime differ is read and hashed, and only a
different hash makes it parsed (tags), chunked, tokenized and embedded again. Files are read
through the ``PathPolicy`` (opened without following a symlink and checked to lie inside the
roots), and never when they are protected, under a hidden path, over the size cap, binary or not
UTF-8. All methods here block: the async side (``indexes.py``) runs them in worker threads.
"""

from __future__ import annotations

import hashlib
import logging
import os
import posixpath
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp_localtools.codeintel import analysis
from mcp_localtools.codeintel import stale as staleness
from mcp_localtools.codeintel.analysis import Analysis, AnalysisPool, analyse, usable_cores
from mcp_localtools.codeintel.languages import LANGUAGES, TEXT_EXTENSIONS, Grammars, language_of
from mcp_localtools.codeintel.mapped import MappedVectors, load_vectors
from mcp_localtools.codeintel.pipeline import Updated, update_in_workers
from mcp_localtools.codeintel.ranking import Graph
from mcp_localtools.codeintel.settings import IndexSettings
from mcp_localtools.codeintel.store import FileIdentity, FileRecord, Store
from mcp_localtools.codeintel.tokens import Tokenizer
from mcp_localtools.codeintel.vectors import Embedder, VectorTable, chunk_vectors, query_vector
from mcp_localtools.errors import ToolError
from mcp_localtools.files.read import read_regular_file
from mcp_localtools.policy.paths import PathPolicy

__all__ = ["CodeIndex", "IndexSettings", "Prepared"]

logger = logging.getLogger(__name__)

_BATCH = 64
"""Files read, parsed and embedded together before their rows are written."""


@dataclass(slots=True)
class Prepared:
    """One file read and analysed, ready to be written (``vectors``: one per chunk, once embedded)."""

    record: FileRecord
    analysis: Analysis
    vectors: list[bytes | None] = field(default_factory=list)


class CodeIndex:
    """The index of ``directory`` (a real path inside the roots).

    Args:
        directory: the indexed directory.
        store: its database.
        settings: ``[index]``.
        paths: the path policy every read goes through.
        grammars, embedder: shared by all indexes of a workspace.
    """

    def __init__(
        self,
        directory: Path,
        store: Store,
        settings: IndexSettings,
        paths: PathPolicy,
        grammars: Grammars,
        embedder: Embedder,
    ) -> None:
        self.directory = directory
        self.store = store
        self.settings = settings
        self._paths = paths
        self._grammars = grammars
        self._embedder = embedder
        self._tokenizer = Tokenizer()
        self._lock = threading.RLock()
        self._vectors: VectorTable | MappedVectors | None = None
        self._vectors_generation = -1
        self._graph: tuple[int, Graph] | None = None
        self._file_ranks: tuple[dict[str, float], Graph] | None = None
        self._maps: dict[tuple[int, tuple[str, ...], tuple[str, ...]], list[tuple[str, str, float]]] = {}
        self._rebuilding = False
        self._graph_lock = threading.Lock()
        self.updating = threading.RLock()
        self._blocked = self._blocked_prefixes()

    # --- what is stale -------------------------------------------------------------------

    def _blocked_prefixes(self) -> tuple[str, ...] | None:
        """The protected and hidden paths inside the directory, relative (POSIX, no trailing
        ``/``); None when the whole directory is protected or hidden."""
        out: list[str] = []
        for path in (*self._paths.protected, *self.settings.hidden):
            if self.directory == path or self.directory.is_relative_to(path):
                return None
            if path.is_relative_to(self.directory):
                out.append(path.relative_to(self.directory).as_posix())
        return tuple(out)

    def readable(self, rel: str) -> bool:
        """Whether the file at ``rel`` may be indexed: a known language or text, not protected,
        not under a hidden path. Text operations only (a rescan asks it of every listed file)."""
        info = language_of(rel)
        if info is not None:
            if self.settings.languages and info.name not in self.settings.languages:
                return False
        elif posixpath.splitext(rel)[1].lower() not in TEXT_EXTENSIONS:
            return False
        blocked = self._blocked
        if blocked is None:
            return False
        return not any(rel == prefix or rel.startswith(prefix + "/") for prefix in blocked)

    def stale(self, listing: Iterable[str]) -> tuple[list[str], list[str]]:
        """``(changed or new files, files gone)`` of ``listing`` against the index (``stale``)."""
        return staleness.stale(self, listing)

    def stale_of(self, rels: Iterable[str]) -> tuple[list[str], list[str]]:
        """``(changed, gone)`` among ``rels`` only, a directory standing for its files (``stale_of``)."""
        return staleness.stale_of(self, rels)

    # --- reading files again ---------------------------------------------------------------

    def _read(self, rel: str) -> tuple[bytes, os.stat_result] | None:
        try:
            resolved = self._paths.resolve(str(self.directory / rel))
            if resolved.real != self.directory / rel:  # a symlink somewhere on the way: not ours
                return None
            data = read_regular_file(
                self._paths, resolved, max_bytes=self.settings.max_file_bytes, follow_symlinks=False
            )
        except ToolError:
            return None
        if b"\x00" in data.data[:8192]:
            return None
        return data.data, data.stat

    def check_file(self, rel: str) -> tuple[bytes, FileIdentity] | str | None:
        """The file's content and identity when it must be analysed; ``"same"`` when only its
        mtime changed (recorded); None when it cannot be indexed."""
        read = self._read(rel)
        if read is None:
            return None
        data, info = read
        identity = FileIdentity(info.st_size, info.st_mtime_ns, hashlib.sha256(data).hexdigest())
        known = self.store.file(rel)
        if known is not None and known.identity.sha256 == identity.sha256:
            self.store.touch(rel, identity)
            return "same"
        return data, identity

    def _prepare(self, rel: str) -> Prepared | str | None:
        """The file analysed here; ``"same"`` when only its mtime changed; None when it cannot be indexed."""
        checked = self.check_file(rel)
        if not isinstance(checked, tuple):
            return checked
        data, identity = checked
        found = analyse(rel, data, self._grammars, self._tokenizer)
        if found is None:
            return None
        return Prepared(FileRecord(rel, identity, found.language, found.lines), found)

    def _embed(self, batch: Sequence[Prepared]) -> None:
        """Each chunk's vector (``vectors.chunk_vectors``)."""
        names = [words.split() for item in batch for words in item.analysis.names]
        bodies = [words.split() for item in batch for words in item.analysis.bodies]
        vectors = chunk_vectors(self._embedder, names, bodies)
        offset = 0
        for item in batch:
            item.vectors = vectors[offset : offset + len(item.analysis.chunks)]
            offset += len(item.analysis.chunks)

    def update(self, changed: Sequence[str], gone: Sequence[str], progress: Callable[[int], None]) -> int:
        """Index ``changed`` files again and forget ``gone`` ones; ``progress(done)`` after each
        batch. Returns how many files were (re)indexed. One batch is read and written at a time
        across threads (``refresh``: a result's file waits for the batch that holds it, rather
        than being read twice)."""
        if gone:
            with self.updating, self._lock:
                ids = [chunk for rel in gone for chunk in self.store.chunk_ids(rel)]
                self.store.remove(gone)
                self._forget_vectors(ids, 1)
        with self.store.bulk():  # a first build makes the tables' indexes after its rows
            return self._update(changed, progress)

    def _update(self, changed: Sequence[str], progress: Callable[[int], None]) -> int:
        updated = Updated()
        # One core is this thread's (reading, embedding, writing: 40 % of the work); on 2 cores one
        # worker builds Django as fast as two, for 2-3 s less CPU (one interpreter, one word cache).
        workers = min(usable_cores() - 1, len(changed) // _BATCH)
        if len(changed) >= analysis.PARALLEL_FILES and workers >= 1:  # parsing holds the GIL
            try:
                with AnalysisPool(workers) as pool:
                    update_in_workers(self, changed, progress, pool, _BATCH, updated)
                return updated.indexed
            except (BrokenProcessPool, OSError) as exc:  # no pool here: this thread does the rest
                logger.warning("analysing files in worker processes failed (%s): in this one", exc)
        for start in range(updated.done, len(changed), _BATCH):
            with self.updating:
                updated.indexed += self._update_batch(changed[start : start + _BATCH])
            progress(min(start + _BATCH, len(changed)))
        return updated.indexed

    def refresh(self, rels: Sequence[str]) -> bool:
        """Index again those of ``rels`` that changed since they were indexed (after any batch
        being written now). True when one did."""
        with self.updating:
            changed, gone = self.stale_of(rels)
            if changed or gone:
                self.update(changed, gone, lambda done: None)
                return True
        return False

    def known(self, rel: str) -> FileIdentity | None:
        """The identity of the file indexed at ``rel``, or None."""
        found = self.store.file(rel)
        return None if found is None else found.identity

    def forget_file(self, rel: str) -> None:
        """Forget the file at ``rel`` (it can no longer be indexed)."""
        with self._lock:
            ids = self.store.chunk_ids(rel)
            self.store.remove([rel])
            self._forget_vectors(ids, 1)

    def _update_batch(self, rels: Sequence[str]) -> int:
        batch: list[Prepared] = []
        for rel in rels:
            prepared = self._prepare(rel)
            if isinstance(prepared, Prepared):
                batch.append(prepared)
            elif prepared is None and self.store.file(rel) is not None:
                self.forget_file(rel)
        return self._write(batch)

    def write_analysed(self, batch: list[tuple[FileRecord, Analysis]]) -> int:
        """Embed and write files analysed elsewhere (``pipeline``); returns how many."""
        return self._write([Prepared(record, found) for record, found in batch])

    def _write(self, batch: list[Prepared]) -> int:
        """Embed ``batch`` and put it in the database in one transaction; returns its length."""
        self._embed(batch)
        if not batch:
            return 0
        with self._lock:
            old = [chunk for item in batch for chunk in self.store.chunk_ids(item.record.path)]
            new_ids = self.store.replace([(item.record, item.analysis, item.vectors) for item in batch])
            self._forget_vectors(old, 1)
            if self._vectors is not None:
                for item, ids in zip(batch, new_ids, strict=True):
                    kept = [(i, v) for i, v in zip(ids, item.vectors, strict=True) if v is not None]
                    self._vectors.add([i for i, _ in kept], [v for _, v in kept])
        return len(batch)

    def _forget_vectors(self, ids: Sequence[int], changes: int) -> None:
        if self._vectors is not None:
            self._vectors.remove(ids)
            self._vectors_generation += changes

    # --- queries ---------------------------------------------------------------------------

    def vectors(self) -> VectorTable | MappedVectors:
        """The chunk vectors, loaded the first time and again whenever another process changed
        the index (``mapped.load_vectors``)."""
        with self._lock:
            generation = self.store.generation()
            if self._vectors is None or self._vectors_generation != generation:
                self._vectors = None  # the old table goes before the new one is loaded
                self._vectors, self._vectors_generation = load_vectors(self.store), generation
            return self._vectors

    def release(self) -> None:
        """Drop what is kept in memory for answers (vectors, graph, ranks, remembered words, SQLite's
        page cache); the next answer loads what it needs again."""
        with self._graph_lock, self._lock:
            self._vectors, self._vectors_generation = None, -1
            self._graph, self._file_ranks = None, None
            self._maps.clear()
            self._tokenizer.forget()
        self.store.shrink()

    def holds_memory(self) -> bool:
        """Whether vectors or a graph are in memory now."""
        with self._lock:
            return self._vectors is not None or self._graph is not None

    def has_files(self) -> bool:
        """Whether anything is indexed yet (a database from an earlier run counts)."""
        return self.store.counts()[0] > 0

    def warm(self) -> None:
        """Load the vectors, build the graph and rank its files now (after the first build), and
        load the grammars of the index's languages (a build's workers parsed in their own
        processes), so that the first semanticsearch, findsymbol and repomap, and the first file
        indexed again, do not wait for them."""
        try:
            self.vectors()
            self.file_ranks()  # the graph, and findsymbol's ranks of its files
            present = self.store.languages()
            for info in LANGUAGES:
                if info.name in present:
                    self._grammars.get(info)
        except Exception:
            logger.exception("warming the code index of %s failed", self.directory)

    def graph(self) -> Graph:
        """The definition/reference graph. Built on first use, and again only when what it ranks
        changed (``Store.graph_generation``: files added or removed, definitions or uses changed;
        not a file indexed again with the same ones). Then the last one is returned while a new
        one and its file ranks are built in the background (ranks one change old are as good
        for ordering, and a rebuild costs seconds on a large repository)."""
        with self._lock:
            generation = self.store.graph_generation()
            cached = self._graph
            if cached is not None and cached[0] != generation and not self._rebuilding:
                self._rebuilding = True
                threading.Thread(target=self._rebuild_in_background, name="code graph", daemon=True).start()
        if cached is not None:
            return cached[1]
        return self._rebuild_graph()

    def _rebuild_graph(self, ranked: bool = False) -> Graph:
        """The graph built for the current graph generation (unless one is already), and with
        ``ranked`` its file ranks (``file_ranks``) before it replaces the last one."""
        try:
            with self._graph_lock:  # one build at a time; a caller that waited takes the fresh one
                generation = self.store.graph_generation()
                with self._lock:
                    cached = self._graph
                if cached is not None and cached[0] == generation:
                    return cached[1]
                graph = Graph(*self.store.graph_rows())
                ranks = graph.file_ranks() if ranked else None
                with self._lock:  # builds are one at a time: this one read the latest generation
                    self._graph = (generation, graph)  # (a database made again counts from 0)
                    self._file_ranks = None if ranks is None else (ranks, graph)
                    self._maps.clear()
                return graph
        finally:
            with self._lock:
                self._rebuilding = False

    def _rebuild_in_background(self) -> None:
        """``_rebuild_graph`` in its thread: a failure is logged (the last graph stays)."""
        try:
            self._rebuild_graph(True)
        except Exception:
            logger.exception("rebuilding the code graph of %s failed", self.directory)

    def file_ranks(self) -> dict[str, float]:
        """Each file's PageRank in the reference graph (see ``graph``)."""
        graph = self.graph()
        with self._lock:
            if self._file_ranks is None or self._file_ranks[1] is not graph:
                self._file_ranks = (graph.file_ranks(), graph)
            return self._file_ranks[0]

    def ranked_definitions(self, files: Sequence[str], names: Sequence[str]) -> list[tuple[str, str, float]]:
        """(path, name, score) of the definitions, best first, personalised toward ``files``
        and ``names`` (cached per graph and arguments)."""
        graph = self.graph()
        key = (id(graph), tuple(sorted(files)), tuple(sorted(names)))
        with self._lock:
            found = self._maps.get(key)
        if found is None:
            found = graph.rank_definitions(files, names)
            with self._lock:
                if len(self._maps) >= 8:
                    self._maps.pop(next(iter(self._maps)))
                self._maps[key] = found
        return found

    def query_terms(self, text: str) -> list[str]:
        """The index terms of a query (the tokenizer of the index)."""
        return self._tokenizer.terms(text).split()

    def nearest(
        self, vector: Any, k: int, table: VectorTable | MappedVectors | None = None
    ) -> list[tuple[int, float]]:
        """The ``k`` chunks whose vectors are closest to the normalised ``vector``, as (chunk id,
        cosine), best first, from ``table`` (default: ``vectors()``); under the lock, so that an
        update does not move rows meanwhile."""
        if table is None:  # (an empty table is falsy)
            table = self.vectors()
        with self._lock:
            return table.top(vector, k)

    def can_embed(self) -> bool:
        """Whether queries are embedded (WordLlama loaded)."""
        return self._embedder.available()

    def embed_query(self, text: str, counts: tuple[Mapping[str, int], int] | None = None) -> Any:
        """A query's normalised embedding (``vectors.query_vector``: its words weighted by their
        rarity in the index); None without a model or without words. ``counts``: what
        ``Store.frequencies`` gives for its words' terms (``query_terms`` holds them), when the
        caller has it; else looked up."""
        words = self._tokenizer.words(text)
        if not words or not self._embedder.available():
            return None
        terms = [self._tokenizer.terms(word) for word in words]
        found, total = counts if counts is not None else self.store.frequencies(terms)
        try:
            return query_vector(self._embedder, words, [found.get(term, 0) for term in terms], total)
        except RuntimeError:
            return None
