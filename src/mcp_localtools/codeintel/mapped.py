"""Chunk vectors memory-mapped from a file beside the database, the newer ones in memory.

The database keeps each chunk's vector (float16). ``vectors_file`` copies them, as float32, into
``<database>.vectors``: a header (``MAGIC``, the database's build id, the row count), the chunk ids
in ascending order (int64), then the rows (float32 x ``DIMENSIONS``). It is written to a temporary
file and renamed over the old one, so a reader maps either the whole old file or the whole new one.
A query's scan reads the mapped pages, which are the OS's page cache, not the server's anonymous
memory (``RssAnon``): a server keeps only a bit per chunk (alive or not) and the rows added since
the file was written.

float32 rather than float16 on disk: numpy has no fast float16 product, and converting a float16
file in blocks made a Django scan (50,512 x 256) 23 ms of CPU instead of 9 ms, against a query
budget of 50 ms; the file is 52 MB instead of 26 MB.

Valid because a chunk id is never used twice in one database (``AUTOINCREMENT``) and a chunk's
vector never changes: a row of the file is right as long as its chunk exists (a chunk removed since
is masked), and a file made for another database (another build id: the database was made again)
is not used.
"""

from __future__ import annotations

import contextlib
import logging
import mmap
import os
import tempfile
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from mcp_localtools.codeintel.store import Store
from mcp_localtools.codeintel.vectors import DIMENSIONS, VectorTable

__all__ = [
    "MAGIC",
    "REMAP_SHARE",
    "STALE_SECONDS",
    "MappedVectors",
    "load_vectors",
    "open_vectors",
    "write_vectors",
]

logger = logging.getLogger(__name__)

STALE_SECONDS = 3600
"""A temporary file older than this, left by a writer that died, is removed by the next writer."""
REMAP_SHARE = 0.1
"""The file is written again when more chunks than this share of it (at least 4096) are newer."""

MAGIC = b"MCPLTVEC"
_HEADER = 64
"""Bytes before the ids: ``MAGIC``, the build id (32 ASCII bytes), the row count (8 bytes), padding."""


def load_vectors(store: Store) -> VectorTable | MappedVectors:
    """The vectors of ``store``: mapped from ``<database>.vectors`` (written again first when it
    is missing, of another build, or more than ``REMAP_SHARE`` behind), the newer ones read into
    memory; all in memory for a database in memory or when the file cannot be written (logged)."""
    path = None if store.path is None else Path(f"{store.path}.vectors")
    build = store.build()
    opened = open_vectors(path, build) if path is not None else None
    if path is not None and (opened is None or _behind(store, opened[0])):
        opened = None
        try:
            write_vectors(path, build, store.vector_count(), store.vectors())
            opened = open_vectors(path, build)
        except OSError as exc:  # a full disk; a mapped file that cannot be replaced (Windows)
            logger.warning("the vectors of %s stay in memory: %s", store.path, exc)
    table: VectorTable | MappedVectors
    if opened is None:
        table, after = VectorTable(store.vector_count()), 0
    else:
        table = MappedVectors(
            opened[0], opened[1], store.vector_ids(int(opened[0][-1]) if len(opened[0]) else 0), opened[2]
        )
        after = table.top_id
    for rows in store.vectors(after):
        table.add([chunk_id for chunk_id, _ in rows], [blob for _, blob in rows])
    return table


def _behind(store: Store, ids: Any) -> bool:
    """Whether more chunks are newer than the file than ``REMAP_SHARE`` of it (at least 4096)."""
    return store.vector_count(_top(ids)) > REMAP_SHARE * max(len(ids), 4096)


def _top(ids: Any) -> int:
    return int(ids[-1]) if len(ids) else 0


