"""Accounts and processes, per platform: the login shell, process groups and signals, Linux's
``prctl``, pidfds and boot clock (see ``compat``)."""

from __future__ import annotations

import errno
import os
import signal
import sys
import time
from typing import Final

__all__ = [
    "SIGHUP",
    "SIGKILL",
    "boot_ticks",
    "getsid",
    "killpg",
    "login_shell",
    "pidfd_open",
    "pidfd_send_signal",
    "prctl",
    "waitpid_nohang",
    "watch_children_by_pidfd",
]

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
    SIGHUP: Final[int] = signal.SIGTERM
    """Windows has no SIGHUP: SIGTERM stands for it."""

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
    SIGHUP: Final[int] = signal.SIGHUP
    """A terminal's hang-up: an interactive bash or zsh (which ignore SIGTERM) exits on it and
    hangs up its jobs; bash runs its EXIT traps on it (dash does not, on this or SIGTERM)."""

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

    def has_child_processes() -> bool:
        """Whether this process has any child, running, stopped or exited and not yet collected,
        whichever of its threads started it: one ``waitid(P_ALL, WNOHANG | WNOWAIT)``, which
        collects nothing."""
        try:
            os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return False
        return True

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

    def has_child_processes() -> bool:
        """Raises ``OSError`` (``ENOSYS``): used only where ``/proc`` lists children (Linux)."""
        raise OSError(errno.ENOSYS, "waitid(P_ALL) is used on Linux only")


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
