"""Atomic writes: a temporary file in the same directory, fsync, then a rename over the target.

On Linux the temporary file is unnamed (``O_TMPFILE``) until its content is on disk, so a server
killed mid-write leaves nothing behind; it gets a hidden name (``temp_name``) only for the instant
between ``linkat`` and the rename. Elsewhere it is named from the start.

Readers see the old file or the new one; a failure leaves the old one byte for byte; a rename
replaces a symlink or a hard link instead of writing through it. New names are taken with
``O_EXCL`` (or a hard link, or an exclusive placeholder), never check-then-write.
"""

from __future__ import annotations

import errno
import os
import secrets
from collections.abc import Iterable
from pathlib import Path

import anyio.from_thread

from mcp_localtools import compat
from mcp_localtools.errors import (
    AlreadyExists,
    from_os_error,
)
from mcp_localtools.files.owner import adopt_owner, safe_mode

__all__ = ["CHUNK_BYTES", "rename_noclobber", "stop_if_cancelled", "temp_name", "write_atomic"]


CHUNK_BYTES = 1024 * 1024
"""Bytes written (and copied) per system call."""


def stop_if_cancelled() -> None:
    """Raise the cancellation of the call this worker thread runs for, if that call was
    cancelled or timed out meanwhile.

    A tool body runs in a worker thread that a cancelled call abandons (``offload.py``);
    checking here, before each step that makes a change visible (a rename into place, the next
    entry of a copy), keeps an abandoned call from committing after its caller was told it
    stopped. A no-op outside an anyio worker thread (direct calls, tests).

    Raises:
        The backend's cancellation exception (a ``BaseException``), so cleanup handlers run.
    """
    try:
        anyio.from_thread.check_cancelled()
    except anyio.NoEventLoopError:
        pass


def temp_name(name: str) -> str:
    """A fresh hidden name next to ``name`` for a temporary file (fits NAME_MAX)."""
    return f".{name[:200]}.{secrets.token_hex(6)}.tmp"


def _unlink_quietly(name: str, dir_fd: int) -> None:
    try:
        os.unlink(name, dir_fd=dir_fd)
    except OSError:
        pass


def _fsync_dir(dir_fd: int) -> None:
    try:
        os.fsync(dir_fd)
    except OSError:
        pass  # best effort: some filesystems refuse fsync on directories


def _open_unnamed(dir_fd: int) -> int | None:
    """An unnamed file in ``dir_fd`` (Linux ``O_TMPFILE``), writable, or None where the platform,
    the filesystem or a missing ``/proc`` rules that out (the caller then uses a named temp)."""
    if not compat.O_TMPFILE or not _PROC_FD.is_dir():
        return None
    try:
        return os.open(".", compat.O_TMPFILE | os.O_WRONLY | compat.O_CLOEXEC, 0o666, dir_fd=dir_fd)
    except OSError:  # EOPNOTSUPP, EISDIR or EINVAL: this filesystem has no unnamed files
        return None


_PROC_FD = Path("/proc/self/fd")


def write_atomic(
    dir_fd: int,
    name: str,
    data: bytes | Iterable[bytes],
    *,
    replace: bool,
    mode: int | None = None,
    display: Path | str = "",
) -> None:
    """Write ``data`` as entry ``name`` of ``dir_fd``: temp file, fsync, rename.

    Args:
        dir_fd: a verified directory descriptor.
        name: the entry to create or replace (a single component).
        data: the complete new content, or an iterable of its chunks (written as they come, so
            a large text need not be encoded whole first; an exception from the iterable aborts
            the write like any other failure).
        replace: True to replace an existing entry atomically; False to create only, failing
            if the name exists (a hard link, or an exclusive placeholder where links are not
            supported, so a racing creator is never clobbered).
        mode: permission bits for the new file; None keeps the default (0666 under the umask).
        display: the path to name in error messages.

    Raises:
        AlreadyExists: ``replace`` is false and the name exists.
        FileSystemError: the write failed (disk full, file size limit, ...); nothing changed.
        The cancellation exception: the call was cancelled before the rename (``stop_if_cancelled``);
            nothing changed.
    """
    fd = _open_unnamed(dir_fd)
    tmp: str | None = None  # the temp file's name, once it has one
    try:
        if fd is None:  # no O_TMPFILE here: a named temp file from the start
            tmp = temp_name(name)
            try:
                fd = os.open(
                    tmp,
                    os.O_WRONLY | os.O_CREAT | os.O_EXCL | compat.O_NOFOLLOW | compat.O_CLOEXEC,
                    0o666,
                    dir_fd=dir_fd,
                )
            except OSError:
                tmp = None
                raise
        try:
            if mode is not None:
                compat.fchmod(fd, safe_mode(mode))
            adopt_owner(fd, dir_fd, name if replace else None)
            for piece in (data,) if isinstance(data, bytes) else data:
                view = memoryview(piece)
                while view:
                    view = view[os.write(fd, view[:CHUNK_BYTES]) :]
            os.fsync(fd)
            stop_if_cancelled()
            if tmp is None:  # name the unnamed file now: only from here to the rename can a
                tmp = temp_name(name)  # killed server leave a temp file behind
                os.link(f"/proc/self/fd/{fd}", tmp, dst_dir_fd=dir_fd, follow_symlinks=True)
        finally:
            os.close(fd)
        if replace:
            os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        else:
            rename_noclobber(dir_fd, tmp, dir_fd, name, is_dir=False, display=display)
    except BaseException as exc:
        if tmp is not None:
            _unlink_quietly(tmp, dir_fd)
        if isinstance(exc, OSError):
            raise from_os_error(exc, str(display)) from exc
        raise
    _fsync_dir(dir_fd)


def rename_noclobber(
    src_dir: int, src_name: str, dst_dir: int, dst_name: str, *, is_dir: bool, display: Path | str = ""
) -> None:
    """Rename an entry without replacing an existing destination.

    Files are hard-linked then unlinked (atomic: the link fails if the name exists); where hard
    links are not possible, and for directories, the name is reserved with an exclusive
    placeholder (``O_EXCL`` file or ``mkdir``) that the rename then replaces.

    Raises:
        AlreadyExists: the destination exists.
        OSError: the rename failed (``EXDEV`` across devices, ...); the placeholder is removed.
    """
    if not is_dir:
        try:
            os.link(src_name, dst_name, src_dir_fd=src_dir, dst_dir_fd=dst_dir, follow_symlinks=False)
        except FileExistsError:
            raise AlreadyExists(f"path already exists: {display}") from None
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.EMLINK, errno.ENOTSUP):
                raise
        else:
            os.unlink(src_name, dir_fd=src_dir)
            return
    try:
        if is_dir:
            os.mkdir(dst_name, 0o700, dir_fd=dst_dir)
        else:
            os.close(
                os.open(
                    dst_name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | compat.O_NOFOLLOW, 0o600, dir_fd=dst_dir
                )
            )
    except FileExistsError:
        raise AlreadyExists(f"path already exists: {display}") from None
    try:
        os.replace(src_name, dst_name, src_dir_fd=src_dir, dst_dir_fd=dst_dir)
    except BaseException:
        try:
            (os.rmdir if is_dir else os.unlink)(dst_name, dir_fd=dst_dir)
        except OSError:
            pass
        raise
