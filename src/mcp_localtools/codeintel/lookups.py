"""The code tools' lookups in an index database: symbols by condition, name or directory, uses
of names, calls, the uses inside line spans, and read-only queries for the import resolver.

``Lookups`` is ``store.Store``'s base: its methods read through the store's one connection under
its lock (``_db``, ``_lock``), so each answer sees a committed state of the index.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from typing import Any

from mcp_localtools.codeintel.imports import Resolver
from mcp_localtools.codeintel.records import FileRecord, StoredSymbol, file_record
from mcp_localtools.codeintel.tags import Reference, Symbol

__all__ = ["Lookups"]


class Lookups:
    """Reads of symbols and uses for the code tools (``Store`` gives the connection and lock)."""

    _db: sqlite3.Connection
    _lock: threading.RLock

    def symbols_where(self, condition: str, parameters: Sequence[object], limit: int) -> list[StoredSymbol]:
        """Symbols whose row matches an SQL ``condition`` on ``s`` (symbols) and ``f`` (files)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT f.path, s.name, s.kind, s.qualified, s.start_line, s.end_line, s.signature, s.doc, "  # noqa: S608
                f"s.depth FROM symbols s JOIN files f ON f.id = s.file_id WHERE {condition} "
                "ORDER BY f.path, s.start_line LIMIT ?",
                (*parameters, limit),
            ).fetchall()
        return [StoredSymbol(row[0], Symbol(*row[1:])) for row in rows]

    def outline(self, prefix: str, max_depth: int, limit: int) -> list[tuple[FileRecord, Symbol]]:
        """Symbols of the files under ``prefix`` (``""``: all) at most ``max_depth`` deep, by path
        then source order, at most ``limit``."""
        with self._lock:
            rows = self._db.execute(
                "SELECT f.path, f.size, f.mtime_ns, f.sha256, f.language, f.lines, s.name, s.kind, "
                "s.qualified, s.start_line, s.end_line, s.signature, s.doc, s.depth FROM symbols s "
                "JOIN files f "
                "ON f.id = s.file_id WHERE substr(f.path, 1, ?) = ? AND s.depth <= ? "
                "ORDER BY f.path, s.rowid LIMIT ?",
                (len(prefix), prefix, max_depth, limit),
            ).fetchall()
        return [(file_record(row), Symbol(*row[6:])) for row in rows]

    def all_names(self) -> list[str]:
        """Every distinct defined name (for fuzzy lookup)."""
        with self._lock:
            return [row[0] for row in self._db.execute("SELECT DISTINCT name FROM symbols")]

    def references_to(self, names: Sequence[str], limit: int) -> list[tuple[str, Reference]]:
        """Uses of any of ``names``, as (path, reference), in path and line order."""
        marks = ",".join("?" * len(names))
        with self._lock:
            rows = self._db.execute(
                "SELECT f.path, r.name, r.kind, r.line, r.scope, r.qualifier "  # noqa: S608
                "FROM refs r JOIN files f ON f.id = r.file_id "
                f"WHERE r.name IN ({marks}) ORDER BY f.path, r.line LIMIT ?",
                (*names, limit),
            ).fetchall()
        return [(row[0], Reference(*row[1:])) for row in rows]

    def resolver(self) -> Resolver:
        """A ``Resolver`` of uses to definitions over this index (for one query: it caches)."""
        return Resolver(self.select)

    def select(self, sql: str, parameters: Sequence[object]) -> list[tuple[Any, ...]]:
        """The rows of a read-only query (for ``imports.Resolver``, which owns its queries)."""
        with self._lock:
            return self._db.execute(sql, tuple(parameters)).fetchall()

    def calls_to(self, names: Sequence[str], per_name: int) -> dict[str, list[tuple[str, Reference]]]:
        """The calls of each of ``names`` (references of kind ``call``), at most ``per_name`` of
        each in the order their files were indexed, then by line, as (path, reference); one query
        whose parts stop after ``per_name`` rows (a name called 5,000 times costs 20 rows)."""
        if not names:
            return {}
        part = (
            "SELECT * FROM (SELECT f.path, r.name, r.kind, r.line, r.scope, r.qualifier FROM refs r "
            "JOIN files f ON f.id = r.file_id WHERE r.name = ? AND r.kind = 'call' "
            "ORDER BY r.file_id, r.line LIMIT ?)"
        )
        with self._lock:
            rows = self._db.execute(
                " UNION ALL ".join([part] * len(names)),
                [value for name in names for value in (name, per_name)],
            ).fetchall()
        out: dict[str, list[tuple[str, Reference]]] = {}
        for row in rows:
            out.setdefault(row[1], []).append((row[0], Reference(*row[1:])))
        return out

    def references_within(self, spans: Sequence[tuple[str, int, int]]) -> list[list[Reference]]:
        """The uses inside each span (path, first line, last line), in line order; one query."""
        if not spans:
            return []
        values = ",".join("(?, ?, ?, ?)" for _ in spans)
        with self._lock:
            rows = self._db.execute(
                f"WITH spans (i, path, first, last) AS (VALUES {values}) "  # noqa: S608
                "SELECT s.i, r.name, r.kind, r.line, r.scope, r.qualifier "
                "FROM spans s JOIN files f ON f.path = s.path "
                "JOIN refs r ON r.file_id = f.id AND r.line BETWEEN s.first AND s.last ORDER BY s.i, r.line",
                [value for i, span in enumerate(spans) for value in (i, *span)],
            ).fetchall()
        out: list[list[Reference]] = [[] for _ in spans]
        for row in rows:
            out[row[0]].append(Reference(*row[1:]))
        return out

    def symbols_named(self, pairs: Sequence[tuple[str, str]]) -> dict[tuple[str, str], list[Symbol]]:
        """The symbols of each (path, name) pair, in source order."""
        by_path: dict[str, list[str]] = {}
        for path, name in pairs:
            by_path.setdefault(path, []).append(name)
        out: dict[tuple[str, str], list[Symbol]] = {}
        with self._lock:
            for path, names in by_path.items():
                marks = ",".join("?" * len(names))
                query = (
                    "SELECT s.name, s.kind, s.qualified, s.start_line, s.end_line, s.signature, s.doc, "  # noqa: S608
                    "s.depth FROM symbols s JOIN files f ON f.id = s.file_id "
                    f"WHERE f.path = ? AND s.name IN ({marks}) ORDER BY s.rowid"
                )
                rows = self._db.execute(query, (path, *names)).fetchall()
                for row in rows:
                    out.setdefault((path, row[0]), []).append(Symbol(*row))
        return out
