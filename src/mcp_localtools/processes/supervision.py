"""One sandbox per client connection: a supervisor inside it starts every command of the connection.

The sandbox's wrapper (``bwrap OPTIONS --`` or the Landlock launcher) and the supervisor's spec
come from ``sandbox/launch.py``; this module only runs what it is given. ``SupervisedSandbox.start``
runs the backend's wrapper (bubblewrap's namespaces, or Landlock) around
``supervisor.py`` once, when the connection is first seen or at its first command; ``spawn`` then
asks the supervisor for each command over a ``SOCK_SEQPACKET`` socket pair, passing the command's
stdin, stdout and stderr as file descriptors. So every command and background process of a
connection shares one loopback, one
``/tmp`` and one set of limits, and a command costs a fork inside the sandbox instead of a new
sandbox and a walk of the roots.

The wrapper is started by a thread that lives exactly as long as the sandbox (it then reads the
supervisor's messages): bubblewrap's ``--die-with-parent`` is ``PR_SET_PDEATHSIG``, which follows
the *thread* that forked, so a sandbox started from a pooled worker thread was killed when the
pool retired that thread (anyio retires idle workers after 10 s, and the command died with exit 137).
"""

from __future__ import annotations

import functools
import json
import logging
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread
from anyio.lowlevel import EventLoopToken

from mcp_localtools import compat
from mcp_localtools.errors import SandboxGone

__all__ = ["SUPERVISOR", "RunState", "SupervisedSandbox"]

logger = logging.getLogger(__name__)

SUPERVISOR = Path(__file__).with_name("supervisor.py")
"""The script that runs inside each connection's sandbox (see its docstring for the protocol)."""
SANDBOX_ENV: dict[str, str] = {}
"""The whole environment of the wrapper (bubblewrap, the Landlock launcher) and the supervisor:
empty. Commands can read every ``/proc/*/environ`` in their sandbox, so the server's variables
(an API key a client config passes the server) must be in none of them; each command gets its
own environment in its spawn request."""
_MAX_MESSAGE = 64 * 1024
_START_SECONDS = 30.0
_EXIT_SECONDS = 5.0


@dataclass(slots=True)
class RunState:
    """What the supervisor said about one run (written by the sandbox's thread).

    Attributes:
        id: the run's id (also its ``MCP_LOCALTOOLS_RUN`` marker).
        pid: its first process, in the sandbox's PID namespace (0 until started).
        error: why it could not start.
        code: its exit code, or minus the signal that ended it (None while running).
    """

    id: str
    keep: bool = False
    pid: int = 0
    error: str | None = None
    code: int | None = None
    stop_requested: bool = False
    started: threading.Event = field(default_factory=threading.Event)
    exited: threading.Event = field(default_factory=threading.Event)
    stopped: threading.Event = field(default_factory=threading.Event)
    waiters: list[anyio.Event] = field(default_factory=list)


