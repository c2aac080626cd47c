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
import threading
from collections.abc import Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import anyio.from_thread

from mcp_localtools.errors import (
    AlreadyExists,
    FileSystemError,
    InvalidArguments,
    NotADirectory,
    NotFound,
    PolicyViolation,
    SymlinkRefused,
    TooLarge,
    from_os_error,
)
from mcp_localtools.fileio import read_open_file
from mcp_localtools.policy.paths import PathPolicy, ResolvedPath

__all__ = [
    "MAX_NEW_PARENTS",
    "CopyStats",
    "FileLocks",
    "MoveMethod",
    "ParentDir",
    "copy_entry",
    "copy_into_place",
    "ensure_subdir",
    "lstat_entry",
    "move_entry",
    "parent_dir",
    "read_entry",
    "refuse_roots",
    "remove_entry",
    "rename_noclobber",
    "stop_if_cancelled",
    "temp_name",
    "write_atomic",
]

MAX_NEW_PARENTS = 8
"""Most directories one call may create on the way to a file (decisions.md: WF-5 fixed)."""
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_CHUNK = 1024 * 1024
_MAX_DEPTH = 256

MoveMethod = Literal["rename", "copyAndRemove"]


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


@dataclass
class FileLocks:
    """One lock per file for read-modify-write calls (text edits, writefile with append or
    expectedSha256), so two such calls on one file run one after the other instead of losing an
    update. One instance per server, shared by the tool groups (no module-level state); a lock
    lives only while a call holds or waits for it. Keys are real paths (``ResolvedPath.real``).
    """

    _guard: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _locks: dict[Path, tuple[threading.Lock, int]] = field(default_factory=dict, init=False, repr=False)

    @contextmanager
    def hold(self, key: Path) -> Iterator[None]:
        """Hold the lock of ``key`` for the duration of the block."""
        with self._guard:
            lock, users = self._locks.get(key, (threading.Lock(), 0))
            self._locks[key] = (lock, users + 1)
        try:
            with lock:
                yield
        finally:
            with self._guard:
                lock, users = self._locks[key]
                if users == 1:
                    del self._locks[key]
                else:
                    self._locks[key] = (lock, users - 1)


def refuse_roots(paths: PathPolicy, resolved: ResolvedPath, action: str) -> None:
    """Refuse to ``action`` an allowed root or a directory that contains one (invariant I3).

    Raises:
        PolicyViolation: the path is a root or an ancestor of one.
    """
    if any(root.is_relative_to(resolved.real) for root in paths.roots):
        raise PolicyViolation(f"refusing to {action} {resolved.path}: it is (or contains) an allowed root")


def stop_if_cancelled() -> None:
    """Raise the cancellation of the call this worker thread runs for, if that call was
    cancelled or timed out meanwhile.

    A tool body runs in a worker thread that a cancelled call abandons (``tools/offload.py``);
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


@contextmanager
def parent_dir(
    paths: PathPolicy, resolved: ResolvedPath, *, create: bool = False, max_new: int = MAX_NEW_PARENTS
) -> Iterator[ParentDir]:
    """Open the directory holding ``resolved``, creating missing ones when ``create`` is true.

    The nearest existing ancestor is opened and verified; each missing directory is then made
    with ``mkdir(dir_fd=...)`` and opened with ``O_NOFOLLOW`` below it. If the ``with`` block
    raises, the directories created here are removed again (when still empty).

    Raises:
        PolicyViolation: ``resolved`` is an allowed root itself (it has no parent inside the roots).
        NotFound: the parent does not exist and ``create`` is false.
        TooLarge: more than ``max_new`` directories would have to be created (nothing is created).
        NotADirectory: a component of the parent is a file.
        SymlinkRefused: a created component was swapped for a symlink meanwhile.
        OutsideAllowedRoots: the parent (as opened) is outside the roots.
    """
    if resolved.is_root:
        raise PolicyViolation(
            f"{resolved.path} is an allowed root, not an entry inside one; name a path inside it"
        )
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
        try:
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
            yield ParentDir(fd=fd, name=target.name, path=target, created=[p for _, _, p in created])
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
        The cancellation exception: the call was cancelled before the rename (``stop_if_cancelled``);
            nothing changed.
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
        stop_if_cancelled()
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
    """Move ``src``'s entry to ``dst``'s: a rename, or across devices (DF-7) a copy into place
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
