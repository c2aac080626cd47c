"""Who owns what the file tools create, when the server runs as root in another user's folder.

The usual container: the server runs as root and serves a checkout mounted from the host, owned by
the host's user (uid 1000). A file the tools create there belongs to that user, not to root, as the
dev-container convention (``remoteUser``) has it: a new entry takes the owner of the directory it is
created in, and a replaced file keeps its own. A server that is not root changes nothing (it could
not), and neither does a directory owned by root.
"""

from __future__ import annotations

import os

from mcp_localtools import compat

__all__ = ["adopt_entry_owner", "adopt_owner"]


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


def adopt_entry_owner(dir_fd: int, name: str) -> None:
    """``adopt_owner`` for the entry ``name`` just created in ``dir_fd`` (a directory the caller
    did not open): opened without following a symlink, then given the directory's owner."""
    if not compat.HAS_FCHOWN or os.geteuid() != 0:  # type: ignore[attr-defined,unused-ignore]
        return
    try:
        fd = os.open(name, os.O_RDONLY | compat.O_NOFOLLOW | compat.O_CLOEXEC, dir_fd=dir_fd)
    except OSError:
        return
    try:
        adopt_owner(fd, dir_fd)
    finally:
        os.close(fd)
