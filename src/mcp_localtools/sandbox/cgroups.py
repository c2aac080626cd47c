"""The cgroups of a sandbox, where the server may make them: its processes and its memory, bounded
per sandbox and, for processes, per server.

``RLIMIT_NPROC`` (what ``max_processes`` is otherwise) never applies to processes of the host's
root user, whatever user namespace they run in: the kernel exempts uid 0 (``INIT_USER``); and
``RLIMIT_DATA`` (what ``memory_mb`` is otherwise, per process) does not count ``MAP_SHARED``
mappings nor a tmpfs's pages. So each sandbox is put in cgroups of its own: ``pids.max`` is
``max_processes``, the memory limit is ``memory_mb`` for the sandbox's processes together (shared
mappings, ``/dev/shm`` and its tmpfs included: the kernel charges those pages to the writer's
cgroup). They are made in one group per server, ``mcp-localtools-<pid>``, whose ``pids.max`` is
``total_processes``, below the server's own cgroup: in a cgroup v2 hierarchy that delegates the
controllers to it (a container with its own cgroup namespace, a systemd user slice with
``Delegate=yes``), or in the cgroup v1 ``pids`` and ``memory`` hierarchies. A controller whose
hierarchy cannot be written (a read-only ``/sys/fs/cgroup``) is left out, and the log says so once.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import threading
import time
from pathlib import Path

__all__ = ["SandboxCgroups"]

logger = logging.getLogger(__name__)

_CGROUP_ROOT = Path("/sys/fs/cgroup")
_warned: set[str] = set()
_guard = threading.Lock()
_numbers = itertools.count(1)
_LIMITS = {"pids": "pids.max", "memory": "memory.max"}
_V1_LIMITS = {"pids": "pids.max", "memory": "memory.limit_in_bytes"}


def _own_paths() -> dict[str, str]:
    """The server's cgroup by hierarchy: ``{"": v2 path, "pids": v1 path, "memory": v1 path}``."""
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


def _parents() -> dict[str, tuple[Path, str]]:
    """Where each controller's groups are made: ``{controller: (directory, limit file)}``: a v2
    cgroup with the controller delegated, else the v1 hierarchy's cgroup of the server; a
    controller that is not writable is missing."""
    own = _own_paths()
    found: dict[str, tuple[Path, str]] = {}
    if "" in own:
        for mount in (_CGROUP_ROOT, _CGROUP_ROOT / "unified"):
            base = mount / own[""].lstrip("/")
            with contextlib.suppress(OSError):
                delegated = (base / "cgroup.subtree_control").read_text(encoding="utf-8").split()
                for controller in _LIMITS:
                    if controller in delegated and _writable(base):
                        found.setdefault(controller, (base, _LIMITS[controller]))
    for controller in _V1_LIMITS:
        if controller in own and controller not in found:
            base = _CGROUP_ROOT / controller / own[controller].lstrip("/")
            if _writable(base):
                found[controller] = (base, _V1_LIMITS[controller])
    return found


def _writable(base: Path) -> bool:
    return os.access(base, os.W_OK) and (base / "cgroup.procs").exists()


def _sweep(parent: Path) -> None:
    """Remove the groups of servers that are gone (killed before cleaning up), children first."""
    with contextlib.suppress(OSError):
        for entry in parent.glob("mcp-localtools-*"):
            pid = entry.name.split("-")[2]
            if pid.isdigit() and not Path(f"/proc/{pid}").exists():
                for child in [*entry.glob("*/"), entry]:
                    with contextlib.suppress(OSError):
                        child.rmdir()


_servers: dict[Path, Path] = {}