class SupervisedSandbox:
    """The sandbox of one client connection (and identity) and its supervisor.

    Args:
        wrapper: the backend's argv before the supervisor's (``bwrap OPTIONS --``, or the Landlock
            launcher); empty runs the supervisor uncontained (tests of the protocol).
        spec: the supervisor's spec (rlimits, seccomp program, ports to listen on).
        listeners: serves on each listening socket the supervisor hands over (the filtering
            proxy on the sandbox's loopback); returns how to stop serving.
        python: the interpreter that runs the supervisor (visible inside the sandbox).
        enter: run in the wrapper's child before ``exec`` (joining the sandbox's cgroup).
        user: ``(uid, gid)`` the wrapper is started as (after ``enter``), or None: the server's.
        on_end: called once the sandbox has ended and its wrapper is reaped.
    """

    def __init__(
        self,
        wrapper: Sequence[str],
        spec: Mapping[str, object],
        *,
        listeners: Callable[[socket.socket], Callable[[], None]] | None = None,
        python: str = sys.executable,
        enter: Callable[[], None] | None = None,
        on_end: Callable[[], None] | None = None,
        user: tuple[int, int] | None = None,
    ) -> None:
        self._user = user
        self._argv = [*wrapper, python, "-I", "-S", "-c", _supervisor_source(), json.dumps(spec)]
        self._listeners = listeners
        self._enter = enter
        self._on_end = on_end
        self._stop_serving: list[Callable[[], None]] = []
        self._runs: dict[str, RunState] = {}
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._failure: str | None = None
        self._sock: socket.socket | None = None
        self._token: EventLoopToken | None = None
        self._counter = 0
        self._pid = 0
        self._inner: list[tuple[int, int]] = []
        self.closed = False

    async def start(self) -> None:
        """Start the sandbox and wait until its supervisor is ready (about 50-100 ms).

        Raises:
            SandboxGone: it could not start; the message has the wrapper's error output.
        """
        self._token = anyio.lowlevel.current_token()
        threading.Thread(target=self._main, name="exec-session-sandbox", daemon=True).start()
        with anyio.fail_after(_START_SECONDS):
            await anyio.to_thread.run_sync(self._ready.wait, abandon_on_cancel=True)
        if self._failure is not None:
            raise SandboxGone(self._failure)

    def _main(self) -> None:
        """The sandbox's thread: start the wrapper, read the supervisor's messages until it ends,
        then make sure nothing of it is left (the thread's end also fires ``--die-with-parent``)."""
        try:
            ours, theirs = compat.seqpacket_pair()
        except OSError as exc:
            self._failure = f"cannot start the sandbox: {exc}"
            self._ready.set()
            return
        try:
            process = subprocess.Popen(
                [*self._argv, str(theirs.fileno())],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                pass_fds=(theirs.fileno(),),
                env=SANDBOX_ENV,  # nothing of the server's: every process here is readable by commands
                start_new_session=True,
                preexec_fn=self._prepare_child if self._enter or self._user else None,
            )
        except OSError as exc:
            self._failure = f"cannot start the sandbox: {exc}"
            self._ready.set()
            return
        finally:
            theirs.close()
        self._sock = ours
        self._pid = process.pid
        try:
            self._read(process)
        finally:
            self._finish(ours, process)

    def _prepare_child(self) -> None:
        """In the wrapper's child before ``exec``: join the cgroup (as the server), then become
        ``user`` for good."""
        if self._enter is not None:
            self._enter()
        if self._user is not None and sys.platform == "linux":  # supervised sandboxes are Linux's
            uid, gid = self._user
            os.setgroups([])
            os.setresgid(gid, gid, gid)
            os.setresuid(uid, uid, uid)

    def _finish(self, sock: socket.socket, process: subprocess.Popen[bytes]) -> None:
        self.closed = True
        sock.close()
        for stop in self._stop_serving:
            stop()
        try:  # the supervisor exits on the closed socket, then bwrap (which collects its own)
            process.wait(timeout=_EXIT_SECONDS)
        except subprocess.TimeoutExpired:
            # Killed first, bwrap would leave its child to the nearest subreaper, the server,
            # which would never collect it: a defunct bwrap was left behind.
            process.kill()
            process.wait()
        _collect(self._inner)
        if process.stderr is not None:
            process.stderr.close()
        if self._on_end is not None:
            self._on_end()
        with self._lock:
            runs = list(self._runs.values())
            self._runs.clear()
        for state in runs:
            if state.code is None:
                state.code = -9
            for flag in (state.started, state.exited, state.stopped):
                flag.set()
            self._wake(state)
        self._ready.set()

    def _read(self, process: subprocess.Popen[bytes]) -> None:
        assert self._sock is not None
        while True:
            try:
                data, fds = compat.recv_fds(self._sock, _MAX_MESSAGE, 8)
            except OSError:
                return
            if not data:
                if not self._ready.is_set():
                    error = process.stderr.read(4096) if process.stderr is not None else b""
                    self._failure = "the sandbox did not start: " + (
                        error.decode("utf-8", "replace").strip() or f"exit {process.wait()}"
                    )
                return
            self._dispatch(json.loads(data), fds)

    def _dispatch(self, message: dict[str, object], fds: list[int]) -> None:
        op = message.get("op")
        if op == "ready":
            self._inner = _children_of(self._pid)
            for fd in fds:
                listener = socket.socket(fileno=fd)
                if self._listeners is not None:
                    self._stop_serving.append(self._listeners(listener))
                else:
                    listener.close()
            self._ready.set()
            return
        for fd in fds:
            os.close(fd)
        with self._lock:
            state = self._runs.get(str(message.get("id")))
        if state is None:
            return
        if op == "started":
            state.pid = int(str(message.get("pid", 0)))
            state.started.set()
        elif op == "failed":
            state.error = str(message.get("error"))
            state.code = 127
            state.started.set()
            state.exited.set()
            self._forget(state)
        elif op == "exited":
            state.code = int(str(message.get("code", 0)))
            state.exited.set()
            if not state.stop_requested:
                self._forget(state)  # a background run's leftovers: ``stop`` registers it again
        elif op == "stopped":
            state.stopped.set()
            self._forget(state)
        self._wake(state)

    def _forget(self, state: RunState) -> None:
        with self._lock:
            self._runs.pop(state.id, None)

    def _wake(self, state: RunState) -> None:
        waiters, state.waiters = state.waiters, []
        if waiters:
            try:
                anyio.from_thread.run_sync(_set_all, waiters, token=self._token)
            except RuntimeError:  # the event loop is gone (the server is exiting)
                pass

    def close(self) -> None:
        """End the sandbox: the supervisor exits, and every process in it with its PID namespace."""
        self.closed = True
        if self._sock is not None:
            try:
                self._sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    @property
    def busy(self) -> bool:
        """Whether a run is still going (a background process keeps its connection's sandbox)."""
        with self._lock:
            return any(not state.exited.is_set() for state in self._runs.values())

    def spawn(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str],
        cwd: Path,
        fds: Sequence[int],
        keep: bool = False,
        tty: bool = False,
    ) -> RunState:
        """Ask for ``argv`` to start in ``cwd`` with ``fds`` as its stdin, stdout and stderr (the
        caller then closes its copies); ``keep`` for a background process (what it leaves behind
        is not stopped when it exits). Non-blocking: the answer arrives in the returned state.

        Raises:
            SandboxGone: the sandbox has ended.
        """
        with self._lock:
            self._counter += 1
            state = RunState(f"r{self._counter}", keep=keep)
            self._runs[state.id] = state
        message = {
            "op": "spawn",
            "id": state.id,
            "argv": list(argv),
            "env": dict(env),
            "cwd": str(cwd),
            "keep": keep,
            "tty": tty,
        }
        try:
            self._send(message, fds)
        except SandboxGone:
            self._forget(state)
            raise
        return state

    def stop(self, state: RunState, grace: float) -> None:
        """SIGTERM to every process of the run, SIGKILL after ``grace`` seconds; ``stopped`` is set
        when none is left (at once when the run has ended or the sandbox has). A background run
        (``keep``) whose first process has ended may have left processes behind: they are
        stopped too."""
        if state.exited.is_set() and not state.keep:
            state.stopped.set()
            return
        state.stop_requested = True
        with self._lock:
            self._runs[state.id] = state  # for the "stopped" answer (it may have been forgotten)
        try:
            self._send({"op": "stop", "id": state.id, "grace": grace})
        except SandboxGone:
            state.stopped.set()

    def signal(self, state: RunState, signum: int) -> None:
        """Send ``signum`` to every process of the run.

        Raises:
            SandboxGone: the sandbox has ended.
        """
        self._send({"op": "signal", "id": state.id, "signal": signum})

    def _send(self, message: Mapping[str, object], fds: Sequence[int] = ()) -> None:
        if self._sock is None or self.closed:
            raise SandboxGone("the connection's sandbox has ended")
        try:
            compat.send_fds(self._sock, json.dumps(message).encode(), fds)
        except OSError as exc:
            raise SandboxGone(f"the connection's sandbox has ended ({exc})") from None

    async def wait(self, state: RunState, what: str = "exited") -> None:
        """Wait (on the event loop) until the run has ``started``, ``exited`` or ``stopped``."""
        flag: threading.Event = getattr(state, what)
        while not flag.is_set():
            waiter = anyio.Event()
            state.waiters.append(waiter)
            if flag.is_set():
                break
            await waiter.wait()


