"""Opening an index database: its schema, and a damaged file discarded rather than failed on.

The database is a cache, so a file that SQLite cannot read ("file is not a database", "database
disk image is malformed"), or one shorter than its own header says (cut short by a full disk or a
copy), is deleted with its WAL and shared-memory files and created again; the next build fills it.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import uuid
from pathlib import Path

__all__ = ["SCHEMA", "connect", "create_indexes", "drop_indexes"]

logger = logging.getLogger(__name__)

SCHEMA = "mcp-localtools code index 23; wordllama l2_supercat_256; snowball english"
"""Written into every database; a database with another value is rebuilt."""

_TABLES = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
    sha256 TEXT NOT NULL, language TEXT NOT NULL, lines INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS symbols (
    file_id INTEGER NOT NULL, name TEXT NOT NULL, folded TEXT NOT NULL, qualified TEXT NOT NULL,
    kind TEXT NOT NULL, start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, signature TEXT NOT NULL,
    doc TEXT NOT NULL, depth INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS refs (
    file_id INTEGER NOT NULL, name TEXT NOT NULL, kind TEXT NOT NULL, line INTEGER NOT NULL,
    scope TEXT NOT NULL, qualifier TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS imports (
    file_id INTEGER NOT NULL, local TEXT NOT NULL, name TEXT NOT NULL, module TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS chunks (
    id INTEGER PRIMARY KEY AUTOINCREMENT, file_id INTEGER NOT NULL, symbol TEXT NOT NULL, kind TEXT NOT NULL,
    start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, summary TEXT NOT NULL, vector BLOB);
CREATE VIRTUAL TABLE IF NOT EXISTS chunk_terms USING fts5(
    title, body, tokenize = "unicode61 tokenchars '_'");
CREATE VIRTUAL TABLE IF NOT EXISTS chunk_vocabulary USING fts5vocab(chunk_terms, 'row');
"""
_INDEXES = {
    "symbols_folded": "symbols (folded)",
    "symbols_file": "symbols (file_id, name)",
    "refs_name": "refs (name, file_id)",
    "refs_file": "refs (file_id, line)",
    "imports_file": "imports (file_id, local)",
    "chunks_file": "chunks (file_id)",
}
"""The tables' secondary indexes (a bulk build of an empty database makes them after its rows:
``drop_indexes``, ``create_indexes``)."""


def drop_indexes(db: sqlite3.Connection) -> bool:
    """Drop the secondary indexes when the database holds no file yet, so that a first build
    inserts its rows without updating them (0.5 s of Django's 2.4 s of writes) and
    ``create_indexes`` sorts each once. True when they were dropped."""
    if db.execute("SELECT 1 FROM files LIMIT 1").fetchone() is not None:
        return False
    for name in _INDEXES:
        db.execute(f"DROP INDEX IF EXISTS {name}")
    db.commit()
    return True


def create_indexes(db: sqlite3.Connection) -> None:
    """Create the secondary indexes that are missing (after a bulk build, or one cut short)."""
    for name, columns in _INDEXES.items():
        db.execute(f"CREATE INDEX IF NOT EXISTS {name} ON {columns}")
    db.commit()


def connect(path: Path | None) -> sqlite3.Connection:
    """A connection to the index database at ``path`` (None: in memory) with the current schema;
    a damaged file is discarded and created again (logged).

    Raises:
        sqlite3.Error, OSError: the database cannot be opened or created (even afresh).
    """
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        return _open(path)
    except sqlite3.DatabaseError as exc:
        if path is None or isinstance(exc, sqlite3.OperationalError):
            raise  # locked, read-only, out of space: not the file's fault
        logger.warning("the code index %s is damaged (%s): it is built again", path, exc)
        for name in (path, Path(f"{path}-wal"), Path(f"{path}-shm"), Path(f"{path}-journal")):
            name.unlink(missing_ok=True)
        return _open(path)


def _open(path: Path | None) -> sqlite3.Connection:
    if path is not None and not Path(f"{path}-wal").exists():
        _check_length(path)
    db = sqlite3.connect(":memory:" if path is None else str(path), check_same_thread=False, timeout=30)
    try:
        db.execute("PRAGMA busy_timeout = 30000")
        if path is not None:
            db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = NORMAL")
        db.execute("PRAGMA cache_size = -16000")  # 16 MB of pages at most
        _check_schema(db)
        _create_missing_indexes(db)
        db.execute("SELECT count(*) FROM files").fetchone()
        db.execute("SELECT count(*) FROM chunk_terms WHERE chunk_terms MATCH 'a'").fetchone()
    except BaseException:
        db.close()
        raise
    return db


def _create_missing_indexes(db: sqlite3.Connection) -> None:
    """The secondary indexes a bulk build that was cut short left out, made now if the database
    is free; when another connection holds it (a first build, which makes them at its end) or it
    cannot be written, the answers come without them, only slower (logged)."""
    db.execute("PRAGMA busy_timeout = 0")
    try:
        create_indexes(db)
    except sqlite3.OperationalError as exc:
        db.rollback()
        logger.debug("the code index's secondary indexes are not made now: %s", exc)
    finally:
        db.execute("PRAGMA busy_timeout = 30000")


def _check_length(path: Path) -> None:
    """Raises ``sqlite3.DatabaseError`` when the file (without a WAL) is not a database or holds
    fewer pages than its header counts."""
    try:
        with open(path, "rb") as handle:
            header = handle.read(100)
            size = os.fstat(handle.fileno()).st_size
    except FileNotFoundError:
        return
    if len(header) < 100 or not header.startswith(b"SQLite format 3\x00"):
        if size:
            raise sqlite3.DatabaseError("file is not a database")
        return
    page = int.from_bytes(header[16:18], "big")
    page = 65536 if page == 1 else page
    pages = int.from_bytes(header[28:32], "big")
    valid = header[92:96] == header[24:28]  # the header's page count is current
    if valid and pages and size < pages * page:
        raise sqlite3.DatabaseError(f"{size} bytes where its header counts {pages} pages of {page}")


def _check_schema(db: sqlite3.Connection) -> None:
    try:
        row = db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
    except sqlite3.OperationalError:
        row = None
    if row is not None and row[0] == SCHEMA:
        return
    names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type IN ('table')")]
    for name in names:
        if not name.startswith(("sqlite_", "chunk_terms_")):
            db.execute(f'DROP TABLE IF EXISTS "{name}"')
    db.executescript(_TABLES)
    db.execute("INSERT OR REPLACE INTO meta VALUES ('schema', ?)", (SCHEMA,))
    # Which making of the database this is (files derived from it, ``mapped``, name it).
    db.execute("INSERT OR REPLACE INTO meta VALUES ('build', ?)", (uuid.uuid4().hex,))
    db.commit()
