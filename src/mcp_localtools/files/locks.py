"""One lock per file for read-modify-write calls, shared by every tool that edits a file."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["FileLocks"]


@dataclass
class FileLocks:
    """One lock per file for read-modify-write calls (text edits, writefile with append or
    expectedSha256), so two such calls on one file run one after the other instead of losing an
    update. One instance per server, shared by the tool groups (no module-level state); a lock
    lives only while a call holds or waits for it. Keys are real paths (``ResolvedPath.real``).
    """

    _guard: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _locks: dict[Path, tuple[threading.Lock, int]] = field(default_factory=dict, init=False, repr=False)

    @contextmanager
    def hold(self, key: Path) -> Iterator[None]:
        """Hold the lock of ``key`` for the duration of the block."""
        with self._guard:
            lock, users = self._locks.get(key, (threading.Lock(), 0))
            self._locks[key] = (lock, users + 1)
        try:
            with lock:
                yield
        finally:
            with self._guard:
                lock, users = self._locks[key]
                if users == 1:
                    del self._locks[key]
                else:
                    self._locks[key] = (lock, users - 1)
