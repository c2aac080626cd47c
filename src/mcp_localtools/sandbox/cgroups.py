"""A pids cgroup per exec session, where the server may make one: the process limit for a root server.

``RLIMIT_NPROC`` (what ``max_processes`` is otherwise) never applies to processes of the host's
root user, whatever user namespace they run in: the kernel exempts uid 0 (``INIT_USER``). So a
server running as root puts each session's sandbox in a cgroup of its own whose ``pids.max`` is
``max_processes``, made below the server's own cgroup in a cgroup v2 hierarchy that delegates the
pids controller to it, or in the cgroup v1 pids hierarchy. Where neither can be written (a
container with a read-only ``/sys/fs/cgroup``), the session has no process limit and the log says
so once.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from pathlib import Path

__all__ = ["PidsCgroup"]

logger = logging.getLogger(__name__)

_CGROUP_ROOT = Path("/sys/fs/cgroup")
_warned = threading.Event()


def _own_paths() -> dict[str, str]:
    """The server's cgroup by hierarchy: ``{"": v2 path, "pids": v1 path}``."""
    found: dict[str, str] = {}
    try:
        lines = Path("/proc/self/cgroup").read_text(encoding="utf-8").splitlines()
    except OSError:
        return found
    for line in lines:
        _, controllers, path = line.split(":", 2)
        for name in controllers.split(","):
            found[name] = path
    return found


def _parent() -> Path | None:
    """Where session cgroups are made: a v2 cgroup with the pids controller delegated, else the
    v1 pids hierarchy's cgroup of the server; None when neither is writable."""
    own = _own_paths()
    candidates: list[Path] = []
    if "" in own:
        for mount in (_CGROUP_ROOT, _CGROUP_ROOT / "unified"):
            base = mount / own[""].lstrip("/")
            with contextlib.suppress(OSError):
                if "pids" in (base / "cgroup.subtree_control").read_text(encoding="utf-8").split():
                    candidates.append(base)
    if "pids" in own:
        candidates.append(_CGROUP_ROOT / "pids" / own["pids"].lstrip("/"))
    for base in candidates:
        if os.access(base, os.W_OK) and (base / "cgroup.procs").exists():
            return base
    return None


def _sweep(parent: Path) -> None:
    """Remove the empty session cgroups of servers that are gone (killed before cleaning up)."""
    with contextlib.suppress(OSError):
        for entry in parent.glob("mcp-localtools-*"):
            pid = entry.name.split("-")[2]
            if pid.isdigit() and not Path(f"/proc/{pid}").exists():
                with contextlib.suppress(OSError):
                    entry.rmdir()


class PidsCgroup:
    """One session's pids cgroup (made by ``create``; ``enter`` runs in the sandbox's child before
    ``exec``; ``remove`` when the sandbox has ended).

    Attributes:
        path: the cgroup's directory.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._procs = str(path / "cgroup.procs")

    @classmethod
    def create(cls, name: str, limit: int) -> PidsCgroup | None:
        """A new cgroup ``name`` holding at most ``limit`` processes; None where the server cannot
        make one (logged once)."""
        parent = _parent()
        if parent is None:
            if not _warned.is_set():
                _warned.set()
                logger.warning(
                    "no pids cgroup can be made here: [exec.sandbox] max_processes does not bound the "
                    "commands of a server running as root"
                )
            return None
        _sweep(parent)
        path = parent / name
        try:
            path.mkdir()
            (path / "pids.max").write_text(str(limit), encoding="ascii")
        except OSError as exc:
            logger.warning("cannot make the pids cgroup %s: %s", path, exc)
            with contextlib.suppress(OSError):
                path.rmdir()
            return None
        return cls(path)

    def enter(self) -> None:
        """Move the calling process into the cgroup (in a child between fork and exec: it writes
        one line and allocates nothing)."""
        fd = os.open(self._procs, os.O_WRONLY)
        try:
            os.write(fd, b"0")
        finally:
            os.close(fd)

    def remove(self) -> None:
        """Remove the cgroup once its last process is gone (retried for up to a second: the
        processes of an ended PID namespace take a moment to be released)."""
        for _ in range(50):
            try:
                self.path.rmdir()
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.02)
            else:
                return
