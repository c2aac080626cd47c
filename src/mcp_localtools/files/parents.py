"""Verified parent directories: open (and create) the directory that holds a target, inside the roots.

Every later step names a single entry relative to the opened descriptor (``dir_fd=``) with
``O_NOFOLLOW``, so a directory swapped for a symlink after the check cannot redirect it.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from mcp_localtools import compat
from mcp_localtools.errors import (
    NotADirectory,
    NotFound,
    PolicyViolation,
    SymlinkRefused,
    TooLarge,
    from_os_error,
)
from mcp_localtools.files.owner import adopt_new_directory
from mcp_localtools.files.read import read_open_file
from mcp_localtools.policy.paths import PathPolicy, ResolvedPath
from mcp_localtools.toolnames import served_text

__all__ = [
    "DIR_FLAGS",
    "MAX_NEW_PARENTS",
    "ParentDir",
    "ensure_subdir",
    "lstat_entry",
    "parent_dir",
    "read_entry",
    "refuse_roots",
    "remove_made",
]


MAX_NEW_PARENTS = 8
"""Most directories one call may create on the way to a file (always enforced, and none is left
behind on failure; the seed enforced it only with ``block_symlinks``)."""


DIR_FLAGS = os.O_RDONLY | compat.O_DIRECTORY | compat.O_CLOEXEC
"""Flags to open a directory to work inside it."""


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
                fd = paths.open(paths.resolve(str(probe)), DIR_FLAGS)
                break
            except NotFound:
                if not create:
                    raise NotFound(
                        f"parent directory does not exist: {target.parent}; create it first "
                        + served_text("(makedirectory, or createParents=true)")
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
                    child = os.open(name, DIR_FLAGS | compat.O_NOFOLLOW, dir_fd=fd)
                except OSError as exc:
                    if exc.errno == errno.ELOOP:
                        raise SymlinkRefused(f"{probe} became a symlink while it was being created") from exc
                    raise from_os_error(exc, str(probe)) from exc
                if created and created[-1][1] == name and created[-1][0] == fd:
                    adopt_new_directory(child, fd)
                fd = child
                stack.callback(os.close, fd)
            yield ParentDir(fd=fd, name=target.name, path=target, created=[p for _, _, p in created])
        except BaseException:
            for parent_fd, name, _ in reversed(created):
                try:
                    os.rmdir(name, dir_fd=parent_fd)
                except OSError:
                    break  # not empty any more (someone else's content): leave it
            raise


def ensure_subdir(
    dir_fd: int, name: str, display: Path | str, *, made: list[tuple[int, str]] | None = None
) -> int:
    """Open (creating it if missing) the subdirectory ``name`` of ``dir_fd``, refusing symlinks.

    Args:
        made: when given, ``(dir_fd, name)`` is appended to it if this call created the
            directory, so a caller that fails later can remove what it made (``remove_made``).

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
    else:
        if made is not None:
            made.append((dir_fd, name))
    try:
        return os.open(name, DIR_FLAGS | compat.O_NOFOLLOW, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise SymlinkRefused(f"refusing to use {display}: it is a symlink") from exc
        if exc.errno == errno.ENOTDIR:
            raise NotADirectory(f"{display} exists and is not a directory") from exc
        raise from_os_error(exc, str(display)) from exc


def remove_made(made: list[tuple[int, str]]) -> None:
    """Remove the directories ``ensure_subdir`` recorded in ``made``, innermost first, each only
    while it is empty (their parents' descriptors must still be open); stops at the first that
    cannot be removed (someone else's content is in it)."""
    for dir_fd, name in reversed(made):
        try:
            os.rmdir(name, dir_fd=dir_fd)
        except OSError:
            break


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
        NotAFile, TooLarge, FileSystemError: as ``files.read.read_open_file``.
    """
    try:
        fd = os.open(
            parent.name,
            os.O_RDONLY | compat.O_NOFOLLOW | compat.O_NONBLOCK | compat.O_CLOEXEC,
            dir_fd=parent.fd,
        )
    except OSError as exc:
        raise from_os_error(exc, str(parent.path)) from exc
    try:
        return read_open_file(fd, parent.path, max_bytes=max_bytes)
    finally:
        os.close(fd)
