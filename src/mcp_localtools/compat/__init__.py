"""What differs between Linux, macOS and Windows, behind capability checks.

Every platform-specific piece the package uses is here: ``os`` open flags (0 where a flag does
not exist), descriptor calls Windows lacks, the kernel's path of an open descriptor, process
groups and signals, Linux's ``prctl``, pidfds and boot clock, UNIX sockets that carry
descriptors, and pseudo-terminals. Callers test the capability constants (``SUPPORTS_DIR_FD``,
``HAS_PROCESS_GROUPS``, ``HAS_PROCFS``, ...) or call the functions here, which raise ``OSError``
(``ENOSYS``) where the platform has no such thing.

POSIX-only modules (``fcntl``, ``pwd``, ``termios``) are imported only where they are used, so the
package imports on Windows. Nothing here imports from the rest of the package: this is the lowest layer, like
``errors.py``. This module holds the open flags, the capabilities and the file calls;
``descriptors`` the descriptors, sockets and terminals; ``processes`` accounts and processes;
import every name from here. (``parsers/worker.py`` runs as a script on its own and keeps its own check.)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Final

from mcp_localtools.compat.descriptors import (
    open_pty,
    recv_fds,
    send_fds,
    seqpacket_pair,
    set_blocking,
    take_terminal,
)
from mcp_localtools.compat.processes import (
    SIGHUP,
    SIGKILL,
    boot_ticks,
    getsid,
    has_child_processes,
    killpg,
    login_shell,
    pidfd_open,
    pidfd_send_signal,
    prctl,
    waitpid_nohang,
    watch_children_by_pidfd,
)

__all__ = [
    "HAS_PRCTL",
    "HAS_PROCESS_GROUPS",
    "HAS_PROCFS",
    "IS_WINDOWS",
    "O_BINARY",
    "O_CLOEXEC",
    "O_DIRECTORY",
    "O_NOFOLLOW",
    "O_NONBLOCK",
    "O_PATH",
    "O_TMPFILE",
    "SIGHUP",
    "SIGKILL",
    "SUPPORTS_DIR_FD",
    "boot_ticks",
    "fchmod",
    "fd_path",
    "getsid",
    "has_child_processes",
    "killpg",
    "login_shell",
    "open_pty",
    "pidfd_open",
    "pidfd_send_signal",
    "prctl",
    "pread",
    "recv_fds",
    "send_fds",
    "seqpacket_pair",
    "set_blocking",
    "take_terminal",
    "waitpid_nohang",
    "watch_children_by_pidfd",
    "why_unsupported",
]

IS_WINDOWS: Final[bool] = sys.platform == "win32"
"""Windows: its shells and its case-insensitive environment (a different OS, not a capability)."""

# --- open flags --------------------------------------------------------------------------------

O_NOFOLLOW: Final[int] = getattr(os, "O_NOFOLLOW", 0)
"""Refuse a final symlink (ELOOP). 0 on Windows: there a symlink is followed."""
O_DIRECTORY: Final[int] = getattr(os, "O_DIRECTORY", 0)
"""Fail unless the path is a directory. 0 on Windows, which cannot open a directory at all."""
O_CLOEXEC: Final[int] = getattr(os, "O_CLOEXEC", 0)
"""Close on exec. 0 on Windows, where Python's descriptors are not inherited anyway (PEP 446)."""
O_NONBLOCK: Final[int] = getattr(os, "O_NONBLOCK", 0)
"""Do not block opening a FIFO. 0 on Windows (no FIFOs in the file system)."""
O_PATH: Final[int] = getattr(os, "O_PATH", 0)
"""Open a location without reading it (Linux); 0 elsewhere, so test it before use."""
O_BINARY: Final[int] = getattr(os, "O_BINARY", 0)
"""Windows only (0 elsewhere): without it ``os.read`` translates CRLF and stops at Ctrl-Z."""
O_TMPFILE: Final[int] = getattr(os, "O_TMPFILE", 0)
"""Linux: an unnamed file in a directory, given a name later with ``linkat`` (0 elsewhere)."""

# --- capabilities ------------------------------------------------------------------------------

_DIR_FD_CALLS = {os.open, os.stat, os.mkdir, os.rmdir, os.unlink, os.rename, os.link, os.symlink, os.readlink}

