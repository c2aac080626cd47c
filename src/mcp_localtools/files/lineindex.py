"""Line index of a regular file: windows of lines at O(window) cost, and the file's SHA-256.

A scan of a file version (device, inode, size, mtime, ctime) records, for every ``BLOCK`` bytes,
how many newlines come before it (and hashes the file when asked). A line's byte offset is then
found by a bisection over those counts and a bisection inside one block (``bytes.count``, in C),
so a window anywhere in a file of any size costs one block read plus the window's own bytes.
The scan is lazy: an index may cover only the file's first bytes (``LineIndex.complete`` false)
and is extended as far as a window needs (``LineIndex.ensure``), so the head of a file never read
costs its own bytes (``files.linetail`` finds a tail by reading backwards from the end).
Indexes are kept in a small LRU cache (``LineIndexes``, one per ``Workspace``); a new version
of a file (same size, new mtime or ctime) is a different key, so a stale index is never used.

Reads go through a descriptor opened by ``files.read.open_regular_file`` (verified by the
path policy); this module only ``pread``s from it.
"""

from __future__ import annotations

import hashlib
import os
import sys
import threading
from array import array
from bisect import bisect_left
from dataclasses import dataclass, field

from mcp_localtools.errors import FileSystemError, from_os_error

__all__ = [
    "BLOCK",
    "HEAD_BYTES",
    "SCAN",
    "LineIndex",
    "Version",
    "line_index",
    "pread",
    "read_at",
    "scan_stable",
    "unscanned",
    "utf8_prefix",
    "version_of",
]

BLOCK = 64 * 1024
"""Granularity of the index (bytes): a line is located by scanning at most one block."""
SCAN = 16 * BLOCK
"""Bytes read per ``pread`` while scanning (1 MiB)."""
HEAD_BYTES = 4096
"""The first bytes of the file, kept for content sniffing."""
_RETRIES = 3

Version = tuple[int, int, int, int, int]
"""A file version: device, inode, size, mtime and ctime (nanoseconds)."""


