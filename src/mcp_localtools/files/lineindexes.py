"""The line indexes of a workspace: a small LRU cache of ``LineIndex`` by file version (device,
inode, size, mtime, ctime), bounded in entries and bytes; an index of a file that only grew is
extended, a new version of a file is a new key, so a stale index is never used; the SHA-256 of a
version, computed once."""

from __future__ import annotations

import hashlib
import os
import sys
import threading
from collections import OrderedDict

from mcp_localtools.errors import FileSystemError, from_os_error
from mcp_localtools.files.lineindex import (
    BLOCK,
    SCAN,
    LineIndex,
    Version,
    read_at,
    scan_stable,
    unscanned,
    version_of,
)

__all__ = ["LineIndexes"]

_CACHE_ENTRIES = 64
_CACHE_BYTES = 32 * 1024 * 1024
"""Bounds of the cache: entries, and bytes of index arrays (8 bytes per 64 KiB of file)."""


class LineIndexes:
    """The line indexes of recently read file versions: an LRU cache bounded by entries and by
    the bytes of their newline counts, safe across threads. The ``Workspace`` owns one.

    A version not in the cache whose file (same device and inode) has an index of a shorter
    version is taken to have grown (a log being appended to): when the old head and last block
    are unchanged, only the bytes from that block on are scanned. A file rewritten in place
    with other bytes before its old last block is not detected this way: the same cost/trust
    trade-off as ``tail -f``; the SHA-256, when asked for, is always of the whole file.
    """

    def __init__(self, max_entries: int = _CACHE_ENTRIES, max_bytes: int = _CACHE_BYTES) -> None:
        self._max_entries = max_entries
        self._max_bytes = max_bytes
        self._cache: OrderedDict[Version, LineIndex] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._cache)

    def clear(self) -> None:
        """Forget every cached index."""
        with self._lock:
            self._cache.clear()
            self._bytes = 0

    def index(
        self, fd: int, info: os.stat_result, display: str, *, sha256: bool = False, count: bool = True
    ) -> LineIndex:
        """The index of the file open at ``fd`` (``fstat``: ``info``): cached, extended from the
        index of an earlier version the file grew from, or built by one scan.

        Args:
            sha256: the index's ``sha256`` is wanted too (computed now when it is not known).
            count: every line must be counted now (``total_lines`` known); when false, a version
                not seen before gets an index of its head only (O(1)), counted further as windows
                need (``LineIndex.ensure``); one that grew from a counted version is still
                extended (what was appended).

        Raises:
            FileSystemError: as ``line_index``.
        """
        version = version_of(info)
        with self._lock:
            found = self._cache.get(version)
            if found is not None:
                self._cache.move_to_end(version)
            grown = None if found is not None else self._shorter(version)
        if found is not None:
            if (count or sha256) and not found.complete:
                found.ensure(fd, sys.maxsize)
            if sha256 and found.sha256 is None:
                self.sha256(fd, found, display)
            return found
        if count or sha256 or grown is not None:
            key, index = scan_stable(fd, info, display, grown, sha256=sha256)
        else:
            key, index = version, unscanned(fd, info)
        with self._lock:
            if key not in self._cache:
                self._cache[key] = index
                self._bytes += _array_bytes(index)
            while len(self._cache) > self._max_entries or (
                self._bytes > self._max_bytes and len(self._cache) > 1
            ):
                _, old = self._cache.popitem(last=False)
                self._bytes -= _array_bytes(old)
        if sha256 and index.sha256 is None:
            self.sha256(fd, index, display)
        return index

    def _shorter(self, version: Version) -> LineIndex | None:
        """The cached complete index of the longest shorter version of the same file (device,
        inode)."""
        best: LineIndex | None = None
        for key, index in self._cache.items():
            if (
                index.complete
                and key[:2] == version[:2]
                and index.size < version[2]
                and (best is None or index.size > best.size)
            ):
                best = index
        return best

    def sha256(self, fd: int, index: LineIndex, display: str) -> str:
        """``index.sha256``, computed now by one read of the file open at ``fd`` when it is not
        known yet (O(file), in the calling thread), and kept in ``index``.

        Raises:
            FileSystemError: reading failed, or the file changed (another version) meanwhile.
        """
        if index.sha256 is not None:
            return index.sha256
        try:
            before = os.fstat(fd)
        except OSError as exc:
            raise from_os_error(exc, display) from exc
        digest = hashlib.sha256()
        position = 0
        while chunk := read_at(fd, SCAN, position):
            digest.update(chunk)
            position += len(chunk)
        try:
            after = os.fstat(fd)
        except OSError as exc:
            raise from_os_error(exc, display) from exc
        if version_of(after) != version_of(before) or position != index.size:
            raise FileSystemError(f"{display} changed while it was being read; read it again")
        index.sha256 = digest.hexdigest()
        return index.sha256


def _array_bytes(index: LineIndex) -> int:
    """What ``index``'s newline counts take once complete (bytes): charged when it is cached."""
    return index.newlines.itemsize * (index.size // BLOCK + 2)
