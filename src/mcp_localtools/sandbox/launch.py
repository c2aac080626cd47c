"""How a client connection's sandbox is started, and the started sandboxes of a server.

``sandbox_launch`` turns the chosen backend, ``[exec.sandbox]`` and the connection's temp dir into
the wrapper around the supervisor (``processes/supervision.py``), its spec and the variables every
command of the connection gets:

* the wrapper is the backend's ``sandbox_argv``: under bubblewrap its namespaces with sized empty
  directories (``tmp_mb``: ``/tmp``, the commands' ``TMPDIR``, the hidden home, ``/dev/shm``), a
  user namespace of its own for a root server and the ``allow_unix_sockets`` paths bound in; under
  Landlock its launcher, with ``TMPDIR`` the connection's directory on the host and ``tmp_mb``
  bounding each file written (``RLIMIT_FSIZE``), and no proxy (no network namespace to put it in);
* the supervisor's spec: ``max_processes`` (``RLIMIT_NPROC``; and a pids cgroup per sandbox where
  one can be made, which alone binds a root server: ``cgroups.py``), ``memory_mb`` (``RLIMIT_DATA``,
  per process: heap and anonymous mappings, not reserved address space, so JVMs, Go and V8 still
  start; and the sandbox's memory cgroup, for its processes together, shared memory included), no
  core files, the seccomp program that refuses UNIX sockets when the
  network is off (unless ``allow_unix_sockets``), and the proxy's port when ``allowed_domains`` is set.

``ConnectionSandboxes`` keeps one started ``SupervisedSandbox`` per owner: a client connection
(``CallContext.session_id``: an MCP session, or on the 2026-07-28 revision the token's principal).
It is started in the background when the connection is first seen (``ExecGroup.warm``), or at its
first command, and closed with every process in it when the connection ends. At most
``max_sandboxes`` live in the whole process: to start another, the least recently used idle one
not used within ``RECENT_SECONDS`` is closed; when there is none, the command is refused
(``SandboxesBusy``), never by closing a sandbox that is running something.
"""

from __future__ import annotations

import base64
import os
import shutil
import sys
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import anyio.to_thread

from mcp_localtools.config import SandboxConfig, WebConfig
from mcp_localtools.errors import SandboxesBusy, SandboxGone
from mcp_localtools.processes.supervision import SupervisedSandbox
from mcp_localtools.processes.tree import harden_server_process
from mcp_localtools.sandbox.backend import Backend
from mcp_localtools.sandbox.cgroups import SandboxCgroups
from mcp_localtools.sandbox.exposure import is_root, usable_by
from mcp_localtools.sandbox.proxy import PROXY_PORT, ProxyServer, Refusal, RefusalLog, proxy_environment
from mcp_localtools.sandbox.seccomp import unix_socket_filter

__all__ = ["ConnectionSandboxes", "SandboxLaunch", "sandbox_key", "sandbox_launch"]

MiB = 1024 * 1024
SANDBOX_TMP = Path("/tmp")  # noqa: S108 - the sandbox's own tmpfs, not the host's
"""The commands' ``TMPDIR`` under bubblewrap: the sandbox's private, sized ``/tmp``."""


@dataclass(frozen=True, slots=True)
class SandboxLaunch:
    """What starts one connection's sandbox.

    Attributes:
        wrapper: the backend's argv before the supervisor's.
        spec: the supervisor's spec.
        env: variables every command of the connection gets (``TMPDIR``, the proxy's).
        proxy: whether the supervisor opens the proxy's listener.
        cgroup: the sandbox's cgroups (its processes and memory), or None.
        user: ``(uid, gid)`` the sandbox is started as, or None: the server's own.
        python: the interpreter of its supervisor (``supervisor_python``).
    """

    wrapper: list[str]
    spec: dict[str, object]
    env: dict[str, str] = field(default_factory=dict)
    proxy: bool = False
    cgroup: SandboxCgroups | None = None
    user: tuple[int, int] | None = None
    python: str = sys.executable


