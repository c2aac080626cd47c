"""The cyclic garbage collector, paused while the command line starts.

Start-up creates some 140,000 objects (the SDK, pydantic's schemas, our modules) and frees few;
the collector's passes over them cost 5-10 % of a start's CPU. ``main`` pauses it
(``paused_collection``) until the server is built (``serve._build`` calls the pause's
``resume``, which ``main`` hands it as ``ns.started``) or, for the other commands, until the
command line is read; what start-up made is then frozen (``gc.freeze``: it lives as long as the
process), so later passes do not go through it either. The start-up's own garbage, about 1,000
objects and 0.3 MB of classes and functions made and dropped while modules were imported, stays
frozen with it.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["Pause", "paused_collection"]


class Pause:
    """The collector paused (unless it was already off when made)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._paused = gc.isenabled()
        self._freeze = gc.get_freeze_count() == 0  # never mix ours with what a caller froze
        self._froze = False
        if self._paused:
            gc.disable()

    def resume(self) -> None:
        """Freeze what start-up made and turn the collector back on, once (later calls, and a
        pause that found it off, do nothing); from any thread."""
        with self._lock:
            if not self._paused:
                return
            self._paused = False
            if self._freeze:
                gc.freeze()
                self._froze = True
            gc.enable()

    def close(self) -> None:
        """Leave the collector as the pause found it: on, and nothing of ours frozen, for a
        caller in the same process (tests, the Python API)."""
        self.resume()
        with self._lock:
            if self._froze:
                self._froze = False
                gc.unfreeze()


@contextmanager
def paused_collection() -> Iterator[Pause]:
    """The collector paused for the block (``Pause``), left as it was found at its end."""
    pause = Pause()
    try:
        yield pause
    finally:
        pause.close()
