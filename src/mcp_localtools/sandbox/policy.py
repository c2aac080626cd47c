"""The sandbox policy: what a command started by the exec tools may read, write and reach.

One ``SandboxPolicy`` is built from ``[exec.sandbox]`` and the path policy, and a backend
(``bwrap.py``, ``landlock.py``, ``seatbelt.py``; ``probe.py`` picks one) turns it into the
operating system's own containment:

* **writable**: the allowed roots (and ``write_paths``), the connection's private temporary
  directory (``TMPDIR``), and nothing else;
* **readable**: the system (``/usr``, ``/bin``, ``/lib*``, ``/etc``, ``/opt`` ... everything not
  hidden), the roots, and the smallest units of the toolchains commands need where they live in a
  hidden place (``exposure.py``: each ``PATH`` entry itself, the resolved prefixes of the
  interpreters it links to, the server's own Python), and ``read_paths``;
* **hidden**: the home directory, ``/home``, ``/root``, ``/tmp`` and ``/var/tmp`` (a command gets
  an empty ``/tmp`` of its own), mounted media, ``/run`` (host services' sockets), and
  ``hide_paths``;
* **secret**: known credential files (``~/.ssh``, ``~/.aws``, tokens of git hosts and package
  registries, ``~/.local/state``, ...) stay hidden even inside what is exposed or writable;
* **protected**: paths inside the roots that stay read-only for commands (and are refused to the
  file tools): ``policy/protected.py``, and the git files of every nested repository
  (``git.py``);
* **network**: none unless ``network = true``;
* **processes**: a command sees only its own processes (a PID namespace), has no capabilities,
  and dies with the server.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from mcp_localtools.config import SandboxConfig
from mcp_localtools.sandbox.exposure import credential_paths, exposed_paths

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
        exposed: read-only holes in ``hidden``: toolchains and ``read_paths`` (``exposure.py``).
        protected: read-only paths inside ``writable`` (existing or not).
        secret: credential paths hidden again inside ``exposed`` and ``writable``.
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
    secret: tuple[Path, ...] = ()

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
            roots: the allowed roots (canonical; one that no longer resolves to itself, swapped for
                a symlink since it was checked, is left out of ``writable``).
            environ: the environment commands get (``HOME`` and ``PATH`` are read from it).
            protected: the protected paths (``policy.protected.protected_paths``).
            unprotected: the paths lifted from protection (``unprotected_paths``, canonical).
        """
        home = environ.get("HOME", "")
        names = [*DEFAULT_HIDDEN, *([home] if home.startswith("/") else []), *config.hide_paths]
        hidden = tuple(path for path in canonical(names) if path != Path("/") and os.path.lexists(path))
        read_paths = canonical(config.read_paths)
        candidates: list[str | Path] = [
            *exposed_paths(environ, hidden),
            *(RESOLVER_PATHS if config.network else ()),
            *read_paths,
        ]
        exposed = tuple(path for path in canonical(candidates) if exists(path))
        # The roots come checked and canonical: not resolved again, since a root swapped for a
        # symlink meanwhile would make its target (/ even) writable; such a root is dropped.
        own = [Path(root) for root in roots if Path(os.path.realpath(root)) == Path(root)]
        writable = tuple(dict.fromkeys([*own, *canonical(config.write_paths)]))
        return cls(
            writable=writable,
            hidden=hidden,
            exposed=exposed,
            protected=tuple(protected),
            network=config.network,
            unprotected=tuple(unprotected),
            secret=credential_paths(
                environ, config.credential_paths, within=[*exposed, *writable], lifted=read_paths
            ),
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