def sandbox_launch(
    backend: Backend,
    config: SandboxConfig,
    *,
    cwd: Path,
    temp_dir: Path | None,
    git: Sequence[Path],
    user: tuple[int, int] | None = None,
) -> SandboxLaunch:
    """The launch of a connection's sandbox under ``backend`` (a ``supervised`` one).

    Args:
        backend: the chosen backend.
        config: ``[exec.sandbox]``.
        cwd: where the supervisor starts (commands get their own working directory).
        temp_dir: the connection's directory on the host (Landlock's ``TMPDIR``).
        git: the protected git paths of the roots' repositories, found once for the sandbox.
        user: ``(uid, gid)`` the sandbox starts as (a root server in another user's root), or None.
    """
    tmp_bytes = config.tmp_mb * MiB
    rlimits: dict[str, int] = {
        "NPROC": config.max_processes,
        "DATA": config.memory_mb * MiB,
        "CORE": 0,
        **backend.rlimits(tmp_bytes),
    }
    closed = not config.network
    program = unix_socket_filter() if closed and not config.allow_unix_sockets else None
    wrapper = backend.sandbox_argv(
        cwd=cwd, temp_dir=temp_dir, git=git, tmp_bytes=tmp_bytes, sockets=config.allow_unix_sockets, user=user
    )
    tmp = SANDBOX_TMP if backend.private_tmp else temp_dir
    proxy = backend.private_tmp and closed and bool(config.allowed_domains)  # a network namespace of its own
    cgroup = SandboxCgroups.create(  # RLIMIT_NPROC never binds uid 0, nor RLIMIT_DATA shared memory
        processes=config.max_processes,
        memory_bytes=config.memory_mb * MiB,
        total_processes=config.total_processes,
    )
    env: dict[str, str] = {}
    if tmp is not None:
        env["TMPDIR"] = str(tmp)
    if proxy:
        env.update(proxy_environment(PROXY_PORT))
    spec: dict[str, object] = {
        "rlimits": rlimits,
        "seccomp": base64.b64encode(program).decode("ascii") if program else "",
        "listen": [PROXY_PORT] if proxy else [],
        "drop_capabilities": backend.drops_capabilities and is_root(),
    }
    return SandboxLaunch(wrapper, spec, env, proxy, cgroup, user, supervisor_python(user))


def supervisor_python(user: tuple[int, int] | None = None) -> str:
    """The Python that runs the supervisor: the server's own, or, where the sandbox's identity
    (``user``, else the server's) cannot run it (a server started as another user through a
    link; a root server's interpreter under ``/root`` for a sandbox started as the root's
    owner), the system's ``python3``."""
    system = shutil.which("python3", path="/usr/bin:/bin:/usr/local/bin")
    for candidate in (sys.executable, system):
        if candidate and (
            os.access(os.path.realpath(candidate), os.X_OK)
            if user is None
            else usable_by(os.path.realpath(candidate), user, 5)
        ):
            return candidate
    return sys.executable


_BY_USER = "#uid"


_STARTING: dict[tuple[int, str], int] = {}
"""Sandboxes being started in the process, by ``ConnectionSandboxes`` and owner: they count
against ``max_sandboxes``."""


def _of(key: str, owner: str) -> bool:
    """Whether sandbox ``key`` belongs to connection ``owner``."""
    return key == owner or key.startswith(owner + _BY_USER)


def sandbox_key(owner: str, user: tuple[int, int] | None) -> str:
    """The key of connection ``owner``'s sandbox whose commands run as ``user`` (None: as the
    server): ``owner`` itself, or ``owner#uidN``."""
    return owner if user is None else f"{owner}{_BY_USER}{user[0]}"


RECENT_SECONDS = 60.0
"""A sandbox used within this many seconds is never closed to make room for another."""
_EVERY: weakref.WeakSet[ConnectionSandboxes] = weakref.WeakSet()


@dataclass(slots=True)
class _Entry:
    sandbox: SupervisedSandbox
    env: dict[str, str]
    refusals: RefusalLog
    used: float = field(default_factory=time.monotonic)
    cgroup: SandboxCgroups | None = None


def _close_entries(entries: dict[str, _Entry]) -> None:
    for entry in list(entries.values()):
        entry.sandbox.close()
    entries.clear()


