"""Whether the working directory may serve as the root when nobody named one.

A server started without ``--root``, ``[paths] allowed_roots`` or ``MCP_LOCALTOOLS_ROOTS`` takes its
working directory as its only root: what a developer who starts it in a project expects. Desktop
clients start servers in ``/`` (Claude Desktop) or the home directory, where that default would serve
the whole disk or every secret of the user, silently. Those directories are never taken by default:
the server then works only in the roots the client sends (MCP roots), as the reference filesystem
server does.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path, PurePath

__all__ = ["implicit_root_refusal", "user_home"]

_SYSTEM_DIRS = frozenset(
    """/bin /boot /dev /etc /home /lib /lib32 /lib64 /libx32 /media /mnt /opt /proc /root /run /sbin
    /snap /srv /sys /tmp /usr /usr/local /var /var/tmp /var/lib /var/log
    /Applications /Library /System /Users /Volumes /cores /private /private/etc /private/tmp
    /private/var""".split()
)
"""Directories that are never a project: refused themselves."""

_SYSTEM_TREES = tuple(
    """/bin /boot /dev /etc /lib /lib32 /lib64 /libx32 /proc /run /sbin /sys /usr/bin /usr/lib
    /usr/libexec /usr/sbin /usr/share /System /Library /private/etc""".split()
)
"""Directories refused together with everything below them (the operating system's own files)."""


def _windows_reason(cwd: PurePath) -> str | None:
    anchor = PurePath(cwd.anchor)
    system = anchor / "Windows"
    if cwd == system or cwd.is_relative_to(system):
        return f"the Windows system directory {cwd}"
    for name in ("Program Files", "Program Files (x86)", "ProgramData", "Users"):
        if cwd == anchor / name:
            return f"the system directory {cwd}"
    return None


def user_home() -> Path | None:
    """The user's home directory: ``HOME`` (``USERPROFILE`` on Windows), else the account's
    (``pwd``), as ``Path.expanduser`` finds it; None when there is none."""
    try:
        return Path("~").expanduser()
    except RuntimeError:  # no HOME and no account entry
        return None


def implicit_root_refusal(cwd: Path, home: Path | None) -> str | None:
    """Why the working directory ``cwd`` must not be the default root, or None when it may.

    Refused: the filesystem (or drive) root, the home directory ``home`` or any directory above
    it, and the operating system's directories (``/usr``, ``/etc``, ``/var``, ``/tmp``, ...; the
    trees of ``/etc``, ``/usr/lib``, ``/proc``, ... with everything below them). Both paths are
    compared after resolving symlinks (``/tmp`` is ``/private/tmp`` on macOS).

    Args:
        cwd: the working directory (absolute).
        home: the user's home directory, or None when unknown.

    Returns:
        A phrase naming what ``cwd`` is ("the filesystem root /", "your home directory
        /home/alice"), or None.
    """
    real = Path(os.path.realpath(cwd))
    if real == Path(real.anchor):
        return f"the filesystem root {real}"
    if home is not None:
        real_home = Path(os.path.realpath(home))
        if real == real_home:
            return f"your home directory {real}"
        if real_home.is_relative_to(real):
            return f"{real}, which holds your home directory"
    if sys.platform == "win32":
        reason = _windows_reason(real)
    else:
        reason = _posix_reason(real)
    return reason


def _posix_reason(real: Path) -> str | None:
    if str(real) in _SYSTEM_DIRS:
        return f"the system directory {real}"
    if any(real.is_relative_to(tree) for tree in _SYSTEM_TREES):
        return f"{real}, a directory of the operating system"
    return None