def _children_of(pid: int) -> list[tuple[int, int]]:
    """``(pid, start time)`` of the children of ``pid`` (bwrap's: its process inside the sandbox)."""
    found: list[tuple[int, int]] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")  # noqa: PTH208
        for task in tasks:
            with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as handle:
                for child in handle.read().split():
                    found.append((int(child), _start_time(int(child))))
    except (OSError, ValueError):
        pass
    return found


def _start_time(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return int(handle.read().rsplit(b")", 1)[1].split()[19])
    except (OSError, ValueError, IndexError):
        return -1


def _collect(children: list[tuple[int, int]], seconds: float = 2.0) -> None:
    """Collect bwrap's own child once it has been left to this server: bwrap exits without
    collecting it, and a server that is a child subreaper (``tree.py``) inherits it, so it would
    stay a defunct ``bwrap`` for good. Only a pid whose start time is still the one recorded."""
    deadline = time.monotonic() + seconds
    for pid, start in children:
        while time.monotonic() < deadline and start >= 0 and _start_time(pid) == start:
            try:
                done, _ = compat.waitpid_nohang(pid)
            except ChildProcessError:  # not (yet) ours: wait for the re-parenting, or it is gone
                done = 0
            if done:
                break
            time.sleep(0.02)


@functools.cache
def _supervisor_source() -> str:
    """The supervisor's source, given to ``python -c``: the sandbox need not see the package."""
    return SUPERVISOR.read_text(encoding="utf-8")


def _set_all(events: list[anyio.Event]) -> None:
    for event in events:
        event.set()
