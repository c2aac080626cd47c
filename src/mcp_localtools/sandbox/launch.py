"""How an exec session's sandbox is started, and the sandboxes of a server's sessions.

``session_launch`` turns the chosen backend, ``[exec.sandbox]`` and the session's temp dir into the
wrapper around the supervisor (``session.py``), its spec and the variables every command of the
session gets:

* **bubblewrap**: the backend's options (``bwrap.py``; the session's host directory bound in for
  the files the sandbox gives commands, such as the git identity), plus a size for every empty directory it
  mounts (``--size``, ``tmp_mb``: ``/tmp``, which is the session's ``TMPDIR``, the hidden home,
  ``/dev/shm``), a user namespace of its own when the server runs as root (``--unshare-user``: there
  ``RLIMIT_NPROC`` counts only the session's processes, and binds nothing but the root user), and
  the ``allow_unix_sockets`` paths bound in;
* **Landlock**: the backend's launcher; ``TMPDIR`` is the session's directory on the host and
  ``tmp_mb`` bounds each file written (``RLIMIT_FSIZE``); no proxy (no network namespace to put it in);
* the supervisor's spec: ``max_processes`` (``RLIMIT_NPROC``; for a root server, which it never
  binds, a pids cgroup per session where one can be made: ``cgroups.py``), ``memory_mb`` (``RLIMIT_DATA``, per
  process: heap and anonymous mappings, not reserved address space, so JVMs, Go and V8 still start),
  no core files, the seccomp program that refuses UNIX sockets when the network is off (unless
  ``allow_unix_sockets``), and the proxy's port when ``allowed_domains`` is set.

``SessionSandboxes`` keeps one started ``SessionSandbox`` per exec session key, starts it at the
session's first command, and closes it when the session is released (a sandbox still running a
background process is closed when that process ends or is stopped).
"""

from __future__ import annotations

import base64
import functools
import itertools
import os
import shutil
import stat
import sys
import threading
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import anyio.to_thread

from mcp_localtools.config import SandboxConfig, WebConfig
from mcp_localtools.processes.session import SandboxGone, SessionSandbox
from mcp_localtools.sandbox.backend import Backend
from mcp_localtools.sandbox.cgroups import PidsCgroup
from mcp_localtools.sandbox.proxy import PROXY_PORT, ProxyServer, Refusal, RefusalLog, proxy_environment
from mcp_localtools.sandbox.seccomp import unix_socket_filter

__all__ = ["SandboxGone", "SessionLaunch", "SessionSandboxes", "session_launch"]

MiB = 1024 * 1024
_numbers = itertools.count(1)
SANDBOX_TMP = Path("/tmp")  # noqa: S108 - the sandbox's own tmpfs, not the host's
"""The session's ``TMPDIR`` under bubblewrap: its private, sized ``/tmp``."""


@dataclass(frozen=True, slots=True)
class SessionLaunch:
    """What starts one session's sandbox.

    Attributes:
        wrapper: the backend's argv before the supervisor's.
        spec: the supervisor's spec.
        env: variables every command of the session gets (``TMPDIR``, the proxy's).
        proxy: whether the supervisor opens the proxy's listener.
        cgroup: the session's pids cgroup (a root server's process limit), or None.
    """

    wrapper: list[str]
    spec: dict[str, object]
    env: dict[str, str] = field(default_factory=dict)
    proxy: bool = False
    cgroup: PidsCgroup | None = None


def _is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def _bwrap_options(
    options: list[str], config: SandboxConfig, hidden: Sequence[Path], writable: Sequence[Path] = ()
) -> list[str]:
    """bubblewrap's options (``bwrap.bwrap_arguments``) with the session's additions: a size for
    each empty directory, ``/dev/shm`` sized too, a user namespace for a root server, and the
    allowed UNIX sockets bound in (after everything that could cover them)."""
    size = str(config.tmp_mb * MiB)
    hidden_names = {str(path) for path in hidden}
    out: list[str] = []
    index = 0
    while index < len(options):
        option = options[index]
        if option == "--tmpfs" and options[index + 1] in hidden_names:
            out += ["--size", size]
        out.append(option)
        if option == "--dev":
            out += [options[index + 1], "--size", size, "--tmpfs", "/dev/shm"]  # noqa: S108 - the sandbox's own
            index += 2
            continue
        index += 1
    sockets = [path for path in config.allow_unix_sockets if path != "*" and os.path.exists(path)]  # noqa: PTH110
    for path in sockets:
        out += ["--bind", path, path]
    if _is_root():
        out.append("--unshare-user")
        for path, is_dir in root_only_paths():
            if any(Path(path) == root or root.is_relative_to(path) for root in writable):
                continue  # never cover a root
            out += ["--tmpfs", path, "--remount-ro", path] if is_dir else ["--ro-bind", "/dev/null", path]
    return out


