"""Descriptors, sockets and pseudo-terminals, per platform (see ``compat``)."""

from __future__ import annotations

import errno
import os
import socket
import sys
from collections.abc import Callable, Sequence

__all__ = ["open_pty", "recv_fds", "send_fds", "seqpacket_pair", "set_blocking", "take_terminal"]

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
