"""The supervisor inside a client connection's sandbox: it starts the connection's commands and watches them.

Run as a script inside the sandbox, never imported by the server (it starts fast and imports only
the standard library)::

    python -I -S supervisor.py SPEC_JSON CONTROL_FD

``CONTROL_FD`` is the control socket (``AF_UNIX``, ``SOCK_SEQPACKET``), the other end of which the
server holds. Every message is one JSON object (one datagram); a ``spawn`` carries the command's
stdin, stdout and stderr as ``SCM_RIGHTS`` descriptors.

Server to supervisor:

* ``{"op": "spawn", "id": ID, "argv": [...], "env": {...}, "cwd": PATH, "keep": bool, "tty": bool}``
  (3 fds; ``tty``: they are a pseudo-terminal, made the command's controlling terminal);
* ``{"op": "stop", "id": ID, "grace": SECONDS}``: SIGTERM to every process of the run, SIGKILL after
  ``grace`` seconds to what is left, until none is left; answered by ``stopped``;
* ``{"op": "signal", "id": ID, "signal": N}``: the signal to every process of the run.

Supervisor to server: ``{"op": "ready", "listeners": N}`` once (carrying N listening sockets as
``SCM_RIGHTS``); then ``started`` (with ``pid``, in the sandbox's PID namespace) or ``failed``
(with ``error``) for each spawn, and ``exited`` (with ``code``: the exit code, or minus the signal
number) once a run's first process has ended and, for a run without ``keep`` (a command; a
background process has ``keep``), the processes it left behind are gone too (SIGTERM, SIGKILL
after 0.5 s). A ``keep`` run's leftovers live on (a ``stop`` or ``signal`` still reaches them);
a ``stop`` of a run the supervisor no longer knows is answered ``stopped`` at once.

A run's processes are its first process, everything in its session or process group, everything
whose environment carries ``MCP_LOCALTOOLS_RUN=ID``, and their descendants, found below the
supervisor, which is a child subreaper, so a process that double-forks stays below it.

``SPEC_JSON``: ``{"rlimits": {"NPROC": n, "DATA": bytes, ...}, "seccomp": BASE64 | "",
"listen": [PORT, ...], "drop_capabilities": bool}`` (the last for a root server under Landlock:
every capability is dropped for good before any command starts). The limits are set on the
supervisor, so commands inherit them (in the sandbox's own user namespace ``NPROC`` counts only
the session's processes); each ``listen`` port
becomes a TCP listener on ``127.0.0.1:PORT`` of the sandbox's own loopback, handed to the server
in ``ready`` (the server serves its filtering proxy on it); then the seccomp program (classic BPF,
as ``seccomp_export_bpf`` writes it) is loaded into the supervisor, so every command inherits it.
The supervisor exits when the control socket closes; the sandbox (its PID namespace) ends with it.
"""

from __future__ import annotations

import array
import base64
import ctypes
import fcntl
import json
import os
import resource
import selectors
import signal
import socket
import subprocess
import sys
import termios
import time
from typing import Any

# Linux only (prctl, /proc, SOCK_SEQPACKET): session sandboxes exist under bwrap and Landlock. A
# top-level platform assert also tells mypy to check the rest of this file for Linux only.
assert sys.platform == "linux", "the exec session supervisor runs on Linux only"

MARKER = "MCP_LOCALTOOLS_RUN"
CONTROL_FD = 3
_MAX_MESSAGE = 4 * 1024 * 1024
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
_PR_SET_CHILD_SUBREAPER = 36
_PR_CAPBSET_DROP = 24
_PR_CAP_AMBIENT = 47
_PR_CAP_AMBIENT_CLEAR_ALL = 4
_LINUX_CAPABILITY_VERSION_3 = 0x20080522
_LINGER_LOOK_SECONDS = 1.0


