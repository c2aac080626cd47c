"""Copies and moves between verified directories: descriptor-based, never following a symlink,
and never leaving a partial destination behind.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
from dataclasses import dataclass, field
from typing import Literal

from mcp_localtools import compat
from mcp_localtools.errors import (
    AlreadyExists,
    FileSystemError,
    InvalidArguments,
    from_os_error,
)
from mcp_localtools.files.atomic import CHUNK_BYTES, rename_noclobber, stop_if_cancelled, temp_name
from mcp_localtools.files.owner import adopt_new_directory, adopt_owner, safe_mode
from mcp_localtools.files.parents import DIR_FLAGS, ParentDir

__all__ = ["CopyStats", "MoveMethod", "copy_entry", "copy_into_place", "move_entry", "remove_entry"]


_MAX_DEPTH = 256


MoveMethod = Literal["rename", "copyAndRemove"]


@dataclass
class CopyStats:
    """What a copy did: files and bytes copied, special files skipped."""

    files: int = 0
    bytes: int = 0
    skipped: list[str] = field(default_factory=list)


def _copy_file(src_dir: int, src_name: str, dst_dir: int, dst_name: str, info: os.stat_result) -> int:
    src = os.open(
        src_name, os.O_RDONLY | compat.O_NOFOLLOW | compat.O_NONBLOCK | compat.O_CLOEXEC, dir_fd=src_dir
    )
    try:
        dst = os.open(
            dst_name,
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | compat.O_NOFOLLOW | compat.O_CLOEXEC,
            0o600,
            dir_fd=dst_dir,
        )
        try:
            copied = 0
            while chunk := os.read(src, CHUNK_BYTES):
                view = memoryview(chunk)
                while view:
                    view = view[os.write(dst, view) :]
                copied += len(chunk)
            compat.fchmod(dst, safe_mode(stat.S_IMODE(info.st_mode)))
            adopt_owner(dst, dst_dir)
            os.utime(dst, ns=(info.st_atime_ns, info.st_mtime_ns))
            os.fsync(dst)
        finally:
            os.close(dst)
    finally:
        os.close(src)
    return copied


def copy_entry(
    src_dir: int,
    src_name: str,
    dst_dir: int,
    dst_name: str,
    stats: CopyStats,
    *,
    display: str,
    depth: int = 0,
) -> None:
    """Copy one entry (a file, a symlink as a symlink, or a directory tree) between two
    verified directories, descending only through ``O_NOFOLLOW`` descriptors. Mode and mtime
    are kept; FIFOs, sockets and devices are skipped and listed in ``stats.skipped``.

    Raises:
        OSError: the copy failed; the caller removes the partial destination.
        InvalidArguments: the tree is deeper than 256 levels.
        The cancellation exception: the call was cancelled (checked before each entry).
    """
    stop_if_cancelled()
    info = os.stat(src_name, dir_fd=src_dir, follow_symlinks=False)
    if stat.S_ISLNK(info.st_mode):
        os.symlink(os.readlink(src_name, dir_fd=src_dir), dst_name, dir_fd=dst_dir)
    elif stat.S_ISREG(info.st_mode):
        stats.bytes += _copy_file(src_dir, src_name, dst_dir, dst_name, info)
        stats.files += 1
    elif stat.S_ISDIR(info.st_mode):
        if depth >= _MAX_DEPTH:
            raise InvalidArguments(f"directory tree too deep to copy (over {_MAX_DEPTH} levels): {display}")
        src = os.open(src_name, DIR_FLAGS | compat.O_NOFOLLOW, dir_fd=src_dir)
        try:
            os.mkdir(dst_name, 0o700, dir_fd=dst_dir)
            dst = os.open(dst_name, DIR_FLAGS | compat.O_NOFOLLOW, dir_fd=dst_dir)
            adopt_new_directory(dst, dst_dir)
            try:
                with os.scandir(src) as entries:
                    names = sorted(entry.name for entry in entries)
                for name in names:
                    copy_entry(src, name, dst, name, stats, display=f"{display}/{name}", depth=depth + 1)
                compat.fchmod(dst, safe_mode(stat.S_IMODE(info.st_mode)))
                os.utime(dst, ns=(info.st_atime_ns, info.st_mtime_ns))
            finally:
                os.close(dst)
        finally:
            os.close(src)
    else:
        stats.skipped.append(display)


def remove_entry(dir_fd: int, name: str, *, is_dir: bool) -> None:
    """Remove an entry (a whole tree for a directory, never following symlinks)."""
    if is_dir:
        shutil.rmtree(name, dir_fd=dir_fd)
    else:
        os.unlink(name, dir_fd=dir_fd)


def copy_into_place(src: ParentDir, dst: ParentDir, *, is_dir: bool, replace: bool, stats: CopyStats) -> None:
    """Copy ``src``'s entry to a temporary name beside ``dst``'s, then rename it into place, so a
    failed or cancelled copy leaves no partial destination.

    Args:
        replace: replace an existing destination (a directory only if empty); else no-clobber.
        stats: counts what was copied.

    Raises:
        AlreadyExists: the destination exists (``replace`` false) or is a non-empty directory.
        FileSystemError: the copy failed (translated ``OSError``).
        InvalidArguments: the tree is too deep.
    """
    tmp = temp_name(dst.name)
    try:
        copy_entry(src.fd, src.name, dst.fd, tmp, stats, display=str(src.path))
        stop_if_cancelled()
        if replace:
            os.replace(tmp, dst.name, src_dir_fd=dst.fd, dst_dir_fd=dst.fd)
        else:
            rename_noclobber(dst.fd, tmp, dst.fd, dst.name, is_dir=is_dir, display=dst.path)
    except BaseException as exc:
        try:
            remove_entry(dst.fd, tmp, is_dir=is_dir)
        except OSError:
            pass
        if isinstance(exc, OSError):
            if exc.errno == errno.ENOTEMPTY:
                raise AlreadyExists(f"destination directory is not empty: {dst.path}") from exc
            raise from_os_error(exc, str(dst.path)) from exc
        raise


def move_entry(src: ParentDir, dst: ParentDir, *, is_dir: bool, replace: bool) -> MoveMethod:
    """Move ``src``'s entry to ``dst``'s: a rename, or across devices a copy into place
    (``copy_into_place``) followed by removing the source.

    Args:
        is_dir: the source is a directory.
        replace: replace an existing destination (a directory only if empty); else no-clobber.

    Returns:
        ``"rename"`` or ``"copyAndRemove"``.

    Raises:
        AlreadyExists: the destination exists (``replace`` false) or is a non-empty directory.
        FileSystemError: the move failed, or the copy succeeded but the source could not be
            removed (both then exist).
    """
    stop_if_cancelled()
    try:
        if replace:
            os.replace(src.name, dst.name, src_dir_fd=src.fd, dst_dir_fd=dst.fd)
        else:
            rename_noclobber(src.fd, src.name, dst.fd, dst.name, is_dir=is_dir, display=dst.path)
        return "rename"
    except OSError as exc:
        if exc.errno == errno.ENOTEMPTY or (exc.errno == errno.EEXIST and replace):
            raise AlreadyExists(f"destination directory is not empty: {dst.path}") from exc
        if exc.errno != errno.EXDEV:
            raise from_os_error(exc, str(src.path)) from exc
    copy_into_place(src, dst, is_dir=is_dir, replace=replace, stats=CopyStats())
    try:
        remove_entry(src.fd, src.name, is_dir=is_dir)
    except OSError as exc:
        raise FileSystemError(
            f"copied {src.path} to {dst.path} but could not remove the source: {exc.strerror}"
        ) from exc
    return "copyAndRemove"