def write_vectors(path: Path, build: str, count: int, batches: Iterable[list[tuple[int, bytes]]]) -> None:
    """Write ``count`` rows (chunk id ascending, float16 bytes) from ``batches`` to ``path``,
    atomically (a temporary file in the same directory, renamed over it).

    Raises:
        OSError: it cannot be written (the old file, if any, is left as it was).
        ValueError: ``batches`` held another count of rows than ``count``.
    """
    import numpy as np

    for left in path.parent.glob(".vectors-*"):  # left by a writer that died; not one writing now
        with contextlib.suppress(OSError):
            if time.time() - left.stat().st_mtime > STALE_SECONDS:
                left.unlink()
    handle, temporary = tempfile.mkstemp(prefix=".vectors-", dir=path.parent)
    try:
        with os.fdopen(handle, "w+b") as out:
            header = MAGIC + build.encode("ascii")[:32].ljust(32, b" ") + count.to_bytes(8, "little")
            out.write(header.ljust(_HEADER, b"\0"))
            out.truncate(_HEADER + count * 8 + count * DIMENSIONS * 4)
            ids = np.memmap(out, dtype=np.int64, mode="r+", offset=_HEADER, shape=(count,))
            rows = np.memmap(
                out, dtype=np.float32, mode="r+", offset=_HEADER + count * 8, shape=(count, DIMENSIONS)
            )
            done = 0
            for batch in batches:
                if done + len(batch) > count:
                    raise ValueError("more vectors than counted")
                ids[done : done + len(batch)] = [chunk_id for chunk_id, _ in batch]
                block = np.frombuffer(b"".join(blob for _, blob in batch), dtype=np.float16)
                rows[done : done + len(batch)] = block.reshape(-1, DIMENSIONS)
                done += len(batch)
            if done != count:
                raise ValueError(f"{done} vectors where {count} were counted")
            ids.flush()
            rows.flush()
            del ids, rows
        Path(temporary).replace(path)
    except BaseException:
        with contextlib.suppress(OSError):
            Path(temporary).unlink()
        raise


def open_vectors(path: Path, build: str) -> tuple[Any, Any, mmap.mmap] | None:
    """``(ids, rows, mapping)`` of the file at ``path`` mapped read-only, or None when it is
    missing, cut short, or made for another build of the database."""
    import numpy as np

    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size < _HEADER:
                return None
            mapping = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None
    header = mapping[:_HEADER]
    count = int.from_bytes(header[40:48], "little")
    if (
        header[:8] != MAGIC
        or header[8:40] != build.encode("ascii")[:32].ljust(32, b" ")
        or size != _HEADER + count * 8 + count * DIMENSIONS * 4
    ):
        mapping.close()
        return None
    ids = np.frombuffer(mapping, dtype=np.int64, count=count, offset=_HEADER)
    rows = np.frombuffer(mapping, dtype=np.float32, offset=_HEADER + count * 8).reshape(count, DIMENSIONS)
    return ids, rows, mapping


class MappedVectors:
    """The vectors of an index: a mapped file's rows (those of chunks removed since masked) and
    the rows added since, in memory; the same calls as ``VectorTable``. Not thread-safe: the
    index calls it under its lock.

    Args:
        ids, rows: the file's chunk ids (ascending) and rows (``open_vectors``).
        alive: the file's chunk ids that still exist, ascending.
        mapping: the mapping both views read (kept open as long as this table).
    """

    def __init__(self, ids: Any, rows: Any, alive: Any, mapping: mmap.mmap) -> None:
        import numpy as np

        self._np = np
        self._ids, self._rows, self._mapping = ids, rows, mapping
        self._alive = np.isin(ids, alive, assume_unique=True)
        self._top_id = _top(ids)
        self.added = VectorTable()

    @property
    def top_id(self) -> int:
        """The highest chunk id in the file (later ones are in ``added``)."""
        return self._top_id

    def __len__(self) -> int:
        return int(self._alive.sum()) + len(self.added)

    def add(self, ids: Sequence[int], vectors: Iterable[bytes]) -> None:
        """Add chunks by id with their float16 vector bytes (new ids: above the file's)."""
        self.added.add(ids, vectors)

    def remove(self, ids: Iterable[int]) -> None:
        """Forget chunks by id (unknown ids are ignored)."""
        np = self._np
        wanted = np.fromiter(ids, dtype=np.int64)
        if len(self._ids) and len(wanted):
            rows = np.searchsorted(self._ids, wanted)
            found = rows < len(self._ids)
            found[found] = self._ids[rows[found]] == wanted[found]
            self._alive[rows[found]] = False
        self.added.remove(int(i) for i in wanted)

    def top(self, query: Any, k: int) -> list[tuple[int, float]]:
        """The ``k`` chunks most similar to the normalised vector ``query``, best first, as
        (chunk id, cosine similarity)."""
        np = self._np
        found = self.added.top(query, k)
        if len(self._ids):
            scores = self._rows @ query.astype(np.float32)
            scores[~self._alive] = -np.inf
            best = np.argpartition(-scores, min(k, len(scores)) - 1)[:k]
            found += [(int(self._ids[r]), float(scores[r])) for r in best if np.isfinite(scores[r])]
        return sorted(found, key=lambda pair: -pair[1])[:k]

    def close(self) -> None:
        """Let the mapping go (it closes when no view of it is left)."""
        self._ids = self._rows = None