_ROOT_ONLY_TOPS = ("/etc", "/var")
_ROOT_ONLY_DEPTH = {"/etc": 8, "/var": 2}


@functools.cache
def root_only_paths() -> tuple[tuple[str, bool], ...]:
    """What only root may read in ``/etc`` (``/etc/shadow``, ``/etc/gshadow``, sudoers, host keys,
    private key directories) and in the top two levels of ``/var`` (logs, private state), as
    ``(path, is_directory)``: a root server's commands run as root in a user namespace of their
    own, without capabilities, and would still read what root owns; these are covered (an empty
    file or directory in their place). Found once per server."""
    found: list[tuple[str, bool]] = []
    for top in _ROOT_ONLY_TOPS:
        stack = [(top, 0)]
        while stack:
            directory, depth = stack.pop()
            try:
                entries = list(os.scandir(directory))
            except OSError:
                continue
            for entry in entries:
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISDIR(info.st_mode):
                    if not info.st_mode & stat.S_IROTH or not info.st_mode & stat.S_IXOTH:
                        found.append((entry.path, True))
                    elif depth + 1 < _ROOT_ONLY_DEPTH[top]:
                        stack.append((entry.path, depth + 1))
                elif stat.S_ISREG(info.st_mode) and not info.st_mode & stat.S_IROTH:
                    found.append((entry.path, False))
    return tuple(found)


def session_launch(
    backend: Backend, config: SandboxConfig, *, cwd: Path, temp_dir: Path | None, git: Sequence[Path]
) -> SessionLaunch:
    """The launch of a session's sandbox under ``backend`` (bwrap or landlock).

    Args:
        backend: the chosen backend.
        config: ``[exec.sandbox]``.
        cwd: where the supervisor starts (commands get their own working directory).
        temp_dir: the session's directory on the host (Landlock's ``TMPDIR``).
        git: the protected git paths of the roots' repositories, found once for the session.
    """
    rlimits: dict[str, int] = {"NPROC": config.max_processes, "DATA": config.memory_mb * MiB, "CORE": 0}
    closed = not config.network
    program = unix_socket_filter() if closed and not config.allow_unix_sockets else None
    env: dict[str, str] = {}
    proxy = False
    if backend.name == "bwrap":
        wrapped = backend.wrap([], cwd=cwd, temp_dir=temp_dir, git=git)  # its files: the git identity
        options = _bwrap_options(wrapped[1:-1], config, backend.policy.hidden, backend.policy.writable)
        wrapper = [wrapped[0], *options, "--"]
        tmp = SANDBOX_TMP if SANDBOX_TMP in backend.policy.hidden else temp_dir
        proxy = closed and bool(config.allowed_domains)
    else:
        wrapper = backend.wrap([], cwd=cwd, temp_dir=temp_dir, git=git)  # ends with "--"
        rlimits["FSIZE"] = config.tmp_mb * MiB
        tmp = temp_dir
    cgroup = None
    if _is_root():  # RLIMIT_NPROC never binds uid 0: a cgroup does
        cgroup = PidsCgroup.create(f"mcp-localtools-{os.getpid()}-{next(_numbers)}", config.max_processes)
    if tmp is not None:
        env["TMPDIR"] = str(tmp)
    if proxy:
        env.update(proxy_environment(PROXY_PORT))
    spec: dict[str, object] = {
        "rlimits": rlimits,
        "seccomp": base64.b64encode(program).decode("ascii") if program else "",
        "listen": [PROXY_PORT] if proxy else [],
        "drop_capabilities": backend.name == "landlock" and _is_root(),
    }
    return SessionLaunch(wrapper, spec, env, proxy, cgroup)


def supervisor_python() -> str:
    """The Python that runs the supervisor: the server's own, or, where the server cannot see its
    own interpreter's real path (a server started as another user through a link), the system's
    ``python3``."""
    own = os.path.realpath(sys.executable)
    if os.access(own, os.X_OK):
        return sys.executable
    return shutil.which("python3", path="/usr/bin:/bin:/usr/local/bin") or sys.executable


IDLE_SECONDS = 300.0
"""A session's sandbox with nothing running in it for this long is closed (its next command
starts a new one): clients that start an exec session per call leave many behind."""
MAX_LIVE = 32
"""Most sandboxes kept running in the process; beyond, the least recently used idle ones are
closed."""
_EVERY: weakref.WeakSet[SessionSandboxes] = weakref.WeakSet()


