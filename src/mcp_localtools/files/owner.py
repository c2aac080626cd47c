"""Who owns what the file tools create, when the server runs as root in another user's folder.

The usual container: the server runs as root and serves a checkout mounted from the host, owned by
the host's user (uid 1000). A file the tools create there belongs to that user, not to root, as the
dev-container convention (``remoteUser``) has it: a new entry takes the owner of the directory it is
created in, and a replaced file keeps its own. A server that is not root changes nothing (it could
not), and neither does a directory owned by root.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Sequence
from pathlib import Path

from mcp_localtools import compat

__all__ = ["adopt_entry_owner", "adopt_new_directory", "adopt_owner", "root_owners", "safe_mode"]


def adopt_owner(fd: int, dir_fd: int, replaced: str | None = None) -> None:
    """Give the new file or directory open as ``fd`` (in the directory ``dir_fd``) the owner of
    the entry ``replaced`` of that directory when it exists (an overwrite keeps its owner), else
    the directory's own owner, when the server runs as root and that owner is not root. Best
    effort: a file system that refuses ``fchown`` keeps root as the owner."""
    if not compat.HAS_FCHOWN or os.geteuid() != 0:  # type: ignore[attr-defined,unused-ignore]
        return
    try:
        info = os.fstat(dir_fd)
        if replaced is not None:
            try:
                info = os.stat(replaced, dir_fd=dir_fd, follow_symlinks=False)
            except FileNotFoundError:
                pass
        if info.st_uid != 0 or info.st_gid != 0:
            os.fchown(fd, info.st_uid, info.st_gid)  # type: ignore[attr-defined,unused-ignore]
    except OSError:
        pass


def adopt_new_directory(fd: int, dir_fd: int) -> None:
    """``adopt_owner`` for a directory the caller has just made in ``dir_fd`` and opened as ``fd``,
    only when it is still what was made: a directory owned by root, empty, with no other name
    (the directory's owner could have swapped another of root's directories in between the
    ``mkdir`` and the ``open``)."""
    if not compat.HAS_FCHOWN or os.geteuid() != 0:  # type: ignore[attr-defined,unused-ignore]
        return
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode) and info.st_uid == 0 and info.st_nlink == 2 and not os.listdir(fd):
            adopt_owner(fd, dir_fd)
    except OSError:
        pass


def adopt_entry_owner(dir_fd: int, name: str) -> None:
    """``adopt_new_directory`` for the directory ``name`` just made in ``dir_fd``: opened as a
    directory, never through a symlink or a FIFO that was swapped in."""
    if not compat.HAS_FCHOWN or os.geteuid() != 0:  # type: ignore[attr-defined,unused-ignore]
        return
    flags = (
        os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | compat.O_NOFOLLOW | compat.O_NONBLOCK | compat.O_CLOEXEC
    )
    try:
        fd = os.open(name, flags, dir_fd=dir_fd)
    except OSError:
        return
    try:
        adopt_new_directory(fd, dir_fd)
    finally:
        os.close(fd)


def safe_mode(mode: int) -> int:
    """``mode`` without the set-user-ID and set-group-ID bits when the server runs as root: a file
    the tools copy or rewrite is root's where its directory is (a setuid copy of the owner's
    program would run as root for anyone outside)."""
    if compat.HAS_FCHOWN and os.geteuid() == 0:  # type: ignore[attr-defined,unused-ignore]
        return mode & ~(stat.S_ISUID | stat.S_ISGID)
    return mode


def root_owners(roots: Sequence[Path]) -> dict[Path, tuple[int, int]]:
    """The roots that belong to a user other than root, with the identity their commands run as:
    that user and its own group (``/etc/passwd``), never the root directory's group, which may be
    root's or a system group that reads what only root may (gid 0, ``shadow``); without a
    passwd entry, the group ``nogroup`` (65534)."""
    found: dict[Path, tuple[int, int]] = {}
    for root in roots:
        try:
            info = os.stat(root)
        except OSError:
            continue
        if info.st_uid != 0:
            found[Path(root)] = (info.st_uid, _own_group(info.st_uid))
    return found


def _own_group(uid: int) -> int:
    if sys.platform != "win32":  # POSIX only, like this path
        import pwd

        try:
            return pwd.getpwuid(uid).pw_gid or _NOGROUP
        except KeyError:
            pass
    return _NOGROUP


_NOGROUP = 65534
