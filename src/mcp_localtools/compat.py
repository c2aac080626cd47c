"""What differs between Linux, macOS and Windows, behind capability checks.

Every platform-specific piece the package uses is here: ``os`` open flags (0 where a flag does
not exist), descriptor calls Windows lacks, the kernel's path of an open descriptor, process
groups and signals, Linux's ``prctl``, pidfds and boot clock, UNIX sockets that carry
descriptors, and pseudo-terminals. Callers test the capability constants (``SUPPORTS_DIR_FD``,
``HAS_PROCESS_GROUPS``, ``HAS_PROCFS``, ...) or call the functions here, which raise ``OSError``
(``ENOSYS``) where the platform has no such thing.

POSIX-only modules (``fcntl``, ``pwd``, ``termios``) are imported only where they are used, so the
package imports on Windows. Nothing here imports from the package: this is the lowest layer, like
``errors.py``. (``parsers/worker.py`` runs as a script on its own and keeps its own check.)
"""

from __future__ import annotations

import errno
import os
import signal
import socket
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final

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
    "SIGKILL",
    "SUPPORTS_DIR_FD",
    "boot_ticks",
    "fchmod",
    "fd_path",
    "getsid",
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


# --- descriptors, sockets and terminals ---------------------------------------------------------

if sys.platform == "win32":  # pragma: no cover - Windows

    def set_blocking(fd: int, blocking: bool) -> None:
        """Raises ``OSError`` (``ENOSYS``): Windows (before Python 3.12) cannot make a descriptor
        non-blocking."""
        raise OSError(errno.ENOSYS, "non-blocking descriptors are not supported on Windows")

    def seqpacket_pair() -> tuple[socket.socket, socket.socket]:
        """Raises ``OSError`` (``ENOSYS``): Windows has no ``AF_UNIX`` ``SOCK_SEQPACKET`` pairs."""
        raise OSError(errno.ENOSYS, "UNIX socket pairs that carry descriptors are not supported on Windows")

    def send_fds(sock: socket.socket, data: bytes, fds: Sequence[int]) -> None:
        """Raises ``OSError`` (``ENOSYS``): Windows cannot pass descriptors over a socket."""
        raise OSError(errno.ENOSYS, "passing descriptors over a socket is not supported on Windows")

    def recv_fds(sock: socket.socket, bufsize: int, maxfds: int) -> tuple[bytes, list[int]]:
        """Raises ``OSError`` (``ENOSYS``): Windows cannot pass descriptors over a socket."""
        raise OSError(errno.ENOSYS, "passing descriptors over a socket is not supported on Windows")

    def open_pty() -> tuple[int, int]:
        """Raises ``OSError`` (``ENOSYS``): Windows has no POSIX pseudo-terminals."""
        raise OSError(errno.ENOSYS, "pseudo-terminals (tty) are not supported on Windows")

    def take_terminal() -> Callable[[], None]:
        """Raises ``OSError`` (``ENOSYS``): Windows has no controlling terminals."""
        raise OSError(errno.ENOSYS, "pseudo-terminals (tty) are not supported on Windows")

else:

    def set_blocking(fd: int, blocking: bool) -> None:
        """Make ``fd`` blocking or not (``O_NONBLOCK``)."""
        os.set_blocking(fd, blocking)

    def seqpacket_pair() -> tuple[socket.socket, socket.socket]:
        """Two connected ``AF_UNIX`` ``SOCK_SEQPACKET`` sockets (message boundaries kept, descriptors
        passed with ``send_fds``), not inherited by children.

        Raises:
            OSError: the kernel refused (macOS has no ``SOCK_SEQPACKET`` for UNIX sockets).
        """
        return socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)

    def send_fds(sock: socket.socket, data: bytes, fds: Sequence[int]) -> None:
        """Send one message ``data`` with copies of the descriptors ``fds`` (``SCM_RIGHTS``).

        Raises:
            OSError: the peer is gone, or the kernel refused.
        """
        if fds:
            socket.send_fds(sock, [data], list(fds))
        else:
            sock.send(data)

    def recv_fds(sock: socket.socket, bufsize: int, maxfds: int) -> tuple[bytes, list[int]]:
        """One message of at most ``bufsize`` bytes and the descriptors it carried (at most
        ``maxfds``; the caller owns and closes them). ``b""``: the peer closed its end.

        Raises:
            OSError: the read failed.
        """
        data, fds, _, _ = socket.recv_fds(sock, bufsize, maxfds)
        return data, fds

    def open_pty() -> tuple[int, int]:
        """A new pseudo-terminal without echo (what is written to it is not read back as output):
        ``(master, slave)``, neither inherited by children.

        Raises:
            OSError: no pseudo-terminal could be made.
        """
        import termios  # here: the package imports where termios does not exist

        master, slave = os.openpty()
        attributes = termios.tcgetattr(slave)
        attributes[3] &= ~termios.ECHO
        termios.tcsetattr(slave, termios.TCSANOW, attributes)
        return master, slave

    def take_terminal() -> Callable[[], None]:
        """What a child started with ``setsid`` runs before ``exec`` to make its stdin (a
        pseudo-terminal) its controlling terminal. The modules are imported here, in the parent:
        nothing may be imported between fork and exec.

        Raises:
            ImportError: the platform has no ``fcntl``/``termios``.
        """
        import fcntl
        import termios

        def take() -> None:
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        return take


# --- accounts ----------------------------------------------------------------------------------


if sys.platform == "win32":  # pragma: no cover - Windows

    def login_shell() -> str | None:
        """None: Windows has no account database with login shells."""
        return None

