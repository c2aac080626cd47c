"""The rows of the code index (``store.Store``) as Python values: a file's identity and record,
a stored symbol and chunk, and one file's entry to write."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mcp_localtools.codeintel.analysis import Analysis
from mcp_localtools.codeintel.tags import Symbol

__all__ = ["Entry", "FileIdentity", "FileRecord", "StoredChunk", "StoredSymbol", "file_record"]


@dataclass(frozen=True, slots=True)
class FileIdentity:
    """What tells a file's versions apart: size in bytes, mtime in ns, SHA-256 of the content."""

    size: int
    mtime_ns: int
    sha256: str


@dataclass(frozen=True, slots=True)
class FileRecord:
    """An indexed file: its identity, language (``text`` without a grammar) and line count."""

    path: str
    identity: FileIdentity
    language: str
    lines: int


Entry = tuple[FileRecord, Analysis, Sequence[bytes | None]]
"""One file to write: its record, its analysis, each chunk's embedding (float16 bytes, or None)."""
"""One file's version to store: record, tags, chunks, each chunk's (title, body) terms and vector."""


@dataclass(frozen=True, slots=True)
class StoredSymbol:
    """A symbol with the file it is in (path relative to the indexed directory)."""

    path: str
    symbol: Symbol


@dataclass(frozen=True, slots=True)
class StoredChunk:
    """A chunk's row: id, file, symbol, kind, line range, summary."""

    id: int
    path: str
    symbol: str
    kind: str
    start_line: int
    end_line: int
    summary: str


def file_record(row: Sequence[Any]) -> FileRecord:
    """A file's record from a row's first six columns (path, size, mtime, hash, language, lines)."""
    return FileRecord(row[0], FileIdentity(row[1], row[2], row[3]), row[4], row[5])
