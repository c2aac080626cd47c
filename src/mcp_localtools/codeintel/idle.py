"""Memory given back when the code tools go unused: the index stays on disk, its copies in memory go.

While the code tools are in use, an index keeps what answers need in memory (its vectors, its
reference graph and the ranks made from it, the tokenizer's remembered words, the embedding model,
SQLite's page cache). ``IdleRelease`` calls ``release`` once ``[index] idle_seconds`` have passed
since the last answer or build; the next answer loads what it needs again (about a second on a
large project). ``give_back`` then collects garbage and, on glibc, asks ``malloc_trim(0)`` to
return the freed heap to the OS (a freed Python heap otherwise stays counted in the process's
anonymous memory, ``RssAnon``); elsewhere it only collects.

On glibc, ``fixed_mmap_threshold`` (called when a workspace's code indexes are made) also fixes
``M_MMAP_THRESHOLD`` at its default, 128 KiB: every larger block (a vector matrix, a graph's
arrays, a batch's embeddings) is then its own mapping, unmapped when freed. By default glibc raises
the threshold after such a block is freed, and the next ones come from the heaps of the threads
that made them (the build's and warm-up's), where ``malloc_trim`` leaves about 30 MiB behind on
Django (measured: 75 MiB of ``RssAnon`` after a release instead of 48).
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
from typing import Any

__all__ = ["IdleRelease", "fixed_mmap_threshold", "give_back"]

logger = logging.getLogger(__name__)


_M_MMAP_THRESHOLD = -3
"""glibc's ``mallopt`` parameter (malloc.h)."""
_MMAP_THRESHOLD = 128 * 1024
"""glibc's default threshold, kept fixed."""

if sys.platform == "linux":  # glibc's malloc_trim and mallopt; musl and other platforms lack them

    @functools.cache
    def _glibc() -> Any:
        """The C library when it is glibc (it has ``malloc_trim``), else None."""
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
            libc.malloc_trim, libc.mallopt  # noqa: B018 - musl has neither
        except (OSError, AttributeError):
            return None
        return libc

else:  # pragma: no cover - not Linux

    def _glibc() -> Any:
        """None: no glibc here."""
        return None


def fixed_mmap_threshold() -> None:
    """On glibc, keep ``M_MMAP_THRESHOLD`` at 128 KiB for the whole process (see the module
    docstring); elsewhere nothing."""
    libc = _glibc()
    if libc is not None:
        libc.mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)


def give_back() -> None:
    """Collect garbage and return the free heap to the OS where the C library can (glibc)."""
    gc.collect()
    libc = _glibc()
    if libc is not None:
        libc.malloc_trim(0)


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
