"""File I/O under a PathPolicy: verified, bounded reads of regular files.

Shared by every tool group that reads file content (fs, text, image). Files are opened through
``PathPolicy.open`` (so the object read is the object checked) with ``O_NONBLOCK`` (so a FIFO
cannot hang the call), and must be regular files within the size cap.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from mcp_localtools import compat
from mcp_localtools.errors import (
    NotADirectory,
    NotAFile,
    NotFound,
    TooLarge,
    UnsupportedContent,
    from_os_error,
)
from mcp_localtools.files.entries import kind_of
from mcp_localtools.policy.paths import PathPolicy, ResolvedPath

__all__ = [
    "FileData",
    "decode_utf8",
    "open_regular_file",
    "read_open_file",
    "read_regular_file",
    "sha256_hex",
    "stat_path",
]

_CHUNK = 1024 * 1024


@dataclass(frozen=True, slots=True)
class FileData:
    """A whole regular file read into memory.

    Attributes:
        path: the absolute path that was read.
        data: the file's bytes.
        stat: ``fstat`` of the opened file (size in bytes, mode, mtime, ...).
    """

    path: Path
    data: bytes
    stat: os.stat_result


def read_regular_file(
    paths: PathPolicy,
    resolved: ResolvedPath,
    *,
    max_bytes: int,
    follow_symlinks: bool = True,
    head_only: bool = False,
) -> FileData:
    """Read a whole regular file of at most ``max_bytes`` bytes.

    Args:
        follow_symlinks: False refuses a final symlink even where the policy allows symlinks
            (``O_NOFOLLOW``, so the check cannot be raced).
        head_only: return the first ``max_bytes`` bytes of a larger file instead of refusing it
            (``len(data) < stat.st_size`` then tells the caller).

    Raises:
        NotFound: the file does not exist.
        NotAFile: it is a directory or not a regular file (FIFO, socket, device).
        TooLarge: it is larger than ``max_bytes`` (checked before reading, and again while
            reading in case it grows), unless ``head_only``.
        OutsideAllowedRoots, SymlinkRefused: refused by the policy.
        FileSystemError: any other OS error.
    """
    flags = os.O_RDONLY | compat.O_NONBLOCK | (0 if follow_symlinks else compat.O_NOFOLLOW)
    with paths.opened(resolved, flags) as fd:
        data, info = read_open_file(fd, resolved.path, max_bytes=max_bytes, head_only=head_only)
    return FileData(path=resolved.path, data=data, stat=info)


@contextmanager
def open_regular_file(paths: PathPolicy, resolved: ResolvedPath) -> Iterator[tuple[int, os.stat_result]]:
    """Open a regular file for reading through the policy (``O_NONBLOCK``, so a FIFO cannot hang
    the open), for callers that read parts of it (``os.pread``) instead of all of it.

    Yields:
        ``(fd, fstat)``; the descriptor is closed on exit.

    Raises:
        NotFound, NotAFile, OutsideAllowedRoots, SymlinkRefused, FileSystemError: as
        ``read_regular_file`` (no size limit).
    """
    with paths.opened(resolved, os.O_RDONLY | compat.O_NONBLOCK) as fd:
        try:
            info = os.fstat(fd)
        except OSError as exc:
            raise from_os_error(exc, str(resolved.path)) from exc
        if stat.S_ISDIR(info.st_mode):
            raise NotAFile(f"expected a file but got a directory: {resolved.path}")
        if not stat.S_ISREG(info.st_mode):
            raise NotAFile(f"expected a regular file: {resolved.path} is a {kind_of(info.st_mode)}")
        yield fd, info


def read_open_file(
    fd: int, display: Path | str, *, max_bytes: int, head_only: bool = False
) -> tuple[bytes, os.stat_result]:
    """Read the whole regular file open at ``fd`` (opened with ``O_NONBLOCK``, so a FIFO could
    not block the open); ``display`` names it in errors.

    Returns:
        ``(data, fstat)``. A file of the size ``fstat`` reports is read with one ``read`` call,
        so the bytes are never held twice.

    Raises:
        NotAFile, TooLarge, FileSystemError: as ``read_regular_file``.
    """
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise NotAFile(f"expected a file but got a directory: {display}")
        if not stat.S_ISREG(info.st_mode):
            raise NotAFile(f"expected a regular file: {display} is a {kind_of(info.st_mode)}")
        if info.st_size > max_bytes and not head_only:
            raise TooLarge(
                f"file exceeds maximum allowed size: {display} is {info.st_size} bytes, "
                f"the limit is {max_bytes}"
            )
        chunks: list[bytes] = []
        total = 0
        want = max(_CHUNK, info.st_size + 1)  # one read for the size fstat gave; more if it grew
        while chunk := os.read(fd, min(want, max_bytes + 1 - total)):
            total += len(chunk)
            if total > max_bytes and head_only:
                chunks.append(chunk[: len(chunk) - (total - max_bytes)])
                break
            if total > max_bytes:
                raise TooLarge(f"file exceeds maximum allowed size: {display} grew past {max_bytes} bytes")
            chunks.append(chunk)
    except OSError as exc:
        raise from_os_error(exc, str(display)) from exc
    return (chunks[0] if len(chunks) == 1 else b"".join(chunks)), info


def stat_path(paths: PathPolicy, resolved: ResolvedPath, *, follow: bool) -> os.stat_result | None:
    """``stat`` (``follow``) or ``lstat`` of a resolved path; None when nothing is there.

    On Linux the path is opened with ``O_PATH`` and verified first, so a component swapped for a
    symlink after ``resolve()`` cannot make us report on an object outside the roots.

    Raises:
        OutsideAllowedRoots, SymlinkRefused: refused by the policy.
        FileSystemError: any OS error other than "does not exist".
    """
    try:
        if not compat.O_PATH:  # pragma: no cover - not Linux
            return os.stat(resolved.path) if follow else os.lstat(resolved.path)
        flags = compat.O_PATH | (0 if follow else compat.O_NOFOLLOW)
        with paths.opened(resolved, flags) as fd:
            return os.fstat(fd)
    except (NotFound, NotADirectory):
        return None
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            return None
        raise from_os_error(exc, str(resolved.path)) from exc


def decode_utf8(data: bytes, path: Path | str, *, hint: str = 'use encoding "binary"') -> str:
    """Decode ``data`` as UTF-8 exactly (a BOM is kept as U+FEFF).

    Raises:
        UnsupportedContent: the bytes are not valid UTF-8; the message gives the byte offset.
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UnsupportedContent(
            f"not valid UTF-8 text: {path} (invalid byte at offset {exc.start}); {hint}"
        ) from exc


def sha256_hex(data: bytes) -> str:
    """The SHA-256 of ``data`` as 64 lowercase hex digits."""
    return hashlib.sha256(data).hexdigest()
