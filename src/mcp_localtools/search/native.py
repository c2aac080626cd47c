"""The pure-Python engine: the fd-based walk of ``walk.py`` and RE2 on each file's bytes.

Used when no ripgrep is installed; slower, same results. The work runs in a worker thread that
checks a stop flag at every entry, so a cancelled or timed-out call stops walking promptly.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import anyio
import anyio.from_thread
import anyio.to_thread

from mcp_localtools import compat
from mcp_localtools.errors import NotAFile, TooLarge, ToolError, from_os_error
from mcp_localtools.files.read import read_open_file
from mcp_localtools.search.engine import ContentQuery, FileHits, ListingReport, Progress, Skipped, WalkFilters
from mcp_localtools.search.regex import ContentRegex
from mcp_localtools.search.walk import WalkEntry, Walker, error_reason

__all__ = ["NativeEngine"]

T = TypeVar("T")

_PROGRESS_EVERY = 0.25  # seconds
_FILE_FLAGS = os.O_RDONLY | compat.O_NOFOLLOW | compat.O_NONBLOCK | compat.O_CLOEXEC


class _Reporter:
    """Throttled progress from the worker thread to the event loop."""

    def __init__(self, progress: Progress, stop: threading.Event, what: str) -> None:
        self._progress = progress
        self._stop = stop
        self._what = what
        self._next = 0.0
        self.count = 0

    def tick(self) -> None:
        self.count += 1
        now = time.monotonic()
        if now >= self._next and not self._stop.is_set():
            self._next = now + _PROGRESS_EVERY
            anyio.from_thread.run(self._progress, self.count, f"{self.count} {self._what}")


async def _in_thread(body: Callable[[threading.Event], T]) -> T:
    stop = threading.Event()
    try:
        return await anyio.to_thread.run_sync(body, stop, abandon_on_cancel=True)
    finally:
        stop.set()


def _open_root(directory: Path) -> int:
    try:
        return os.open(directory, os.O_RDONLY | compat.O_DIRECTORY | compat.O_CLOEXEC)
    except OSError as exc:
        raise from_os_error(exc, str(directory)) from exc


def _read_text_file(entry: WalkEntry, max_size: int) -> bytes | None:
    """The bytes of a regular file of at most ``max_size`` bytes without a NUL, else None.

    Raises:
        OSError: the file cannot be opened or read.
    """
    fd = os.open(entry.name, _FILE_FLAGS, dir_fd=entry.dir_fd)
    try:
        data, _ = read_open_file(fd, entry.rel, max_bytes=max_size)
    except ToolError as exc:
        if isinstance(exc.__cause__, OSError):  # the OS refused: the file is skipped, with why
            raise exc.__cause__ from None
        if isinstance(exc, NotAFile | TooLarge):  # swapped for a FIFO, or grew: passed over
            return None
        raise
    finally:
        os.close(fd)
    return None if b"\x00" in data else data


class NativeEngine:
    """The pure-Python ``Engine``."""

    name = "python"

    async def search(
        self, query: ContentQuery, sink: Callable[[FileHits], None], progress: Progress
    ) -> ListingReport:
        regex = query.regex or ContentRegex(
            query.pattern, case_sensitive=query.case_sensitive, fixed_strings=query.fixed_strings
        )
        await progress(0, "searching (Python engine)")

        def body(stop: threading.Event) -> ListingReport:
            skipped: list[Skipped] = []
            reporter = _Reporter(progress, stop, "files searched")
            walker = Walker(
                query.filters,
                on_error=lambda rel, reason: skipped.append(Skipped(rel, reason)),
                max_file_size=query.max_file_size,
                stop=stop,
            )
            root = _open_root(query.directory)
            try:
                for entry in walker.walk(root):
                    if entry.kind != "file":
                        continue
                    reporter.tick()
                    try:
                        data = _read_text_file(entry, query.max_file_size)
                    except OSError as exc:
                        skipped.append(Skipped(entry.rel, error_reason(exc)))
                        continue
                    if data is None:
                        continue
                    if query.output == "lines":
                        count, lines = regex.lines(data, query.context_lines, query.max_lines)
                        if count:
                            sink(FileHits(entry.rel, count, lines))
                    elif query.output == "files":
                        if regex.any_line(data):
                            sink(FileHits(entry.rel, 1))
                    elif query.output == "occurrences":
                        if count := regex.occurrences(data):
                            sink(FileHits(entry.rel, count))
                    elif count := regex.count(data):
                        sink(FileHits(entry.rel, count))
            finally:
                os.close(root)
            return ListingReport(skipped=skipped, oversize=walker.oversize)

        return await _in_thread(body)

    async def list_files(
        self,
        directory: Path,
        filters: WalkFilters,
        sink: Callable[[str], None],
        progress: Progress,
        *,
        max_file_size: int | None = None,
    ) -> ListingReport:
        await progress(0, "listing files (Python engine)")

        def body(stop: threading.Event) -> ListingReport:
            report = ListingReport()
            reporter = _Reporter(progress, stop, "files found")
            walker = Walker(
                filters,
                on_error=lambda rel, reason: report.skipped.append(Skipped(rel, reason)),
                max_file_size=max_file_size,
                stop=stop,
            )
            root = _open_root(directory)
            try:
                for entry in walker.walk(root):
                    if entry.kind == "file":
                        reporter.tick()
                        sink(entry.rel)
            finally:
                os.close(root)
            report.oversize = walker.oversize
            return report

        return await _in_thread(body)
