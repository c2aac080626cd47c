"""The sandbox policy: what a command started by the exec tools may read, write and reach.

One ``SandboxPolicy`` is built from ``[exec.sandbox]`` and the path policy, and a backend
(``bwrap.py``, ``landlock.py``, ``seatbelt.py``; ``probe.py`` picks one) turns it into the
operating system's own containment:

* **writable**: the allowed roots (and ``write_paths``), the exec session's private temporary
  directory (``TMPDIR``), and nothing else;
* **readable**: the system (``/usr``, ``/bin``, ``/lib*``, ``/etc``, ``/opt`` ... everything not
  hidden), the roots, and the toolchains commands need even where they live in a hidden place:
  the install prefix of every ``PATH`` entry (``~/.pyenv``, ``~/.cargo``, ``~/.local`` ...), the
  server's own Python, and ``read_paths``;
* **hidden**: the home directory, ``/home``, ``/root``, ``/tmp`` and ``/var/tmp`` (a command gets
  an empty ``/tmp`` of its own), mounted media, ``/run`` (host services' sockets), and
  ``hide_paths``;
* **protected**: paths inside the roots that stay read-only for commands (and are refused to the
  file tools): ``policy/protected.py``, and the git files of every nested repository
  (``git.py``);
* **network**: none unless ``network = true``;
* **processes**: a command sees only its own processes (a PID namespace), has no capabilities,
  and dies with the server.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from mcp_localtools.config import SandboxConfig

__all__ = [
    "DEFAULT_HIDDEN",
    "RESOLVER_PATHS",
    "SandboxPolicy",
    "canonical",
    "exists",
    "real_dir",
]

DEFAULT_HIDDEN = ("/home", "/root", "/tmp", "/var/tmp", "/media", "/mnt", "/run")  # noqa: S108
"""Directories no command sees (besides the server's home directory): other users' files,
secrets in home directories, other programs' temporary files, mounted media, and ``/run`` with
the host services' UNIX sockets (a Docker or D-Bus socket is as good as a network, or root)."""

RESOLVER_PATHS = ("/run/systemd/resolve",)
"""Exposed again when commands have the network: ``/etc/resolv.conf`` often links there."""


@dataclass(frozen=True, slots=True)
class SandboxPolicy:
    """What commands may touch, as absolute, canonical paths.

    Attributes:
        writable: directories a command may write (the roots and ``write_paths``).
        hidden: directories a command cannot see at all.
        exposed: read-only holes in ``hidden``: toolchains and ``read_paths``.
        protected: read-only paths inside ``writable`` (existing or not).
        network: whether commands share the host's network.
        unprotected: paths lifted from protection on purpose (the git paths found in nested
            repositories are protected unless lifted here).
    """

    writable: tuple[Path, ...]
    hidden: tuple[Path, ...]
    exposed: tuple[Path, ...]
    protected: tuple[Path, ...]
    network: bool
    unprotected: tuple[Path, ...] = ()

    @classmethod
    def create(
        cls,
        config: SandboxConfig,
        *,
        roots: Sequence[Path],
        environ: Mapping[str, str],
        protected: Sequence[Path] = (),
        unprotected: Sequence[Path] = (),
    ) -> SandboxPolicy:
        """Build the policy.

        Args:
            config: ``[exec.sandbox]``.
            roots: the allowed roots (canonical).
            environ: the environment commands get (``HOME`` and ``PATH`` are read from it).
            protected: the protected paths (``policy.protected.protected_paths``).
            unprotected: the paths lifted from protection (``unprotected_paths``, canonical).
        """
        home = environ.get("HOME", "")
        names = [*DEFAULT_HIDDEN, *([home] if home.startswith("/") else []), *config.hide_paths]
        hidden = tuple(path for path in canonical(names) if path != Path("/") and os.path.lexists(path))
        search_path = environ.get("PATH", "")
        candidates: list[str | Path] = [
            *_toolchains(search_path, hidden),
            *_interpreter(hidden),
            *(RESOLVER_PATHS if config.network else ()),
            *config.read_paths,
        ]
        return cls(
            writable=canonical([*map(str, roots), *config.write_paths]),
            hidden=hidden,
            exposed=tuple(path for path in canonical(candidates) if exists(path)),
            protected=tuple(protected),
            network=config.network,
            unprotected=tuple(unprotected),
        )


# os.path's checks answer False where the server may not search a directory; Path's raise
# PermissionError there (Python 3.11), which an unprivileged server meets under /root.
def exists(path: Path) -> bool:
    """Whether ``path`` exists (following links); False where it cannot be looked at."""
    return os.path.exists(path)  # noqa: PTH110


def real_dir(path: Path) -> bool:
    """A real directory, not a symlink to one."""
    return os.path.isdir(path) and not os.path.islink(path)  # noqa: PTH112, PTH114


def canonical(paths: Iterable[str | Path]) -> tuple[Path, ...]:
    """The absolute entries of ``paths`` (``~`` expanded), symlinks resolved, first of each kept."""
    seen: list[Path] = []
    for raw in paths:
        given = Path(raw).expanduser()
        if not str(raw) or not given.is_absolute():
            continue
        path = Path(os.path.realpath(given))
        if path not in seen:
            seen.append(path)
    return tuple(seen)


def _toolchains(search_path: str, hidden: Sequence[Path]) -> list[Path]:
    """The install prefix of each ``PATH`` entry that lies in a hidden directory: the first
    component below it (``~/.pyenv/shims`` → ``~/.pyenv``, ``~/.cargo/bin`` → ``~/.cargo``)."""
    found: list[Path] = []
    for entry in search_path.split(os.pathsep):
        if not entry.startswith("/"):
            continue
        real = Path(os.path.realpath(entry))
        for directory in hidden:
            if real != directory and real.is_relative_to(directory):
                found.append(directory / real.relative_to(directory).parts[0])
    return found


def _interpreter(hidden: Sequence[Path]) -> list[Path]:
    """The server's own Python (its virtual environment and base installation) where it lies in
    a hidden directory, so commands can run it."""
    prefixes = {Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable).parent}
    return [p for p in prefixes for d in hidden if p.is_relative_to(d) and p != d]