def _take_terminal() -> None:
    """In a tty run's child, after ``setsid``: make its stdin (the pty) the controlling terminal."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class _Fprog(ctypes.Structure):
    _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.c_void_p))


class Run:
    """One spawned command."""

    def __init__(self, run_id: str, pid: int, keep: bool) -> None:
        self.id = run_id
        self.pid = pid
        self.keep = keep
        self.code: int | None = None
        self.kill_at: float | None = None  # when a stop turns to SIGKILL
        self.stopping = False
        self.requested = False  # a stop the server asked for (answered with "stopped")
        self.reported = False  # "exited" sent while what it left behind lives on (keep)
        self.looked_at = 0.0  # when a reported run's leftovers were last looked for
        self.marker = f"{MARKER}={run_id}\0".encode()


class Supervisor:
    def __init__(self, spec: dict[str, Any]) -> None:
        self.control = socket.socket(fileno=int(spec.get("control", CONTROL_FD)))
        self.control.setblocking(True)
        self.selector = selectors.DefaultSelector()
        self.runs: dict[str, Run] = {}
        self.by_pid: dict[int, Run] = {}
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        self.listeners = [_listen(int(port)) for port in spec.get("listen") or ()]
        for name, value in (spec.get("rlimits") or {}).items():
            limit = getattr(resource, f"RLIMIT_{name}")
            _, hard = resource.getrlimit(limit)
            value = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(limit, (value, value))
        self.wake_r, self.wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        signal.set_wakeup_fd(self.wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        self.selector.register(self.control, selectors.EVENT_READ, self._on_control)
        self.selector.register(self.wake_r, selectors.EVENT_READ, self._on_wake)
        if spec.get("drop_capabilities"):
            _drop_capabilities(self.libc)
        program = base64.b64decode(spec.get("seccomp") or "")
        if program:
            _load_seccomp(self.libc, program)

    # -- the control socket -------------------------------------------------------------
    def send(self, message: dict[str, Any]) -> None:
        try:
            self.control.send(json.dumps(message).encode())
        except OSError:
            sys.exit(0)

    def _on_control(self, _: object) -> None:
        fds = array.array("i")
        try:
            data, ancdata, _flags, _ = self.control.recvmsg(_MAX_MESSAGE, socket.CMSG_LEN(16 * fds.itemsize))
        except OSError:
            sys.exit(0)
        for level, kind, payload in ancdata:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(payload[: len(payload) - (len(payload) % fds.itemsize)])
        if not data:
            sys.exit(0)  # the server closed its end: the session is over
        message = json.loads(data)
        op = message.get("op")
        try:
            if op == "spawn":
                self._spawn(message, list(fds))
            elif op == "stop":
                self._stop(message["id"], float(message.get("grace", 0.5)), requested=True)
            elif op == "signal":
                run = self.runs.get(message["id"])
                if run is not None:
                    self._signal(run, int(message["signal"]))
        finally:
            for fd in fds:
                os.close(fd)

    # -- spawning -------------------------------------------------------------------------
    def _spawn(self, message: dict[str, Any], fds: list[int]) -> None:
        run_id = message["id"]
        if len(fds) != 3:
            self.send(
                {"op": "failed", "id": run_id, "error": "the spawn carried no stdin, stdout and stderr"}
            )
            return
        tty = bool(message.get("tty"))
        try:
            child = subprocess.Popen(
                list(message["argv"]),
                stdin=fds[0],
                stdout=fds[1],
                stderr=fds[2],
                cwd=message.get("cwd") or "/",
                env={**message["env"], MARKER: run_id},
                start_new_session=True,
                close_fds=True,
                restore_signals=True,
                preexec_fn=_take_terminal if tty else None,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            self.send({"op": "failed", "id": run_id, "error": str(exc)})
            return
        child.returncode = 0  # the supervisor reaps it itself (waitpid(-1)); Popen must not
        run = Run(run_id, child.pid, bool(message.get("keep")))
        self.runs[run_id] = run
        self.by_pid[child.pid] = run
        self.send({"op": "started", "id": run_id, "pid": child.pid})

    # -- the process tree ---------------------------------------------------------------------
    def _descendants(self) -> list[tuple[int, int, int, int]]:
        """``(pid, ppid, pgid, sid)`` of every live process below the supervisor."""
        found: list[tuple[int, int, int, int]] = []
        stack = [os.getpid()]
        while stack:
            parent = stack.pop()
            for child in _children(parent):
                info = _stat(child)
                if info is None:
                    continue
                if info[4] != "Z":
                    found.append(info[:4])
                stack.append(child)
        return found

    def members(self, run: Run) -> list[int]:
        """The live processes of ``run``."""
        ours: set[int] = set()
        for pid, ppid, pgid, sid in self._descendants():  # parents before their children
            if ppid in ours or run.pid in (pid, pgid, sid) or _has(pid, run.marker):
                ours.add(pid)
        return sorted(ours)

    def _signal(self, run: Run, signum: int) -> None:
        for pid in self.members(run):
            try:
                os.kill(pid, signum)
            except OSError:
                pass

    def _stop(self, run_id: str, grace: float, *, requested: bool = False) -> None:
        run = self.runs.get(run_id)
        if run is None:
            if requested:
                self.send({"op": "stopped", "id": run_id})
            return
        run.requested = run.requested or requested
        if run.stopping:
            return
        run.stopping = True
        self._signal(run, signal.SIGTERM)
        run.kill_at = time.monotonic() + grace

    # -- exits -------------------------------------------------------------------------------
    def _on_wake(self, _: object) -> None:
        try:
            while os.read(self.wake_r, 512):
                pass
        except BlockingIOError:
            pass
        self.reap()

    def reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            run = self.by_pid.pop(pid, None)
            if run is not None:
                run.code = os.waitstatus_to_exitcode(status)
                if not run.keep and not run.stopping:
                    self._stop(run.id, 0.5)  # what it left behind goes too

    def tick(self) -> None:
        """Finish the runs whose processes are all gone; SIGKILL what outlived a stop's grace.

        A background run (``keep``) whose first process has ended is reported ``exited`` at once,
        but kept while what it left behind lives, so a later ``stop`` still reaches it (looked
        for once a second, not every tick)."""
        now = time.monotonic()
        for run in list(self.runs.values()):
            if run.code is None and not run.stopping:
                continue
            if run.reported and not run.stopping and now - run.looked_at < _LINGER_LOOK_SECONDS:
                continue
            run.looked_at = now
            left = self.members(run)
            if left and run.kill_at is not None and now >= run.kill_at:
                for pid in left:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        pass
                continue
            if run.code is None:  # stopped, but its first process is not reaped yet
                continue
            if left and run.keep and not run.reported:
                run.reported = True
                self.send({"op": "exited", "id": run.id, "code": run.code})
            if left:
                continue
            del self.runs[run.id]
            if not run.reported:
                self.send({"op": "exited", "id": run.id, "code": run.code})
            if run.requested:
                self.send({"op": "stopped", "id": run.id})

    def loop(self) -> None:
        fds = array.array("i", [listener.fileno() for listener in self.listeners])
        ancillary = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)] if self.listeners else []
        self.control.sendmsg(
            [json.dumps({"op": "ready", "listeners": len(self.listeners)}).encode()], ancillary
        )
        for listener in self.listeners:
            listener.close()  # the server accepts on them now
        while True:
            runs = self.runs.values()
            busy = any((run.code is not None and not run.reported) or run.stopping for run in runs)
            lingering = any(run.reported for run in runs)
            for key, _ in self.selector.select(0.02 if busy else _LINGER_LOOK_SECONDS if lingering else None):
                key.data(key.fileobj)
            self.reap()
            self.tick()


def _listen(port: int) -> socket.socket:
    """A TCP listener on ``127.0.0.1:port`` of the sandbox's own network (its loopback)."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(128)
    return listener


