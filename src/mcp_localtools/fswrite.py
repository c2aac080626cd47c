"""Race-proof writes under a PathPolicy: verified parent directories, atomic replace,
no-clobber renames and descriptor-based copies.

The approach of ``shared/spec/security.md`` ("For the file tools"): the directory that holds
the target is opened once and verified to lie inside the roots (``PathPolicy.open``); every
later step names only a single entry relative to that descriptor (``dir_fd=``), with
``O_NOFOLLOW`` / ``follow_symlinks=False``, so a directory swapped for a symlink after the check
cannot redirect the operation. Content is written to a temporary file in the same directory,
fsynced and renamed over the target: readers see the old file or the new one, a failure leaves
the old one byte-for-byte, and a rename replaces a symlink or a hard link instead of writing
through it. New names are taken with ``O_EXCL`` (or a hard link, or an exclusive placeholder),
never check-then-write.
"""

from __future__ import annotations

import errno
import os
import secrets
import shutil
import stat
from collections.abc import Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from .errors import (
    AlreadyExists,
    InvalidArguments,
    NotADirectory,
    NotFound,
    PolicyViolation,
    SymlinkRefused,
    TooLarge,
    from_os_error,
)
from .fileio import read_open_file
from .policy.paths import PathPolicy, ResolvedPath

__all__ = [
    "MAX_NEW_PARENTS",
    "CopyStats",
    "ParentDir",
    "copy_entry",
    "ensure_subdir",
    "lstat_entry",
    "parent_dir",
    "read_entry",
    "refuse_roots",
    "remove_entry",
    "rename_noclobber",
    "temp_name",
    "write_atomic",
]

MAX_NEW_PARENTS = 8
"""Most directories one call may create on the way to a file (decisions.md: WF-5 fixed)."""
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_CHUNK = 1024 * 1024
_MAX_DEPTH = 256


@dataclass
class ParentDir:
    """An open, verified directory and the entry name a tool works on inside it.

    Attributes:
        fd: descriptor of the directory (closed when the ``parent_dir`` block ends).
        name: the final path component, the only name operations use relative to ``fd``.
        path: absolute path of the entry (for messages and results).
        created: directories this call created on the way, outermost first.
    """

    fd: int
    name: str
    path: Path
    created: list[Path] = field(default_factory=list)


def refuse_roots(paths: PathPolicy, resolved: ResolvedPath, action: str) -> None:
    """Refuse to ``action`` an allowed root or a directory that contains one (invariant I3).

    Raises:
        PolicyViolation: the path is a root or an ancestor of one.
    """
    if any(root.is_relative_to(resolved.real) for root in paths.roots):
        raise PolicyViolation(f"refusing to {action} {resolved.path}: it is (or contains) an allowed root")


@contextmanager
def parent_dir(
    paths: PathPolicy, resolved: ResolvedPath, *, create: bool = False, max_new: int = MAX_NEW_PARENTS
) -> Iterator[ParentDir]:
    """Open the directory holding ``resolved``, creating missing ones when ``create`` is true.

    The nearest existing ancestor is opened and verified; each missing directory is then made
    with ``mkdir(dir_fd=...)`` and opened with ``O_NOFOLLOW`` below it. If the ``with`` block
    raises, the directories created here are removed again (when still empty).

    Raises:
        NotFound: the parent does not exist and ``create`` is false.
        TooLarge: more than ``max_new`` directories would have to be created (nothing is created).
        NotADirectory: a component of the parent is a file.
        SymlinkRefused: a created component was swapped for a symlink meanwhile.
        OutsideAllowedRoots: the parent (as opened) is outside the roots.
    """
    target = resolved.path
    missing: list[str] = []
    probe = target.parent
    with ExitStack() as stack:
        while True:
            try:
                fd = paths.open(paths.resolve(str(probe)), _DIR_FLAGS)
                break
            except NotFound:
                if not create:
                    raise NotFound(
                        f"parent directory does not exist: {target.parent}; create it first "
                        "(makedirectory, or createParents=true)"
                    ) from None
                missing.append(probe.name)
                probe = probe.parent
        stack.callback(os.close, fd)
        if len(missing) > max_new:
            raise TooLarge(
                f"too many parent directories to create: {len(missing)} (max {max_new}) for {target}"
            )
        created: list[tuple[int, str, Path]] = []
        for name in reversed(missing):
            probe = probe / name
            try:
                os.mkdir(name, 0o777, dir_fd=fd)
                created.append((fd, name, probe))
            except FileExistsError:
                pass  # made concurrently by someone else: use it, but do not remove it later
            except OSError as exc:
                raise from_os_error(exc, str(probe)) from exc
            try:
                fd = os.open(name, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=fd)
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    raise SymlinkRefused(f"{probe} became a symlink while it was being created") from exc
                raise from_os_error(exc, str(probe)) from exc
            stack.callback(os.close, fd)
        handle = ParentDir(fd=fd, name=target.name, path=target, created=[p for _, _, p in created])
        try:
            yield handle
        except BaseException:
            for parent_fd, name, _ in reversed(created):
                try:
                    os.rmdir(name, dir_fd=parent_fd)
                except OSError:
                    break  # not empty any more (someone else's content): leave it
            raise


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


