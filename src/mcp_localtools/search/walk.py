"""The Python walk: descriptor-relative, never following a symlink, filtered as ripgrep filters.

Every directory is opened relative to its parent's descriptor with ``O_NOFOLLOW``, so a symlink
(or a directory swapped for one while the walk runs) is never entered, and nothing outside the
walk root is read. Which entries are visited is decided by ``ignore.decide``.
"""

from __future__ import annotations

import heapq
import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from mcp_localtools import compat
from mcp_localtools.files.entries import EntryType
from mcp_localtools.search.engine import WalkFilters
from mcp_localtools.search.ignore import IGNORE_FILES, Overrides, RuleChain, decide, read_rules

__all__ = ["DIR_FLAGS", "WalkEntry", "Walker", "error_reason", "open_below"]

DIR_FLAGS = os.O_RDONLY | compat.O_DIRECTORY | compat.O_NOFOLLOW | compat.O_CLOEXEC
"""``os.open`` flags for a directory of the walk: never through a symlink."""


def error_reason(exc: OSError) -> str:
    """The OS's words for an error, as ripgrep prints them (without the errno suffix)."""
    return exc.strerror or str(exc)


def open_below(root_fd: int, rel: str) -> int:
    """Open the directory ``rel`` (``/``-separated; ``""`` for the root itself) below the open
    directory ``root_fd``, one component at a time, never through a symlink.

    Returns:
        A new descriptor, which the caller closes.

    Raises:
        OSError: a component is missing, unreadable, a symlink or not a directory.
    """
    fd = os.dup(root_fd)
    for part in rel.split("/") if rel else ():
        try:
            child = os.open(part, DIR_FLAGS, dir_fd=fd)
        finally:
            os.close(fd)
        fd = child
    return fd


@dataclass(frozen=True, slots=True)
class WalkEntry:
    """A visited entry.

    Attributes:
        rel: path relative to the walk root, ``/``-separated.
        name: the entry's name.
        kind: file, directory, symlink or other (FIFO, socket, device).
        dir_fd: descriptor of the containing directory; valid until the walk moves on.
        size: a file's ``lstat`` size in bytes; 0 for the other kinds (not looked up).
    """

    rel: str
    name: str
    kind: EntryType
    dir_fd: int
    size: int


def _lexists(dir_fd: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return False
    return True


def _kind(entry: os.DirEntry[str]) -> EntryType:
    if entry.is_symlink():
        return "symlink"
    if entry.is_dir(follow_symlinks=False):
        return "directory"
    if entry.is_file(follow_symlinks=False):
        return "file"
    return "other"


class Walker:
    """Walks directories with one set of filters.

    Args:
        filters: what to visit.
        on_error: called with the relative path and the reason when a directory cannot be read.
        max_file_size: regular files larger than this many bytes are left out and counted in
            ``oversize``.
        stop: when set, the walk ends at the next entry.
    """

    def __init__(
        self,
        filters: WalkFilters,
        *,
        on_error: Callable[[str, str], None],
        max_file_size: int | None = None,
        stop: threading.Event | None = None,
    ) -> None:
        self.filters = filters
        self.oversize = 0
        self._on_error = on_error
        self._max_file_size = max_file_size
        self._stop = stop
        globs = filters.override_globs()
        self._overrides = Overrides(globs) if globs else None

    def read_directory(
        self, fd: int, rel: str, chain: RuleChain | None
    ) -> tuple[list[WalkEntry], RuleChain | None]:
        """The visited entries of the open directory ``fd`` (at ``rel``), sorted by name, and the
        ignore-rule chain its subdirectories inherit."""
        try:
            with os.scandir(fd) as scan:
                raw = sorted(scan, key=lambda entry: entry.name)
        except OSError as exc:
            self._on_error(rel or ".", error_reason(exc))
            return [], chain
        if self.filters.respect_ignore_files:
            chain = read_rules(fd, rel, {entry.name for entry in raw}, chain)
        kept: list[WalkEntry] = []
        for entry in raw:
            child = f"{rel}/{entry.name}" if rel else entry.name
            try:
                kind = _kind(entry)
                if not decide(child, entry.name, kind == "directory", self.filters, self._overrides, chain):
                    continue
                size = entry.stat(follow_symlinks=False).st_size if kind == "file" else 0
            except OSError:  # vanished while we looked
                continue
            if self._max_file_size is not None and size > self._max_file_size:
                self.oversize += 1
                continue
            kept.append(WalkEntry(child, entry.name, kind, fd, size))
        return kept, chain

    def read_directory_top(
        self, fd: int, rel: str, chain: RuleChain | None, limit: int
    ) -> tuple[list[WalkEntry], RuleChain | None, int]:
        """Like ``read_directory``, but keeps only the first ``limit`` visited entries by name,
        in memory O(``limit``) whatever the directory's size (a directory of 1,000,000 entries
        cost +927 MiB when every entry was kept); only those are stat'ed.

        Returns:
            ``(the first limit entries in name order, the chain, how many entries are visited)``.
        """
        if self.filters.respect_ignore_files:
            present = {name for name in (*IGNORE_FILES, ".git") if _lexists(fd, name)}
            chain = read_rules(fd, rel, present, chain)
        total = 0

        def visited(scan: Iterator[os.DirEntry[str]]) -> Iterator[tuple[str, EntryType]]:
            nonlocal total
            for entry in scan:
                child = f"{rel}/{entry.name}" if rel else entry.name
                try:
                    kind = _kind(entry)
                except OSError:  # vanished while we looked
                    continue
                if decide(child, entry.name, kind == "directory", self.filters, self._overrides, chain):
                    total += 1
                    yield entry.name, kind

        try:
            with os.scandir(fd) as scan:
                entries = visited(scan)
                top = heapq.nsmallest(limit, entries)
                for _ in entries:  # nsmallest(0, ...) reads nothing: count the rest all the same
                    pass
        except OSError as exc:
            self._on_error(rel or ".", error_reason(exc))
            return [], chain, 0
        kept: list[WalkEntry] = []
        for name, kind in top:
            try:
                size = os.stat(name, dir_fd=fd, follow_symlinks=False).st_size if kind == "file" else 0
            except OSError:
                total -= 1
                continue
            kept.append(WalkEntry(f"{rel}/{name}" if rel else name, name, kind, fd, size))
        return kept, chain, total

    def open_directory(self, entry: WalkEntry) -> int | None:
        """Open a visited directory entry (never through a symlink); None when it cannot be."""
        try:
            return os.open(entry.name, DIR_FLAGS, dir_fd=entry.dir_fd)
        except OSError as exc:
            self._on_error(entry.rel, error_reason(exc))
            return None

    def walk(self, root_fd: int) -> Iterator[WalkEntry]:
        """Every visited entry below the open directory ``root_fd``, depth first, each
        directory's entries in name order. The caller keeps ``root_fd`` open."""
        fd = os.dup(root_fd)
        entries, chain = self.read_directory(fd, "", None)
        stack = [(fd, iter(entries), chain)]
        try:
            while stack:
                if self._stop is not None and self._stop.is_set():
                    return
                fd, pending, chain = stack[-1]
                entry = next(pending, None)
                if entry is None:
                    os.close(fd)
                    stack.pop()
                    continue
                yield entry
                if entry.kind == "directory":
                    child = self.open_directory(entry)
                    if child is not None:
                        child_entries, child_chain = self.read_directory(child, entry.rel, chain)
                        stack.append((child, iter(child_entries), child_chain))
        finally:
            for frame in stack:
                os.close(frame[0])