SUPPORTS_DIR_FD: Final[bool] = _DIR_FD_CALLS.issubset(os.supports_dir_fd) and os.scandir in os.supports_fd
"""Directories open as descriptors and the ``dir_fd=`` calls work (``openat``, ``mkdirat``,
``renameat``, ``fdopendir``, ...): the race-free file operations of ``files/`` and the walks of
``search/`` need them. True on Linux and macOS, False on Windows."""

HAS_PROCESS_GROUPS: Final[bool] = hasattr(os, "setsid") and hasattr(os, "killpg")
"""A child can lead a session and process group of its own, and the group can be signalled as
one (POSIX). The exec tools stop a command's whole tree through it. False on Windows."""

HAS_PROCFS: Final[bool] = sys.platform == "linux" and Path("/proc/self").is_dir()
"""Linux's ``/proc`` is mounted: the process table (``/proc/<pid>/stat``, ``environ``, the
children lists) can be read."""

HAS_PRCTL: Final[bool] = sys.platform == "linux"
"""Linux's ``prctl`` (child subreaper, dumpable flag) can be called."""

HAS_FCHOWN: Final[bool] = hasattr(os, "fchown") and hasattr(os, "geteuid")
"""A file's owner can be set through its descriptor, and the server's own uid read (POSIX)."""

_NO_DIR_FD = (
    "this platform cannot open directories as descriptors for dir_fd= calls (os.supports_dir_fd), "
    "which the race-free file operations need"
)
_NO_PROCESS_GROUPS = (
    "this platform has no POSIX sessions and process groups (os.setsid, os.killpg), which stopping "
    "a command's whole process tree needs"
)


def why_unsupported(*, dir_fd: bool = False, process_groups: bool = False) -> str | None:
    """Why something that needs the named capabilities cannot work on this platform.

    Args:
        dir_fd: it needs ``SUPPORTS_DIR_FD``.
        process_groups: it needs ``HAS_PROCESS_GROUPS``.

    Returns:
        The missing capabilities in words, joined by ``"; "``; None when all are there.
    """
    reasons = []
    if dir_fd and not SUPPORTS_DIR_FD:
        reasons.append(_NO_DIR_FD)
    if process_groups and not HAS_PROCESS_GROUPS:
        reasons.append(_NO_PROCESS_GROUPS)
    return "; ".join(reasons) or None


# --- files -------------------------------------------------------------------------------------

if sys.platform == "win32":  # pragma: no cover - Windows

    def fchmod(fd: int, mode: int) -> None:
        """Nothing: Windows (before Python 3.13) has no ``fchmod`` and no POSIX permission bits;
        the file keeps the access its directory gives it."""

    def pread(fd: int, length: int, offset: int) -> bytes:
        """Up to ``length`` bytes at byte ``offset`` of ``fd``. Windows has no ``pread``: this
        seeks, so the descriptor's position moves (use it on a descriptor of your own)."""
        os.lseek(fd, offset, os.SEEK_SET)
        return os.read(fd, length)

else:

    def fchmod(fd: int, mode: int) -> None:
        """Set the permission bits of the file open at ``fd`` to ``mode``.

        Raises:
            OSError: the file system refused.
        """
        os.fchmod(fd, mode)

    def pread(fd: int, length: int, offset: int) -> bytes:
        """Up to ``length`` bytes at byte ``offset`` of ``fd``, without moving its position.

        Raises:
            OSError: the read failed.
        """
        return os.pread(fd, length, offset)


if sys.platform == "darwin":  # pragma: no cover - macOS
    import fcntl

    def fd_path(fd: int) -> str | None:
        """The absolute path of the object open at ``fd`` as the kernel knows it (macOS:
        ``F_GETPATH``), or None when it cannot tell."""
        try:
            raw = fcntl.fcntl(fd, fcntl.F_GETPATH, b"\0" * 1024)
        except OSError:
            return None
        return os.fsdecode(raw.split(b"\0", 1)[0])

else:

    def fd_path(fd: int) -> str | None:
        """The absolute path of the object open at ``fd`` as the kernel knows it (Linux:
        ``/proc/self/fd``, a deleted file without its `` (deleted)`` suffix), or None when it
        cannot tell (no ``/proc``: Windows, the BSDs; or not a file system object)."""
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            return None
        if target.endswith(" (deleted)"):
            target = target[: -len(" (deleted)")]
        return target if target.startswith("/") else None