class ConnectionSandboxes:
    """The started sandboxes of a server's client connections, by owner
    (``CallContext.session_id``).

    Args:
        launch: builds the launch of a sandbox (its key, the commands' base environment, the
            identity it starts as; blocking: it walks the roots once).
        config: ``[exec.sandbox]`` (``max_sandboxes``, ``allowed_domains``).
        web: ``[web]`` (the proxy refuses its ``blocked_hosts`` too).
        clock: monotonic seconds (tests pass their own).
    """

    def __init__(
        self,
        launch: Callable[[str, Mapping[str, str] | None, tuple[int, int] | None], SandboxLaunch],
        config: SandboxConfig,
        web: WebConfig | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._launch = launch
        self._cap = config.max_sandboxes
        self._clock = clock
        _EVERY.add(self)
        self._entries: dict[str, _Entry] = {}
        weakref.finalize(self, _close_entries, self._entries)  # a server dropped without ending
        self._starting: dict[str, anyio.Lock] = {}
        self._ended: set[str] = set()
        self._proxy = (
            ProxyServer(config.allowed_domains, web or WebConfig()) if config.allowed_domains else None
        )

    def __len__(self) -> int:
        """How many sandboxes are live (started and not closed)."""
        return sum(not entry.sandbox.closed for entry in self._entries.values())

    async def get(
        self, owner: str, environ: Mapping[str, str] | None = None, user: tuple[int, int] | None = None
    ) -> tuple[SupervisedSandbox, dict[str, str]]:
        """The started sandbox of ``owner`` and the variables its commands get; started now when
        the owner has none, or when its sandbox ended. Starting is shielded from cancellation
        (a sandbox half started would be left running). ``user``: the identity its commands run
        as (a root server in another user's root): a connection has a sandbox per identity.

        Raises:
            SandboxGone: the sandbox cannot start (the message says why).
            SandboxesBusy: ``max_sandboxes`` are live and none may be closed to make room.
        """
        key = sandbox_key(owner, user)
        entry = self._entries.get(key)
        if entry is not None and not entry.sandbox.closed:
            entry.used = self._clock()
            return entry.sandbox, entry.env
        async with self._starting.setdefault(key, anyio.Lock()):
            entry = self._entries.get(key)
            if entry is None or entry.sandbox.closed:
                self.make_room()
                starting = (id(self), owner)  # session ids repeat across servers of a process
                _STARTING[starting] = _STARTING.get(starting, 0) + 1  # counted by make_room meanwhile
                try:
                    with anyio.CancelScope(shield=True):
                        entry = await self._start(key, environ, user)
                finally:
                    _STARTING[starting] -= 1
                    if not _STARTING[starting]:
                        del _STARTING[starting]
                if owner in self._ended:  # the connection ended while its sandbox started
                    self._ended.discard(owner)
                    self.release(owner)
                    raise SandboxGone("the connection ended")
        assert entry is not None
        entry.used = self._clock()
        return entry.sandbox, entry.env

    async def _start(
        self, key: str, environ: Mapping[str, str] | None, user: tuple[int, int] | None
    ) -> _Entry:
        harden_server_process()  # non-dumpable: no command reads the server's memory or environment
        launch = await anyio.to_thread.run_sync(self._launch, key, environ, user)
        refusals = RefusalLog()
        proxy = self._proxy if launch.proxy else None
        cgroup = launch.cgroup
        sandbox = SupervisedSandbox(
            launch.wrapper,
            launch.spec,
            listeners=(lambda sock: proxy.serve(sock, refusals.record)) if proxy is not None else None,
            python=launch.python,
            user=launch.user,
            enter=cgroup.enter if cgroup is not None else None,
            on_end=cgroup.remove if cgroup is not None else None,
        )
        await sandbox.start()
        entry = _Entry(sandbox, launch.env, refusals, self._clock(), cgroup)
        self._entries[key] = entry
        return entry

    def refusals(self, key: str) -> list[Refusal]:
        """What the proxy refused to the sandbox ``key`` (``sandbox_key``) since the last call
        (and forgets them)."""
        entry = self._entries.get(key)
        return entry.refusals.take() if entry is not None else []

    def memory_kills(self, key: str) -> int:
        """How many processes of the sandbox ``key`` were stopped at its memory limit so far."""
        entry = self._entries.get(key)
        return entry.cgroup.memory_kills() if entry is not None and entry.cgroup is not None else 0

    def release(self, owner: str) -> None:
        """``owner``'s connection ended: close its sandboxes now, and every process in them (one
        still starting is closed once started)."""
        if (id(self), owner) in _STARTING:
            self._ended.add(owner)
        for key in [key for key in {*self._entries, *self._starting} if _of(key, owner)]:
            self._starting.pop(key, None)
            entry = self._entries.pop(key, None)
            if entry is not None:
                entry.sandbox.close()

    def make_room(self) -> None:
        """Make room for one more sandbox under ``max_sandboxes`` (counted over every server of
        the process): close the least recently used idle sandboxes not used within
        ``RECENT_SECONDS`` until there is.

        Raises:
            SandboxesBusy: every live sandbox is busy or was used recently.
        """
        now = self._clock()
        live: list[tuple[ConnectionSandboxes, str, _Entry]] = []
        for owner in list(_EVERY):
            for key, entry in list(owner._entries.items()):
                if entry.sandbox.closed:
                    owner._entries.pop(key, None)
                else:
                    live.append((owner, key, entry))
        excess = len(live) + sum(_STARTING.values()) - self._cap + 1
        if excess <= 0:
            return
        closable = sorted(
            (item for item in live if not item[2].sandbox.busy and now - item[2].used >= RECENT_SECONDS),
            key=lambda item: item[2].used,
        )
        if len(closable) < excess:
            raise SandboxesBusy(
                f"all {self._cap} command sandboxes are in use by connections that ran a command in the "
                f"last {RECENT_SECONDS:g} s or are running one; try again shortly, or raise "
                "[exec.sandbox] max_sandboxes"
            )
        for owner, key, entry in closable[:excess]:
            owner._entries.pop(key, None)
            entry.sandbox.close()

    def close_all(self) -> None:
        """Close every sandbox (the server stops)."""
        _close_entries(self._entries)