class _CapHeader(ctypes.Structure):
    _fields_ = (("version", ctypes.c_uint32), ("pid", ctypes.c_int))


class _CapData(ctypes.Structure):
    _fields_ = (
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    )


def _drop_capabilities(libc: ctypes.CDLL) -> None:
    """Give up every capability for good (a root server under Landlock, which has no user
    namespace): the bounding and ambient sets emptied, then the process's own sets, so nothing
    this process starts, even as uid 0, gets one back."""
    for capability in range(64):
        libc.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0)  # fails past the last one: fine
    libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    if libc.capset(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "cannot drop the capabilities")


def _load_seccomp(libc: ctypes.CDLL, program: bytes) -> None:
    """Load the classic BPF ``program`` as this process's seccomp filter (inherited by every
    command it starts)."""
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = _Fprog(len(program) // 8, ctypes.addressof(buffer))
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "PR_SET_NO_NEW_PRIVS failed")
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "cannot load the seccomp filter")


def _children(pid: int) -> list[int]:
    pids: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")  # noqa: PTH208 - the fast path, no Path objects
    except OSError:
        return pids
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children", "rb") as handle:
                pids.extend(int(child) for child in handle.read().split())
        except OSError:
            continue
    return pids


def _stat(pid: int) -> tuple[int, int, int, int, str] | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    fields = data[data.rfind(b")") + 2 :].split()
    try:
        return pid, int(fields[1]), int(fields[2]), int(fields[3]), fields[0].decode()
    except (IndexError, ValueError):
        return None


def _has(pid: int, marker: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            return marker in handle.read()
    except OSError:
        return False


def main(argv: list[str]) -> int:
    spec = json.loads(argv[1]) if len(argv) > 1 else {}
    if len(argv) > 2:
        spec["control"] = int(argv[2])
    Supervisor(spec).loop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