@dataclass(slots=True)
class _Entry:
    sandbox: SessionSandbox
    env: dict[str, str]
    refusals: RefusalLog
    forgotten: bool = False
    used: float = field(default_factory=time.monotonic)


def _close_entries(entries: dict[str, _Entry]) -> None:
    for entry in list(entries.values()):
        entry.sandbox.close()
    entries.clear()


class SessionSandboxes:
    """The started sandboxes of a server's exec sessions, by session key.

    Args:
        launch: builds the launch of a session's sandbox for commands whose base environment is
            given (blocking: it walks the roots once).
        config: ``[exec.sandbox]``.
        web: ``[web]`` (the proxy refuses its ``blocked_hosts`` too).
    """

    def __init__(
        self,
        launch: Callable[[str, Mapping[str, str] | None], SessionLaunch],
        config: SandboxConfig,
        web: WebConfig | None = None,
    ) -> None:
        self._launch = launch
        _EVERY.add(self)
        self._entries: dict[str, _Entry] = {}
        weakref.finalize(self, _close_entries, self._entries)  # a server dropped without ending
        self._starting: dict[str, anyio.Lock] = {}
        self._guard = threading.Lock()
        self._proxy = (
            ProxyServer(config.allowed_domains, web or WebConfig()) if config.allowed_domains else None
        )

    async def get(
        self, key: str, environ: Mapping[str, str] | None = None
    ) -> tuple[SessionSandbox, dict[str, str]]:
        """The started sandbox of session ``key`` and the variables its commands get; started now
        when the session has none, or when its sandbox ended (see ``refusals``).

        Raises:
            SandboxGone: the sandbox cannot start (the message says why).
        """
        entry = self._entries.get(key)
        if entry is not None and not entry.sandbox.closed:
            entry.used = time.monotonic()
            return entry.sandbox, entry.env
        self.trim()
        lock = self._starting.setdefault(key, anyio.Lock())
        async with lock:
            entry = self._entries.get(key)
            if entry is None or entry.sandbox.closed:
                launch = await anyio.to_thread.run_sync(self._launch, key, environ)
                refusals = RefusalLog()
                proxy = self._proxy if launch.proxy else None
                cgroup = launch.cgroup
                sandbox = SessionSandbox(
                    launch.wrapper,
                    launch.spec,
                    listeners=(lambda sock: proxy.serve(sock, refusals.record))
                    if proxy is not None
                    else None,
                    python=supervisor_python(),
                    enter=cgroup.enter if cgroup is not None else None,
                    on_end=cgroup.remove if cgroup is not None else None,
                )
                await sandbox.start()
                entry = _Entry(sandbox, launch.env, refusals)
                self._entries[key] = entry
        self._starting.pop(key, None)
        return entry.sandbox, entry.env

    def refusals(self, key: str) -> list[Refusal]:
        """What the proxy refused to session ``key`` since the last call (and forgets them)."""
        entry = self._entries.get(key)
        return entry.refusals.take() if entry is not None else []

    def release(self, key: str) -> None:
        """Session ``key`` ended or expired: close its sandbox (every process in it ends), or,
        while a background process still runs in it, once none does (``reap_idle``)."""
        entry = self._entries.get(key)
        if entry is None:
            return
        if entry.sandbox.busy:
            entry.forgotten = True
            return
        del self._entries[key]
        entry.sandbox.close()

    def reap_idle(self) -> None:
        """Close the sandboxes of released sessions whose last background process has ended."""
        for key, entry in list(self._entries.items()):
            if entry.forgotten and not entry.sandbox.busy:
                self._entries.pop(key, None)
                entry.sandbox.close()

    def trim(self) -> None:
        """Close the sandboxes idle for ``IDLE_SECONDS`` (nothing running in them), and the least
        recently used idle ones beyond ``MAX_LIVE`` in the whole process (every server and
        profile); their sessions start new ones when used."""
        now = time.monotonic()
        idle: list[tuple[SessionSandboxes, str, _Entry]] = []
        live = 0
        for owner in list(_EVERY):
            owner.reap_idle()
            live += len(owner._entries)
            idle += [(owner, key, entry) for key, entry in owner._entries.items() if not entry.sandbox.busy]
        idle.sort(key=lambda item: item[2].used)
        excess = live - MAX_LIVE + 1
        for index, (owner, key, entry) in enumerate(idle):
            if index < excess or now - entry.used > IDLE_SECONDS or entry.sandbox.closed:
                owner._entries.pop(key, None)
                entry.sandbox.close()

    def close_all(self) -> None:
        """Close every sandbox (at server exit)."""
        for entry in list(self._entries.values()):
            entry.sandbox.close()
        self._entries.clear()
