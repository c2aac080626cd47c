"""Start a command's process the short way (Linux): ``subprocess.Popen`` called on the event
loop, its pipes read as non-blocking descriptors (``pipes.FdReader``) and its exit seen when its
pidfd turns readable, as an ``anyio.abc.Process`` for ``ProcessRunner``.

asyncio's subprocess machinery (a transport, a protocol and a stream reader for each pipe, the
child watcher's callbacks and futures) costs about 0.3 ms of CPU for a short command, as much as
all the server's own work for it; this costs the ``Popen`` call and five descriptors. Where
pidfds are missing (not Linux, a seccomp policy that refuses them) ``anyio.open_process`` starts
the process instead. Either way the start blocks the event loop the same short time: ``Popen``
forks with ``vfork`` and returns once the child has called ``exec``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream, Process

from mcp_localtools import compat
from mcp_localtools.processes.pipes import FdReader, FdWriter

__all__ = ["PidfdProcess", "open_command", "pidfds_work"]

_TRACED_POLL_SECONDS = 0.05


def pidfds_work() -> bool:
    """Whether this process may open pidfds (Linux 5.3 and later, not refused by a seccomp
    policy): one ``pidfd_open`` of itself."""
    try:
        os.close(compat.pidfd_open(os.getpid()))
    except OSError:
        return False
    return True


class PidfdProcess(Process):
    """A started command: its ``Popen``, its pidfd (readable once it has exited) and its pipes.
    Takes the descriptors over; ``aclose`` closes them."""

    def __init__(
        self,
        popen: subprocess.Popen[bytes],
        pidfd: int,
        stdin: FdWriter | None,
        stdout: FdReader,
        stderr: FdReader,
    ) -> None:
        self._popen = popen
        self._pidfd = pidfd
        self._stdin = stdin
        self._stdout = stdout
        self._stderr = stderr

    async def wait(self) -> int:
        """Its exit status (``Popen.returncode``), once it has exited; collects it. A process
        traced by another is collected by its tracer first: its pidfd is readable from its exit
        until then, and is polled every ``_TRACED_POLL_SECONDS`` meanwhile."""
        while (code := self._popen.poll()) is None:
            await anyio.wait_readable(self._pidfd)
            if self._popen.poll() is None:  # exited, not ours to collect yet: wait, do not spin
                await anyio.sleep(_TRACED_POLL_SECONDS)
        return code

    async def release(self) -> None:
        """Close its pipes and its pidfd without waiting for it, for a process that cannot be
        collected yet (``returncode`` collects it later)."""
        for stream in (self._stdin, self._stdout, self._stderr):
            if stream is not None:
                await stream.aclose()
        if self._pidfd >= 0:
            os.close(self._pidfd)
            self._pidfd = -1

    async def aclose(self) -> None:
        """Close its pipes, wait for it (killed when that wait is cancelled), close its pidfd."""
        for stream in (self._stdin, self._stdout, self._stderr):
            if stream is not None:
                await stream.aclose()
        try:
            if self._popen.poll() is None:
                try:
                    await self.wait()
                except BaseException:
                    with anyio.CancelScope(shield=True):
                        self.kill()
                        await self.wait()
                    raise
        finally:
            if self._pidfd >= 0:
                os.close(self._pidfd)
                self._pidfd = -1

    def terminate(self) -> None:
        self._popen.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self._popen.send_signal(compat.SIGKILL)

    def send_signal(self, signal: int) -> None:
        self._popen.send_signal(signal)

    @property
    def pid(self) -> int:
        return self._popen.pid

    @property
    def returncode(self) -> int | None:
        """Its exit status once it has exited (collected now if need be), else None."""
        return self._popen.poll()

    @property
    def stdin(self) -> ByteSendStream | None:
        return self._stdin

    @property
    def stdout(self) -> ByteReceiveStream:
        return self._stdout

    @property
    def stderr(self) -> ByteReceiveStream:
        return self._stderr


async def open_command(
    argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], stdin: bool, pidfds: bool
) -> Process:
    """Start ``argv`` in ``cwd`` with exactly ``env``, as the leader of a new session, its stdout
    and stderr pipes, its stdin a pipe (``stdin``) or ``/dev/null``, every other descriptor
    closed: a ``PidfdProcess`` when ``pidfds`` (``pidfds_work``), else ``anyio.open_process``'s
    (shielded: cancelled half-way, it would leave a started process without a handle).

    Raises:
        OSError: the process cannot be started (no such program or directory, not executable).
    """
    if not pidfds:
        with anyio.CancelScope(shield=True):
            return await anyio.open_process(
                list(argv),
                stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=cwd,
                env=dict(env),
                start_new_session=True,
            )
    ours: list[int] = []  # the server's ends, closed again if the start fails
    theirs: list[int] = []  # the child's ends, closed once it has them
    try:
        for _ in range(3 if stdin else 2):  # not inherited by other children (PEP 446)
            read, write = os.pipe()
            ours.append(read)
            theirs.append(write)
        if stdin:  # the third pipe is stdin: the child reads, we write
            theirs[2], ours[2] = ours[2], theirs[2]
        popen = subprocess.Popen(
            list(argv),
            stdin=theirs[2] if stdin else subprocess.DEVNULL,
            stdout=theirs[0],
            stderr=theirs[1],
            cwd=cwd,
            env=env,
            start_new_session=True,
        )
    except BaseException:
        for fd in ours:
            os.close(fd)
        raise
    finally:
        for fd in theirs:
            os.close(fd)
    try:
        pidfd = compat.pidfd_open(popen.pid)
    except OSError:  # pragma: no cover - pidfds_work said they do (the descriptors may run out)
        with contextlib.suppress(OSError):
            compat.killpg(popen.pid, compat.SIGKILL)  # its session's group, what it started too
        popen.wait()
        for fd in ours:
            os.close(fd)
        raise
    out_r, err_r = ours[0], ours[1]
    in_w = ours[2] if stdin else -1
    return PidfdProcess(popen, pidfd, FdWriter(in_w) if stdin else None, FdReader(out_r), FdReader(err_r))
