"""Handles on a background process: started by the server itself (``PopenHandle``, the sandbox off
or Seatbelt) or by its connection's supervisor (``SupervisedHandle``, bwrap and Landlock), with
pipes or a pseudo-terminal (``tty``) for its output.

A handle gives the process table (``table.py``) the process's streams, its exit and a way to
signal every process of it; a supervised process's id is its sandbox's, so it is only ever
signalled through the supervisor, never with the server's ``kill``.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Protocol

from mcp_localtools import compat
from mcp_localtools.errors import SandboxGone
from mcp_localtools.processes.supervision import RunState, SupervisedSandbox

__all__ = ["Handle", "PopenHandle", "Streams", "SupervisedHandle"]

_START_SECONDS = 15.0


class Handle(Protocol):
    """What the process table needs of a started process."""

    pid: int
    stdin: IO[bytes]
    stdout: IO[bytes]
    stderr: IO[bytes]

    def wait(self) -> int:
        """Block until it exits; its return code (minus the signal number when killed)."""
        ...

    def signal(self, signum: int) -> bool:
        """Send ``signum`` to every process of it; False when none is left to signal."""
        ...

    def alive(self) -> bool:
        """Whether any process of it is left (its first one, or what it started)."""
        ...

    def stop(self, grace: float) -> bool:
        """Stop every process of it itself (SIGTERM, SIGKILL after ``grace`` s) and return True
        when it can; False: the caller signals it (``signal``) and waits."""
        ...


class Streams:
    """The descriptors of a new process: pipes, or a pseudo-terminal for all three with
    ``tty`` (its stderr then comes through stdout, and its own stderr pipe is empty).

    Attributes:
        child: stdin, stdout and stderr for the child (close them once it has started).
        stdin, stdout, stderr: the server's ends, as files.
    """

    def __init__(self, *, tty: bool) -> None:
        # os.pipe and os.openpty make descriptors that children do not inherit (PEP 446)
        if tty:
            master, slave = compat.open_pty()
            empty_r, empty_w = os.pipe()
            os.close(empty_w)
            self.child = [slave, os.dup(slave), os.dup(slave)]
            self.stdin: IO[bytes] = os.fdopen(os.dup(master), "wb", buffering=0)
            self.stdout: IO[bytes] = os.fdopen(master, "rb", buffering=0)
            self.stderr: IO[bytes] = os.fdopen(empty_r, "rb", buffering=0)
            return
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        self.child = [in_r, out_w, err_w]
        self.stdin = os.fdopen(in_w, "wb", buffering=0)
        self.stdout = os.fdopen(out_r, "rb", buffering=0)
        self.stderr = os.fdopen(err_r, "rb", buffering=0)

    def started(self) -> None:
        """Close the child's ends (it has its own copies now)."""
        for fd in self.child:
            os.close(fd)
        self.child = []

    def close(self) -> None:
        """Close everything (the start failed)."""
        self.started()
        for stream in (self.stdin, self.stdout, self.stderr):
            stream.close()


class PopenHandle:
    """A process the server starts itself, leader of its own process group."""

    def __init__(
        self, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], streams: Streams, tty: bool
    ) -> None:
        self._popen = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=dict(env),
            stdin=streams.child[0],
            stdout=streams.child[1],
            stderr=streams.child[2],
            start_new_session=True,
            close_fds=True,
            preexec_fn=compat.take_terminal() if tty else None,
        )
        self.pid = self._popen.pid
        self.stdin, self.stdout, self.stderr = streams.stdin, streams.stdout, streams.stderr

    def wait(self) -> int:
        return self._popen.wait()

    def signal(self, signum: int) -> bool:
        try:
            compat.killpg(self.pid, signum)
        except (ProcessLookupError, PermissionError):
            return False
        return True

    def alive(self) -> bool:
        return self.signal(0)

    def stop(self, grace: float) -> bool:
        return False


class SupervisedHandle:
    """A process its connection's supervisor started inside the connection's sandbox."""

    def __init__(
        self,
        sandbox: SupervisedSandbox,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        streams: Streams,
        tty: bool,
    ) -> None:
        self._sandbox = sandbox
        self._state: RunState = sandbox.spawn(argv, env=env, cwd=cwd, fds=streams.child, keep=True, tty=tty)
        if not self._state.started.wait(_START_SECONDS) or self._state.error is not None:
            raise OSError(0, self._state.error or "the connection's sandbox did not start it in time")
        self.pid = self._state.pid
        self.stdin, self.stdout, self.stderr = streams.stdin, streams.stdout, streams.stderr

    def wait(self) -> int:
        self._state.exited.wait()
        return self._state.code if self._state.code is not None else -compat.SIGKILL

    def signal(self, signum: int) -> bool:
        try:  # also after its first process ended: the supervisor reaches what it left behind
            self._sandbox.signal(self._state, signum)
        except SandboxGone:
            return False
        return not self._state.exited.is_set()

    def alive(self) -> bool:
        return not self._state.exited.is_set() and not self._sandbox.closed

    def stop(self, grace: float) -> bool:
        """SIGTERM to every process of it, SIGKILL after ``grace`` s; returns when none is left."""
        self._sandbox.stop(self._state, grace)
        self._state.stopped.wait(grace + 10)
        return True
