"""Keeping the first results in path order while an engine streams them in any order.

An engine reports files as it finishes them, in no order, and a search may match far more than
a call returns. ``TopResults`` keeps only what can still be among the first ``limit`` result
units (files, or matching lines) in path order, so memory stays bounded by the limit while the
totals count everything.
"""

from __future__ import annotations

import bisect
import threading

from mcp_localtools.search.engine import FileHits

__all__ = ["TopResults", "path_key"]


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
        self._keys: list[tuple[str, ...]] = []
        self._kept: dict[tuple[str, ...], tuple[FileHits, int]] = {}
        self._kept_units = 0
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
            if self._kept_units >= self.limit and key > self._keys[-1]:
                return
            bisect.insort(self._keys, key)
            self._kept[key] = (hits, units)
            self._kept_units += units
            while self._kept_units - self._kept[self._keys[-1]][1] >= self.limit:
                self._kept_units -= self._kept.pop(self._keys.pop())[1]

    @property
    def truncated(self) -> bool:
        """True when more units exist than ``limit``."""
        return self.total_units > self.limit

    def results(self) -> list[FileHits]:
        """The kept files in path order; together they hold at least ``min(limit, total)``
        units (the last one may hold more than fit)."""
        return [self._kept[key][0] for key in self._keys]