else:

    def login_shell() -> str | None:
        """The login shell of the account running this process, from the account database
        (``pwd``), or None: no entry, no shell set, or no ``pwd`` module."""
        try:
            import pwd
        except ImportError:  # a build without it
            return None
        try:
            return pwd.getpwuid(os.getuid()).pw_shell or None
        except KeyError:
            return None


# --- processes ---------------------------------------------------------------------------------

if sys.platform == "win32":  # pragma: no cover - Windows
    SIGKILL: Final[int] = signal.SIGTERM
    """Windows has no SIGKILL; ``os.kill`` with SIGTERM terminates the process there."""

    def killpg(pgid: int, signum: int) -> None:
        """Raises ``OSError`` (``ENOSYS``): Windows has no POSIX process groups."""
        raise OSError(errno.ENOSYS, "process groups are not supported on Windows")

    def getsid(pid: int) -> int:
        """Raises ``OSError`` (``ENOSYS``): Windows has no POSIX sessions."""
        raise OSError(errno.ENOSYS, "sessions are not supported on Windows")

    def waitpid_nohang(pid: int) -> tuple[int, int]:
        """Raises ``OSError`` (``ENOSYS``): Windows cannot wait without blocking."""
        raise OSError(errno.ENOSYS, "waitpid(WNOHANG) is not supported on Windows")

else:
    SIGKILL: Final[int] = signal.SIGKILL
    """The signal that cannot be caught."""

    def killpg(pgid: int, signum: int) -> None:
        """Send ``signum`` to every process of the process group ``pgid``.

        Raises:
            ProcessLookupError: no such group. PermissionError: not ours to signal.
        """
        os.killpg(pgid, signum)

    def getsid(pid: int) -> int:
        """The session id of process ``pid`` (0: this process).

        Raises:
            ProcessLookupError: no such process.
        """
        return os.getsid(pid)

    def waitpid_nohang(pid: int) -> tuple[int, int]:
        """Collect the child ``pid`` if it has exited, without blocking.

        Returns:
            ``(pid, status)`` as ``os.waitpid``; ``(0, 0)`` while it runs.

        Raises:
            ChildProcessError: ``pid`` is not a child of this process (or was collected already).
        """
        return os.waitpid(pid, os.WNOHANG)


if sys.platform == "linux":

    def prctl(option: int, arg: int) -> int:
        """Linux ``prctl(option, arg, 0, 0, 0)``.

        Returns:
            What the call returns (-1 when the kernel refused the option).

        Raises:
            OSError: the C library has no ``prctl``.
        """
        import ctypes  # here: only the exec tools need it, when their first command runs

        try:
            call = ctypes.CDLL(None, use_errno=True).prctl
        except AttributeError as exc:
            raise OSError(errno.ENOSYS, "the C library has no prctl") from exc
        result: int = call(option, arg, 0, 0, 0)
        return result

    def pidfd_open(pid: int) -> int:
        """A descriptor that refers to process ``pid`` for as long as it is open, even after the
        pid is reused (Linux 5.3+).

        Raises:
            ProcessLookupError: no such process. OSError: the kernel has no pidfds.
        """
        return os.pidfd_open(pid)

    def pidfd_send_signal(fd: int, signum: int) -> None:
        """Send ``signum`` to the process behind the pidfd ``fd``.

        Raises:
            ProcessLookupError: it has exited. OSError: the kernel refused.
        """
        signal.pidfd_send_signal(fd, signum)

    def boot_ticks() -> int:
        """Now, in clock ticks since boot (``CLOCK_BOOTTIME`` times ``SC_CLK_TCK``): the unit of
        a process's start time in ``/proc/<pid>/stat``."""
        return int(time.clock_gettime(time.CLOCK_BOOTTIME) * os.sysconf("SC_CLK_TCK"))

else:  # pragma: no cover - not Linux

    def prctl(option: int, arg: int) -> int:
        """Raises ``OSError`` (``ENOSYS``): ``prctl`` is Linux only."""
        raise OSError(errno.ENOSYS, "prctl is Linux only")

    def pidfd_open(pid: int) -> int:
        """Raises ``OSError`` (``ENOSYS``): pidfds are Linux only."""
        raise OSError(errno.ENOSYS, "pidfds are Linux only")

    def pidfd_send_signal(fd: int, signum: int) -> None:
        """Raises ``OSError`` (``ENOSYS``): pidfds are Linux only."""
        raise OSError(errno.ENOSYS, "pidfds are Linux only")

    def boot_ticks() -> int:
        """Raises ``OSError`` (``ENOSYS``): the boot clock in ``/proc`` ticks is Linux only."""
        raise OSError(errno.ENOSYS, "CLOCK_BOOTTIME is Linux only")


if sys.platform == "linux" and sys.version_info < (3, 12):

    def watch_children_by_pidfd() -> None:
        """Python 3.11 on Linux: asyncio waits for the running loop's child processes through
        pidfds (``PidfdChildWatcher``, what 3.12 and later choose by themselves) instead of a
        thread started for each one. Nothing when pidfds are refused (a seccomp policy). Call it
        from the one event loop that starts processes."""
        import asyncio

        try:
            os.close(os.pidfd_open(os.getpid()))
        except OSError:
            return
        watcher = asyncio.PidfdChildWatcher()
        watcher.attach_loop(asyncio.get_running_loop())
        asyncio.get_event_loop_policy().set_child_watcher(watcher)

else:  # pragma: no cover - Python 3.12 and later choose pidfds themselves; not Linux: none

    def watch_children_by_pidfd() -> None:
        """Nothing: Python 3.12 and later on Linux wait through pidfds already."""