def _server_group(parent: Path, controller: str, total_processes: int) -> Path:
    """This server process's group below ``parent`` (made once, its ``pids.max`` then set to
    ``total_processes`` for the pids controller; on cgroup v2 the controller is enabled for its
    children).

    Raises:
        OSError: it cannot be made.
    """
    with _guard:
        group = _servers.get(parent)
        if group is None or not group.is_dir():
            _sweep(parent)
            group = parent / f"mcp-localtools-{os.getpid()}"
            group.mkdir(exist_ok=True)
            _servers[parent] = group
            if controller == "pids":  # the first sandbox's config sets the process's total
                (group / "pids.max").write_text(str(total_processes), encoding="ascii")
        control = group / "cgroup.subtree_control"
        if control.exists() and controller not in control.read_text(encoding="ascii").split():
            control.write_text(f"+{controller}", encoding="ascii")  # v2: the children get it too
        return group


class SandboxCgroups:
    """One sandbox's cgroups (made by ``create``; ``enter`` runs in the sandbox's first process
    before ``exec``; ``remove`` once the sandbox has ended).

    Attributes:
        paths: the groups' directories (one per hierarchy: one on cgroup v2, two on v1).
        controllers: the controllers that bound the sandbox (``pids``, ``memory``).
    """

    def __init__(self, paths: list[Path], controllers: list[str]) -> None:
        self.paths = list(dict.fromkeys(paths))
        self.controllers = controllers
        self._procs = [str(path / "cgroup.procs") for path in self.paths]

    @classmethod
    def create(cls, *, processes: int, memory_bytes: int, total_processes: int) -> SandboxCgroups | None:
        """New groups holding at most ``processes`` processes (and ``total_processes`` for the
        whole server) and ``memory_bytes`` of memory; None where no controller can be used
        (logged once per controller). Blocking (writes to ``/sys/fs/cgroup``)."""
        parents = _parents()
        for controller in _LIMITS:
            if controller == "pids" and not (hasattr(os, "geteuid") and os.geteuid() == 0):
                continue  # RLIMIT_NPROC bounds a server that is not root
            if controller not in parents and controller not in _warned:
                _warned.add(controller)
                logger.warning(
                    "no %s cgroup can be made here: %s",
                    controller,
                    "[exec.sandbox] max_processes and total_processes do not bound the commands of a "
                    "server running as root"
                    if controller == "pids"
                    else "[exec.sandbox] memory_mb bounds each process (RLIMIT_DATA), not shared memory "
                    "or a sandbox's processes together",
                )
        name = f"sandbox-{next(_numbers)}"
        paths: list[Path] = []
        made: list[str] = []
        for controller, (parent, limit) in parents.items():
            value = processes if controller == "pids" else memory_bytes
            try:
                path = _server_group(parent, controller, total_processes) / name
                path.mkdir(exist_ok=True)
                (path / limit).write_text(str(value), encoding="ascii")
            except OSError as exc:
                logger.warning("cannot make the %s cgroup of a sandbox: %s", controller, exc)
                continue
            paths.append(path)
            made.append(controller)
        return cls(paths, made) if paths else None

    def memory_kills(self) -> int:
        """How many processes the kernel has stopped at the memory limit so far (v2
        ``memory.events`` ``oom_kill``; v1 ``memory.oom_control`` ``oom_kill``); 0 without a
        memory group."""
        for path in self.paths:
            for name in ("memory.events", "memory.oom_control"):
                with contextlib.suppress(OSError, ValueError):
                    for line in (path / name).read_text(encoding="ascii").splitlines():
                        key, _, value = line.partition(" ")
                        if key == "oom_kill":
                            return int(value)
        return 0

    def enter(self) -> None:
        """Move the calling process into the groups (in a child between fork and exec: it writes
        one line per group and allocates nothing)."""
        for procs in self._procs:
            fd = os.open(procs, os.O_WRONLY)
            try:
                os.write(fd, b"0")
            finally:
                os.close(fd)

    def remove(self) -> None:
        """Remove the groups once their last process is gone (retried for up to a second: the
        processes of an ended PID namespace take a moment to be released)."""
        for path in self.paths:
            for _ in range(50):
                try:
                    path.rmdir()
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)
                else:
                    break
