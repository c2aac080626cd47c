"""Which files of an index are stale: by size and mtime against a listing of its directory
(``stale``), or among the paths tools reported changed (``stale_of``), where a directory stands
for the files indexed under it (a folder moved or deleted); ``CodeIndexes`` adds the files now
under a changed directory, as the search engine lists them."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol

from mcp_localtools.codeintel.store import Store

__all__ = ["Indexed", "stale", "stale_of"]


class Indexed(Protocol):
    """What of a ``CodeIndex`` these functions read: its directory, store, settings (``max_files``)
    and which files it may index."""

    directory: Path
    store: Store
    settings: Any

    def readable(self, rel: str) -> bool:
        """Whether the file at ``rel`` may be indexed."""
        ...


def stale(index: Indexed, listing: Iterable[str]) -> tuple[list[str], list[str]]:
    """``(changed or new files, files gone)`` of ``listing`` (relative paths) against the index,
    by size and mtime."""
    known = index.store.stamps()
    wanted = sorted(rel for rel in set(listing) if index.readable(rel))[: index.settings.max_files]
    changed = []
    base = os.fspath(index.directory) + os.sep
    for rel in wanted:
        stamp = known.pop(rel, None)
        try:
            info = os.stat(base + rel, follow_symlinks=False)
        except OSError:
            continue
        if stamp != (info.st_size, info.st_mtime_ns):
            changed.append(rel)
    return changed, sorted(known)


def stale_of(index: Indexed, rels: Iterable[str]) -> tuple[list[str], list[str]]:
    """``(changed, gone)`` among the files ``rels`` only; a directory among them stands for the
    files under it, on disk (walked) and indexed (a moved or deleted folder)."""
    changed, gone = [], []
    for rel in sorted({file for r in rels for file in _files_at(index, r)}):
        record = index.store.file(rel)
        try:
            info = os.stat(index.directory / rel, follow_symlinks=False)
        except OSError:
            if record is not None:
                gone.append(rel)
            continue
        if not index.readable(rel) or not (index.directory / rel).is_file():
            if record is not None:
                gone.append(rel)
            continue
        if record is None or (record.identity.size, record.identity.mtime_ns) != (
            info.st_size,
            info.st_mtime_ns,
        ):
            changed.append(rel)
    return changed, gone


def _files_at(index: Indexed, rel: str) -> list[str]:
    """``rel`` itself, and the indexed files under it when it was a directory (moved or deleted:
    they are gone now). The files now under a directory are listed by the caller (the search
    engine's listing, ignore files respected)."""
    if index.store.file(rel) is not None:
        return [rel]
    indexed = index.store.select(
        "SELECT path FROM files WHERE path >= ? AND path < ?", (rel + "/", rel + "0")
    )
    return [rel, *(row[0] for row in indexed)]
