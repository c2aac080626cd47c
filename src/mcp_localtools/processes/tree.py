"""Find every process a command started, including those that left its process group.

Each command runs as the leader of a new session and process group, so ``killpg`` reaches its
ordinary children. A child that calls ``setsid`` or double-forks escapes that; on Linux we find
it anyway:

* the server makes itself a *child subreaper* (``PR_SET_CHILD_SUBREAPER``), so an orphaned
  descendant is re-parented to the server instead of to init, and stays in the server's tree;
* each command carries a random marker in its environment (``MCP_LOCALTOOLS_RUN``), inherited by
  its descendants;
* ``sweep()`` walks the server's process tree from ``/proc`` and returns every process that is
  in the command's process group or session, carries its marker, or descends from one that does.

Only processes below the server are ever considered, so nothing foreign is signalled. A process
that leaves the session *and* clears its environment *and* is orphaned is invisible to this; the
README says so, and that a container or PID namespace is the real boundary.

Such a process (or one that exited before a sweep could read its marker) ends as a zombie child
of the server, which nobody else waits for. Other children of the server are waited for by
their owners (asyncio's child watcher for commands and parser workers, ``subprocess`` for rg),
so there is no ``waitpid(-1)``: a sweep records as *orphans* the server's children that are not
a command's shell and that look escaped from a command (a session of their own, started while
the command ran), and collects only recorded orphans that have exited, one by one, after the
event loop had a turn to let a child watcher collect its own first. Every other child of
the server (rg, parser workers) stays in the server's session, so none can be taken for an orphan.

Signals go through ``pidfd_send_signal`` after re-reading the start time, so a recycled pid is
never hit. The server also marks itself non-dumpable (``PR_SET_DUMPABLE=0``), so that commands
running as the same (non-root) user cannot open ``/proc/<server>/fd/1`` to forge protocol frames,
read its environment or memory, or ptrace it.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from mcp_localtools import compat

__all__ = ["RUN_MARKER", "ProcessInfo", "ProcessTree", "Sweep", "harden_server_process"]

logger = logging.getLogger(__name__)

RUN_MARKER = "MCP_LOCALTOOLS_RUN"
"""Environment variable that tags every process of one command run."""

_PR_SET_DUMPABLE = 4
_PR_SET_CHILD_SUBREAPER = 36
_PROC = "/proc"


@dataclass(frozen=True, slots=True)
class ProcessInfo:
    """One line of the process table: ids, state and start time (clock ticks since boot)."""

    pid: int
    ppid: int
    pgid: int
    sid: int
    state: str
    start: int


@dataclass(frozen=True, slots=True)
class Sweep:
    """One walk of the server's process tree for one run.

    Attributes:
        members: the run's processes, zombies included.
        strays: the other processes below the server, parents before their children.
    """

    members: list[ProcessInfo]
    strays: list[ProcessInfo]


def harden_server_process() -> bool:
    """Make this process a child subreaper and non-dumpable (Linux; a no-op elsewhere).

    Returns:
        True when the subreaper is in place, so escaped descendants can be found.
    """
    if not compat.HAS_PRCTL:
        return False
    try:
        subreaper = bool(compat.prctl(_PR_SET_CHILD_SUBREAPER, 1) == 0)
        compat.prctl(_PR_SET_DUMPABLE, 0)
    except OSError as exc:  # pragma: no cover - a libc without prctl
        logger.warning("cannot make the server a child subreaper (%s); escaped processes may survive", exc)
        return False
    if not subreaper:  # pragma: no cover - kernels before 3.4
        logger.warning("PR_SET_CHILD_SUBREAPER failed; escaped processes may survive")
    return subreaper


def _read_stat(pid: int) -> ProcessInfo | None:
    try:
        with open(f"{_PROC}/{pid}/stat", "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    # "pid (comm) state ppid pgrp session ..."; comm may contain spaces and parentheses.
    fields = data[data.rfind(b")") + 2 :].split()
    try:
        return ProcessInfo(
            pid=pid,
            ppid=int(fields[1]),
            pgid=int(fields[2]),
            sid=int(fields[3]),
            state=fields[0].decode("ascii", "replace"),
            start=int(fields[19]),
        )
    except (IndexError, ValueError):  # pragma: no cover - a malformed stat line
        return None


def _has_marker(pid: int, marker: bytes) -> bool:
    try:
        with open(f"{_PROC}/{pid}/environ", "rb") as handle:
            return marker in handle.read()
    except OSError:
        return False


class ProcessTree:
    """The processes below this server, as ``/proc`` shows them (Linux only).

    Attributes:
        available: whether ``/proc`` can be read; elsewhere ``members`` returns nothing and only
            the process group is signalled.
    """

    def __init__(self) -> None:
        self.root = os.getpid()
        self.available = compat.HAS_PROCFS
        # The kernel's per-thread list of children (CONFIG_PROC_CHILDREN) lets a sweep visit only
        # this server's subtree (everything escaped is re-parented into it, the server being a
        # subreaper); without it every process on the machine is read.
        self._children_files = (
            self.available and Path(_PROC, "self", "task", str(self.root), "children").exists()
        )
        self._session = compat.getsid(0) if self.available else -1
        self._leaders: set[int] = set()  # shells of runs in progress (asyncio waits for them)
        self._spawning = 0  # runs being started: a shell not yet in _leaders may exist
        self._orphans: dict[int, int] = {}  # pid -> start tick of a recorded orphan

    def clock(self) -> int:
        """Now, in the unit of ``ProcessInfo.start`` (clock ticks since boot); 0 without ``/proc``."""
        if not self.available:
            return 0
        return compat.boot_ticks()

    @contextlib.contextmanager
    def starting(self) -> Iterator[None]:
        """Wrap the start of a run's shell: no orphan is collected meanwhile, since the new
        shell, not yet ``started()``, could be taken for one."""
        self._spawning += 1
        try:
            yield
        finally:
            self._spawning -= 1

    def started(self, leader: int) -> None:
        """``leader`` is the shell of a run in progress: never an orphan."""
        self._leaders.add(leader)

    def finished(self, leader: int) -> None:
        """The run of ``leader`` is over and its shell collected by its owner."""
        self._leaders.discard(leader)

    def has_children(self) -> bool | None:
        """Whether this server has any child process (zombies included); None when the kernel's
        children lists are not available (then a sweep could not visit the subtree either). One
        ``waitid`` that collects nothing (``compat.has_child_processes``): it cannot block, and
        costs about a microsecond where reading every thread's children list cost 80."""
        if not self._children_files:
            return None
        return compat.has_child_processes()

    def _child_pids(self, pid: int) -> list[int]:
        pids: list[int] = []
        try:
            with os.scandir(f"{_PROC}/{pid}/task") as entries:
                tasks = [entry.name for entry in entries]
        except OSError:
            return []
        for task in tasks:
            try:
                with open(f"{_PROC}/{pid}/task/{task}/children", "rb") as handle:
                    pids.extend(int(child) for child in handle.read().split())
            except OSError:
                continue
        return pids

    def _children(self, pid: int) -> list[ProcessInfo]:
        """The live children of ``pid`` (of all its threads), from the kernel's children lists."""
        return [info for info in map(_read_stat, self._child_pids(pid)) if info is not None]

    def _whole_table(self) -> dict[int, list[ProcessInfo]]:
        """Children by parent, from reading every process on the machine (the fallback)."""
        children: dict[int, list[ProcessInfo]] = defaultdict(list)
        for entry in os.scandir(_PROC):
            if entry.name.isdigit():
                info = _read_stat(int(entry.name))
                if info is not None:
                    children[info.ppid].append(info)
        return children

    def sweep(self, leader: int, token: str) -> Sweep:
        """The processes of the run whose shell is ``leader`` (also its group and session id)
        and whose environment carries ``RUN_MARKER=token``, zombies included (``reap`` them),
        and the other processes below the server (for ``orphans``). Blocking: reads ``/proc``."""
        if not self.available:
            return Sweep([], [])
        children_of: Callable[[int], list[ProcessInfo]]
        if self._children_files:
            children_of = self._children
        else:
            table = self._whole_table()
            children_of = table.__getitem__
        marker = f"{RUN_MARKER}={token}\0".encode()
        found: list[ProcessInfo] = []
        strays: list[ProcessInfo] = []
        stack: list[tuple[ProcessInfo, bool]] = [(child, False) for child in children_of(self.root)]
        while stack:
            info, inherited = stack.pop()
            ours = (
                inherited
                or info.pid == leader
                or info.pgid == leader
                or info.sid == leader
                or (info.state != "Z" and _has_marker(info.pid, marker))
            )
            if ours:
                found.append(info)
            else:
                strays.append(info)
            stack.extend((child, ours) for child in children_of(info.pid))
        return Sweep(found, strays)

    def signal(self, processes: list[ProcessInfo], signum: int) -> None:
        """Send ``signum`` to each process that is still the one the table saw."""
        for info in processes:
            if info.state == "Z":
                continue
            try:
                fd = compat.pidfd_open(info.pid)
            except ProcessLookupError:
                continue
            except OSError:  # pragma: no cover - no pidfd support: plain kill, same check
                fd = -1
            try:
                current = _read_stat(info.pid)
                if current is None or current.start != info.start:
                    continue  # exited, and the pid may belong to someone else now
                if fd >= 0:
                    compat.pidfd_send_signal(fd, signum)
                else:  # pragma: no cover
                    os.kill(info.pid, signum)
            except ProcessLookupError:
                pass
            finally:
                if fd >= 0:
                    os.close(fd)

    def reap(self, processes: list[ProcessInfo], leader: int) -> None:
        """Collect exited orphans that were re-parented to this server (never ``leader``,
        whose exit status belongs to the event loop's child watcher)."""
        for info in processes:
            if info.ppid == self.root and info.pid != leader:
                with contextlib.suppress(ChildProcessError, OSError):
                    compat.waitpid_nohang(info.pid)

    def orphans(self, strays: list[ProcessInfo], since: int) -> list[ProcessInfo]:
        """Record the processes among ``strays`` (a sweep's) that escaped a run started at tick
        ``since``, forget records of processes gone, and return the recorded children of the
        server that have exited: pass them to ``reap_orphans`` once the event loop had a turn.

        Escaped means: a child of the server with a session of its own (nothing the server
        starts without one, such as rg, is taken), not the shell of a run, started at or after
        ``since``; or any process below a recorded orphan.
        """
        seen = {info.pid: info.start for info in strays}
        for pid, start in list(self._orphans.items()):
            if seen.get(pid) != start:
                del self._orphans[pid]
        for info in strays:
            if info.ppid == self.root:
                escaped = info.sid != self._session and info.start >= since and info.pid not in self._leaders
            else:
                escaped = info.ppid in self._orphans
            if escaped:
                self._orphans.setdefault(info.pid, info.start)
        return [
            info
            for info in strays
            if info.state == "Z" and info.ppid == self.root and self._orphans.get(info.pid) == info.start
        ]

    def reap_orphans(self, exited: list[ProcessInfo]) -> None:
        """Collect recorded orphans (from ``orphans``) that are still the same exited child."""
        if self._spawning:
            return  # a shell being started could have exited already: next sweep
        for info in exited:
            current = _read_stat(info.pid)
            if (
                current is not None
                and current.state == "Z"
                and current.ppid == self.root
                and current.start == self._orphans.get(info.pid)
                and info.pid not in self._leaders
            ):
                with contextlib.suppress(ChildProcessError, OSError):
                    compat.waitpid_nohang(info.pid)
                del self._orphans[info.pid]
