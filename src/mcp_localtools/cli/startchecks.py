"""What must still hold on disk for a start-up cache entry to serve (``startcache``): the config
file's content, the kernel's user-namespace switches, which ``bwrap`` and ``rg`` binaries are
found, and the roots as they resolve; and the cache's folder, made and found private to this user."""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp_localtools.config import Config

__all__ = ["Checks", "checks_before", "make_folder", "private"]

_PROGRAMS = ("bwrap", "rg")
"""Programs whose location the start-up line and the sandbox probe depend on."""
_KERNEL_SWITCHES = (
    "/proc/sys/kernel/unprivileged_userns_clone",
    "/proc/sys/user/max_user_namespaces",
    "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
)
"""What decides whether bubblewrap may make its namespaces (the probe's verdict)."""


@dataclass(frozen=True)
class Checks:
    """What must still hold on disk for an entry to serve: ``files`` (path → SHA-256 of its
    content, None when absent), ``programs`` (name → where it is found on ``PATH``), ``roots``
    (a configured root or base directory → its real path, None when it is not a directory)."""

    files: dict[str, str | None]
    programs: dict[str, str | None]
    roots: dict[str, str | None]

    @classmethod
    def now(
        cls, files: Sequence[str], programs: Sequence[str], roots: Sequence[str], path: str | None
    ) -> Checks:
        """The checks as they hold now; ``path`` is the ``PATH`` programs are looked up on."""
        return cls(
            {name: _digest(name) for name in files},
            {name: _program(name, path) for name in programs},
            {name: _real_dir(name) for name in roots},
        )

    def hold(self, path: str | None) -> bool:
        """True when every check gives today what it gave when the entry was written."""
        return self == Checks.now(list(self.files), list(self.programs), list(self.roots), path)


def _program(name: str, path: str | None) -> str | None:
    """Where ``name`` is found on ``path``, with the found file's identity (device, inode, size,
    change time: a binary replaced or upgraded in place is another program)."""
    found = shutil.which(name, path=path)
    if found is None:
        return None
    try:
        info = os.stat(found)
    except OSError:
        return None
    return f"{found}:{info.st_dev}:{info.st_ino}:{info.st_size}:{info.st_ctime_ns}"


def _digest(name: str) -> str | None:
    try:
        return hashlib.sha256(Path(name).read_bytes()).hexdigest()
    except OSError:
        return None


def _real_dir(name: str) -> str | None:
    real = os.path.realpath(Path(name).expanduser())
    return real if Path(real).is_dir() else None


def checks_before(config_file: str | None, config: Config | None = None) -> Checks:
    """The checks of a start taken before its config is read (``config`` None: the config file,
    the kernel's switches and the programs) or before its server is built (``config``: its roots
    too): ``record`` writes an entry only when they still hold after the build, so an entry never
    pairs a config or a root as it is now with a server built from what it was."""
    files = [str(Path(config_file).expanduser().absolute())] if config_file else []
    roots = []
    if config is not None:
        paths = config.paths
        roots = [*paths.allowed_roots, *([paths.work_base_dir] if paths.work_base_dir else [])]
    return Checks.now([*files, *_KERNEL_SWITCHES], _PROGRAMS, roots, os.environ.get("PATH"))


def make_folder(folder: Path) -> None:
    """Make ``folder`` and each missing folder above it, private to this user (``0o700``: a
    parent made with the process's mode would be group-writable under umask 002, and ``private``
    would then refuse the cache for good).

    Raises:
        OSError: a folder cannot be made (a read-only home, a file in the way).
    """
    missing = [path for path in (folder, *folder.parents) if not path.exists()]
    for path in reversed(missing):
        path.mkdir(mode=0o700, exist_ok=True)


def private(folder: Path) -> bool:
    """True when ``folder`` is a directory of this user that nobody else may write, nor any folder
    above it (each is this user's or root's, and writable by others only when sticky, as /tmp;
    POSIX; on Windows the user's profile holds it): another user's entries must never be served,
    nor ours written where another user could swap them."""
    info = folder.stat()
    if not hasattr(os, "getuid"):  # pragma: no cover - Windows
        return True
    if info.st_uid != os.getuid() or info.st_mode & 0o022:
        return False
    for above in Path(os.path.realpath(folder)).parents:
        info = above.stat()
        if info.st_uid not in (os.getuid(), 0) or (info.st_mode & 0o022 and not info.st_mode & 0o1000):
            return False
    return True
