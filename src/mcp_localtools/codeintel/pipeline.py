"""An update analysed by worker processes: reading, analysing, embedding and writing overlap.

The updating thread reads the next batches of files (through the path policy: ``check_file``)
while the workers of an ``AnalysisPool`` analyse the batches sent before, then embeds and writes
each batch in order, ``AHEAD`` batches behind the reading. A file that another thread wrote
between its reading and its batch's writing (``CodeIndex.refresh``, for a result's file) is left
as that thread wrote it: its version is the newer.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Protocol

from mcp_localtools.codeintel.analysis import Analysis, AnalysisPool
from mcp_localtools.codeintel.records import FileIdentity, FileRecord

__all__ = ["AHEAD", "Updated", "Writer", "update_in_workers"]

AHEAD = 3
"""Batches sent to the workers ahead of the one being written."""


class Writer(Protocol):
    """What the pipeline needs of a ``CodeIndex``."""

    updating: threading.RLock

    def check_file(self, rel: str) -> tuple[bytes, FileIdentity] | str | None: ...

    def known(self, rel: str) -> FileIdentity | None: ...

    def forget_file(self, rel: str) -> None: ...

    def write_analysed(self, batch: list[tuple[FileRecord, Analysis]]) -> int: ...


@dataclass(frozen=True, slots=True)
class _Sent:
    rel: str
    data: bytes
    identity: FileIdentity
    known: FileIdentity | None  # as indexed when it was read


@dataclass(slots=True)
class Updated:
    """How far an update went: ``done`` files of batches written (the rest, after a failure, is
    still to do), ``indexed`` of them (re)indexed."""

    done: int = 0
    indexed: int = 0


def update_in_workers(
    index: Writer,
    changed: Sequence[str],
    progress: Callable[[int], None],
    pool: AnalysisPool,
    batch: int,
    updated: Updated,
) -> None:
    """Index ``changed`` again in batches of ``batch`` files analysed by ``pool``; ``updated``
    and ``progress(done)`` follow each written batch.

    Raises:
        concurrent.futures.process.BrokenProcessPool: a worker died (``updated`` says how far it went).
    """
    pending: deque[tuple[list[_Sent], list[Future[list[Analysis | None]]]]] = deque()
    for start in range(0, len(changed), batch):
        with index.updating:
            sent = [item for rel in changed[start : start + batch] if (item := _send(index, rel))]
        pending.append((sent, pool.submit([(item.rel, item.data) for item in sent])))
        while pending and (len(pending) > AHEAD or start + batch >= len(changed)):
            updated.indexed += _receive(index, *pending.popleft())
            updated.done = min(updated.done + batch, len(changed))
            progress(updated.done)


def _send(index: Writer, rel: str) -> _Sent | None:
    """The file to analyse, or None (unchanged, or not indexable: then forgotten)."""
    checked = index.check_file(rel)
    known = index.known(rel)
    if isinstance(checked, tuple):
        return _Sent(rel, checked[0], checked[1], known)
    if checked is None and known is not None:
        index.forget_file(rel)
    return None


def _receive(index: Writer, sent: list[_Sent], futures: list[Future[list[Analysis | None]]]) -> int:
    """Embed and write the analysed files of one batch but those written meanwhile."""
    found = [result for future in futures for result in future.result()]
    with index.updating:
        batch = []
        for item, result in zip(sent, found, strict=True):
            now = index.known(item.rel)
            if now != item.known:
                continue
            if result is None:
                if now is not None:
                    index.forget_file(item.rel)
                continue
            batch.append((FileRecord(item.rel, item.identity, result.language, result.lines), result))
        return index.write_analysed(batch)