def write_atomic(
    dir_fd: int,
    name: str,
    data: bytes | Iterable[bytes],
    *,
    replace: bool,
    mode: int | None = None,
    display: Path | str = "",
) -> None:
    """Write ``data`` as entry ``name`` of ``dir_fd``: temp file, fsync, rename (WF-8).

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
    """
    tmp = temp_name(name)
    try:
        fd = os.open(
            tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666, dir_fd=dir_fd
        )
    except OSError as exc:
        raise from_os_error(exc, str(display)) from exc
    try:
        try:
            if mode is not None:
                os.fchmod(fd, mode)
            for piece in (data,) if isinstance(data, bytes) else data:
                view = memoryview(piece)
                while view:
                    view = view[os.write(fd, view[:_CHUNK]) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        if replace:
            os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        else:
            rename_noclobber(dir_fd, tmp, dir_fd, name, is_dir=False, display=display)
    except BaseException as exc:
        _unlink_quietly(tmp, dir_fd)
        if isinstance(exc, OSError):
            raise from_os_error(exc, str(display)) from exc
        raise
    _fsync_dir(dir_fd)


def rename_noclobber(
    src_dir: int, src_name: str, dst_dir: int, dst_name: str, *, is_dir: bool, display: Path | str = ""
) -> None:
    """Rename an entry without replacing an existing destination (DF-6).

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
                os.open(dst_name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=dst_dir)
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


def ensure_subdir(dir_fd: int, name: str, display: Path | str) -> int:
    """Open (creating it if missing) the subdirectory ``name`` of ``dir_fd``, refusing symlinks.

    Returns:
        A directory descriptor the caller must close.

    Raises:
        NotADirectory: ``name`` exists and is not a directory.
        SymlinkRefused: ``name`` is a symlink.
    """
    try:
        os.mkdir(name, 0o700, dir_fd=dir_fd)
    except FileExistsError:
        pass
    except OSError as exc:
        raise from_os_error(exc, str(display)) from exc
    try:
        return os.open(name, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise SymlinkRefused(f"refusing to use {display}: it is a symlink") from exc
        if exc.errno == errno.ENOTDIR:
            raise NotADirectory(f"{display} exists and is not a directory") from exc
        raise from_os_error(exc, str(display)) from exc


@dataclass
class CopyStats:
    """What a copy did: files and bytes copied, special files skipped."""

    files: int = 0
    bytes: int = 0
    skipped: list[str] = field(default_factory=list)


def _copy_file(src_dir: int, src_name: str, dst_dir: int, dst_name: str, info: os.stat_result) -> int:
    src = os.open(src_name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=src_dir)
    try:
        dst = os.open(
            dst_name,
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
            0o600,
            dir_fd=dst_dir,
        )
        try:
            copied = 0
            while chunk := os.read(src, _CHUNK):
                view = memoryview(chunk)
                while view:
                    view = view[os.write(dst, view) :]
                copied += len(chunk)
            os.fchmod(dst, stat.S_IMODE(info.st_mode))
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
    """
    info = os.stat(src_name, dir_fd=src_dir, follow_symlinks=False)
    if stat.S_ISLNK(info.st_mode):
        os.symlink(os.readlink(src_name, dir_fd=src_dir), dst_name, dir_fd=dst_dir)
    elif stat.S_ISREG(info.st_mode):
        stats.bytes += _copy_file(src_dir, src_name, dst_dir, dst_name, info)
        stats.files += 1
    elif stat.S_ISDIR(info.st_mode):
        if depth >= _MAX_DEPTH:
            raise InvalidArguments(f"directory tree too deep to copy (over {_MAX_DEPTH} levels): {display}")
        src = os.open(src_name, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=src_dir)
        try:
            os.mkdir(dst_name, 0o700, dir_fd=dst_dir)
            dst = os.open(dst_name, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=dst_dir)
            try:
                with os.scandir(src) as entries:
                    names = sorted(entry.name for entry in entries)
                for name in names:
                    copy_entry(src, name, dst, name, stats, display=f"{display}/{name}", depth=depth + 1)
                os.fchmod(dst, stat.S_IMODE(info.st_mode))
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


def lstat_entry(parent: ParentDir) -> os.stat_result | None:
    """``lstat`` of the entry named by ``parent``; None when it does not exist."""
    try:
        return os.stat(parent.name, dir_fd=parent.fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise from_os_error(exc, str(parent.path)) from exc


def read_entry(parent: ParentDir, *, max_bytes: int) -> tuple[bytes, os.stat_result]:
    """Read the regular file named by ``parent`` (``O_NOFOLLOW``: a symlink there is refused),
    for a read-modify-write such as append or an edit.

    Raises:
        SymlinkRefused: the entry is a symlink.
        NotAFile, TooLarge, FileSystemError: as ``fileio.read_open_file``.
    """
    try:
        fd = os.open(
            parent.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=parent.fd
        )
    except OSError as exc:
        raise from_os_error(exc, str(parent.path)) from exc
    try:
        return read_open_file(fd, parent.path, max_bytes=max_bytes)
    finally:
        os.close(fd)
