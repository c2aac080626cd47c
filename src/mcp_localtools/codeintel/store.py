"""The code index on disk: one SQLite database per indexed directory.

Tables: ``files`` (path relative to the indexed directory, size, mtime, SHA-256, language, line
count), ``symbols`` and ``refs`` (what ``tags.extract`` found), ``chunks`` (``chunks.chunks_of``,
each with its embedding as float16 bytes) and ``chunk_terms``, an FTS5 table of each chunk's
tokens (``tokens.tokens``) that ranks by BM25. A file's rows are replaced in one transaction, so
a reader (another thread, another server process on the same cache) never sees half a file.
SQLite's FTS5 gives BM25 with incremental inserts and deletes inside the same transactions.

The database is a cache: a schema or model change (``SCHEMA``) drops it and it is built again.
Every method is thread-safe (one connection behind a lock).
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from mcp_localtools.codeintel.database import SCHEMA, connect, create_indexes, drop_indexes
from mcp_localtools.codeintel.lookups import Lookups
from mcp_localtools.codeintel.records import (
    Entry,
    FileIdentity,
    FileRecord,
    StoredChunk,
    StoredSymbol,
    file_record,
)

__all__ = ["SCHEMA", "Entry", "FileIdentity", "FileRecord", "Store", "StoredChunk", "StoredSymbol"]

TITLE_WEIGHT = 10.0
"""How much more a query term weighs in a chunk's title than in its body (BM25F-style; tuned on
benchmarks/codesearch)."""


class Store(Lookups):
    """The index database of one directory (the code tools' lookups of symbols and uses:
    ``lookups.Lookups``).

    Args:
        path: the database file (its directory is created), or None for a database in memory;
            a damaged file is discarded and made again (``database.connect``).

    Raises:
        sqlite3.Error, OSError: the database cannot be opened or created.
    """

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._db = connect(path)
        self._lock = threading.RLock()
        self._opened = self._file_identity()

    def complete(self) -> bool:
        """Whether a build ran to its end (``mark_complete``) since the database was made."""
        with self._lock:
            return self._db.execute("SELECT 1 FROM meta WHERE key = 'complete'").fetchone() is not None

    def mark_complete(self) -> None:
        """Record that a build ran to its end: every file it listed is committed."""
        with self._transaction() as db:
            db.execute("INSERT OR REPLACE INTO meta VALUES ('complete', '1')")

    def shrink(self) -> None:
        """Give SQLite's page cache of this connection back (``PRAGMA shrink_memory``)."""
        with self._lock:
            self._db.execute("PRAGMA shrink_memory")

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._db.close()

    @contextmanager
    def bulk(self) -> Iterator[None]:
        """A build of many files: when the database holds none yet, its secondary indexes are
        made after the rows rather than kept up to date row by row (``database.drop_indexes``);
        on leaving (even by an error) they are all there again."""
        with self._lock:
            dropped = drop_indexes(self._db)
        try:
            yield
        finally:
            if dropped:
                with self._lock:
                    create_indexes(self._db)

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                yield self._db
            except BaseException:
                self._db.rollback()
                raise
            self._db.commit()

    def stamps(self) -> dict[str, tuple[int, int]]:
        """Every indexed file's size and mtime (ns) by path (what a rescan compares)."""
        with self._lock:
            rows = self._db.execute("SELECT path, size, mtime_ns FROM files").fetchall()
        return {path: (size, mtime_ns) for path, size, mtime_ns in rows}

    def languages(self) -> set[str]:
        """The languages of the indexed files (``text`` for those no grammar reads)."""
        with self._lock:
            return {row[0] for row in self._db.execute("SELECT DISTINCT language FROM files")}

    def file(self, path: str) -> FileRecord | None:
        """The indexed file at ``path``, or None."""
        with self._lock:
            row = self._db.execute(
                "SELECT path, size, mtime_ns, sha256, language, lines FROM files WHERE path = ?", (path,)
            ).fetchone()
        return None if row is None else file_record(row)

    def touch(self, path: str, identity: FileIdentity) -> None:
        """Record a new size and mtime for an unchanged file (same content hash)."""
        with self._transaction() as db:
            db.execute(
                "UPDATE files SET size = ?, mtime_ns = ? WHERE path = ?",
                (identity.size, identity.mtime_ns, path),
            )

    def remove(self, paths: Sequence[str]) -> None:
        """Forget the files at ``paths`` and all they held."""
        with self._transaction() as db:
            removed = [self._delete(db, path) for path in paths]
            self._bump(db, graph=any(file_id is not None for file_id in removed))

    def generation(self) -> int:
        """A counter that every change to the index (by any process) raises."""
        return self._counter("generation")

    def graph_generation(self) -> int:
        """A counter that every change to what ``graph_rows`` returns (by any process) raises: a
        file added or removed, or a file's defined names or its uses (name and count) changed.
        A file indexed again with the same ones (another line, a comment) keeps its id and
        leaves it as it was, so a graph built from the rows stays right."""
        return self._counter("graph")

    def _counter(self, key: str) -> int:
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return int(row[0]) if row is not None else 0

    @staticmethod
    def _bump(db: sqlite3.Connection, *, graph: bool) -> None:
        for key in ("generation", "graph") if graph else ("generation",):
            db.execute(
                "INSERT INTO meta VALUES (?, '1') ON CONFLICT (key) "
                "DO UPDATE SET value = CAST(value AS INTEGER) + 1",
                (key,),
            )

    def chunk_ids(self, path: str) -> list[int]:
        """The ids of one file's chunks."""
        with self._lock:
            row = self._db.execute("SELECT id FROM files WHERE path = ?", (path,)).fetchone()
            rows = [] if row is None else self._db.execute("SELECT id FROM chunks WHERE file_id = ?", row)
            return [chunk for (chunk,) in rows]

    @staticmethod
    def _delete(db: sqlite3.Connection, path: str) -> int | None:
        """Delete the file at ``path`` and its rows; returns its id, or None when it was not indexed."""
        row = db.execute("SELECT id FROM files WHERE path = ?", (path,)).fetchone()
        if row is None:
            return None
        file_id: int = row[0]
        db.execute(
            "DELETE FROM chunk_terms WHERE rowid IN (SELECT id FROM chunks WHERE file_id = ?)", (file_id,)
        )
        for table in ("chunks", "symbols", "refs", "imports"):
            db.execute(f"DELETE FROM {table} WHERE file_id = ?", (file_id,))  # noqa: S608 - fixed names
        db.execute("DELETE FROM files WHERE id = ?", (file_id,))
        return file_id

    @staticmethod
    def _graph_part(db: sqlite3.Connection, file_id: int) -> tuple[set[str], dict[str, int]]:
        """What the file with id ``file_id`` gives ``graph_rows``: its defined names, and how
        many times it uses each name."""
        defined = {name for (name,) in db.execute("SELECT name FROM symbols WHERE file_id = ?", (file_id,))}
        used: dict[str, int] = {}
        for (name,) in db.execute("SELECT name FROM refs WHERE file_id = ?", (file_id,)):
            used[name] = used.get(name, 0) + 1
        return defined, used

    def replace(self, entries: Sequence[Entry]) -> list[list[int]]:
        """Put files' versions in place of any earlier ones, all in one transaction.

        Args:
            entries: per file: its record; its analysis (``analysis.Analysis``: definitions,
                references, imports, chunks and their terms as rows); each chunk's embedding
                (float16 bytes, or None).

        Returns:
            Per file, the new chunks' ids in order.
        """
        out: list[list[int]] = []
        with self._transaction() as db:
            # Never an id used before (AUTOINCREMENT's counter): a mapped vector file stays right.
            row = db.execute("SELECT seq FROM sqlite_sequence WHERE name = 'chunks'").fetchone()
            next_id = (row[0] if row else 0) + 1
            graph = False
            for record, found, vectors in entries:
                # A file indexed again keeps its id (its place among the graph's files); the graph
                # generation rises only when its definitions or uses change (``graph_generation``).
                old = db.execute("SELECT id FROM files WHERE path = ?", (record.path,)).fetchone()
                old_id = None if old is None else old[0]
                before = None if graph or old_id is None else self._graph_part(db, old_id)
                self._delete(db, record.path)
                known = record.identity
                cursor = db.execute(
                    "INSERT INTO files (id, path, size, mtime_ns, sha256, language, lines) "
                    "VALUES (?,?,?,?,?,?,?)",
                    (old_id, record.path, known.size, known.mtime_ns, known.sha256, record.language,
                     record.lines),
                )  # fmt: skip
                file_id = cursor.lastrowid
                if not graph:
                    used: dict[str, int] = {}
                    for reference in found.references:
                        used[reference[0]] = used.get(reference[0], 0) + 1
                    graph = before != ({symbol[0] for symbol in found.symbols}, used)
                db.executemany(
                    "INSERT INTO symbols VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [(file_id, row[0], row[0].lower(), *row[1:]) for row in found.symbols],
                )
                db.executemany(
                    "INSERT INTO refs VALUES (?, ?, ?, ?, ?, ?)", [(file_id, *r) for r in found.references]
                )
                db.executemany(
                    "INSERT INTO imports VALUES (?, ?, ?, ?)", [(file_id, *i) for i in found.imports]
                )
                chunks, terms = found.chunks, found.terms
                ids = list(range(next_id, next_id + len(chunks)))
                next_id += len(chunks)
                db.executemany(
                    "INSERT INTO chunks (id, file_id, symbol, kind, start_line, end_line, summary, vector) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [(i, file_id, *c, v) for i, c, v in zip(ids, chunks, vectors, strict=True)],
                )  # fmt: skip
                db.executemany(
                    "INSERT INTO chunk_terms (rowid, title, body) VALUES (?, ?, ?)",
                    [(i, *t) for i, t in zip(ids, terms, strict=True)],
                )
                out.append(ids)
            self._bump(db, graph=graph)
        return out

    @contextmanager
    def _snapshot(self) -> Iterator[sqlite3.Connection]:
        """A connection reading one committed state of the database: for a database on disk one
        of its own (a long read, such as ``graph_rows``, then holds neither this store's lock nor
        the GIL while SQLite works, and answers go on meanwhile), else this store's, under its lock.
        This store's is used too when the file at ``path`` cannot be opened or is not this
        store's database any more (deleted, or replaced: this store's connection still reads the
        file it opened, by its ``build`` id).

        Raises:
            sqlite3.Error: the database cannot be read.
        """
        db = self._own_snapshot()
        if db is None:
            with self._lock:
                yield self._db
            return
        try:
            yield db
        finally:
            db.close()

    def _file_identity(self) -> tuple[int, int] | None:
        """The database file's (device, inode), or None (in memory, or no such file)."""
        try:
            info = os.stat(self.path) if self.path is not None else None
        except OSError:
            return None
        return None if info is None else (info.st_dev, info.st_ino)

    def _own_snapshot(self) -> sqlite3.Connection | None:
        """A read-only connection of its own to this store's database, in a read transaction, or
        None (in memory; the file gone, replaced, unreadable or another database). A file that is
        no longer the one this store opened is not opened at all: a connection to it would share
        the write-ahead log's files, by name, with this store's, whose view it could spoil."""
        if self.path is None or self._opened is None or self._file_identity() != self._opened:
            return None
        build = self.build()
        db = None
        try:  # mode=rw: a database deleted meanwhile is an error, not made again empty
            db = sqlite3.connect(self.path.resolve().as_uri() + "?mode=rw", uri=True, timeout=30)
            db.execute("PRAGMA query_only = 1")
            db.execute("BEGIN")  # the reads see one state of the database
            row = db.execute("SELECT value FROM meta WHERE key = 'build'").fetchone()
            if row is not None and str(row[0]) == build:
                return db
        except sqlite3.Error:
            pass
        if db is not None:
            db.close()
        return None

    def graph_rows(self) -> tuple[list[str], list[tuple[int, str]], list[tuple[int, str, int]]]:
        """What the repository map ranks: the files (a file's node is its position), each
        definition as (node, name), each file's uses of a name as (node, name, count); read
        through ``_snapshot`` (0.15-0.25 s on Django)."""
        with self._snapshot() as db:
            rows = db.execute("SELECT id, path FROM files ORDER BY id").fetchall()
            node = {file_id: index for index, (file_id, _) in enumerate(rows)}
            defined = db.execute("SELECT DISTINCT file_id, name FROM symbols").fetchall()
            used = db.execute(
                "SELECT file_id, name, count(*) FROM refs GROUP BY name, file_id"  # along refs_name
            ).fetchall()
        return (
            [path for _, path in rows],
            [(node[f], name) for f, name in defined if f in node],
            [(node[f], name, count) for f, name, count in used if f in node],
        )

    def lexical(self, match: str, limit: int, title_weight: float = TITLE_WEIGHT) -> list[tuple[int, float]]:
        """Chunks matching an FTS5 ``match`` expression, best BM25 first, as (chunk id, score);
        a term in a chunk's title (path, name, signature, doc) counts ``title_weight`` times one
        in its body."""
        with self._lock:
            rows = self._db.execute(
                "SELECT rowid, bm25(chunk_terms, ?, 1.0) AS score FROM chunk_terms WHERE chunk_terms MATCH ? "
                "ORDER BY score LIMIT ?",
                (title_weight, match, limit),
            ).fetchall()
        return [(int(row[0]), -float(row[1])) for row in rows]

    def frequencies(self, terms: Sequence[str]) -> tuple[dict[str, int], int]:
        """How many chunks hold each of ``terms``, and how many chunks there are."""
        marks = ",".join("?" * len(terms))
        with self._lock:
            rows = self._db.execute(
                f"SELECT term, doc FROM chunk_vocabulary WHERE term IN ({marks})",  # noqa: S608
                tuple(terms),
            ).fetchall()
            total = self._db.execute("SELECT count(*) FROM chunks").fetchone()[0]
        return dict(rows), total

    def chunks(self, ids: Sequence[int]) -> dict[int, StoredChunk]:
        """The chunks with these ids."""
        marks = ",".join("?" * len(ids))
        with self._lock:
            rows = self._db.execute(
                "SELECT c.id, f.path, c.symbol, c.kind, c.start_line, c.end_line, c.summary FROM chunks c "  # noqa: S608
                f"JOIN files f ON f.id = c.file_id WHERE c.id IN ({marks})",
                tuple(ids),
            ).fetchall()
        return {row[0]: StoredChunk(*row) for row in rows}

    def build(self) -> str:
        """The id of this making of the database (``database``)."""
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE key = 'build'").fetchone()
        return str(row[0]) if row else ""

    def vector_ids(self, up_to: int) -> list[int]:
        """The ids of the chunks with an embedding up to ``up_to``, ascending."""
        with self._lock:
            rows = self._db.execute(
                "SELECT id FROM chunks WHERE id <= ? AND vector IS NOT NULL ORDER BY id", (up_to,)
            ).fetchall()
        return [row[0] for row in rows]

    def vectors(self, after: int = 0) -> Iterator[list[tuple[int, bytes]]]:
        """The id and embedding of every chunk above ``after`` (chunks without one left out), by
        id, in batches of 4096."""
        last = after
        while True:
            with self._lock:
                rows = self._db.execute(
                    "SELECT id, vector FROM chunks WHERE id > ? AND vector IS NOT NULL ORDER BY id LIMIT 4096",  # noqa: E501
                    (last,),
                ).fetchall()
            if not rows:
                return
            yield rows
            last = rows[-1][0]

    def vector_count(self, after: int = 0) -> int:
        """How many chunks above ``after`` have an embedding."""
        with self._lock:
            row = self._db.execute(
                "SELECT count(*) FROM chunks WHERE id > ? AND vector IS NOT NULL", (after,)
            ).fetchone()
        return int(row[0])

    def counts(self) -> tuple[int, int, int]:
        """``(files, symbols, chunks)`` in the index."""
        with self._lock:
            return (
                self._db.execute("SELECT count(*) FROM files").fetchone()[0],
                self._db.execute("SELECT count(*) FROM symbols").fetchone()[0],
                self._db.execute("SELECT count(*) FROM chunks").fetchone()[0],
            )
