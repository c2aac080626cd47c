"""Keeping the first results in path order while an engine streams them in any order.

An engine reports files as it finishes them, in no order, and a search may match far more than
a call returns. ``TopResults`` keeps only what can still be among the first ``limit`` result
units (files, or matching lines) in path order, so memory stays bounded by the limit while the
totals count everything: it sorts and cuts what it holds whenever it holds twice the limit (at
least 256) of files, or ``MAX_PENDING_LINES`` reported lines.
"""

from __future__ import annotations

import threading

from mcp_localtools.search.engine import FileHits

__all__ = ["MAX_PENDING_LINES", "ClosableTop", "TopResults", "path_key"]

MAX_PENDING_LINES = 65_536
"""Reported lines (``FileHits.lines``) held before the candidates are sorted and cut."""


def path_key(path: str) -> tuple[str, ...]:
    """Sort key for relative paths: component by component, so a directory's entries stay
    together (``a/b`` before ``a.txt``), as a walk in name order visits them."""
    return tuple(path.split("/"))


class TopResults:
    """The first ``limit`` result units in path order, plus totals.

    Args:
        limit: how many units to keep (files, or matching lines).
        dedupe: count a path only once when it is added again (files mode adds path and content
            matches of the same file).

    Thread-safe: the Python engine adds from worker threads.
    """

    def __init__(self, limit: int, *, dedupe: bool = False) -> None:
        self.limit = limit
        self.total_files = 0
        self.total_units = 0
        self.total_lines = 0
        # Candidates in arrival order, sorted (and cut to the first ``limit`` units) only when
        # they pile up and once at the end: one sort, not an insertion per file.
        self._pending: list[tuple[tuple[str, ...], FileHits, int]] = []
        self._pending_lines = 0
        self._threshold: tuple[str, ...] | None = None  # keys past it cannot be kept any more
        self._seen: set[str] | None = set() if dedupe else None
        self._lock = threading.Lock()

    def add(self, hits: FileHits, units: int) -> None:
        """Count ``hits`` (worth ``units`` result units) and keep it if it can still be shown."""
        with self._lock:
            if self._seen is not None:
                if hits.path in self._seen:
                    return
                self._seen.add(hits.path)
            self.total_files += 1
            self.total_units += units
            self.total_lines += hits.count
            key = path_key(hits.path)
            if self._threshold is not None and key > self._threshold:
                return
            self._pending.append((key, hits, units))
            self._pending_lines += len(hits.lines)
            if len(self._pending) >= 2 * max(self.limit, 256) or self._pending_lines > MAX_PENDING_LINES:
                self._compact()

    def _compact(self) -> None:
        """Sort the candidates and keep the shortest prefix that holds ``limit`` units."""
        self._pending.sort(key=lambda item: item[0])
        kept = 0
        for index, (key, _, units) in enumerate(self._pending):
            kept += units
            if kept >= self.limit:
                del self._pending[index + 1 :]
                self._threshold = key
                break
        self._pending_lines = sum(len(hits.lines) for _, hits, _ in self._pending)

    @property
    def truncated(self) -> bool:
        """True when more units exist than ``limit``."""
        return self.total_units > self.limit

    def results(self) -> list[FileHits]:
        """The kept files in path order; together they hold at least ``min(limit, total)``
        units (the last one may hold more than fit)."""
        with self._lock:
            self._compact()
            return [hits for _, hits, _ in self._pending]


class ClosableTop:
    """A ``TopResults`` sink that a search stopped at its time budget closes: an engine thread
    still running (abandoned) adds nothing once the result is being built."""

    def __init__(self, top: TopResults) -> None:
        self._top = top
        self._lock = threading.Lock()
        self._closed = False

    def add(self, hits: FileHits, units: int) -> None:
        with self._lock:
            if not self._closed:
                self._top.add(hits, units)

    def close(self) -> None:
        with self._lock:
            self._closed = True
