"""Memory given back when the code tools go unused: the index stays on disk, its copies in memory go.

While the code tools are in use, an index keeps what answers need in memory (its vectors, its
reference graph and the ranks made from it, the tokenizer's remembered words, the embedding model,
SQLite's page cache). ``IdleRelease`` calls ``release`` once ``[index] idle_seconds`` have passed
since the last answer or build; the next answer loads what it needs again (about a second on a
large project). ``give_back`` then collects garbage and, on glibc, asks ``malloc_trim(0)`` to
return the freed heap to the OS (a freed Python heap otherwise stays counted in the process's
anonymous memory, ``RssAnon``); elsewhere it only collects.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gc
import logging
import sys
import threading
import time
from collections.abc import Callable

__all__ = ["IdleRelease", "give_back"]

logger = logging.getLogger(__name__)


if sys.platform == "linux":  # glibc's malloc_trim; musl and other platforms have none

    @functools.cache
    def _malloc_trim() -> Callable[[int], int] | None:
        """glibc's ``malloc_trim``, or None (another C library)."""
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
            trim: Callable[[int], int] = libc.malloc_trim
        except (OSError, AttributeError):
            return None
        return trim

else:  # pragma: no cover - not Linux

    def _malloc_trim() -> Callable[[int], int] | None:
        """None: no ``malloc_trim`` here."""
        return None


def give_back() -> None:
    """Collect garbage and return the free heap to the OS where the C library can (glibc)."""
    gc.collect()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


class IdleRelease:
    """Calls ``release`` once ``seconds`` have passed since the last ``touch`` (a thread of its
    own, started on the first touch; one call per idle period).

    Args:
        seconds: the idle time before a release.
        release: what frees the memory (its exceptions are logged).
    """

    def __init__(self, seconds: float, release: Callable[[], None]) -> None:
        self.seconds = seconds
        self._release = release
        self._condition = threading.Condition()
        self._last = 0.0
        self._armed = False
        self._thread: threading.Thread | None = None

    def touch(self) -> None:
        """Note a use now: the release waits for ``seconds`` more."""
        with self._condition:
            self._last = time.monotonic()
            self._armed = True
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="code index idle release", daemon=True)
                self._thread.start()
            self._condition.notify()

    def _run(self) -> None:
        while True:
            with self._condition:
                while not self._armed:
                    self._condition.wait()
                remaining = self._last + self.seconds - time.monotonic()
                if remaining > 0:
                    self._condition.wait(remaining)
                    continue
                self._armed = False
            try:
                self._release()
            except Exception:
                logger.exception("releasing the code index's memory failed")
