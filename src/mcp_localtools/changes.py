"""Change notices: a tool that changed files says so, and whoever keeps derived state listens.

The code index (``codeintel``) subscribes; after every successful call of a tool that may write,
the registry builder (``tools/__init__.py``) notifies the paths the call named, or None when a
call may have changed anything (a command). No tool group depends on a listener.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

__all__ = ["ChangeFeed", "Listener"]

logger = logging.getLogger(__name__)

Listener = Callable[[Sequence[Path] | None], None]
"""Called with the absolute paths that may have changed (files or directories), or None when
anything may have."""


class ChangeFeed:
    """A list of listeners, called in order; a listener that raises is logged and skipped."""

    def __init__(self) -> None:
        self._listeners: list[Listener] = []
        self._lock = threading.Lock()

    def subscribe(self, listener: Listener) -> None:
        """Call ``listener`` on every notice from now on."""
        with self._lock:
            self._listeners.append(listener)

    def notify(self, paths: Sequence[Path] | None) -> None:
        """Tell every listener that ``paths`` (or, with None, anything) may have changed. Cheap:
        listeners only take note; the work happens when their state is next used."""
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(paths)
            except Exception:
                logger.exception("a change listener failed")