@dataclass(slots=True)
class LineIndex:
    """What the scans of a file version learned.

    Attributes:
        size: the file's size in bytes.
        head: the first ``HEAD_BYTES`` bytes (for MIME and text sniffing).
        newlines: ``newlines[k]`` is the number of ``\\n`` bytes in ``[0, k * BLOCK)``; the last
            entry is the count for the bytes scanned so far (the whole file once ``complete``).
        ends_with_newline: the last byte is ``\\n`` (false for an empty file; known once
            ``complete``).
        last_block: digest of the bytes of the block that holds the last byte (from
            ``last_block_start`` to ``size``): a grown file whose old last block still matches
            (and whose head does) is indexed from there on only (``LineIndexes.index``).
        sha256: SHA-256 of the whole file (64 lowercase hex digits), or None until someone asks
            (``LineIndexes.sha256``): hashing is 7 x the cost of counting lines.
        scanned: bytes counted so far from the start (a multiple of ``BLOCK``, or ``size``).
        version: the file version the index is of (None: not checked while extending).
    """

    size: int
    head: bytes
    newlines: array[int]
    ends_with_newline: bool
    last_block: bytes = b""
    sha256: str | None = None
    scanned: int = -1
    version: Version | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.scanned < 0:
            self.scanned = self.size

    @property
    def complete(self) -> bool:
        """Every byte of the file has been counted (``total_lines`` is known)."""
        return self.scanned >= self.size

    @property
    def total_lines(self) -> int | None:
        """Lines in the file (a final line without newline counts, an empty file has none), or
        None while the index is not ``complete``."""
        if not self.complete:
            return None
        return self.newlines[-1] + (1 if self.size and not self.ends_with_newline else 0)

    @property
    def last_block_start(self) -> int:
        """Byte offset of the block that holds the file's last byte (0 for an empty file)."""
        return max(0, (self.size - 1) // BLOCK * BLOCK)

    def ensure(self, fd: int, line: int) -> int:
        """Count lines of the file open at ``fd`` until the start of the 0-based ``line`` is
        known (or the whole file is counted), reading forward from where the last scan stopped.

        Returns:
            The bytes this call read (0 when the index already covered ``line``).

        Raises:
            FileSystemError: the read failed, or the file changed (another version) meanwhile.
        """
        if self.complete or self.newlines[-1] >= line:
            return 0
        read = 0
        with self._lock:
            while not self.complete and self.newlines[-1] < line:
                read += self._count_more(fd)
        return read

    def _count_more(self, fd: int) -> int:
        """Count the next piece of the file (doubling from ``BLOCK`` up to ``SCAN`` bytes)."""
        position = self.scanned
        want = min(SCAN, max(BLOCK, position), self.size - position)
        chunk = read_at(fd, want, position)
        if len(chunk) < want or (self.version is not None and version_of(_fstat(fd)) != self.version):
            raise FileSystemError("the file changed while it was being read; read it again")
        count = self.newlines[-1]
        for offset in range(0, len(chunk), BLOCK):
            count += chunk.count(b"\n", offset, offset + BLOCK)
            self.newlines.append(count)
        self.scanned = position + len(chunk)
        if self.complete:
            self.ends_with_newline = chunk[-1:] == b"\n"
            start = self.last_block_start
            self.last_block = _digest(
                chunk[start - position :] if start >= position else read_at(fd, self.size - start, start)
            )
        return len(chunk)

    def line_start(self, fd: int, line: int) -> int:
        """Byte offset where the 0-based ``line`` starts (``size`` for ``line >= total_lines``).

        Reads at most one ``BLOCK`` of the file open at ``fd`` when the index covers ``line``
        (else it is extended first: ``ensure``).

        Raises:
            FileSystemError: the read failed, or the file no longer matches the index.
        """
        if line <= 0:
            return 0
        self.ensure(fd, line)
        if line > self.newlines[-1]:
            return self.size
        block = bisect_left(self.newlines, line) - 1  # newlines[block] < line <= newlines[block + 1]
        want = line - self.newlines[block]
        data = read_at(fd, BLOCK, block * BLOCK)
        return block * BLOCK + _nth_newline(data, want) + 1


def _nth_newline(data: bytes, nth: int) -> int:
    """Offset in ``data`` of its ``nth`` (1-based) newline: a bisection that counts each byte
    about twice in all (``bytes.count`` of the half still in question), then ``find`` over the
    last few hundred bytes.

    Raises:
        FileSystemError: ``data`` holds fewer newlines (the file changed under the index).
    """
    low, high, before = 0, len(data), 0  # the nth newline is in data[low:high]; before: in data[:low]
    while high - low > 512:
        middle = (low + high) // 2
        count = data.count(b"\n", low, middle)
        if before + count >= nth:
            high = middle
        else:
            low, before = middle, before + count
    at = low - 1
    for _ in range(nth - before):
        at = data.find(b"\n", at + 1, high)
        if at < 0:
            raise FileSystemError("the file changed while it was being read; read it again")
    return at


def pread(fd: int, count: int, offset: int) -> bytes:
    """Up to ``count`` bytes at ``offset`` of the file open at ``fd`` (raises ``OSError``).

    Windows has no ``os.pread``: there the descriptor's position is moved (each read here has
    a descriptor of its own).
    """
    if sys.platform == "win32":
        os.lseek(fd, offset, os.SEEK_SET)
        data = os.read(fd, count)
    else:
        data = os.pread(fd, count, offset)
    return data


def read_at(fd: int, count: int, offset: int) -> bytes:
    """``pread``, its ``OSError`` raised as the matching ``ToolError``."""
    try:
        return pread(fd, count, offset)
    except OSError as exc:
        raise from_os_error(exc, f"descriptor {fd}") from exc


def _fstat(fd: int) -> os.stat_result:
    try:
        return os.fstat(fd)
    except OSError as exc:
        raise from_os_error(exc, f"descriptor {fd}") from exc


def version_of(info: os.stat_result) -> Version:
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


def line_index(fd: int, info: os.stat_result, display: str, *, sha256: bool = True) -> LineIndex:
    """The index of the regular file open at ``fd`` whose ``fstat`` is ``info``, by one scan
    (counting lines, and hashing the file when ``sha256``; O(file), in the calling thread);
    ``LineIndexes.index`` keeps it.

    Args:
        display: the file's name for error messages.

    Raises:
        FileSystemError: reading failed, or the file kept changing while it was scanned.
    """
    return scan_stable(fd, info, display, None, sha256=sha256)[1]


def scan_stable(
    fd: int, info: os.stat_result, display: str, grown: LineIndex | None, *, sha256: bool
) -> tuple[Version, LineIndex]:
    """``(version, index)`` of a scan during which the file did not change: from ``grown``'s
    last block on when it is an index of an earlier, shorter version that is still a prefix of
    the file, else from the start."""
    key = version_of(info)
    for _ in range(_RETRIES):
        index = None
        if grown is not None and not sha256 and grown.size < info.st_size:
            index = _extend(fd, grown)
        if index is None:
            index = _scan(fd, sha256=sha256)
        try:
            after = os.fstat(fd)
        except OSError as exc:
            raise from_os_error(exc, display) from exc
        if version_of(after) == key and index.size == info.st_size:
            return key, index
        key, info = version_of(after), after
    raise FileSystemError(f"{display} kept changing while it was being read; read it again later")


def unscanned(fd: int, info: os.stat_result) -> LineIndex:
    """An index of the file open at ``fd`` that has counted nothing yet (its head read)."""
    head = read_at(fd, HEAD_BYTES, 0)
    return LineIndex(
        size=info.st_size,
        head=head,
        newlines=array("q", [0]),
        ends_with_newline=False,
        scanned=0,
        version=version_of(info),
    )


def _extend(fd: int, old: LineIndex) -> LineIndex | None:
    """``old`` extended over what was appended to its file since, or None when the file's head
    or its old last block changed (then it must be scanned again)."""
    head = read_at(fd, HEAD_BYTES, 0)
    if head[: len(old.head)] != old.head:
        return None
    start = old.last_block_start
    if _digest(read_at(fd, old.size - start, start)) != old.last_block:
        return None
    return _scan(fd, sha256=False, start=start, prefix=old.newlines[: start // BLOCK + 1], head=head)


def _scan(
    fd: int, *, sha256: bool, start: int = 0, prefix: array[int] | None = None, head: bytes | None = None
) -> LineIndex:
    """Count the file's newlines per block from ``start`` (a block boundary; ``prefix``: the
    counts before it), hashing the file when ``sha256`` (then ``start`` is 0), reading
    ``SCAN`` bytes at a time."""
    digest = hashlib.sha256() if sha256 else None
    newlines = array("q", [0]) if prefix is None else array("q", prefix)
    count = newlines[-1]
    last = b""
    position = start
    while True:
        chunk = read_at(fd, SCAN, position)
        if not chunk:
            break
        if head is None:
            head = chunk[:HEAD_BYTES]
        if digest is not None:
            digest.update(chunk)
        # chunk starts on a block boundary (SCAN is a multiple of BLOCK, and only the last
        # read can be short), so its blocks are the file's.
        for offset in range(0, len(chunk), BLOCK):
            count += chunk.count(b"\n", offset, offset + BLOCK)
            newlines.append(count)
        position += len(chunk)
        last = chunk[-BLOCK:]
        if len(chunk) < SCAN:
            break
    index = LineIndex(
        size=position,
        head=head or b"",
        newlines=newlines,
        ends_with_newline=last[-1:] == b"\n",
        sha256=digest.hexdigest() if digest is not None else None,
    )
    if position > start:
        index.last_block = _digest(read_at(fd, position - index.last_block_start, index.last_block_start))
    return index


def utf8_prefix(data: bytes) -> bytes:
    """``data`` without an incomplete UTF-8 sequence at its end (bytes cut mid-character).

    Invalid bytes are left for the caller's strict decode to report.
    """
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte & 0xC0 != 0x80:  # ASCII or a lead byte: the last character starts here
            need = 2 if byte >> 5 == 0b110 else 3 if byte >> 4 == 0b1110 else 4 if byte >> 3 == 0b11110 else 1
            return data[:-back] if need > back else data
    return data
