"""``ProcessRunner`` on both of its start paths (pidfds, and ``anyio.open_process`` where there are
none): exit codes, output, timeouts, the event loop's share while a command floods its output,
a timeout and an output stop seen together, and its descriptors once a run is over."""

from __future__ import annotations

import contextlib
import errno
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import anyio
import anyio.lowlevel
import anyio.to_thread
import pytest

from mcp_localtools.processes.runner import ProcessRunner, RunOutcome, RunRequest
from mcp_localtools.processes.spawn import pidfds_work

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="POSIX processes"),
]

BOTH = pytest.mark.parametrize(
    "pidfds",
    [pytest.param(True, marks=pytest.mark.skipif(not pidfds_work(), reason="no pidfds")), False],
)


def request(
    tmp_path: Path,
    script: str,
    *,
    timeout: float = 10,
    max_output_bytes: int = 4096,
    stdin: bytes | None = None,
) -> RunRequest:
    return RunRequest(
        argv=["/bin/sh", "-c", script],
        cwd=tmp_path,
        env={"PATH": os.environ.get("PATH", os.defpath)},
        stdin=stdin,
        timeout=timeout,
        max_output_bytes=max_output_bytes,
    )


@BOTH
async def test_either_start_path_reports_exit_codes_output_stdin_and_timeouts(
    tmp_path: Path, pidfds: bool
) -> None:
    runner = ProcessRunner(pidfds=pidfds, grace_seconds=0.2)
    with anyio.fail_after(20):
        done = await runner.run(request(tmp_path, "cat; echo out; echo err >&2; exit 3", stdin=b"in:"))
        killed = await runner.run(request(tmp_path, "kill -TERM $$"))
        flood = "head -c 100000 /dev/zero | tr '\\0' x; sleep 60"
        late = await runner.run(request(tmp_path, flood, timeout=0.5))
    assert runner.pidfds is pidfds  # the probe did not override the choice
    assert (done.exit_code, done.timed_out) == (3, False)
    assert (done.stdout.text, done.stderr.text) == ("in:out\n", "err\n")
    assert (killed.exit_code, killed.timed_out) == (143, False)
    assert (late.exit_code, late.timed_out, late.output_stopped) == (124, True, None)
    assert late.stdout.truncated and late.stdout.total_bytes == 100000
    assert late.stdout.text.startswith("x" * 2048) and late.stdout.text.endswith("x" * 2048)


@BOTH
async def test_a_command_writing_without_pause_does_not_keep_the_event_loop(
    tmp_path: Path, pidfds: bool
) -> None:
    # ``on_output`` pauses after each chunk, so the command has filled the pipe again by the next
    # read, which then never waits: only the pump itself can give other tasks their turn. Only the
    # pidfd path could keep the loop (asyncio's streams wait, and so yield, on their own); the
    # fallback run checks that it still does not.
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await anyio.lowlevel.checkpoint()

    chunks: list[tuple[int, int]] = []  # (ticks when it was read, its size)

    def on_output(stream: str, data: bytes) -> None:
        chunks.append((ticks, len(data)))
        time.sleep(0.002)

    size = 2 << 20
    runner = ProcessRunner(pidfds=pidfds)
    with anyio.fail_after(20):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(ticker)
            outcome = await runner.run(
                request(tmp_path, f"head -c {size} /dev/zero", max_output_bytes=size), on_output
            )
            tasks.cancel_scope.cancel()
    assert outcome.exit_code == 0 and outcome.stdout.total_bytes == size
    longest = streak = 0  # the most bytes read while no other task ran
    for index, (tick, length) in enumerate(chunks):
        streak = streak + length if index and tick == chunks[index - 1][0] else length
        longest = max(longest, streak)
    assert longest <= 256 * 1024 + 65536, (longest, len(chunks))  # a turn after every 256 KiB


@BOTH
async def test_a_timeout_seen_in_the_same_turn_as_an_output_stop_is_a_timeout(
    tmp_path: Path, pidfds: bool
) -> None:
    # The command floods its output only once the event loop is blocked, and the block outlasts
    # the run's timeout: when the loop runs again it sees the deadline and the flood in one turn.
    # The command outlived its timeout, so the caller is told 124 (and that the output passed
    # the stop limit too). Only the pidfd path reproduced the race (on asyncio's, the run's wait
    # ends before its pump sees the flood); the fallback run checks the answer is the same there.
    runner = ProcessRunner(pidfds=pidfds, grace_seconds=0.2)
    script = "touch started; while [ ! -e go ]; do sleep 0.01; done; head -c 65536 /dev/zero; sleep 60"
    outcomes: list[RunOutcome] = []

    async def run() -> None:
        outcomes.append(await runner.run(request(tmp_path, script, timeout=1.0, max_output_bytes=64)))

    with anyio.fail_after(20):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(run)
            while not (tmp_path / "started").exists():
                await anyio.sleep(0.01)
            await anyio.sleep(0.05)  # the run is waiting for its command (and its deadline)
            (tmp_path / "go").touch()
            time.sleep(2.5)  # the event loop is blocked past the deadline while the command floods
    (outcome,) = outcomes
    assert (outcome.exit_code, outcome.timed_out, outcome.output_stopped) == (124, True, "stdout")


def open_fds() -> dict[int, str]:
    """This process's open descriptors and what each one is (``pipe:[N]``, ``anon_inode:[pidfd]``)."""
    found = {}
    for name in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            found[int(name)] = os.readlink(f"/proc/self/fd/{name}")
    return found


TRACER = """
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
print(libc.ptrace(0x4206, int(sys.argv[1]), 0, 0), ctypes.get_errno(), flush=True)  # PTRACE_SEIZE
sys.stdin.read()  # never waits for its tracee: the tracee's exit is the tracer's to collect first
"""
TRACEE = """
import ctypes, os
ctypes.CDLL(None).prctl(0x59616D61, ctypes.c_ulong(-1), 0, 0, 0)  # PR_SET_PTRACER_ANY (Yama scope 1)
with open("pid.tmp", "w") as out:
    out.write(f"{os.getpid()}\\n")
os.rename("pid.tmp", "pid")
print("up", flush=True)
os.execvp("sleep", ["sleep", "60"])
"""


@pytest.mark.skipif(not pidfds_work(), reason="no pidfds")
async def test_a_leader_that_cannot_be_collected_in_time_is_abandoned_with_its_descriptors_closed(
    tmp_path: Path,
) -> None:
    # A leader the wait after SIGKILL cannot collect (in uninterruptible sleep, or, here, traced by
    # a process that does not wait for it: its exit is reported to the tracer first, and its parent
    # cannot collect it before the tracer has) is abandoned when that wait runs out; its pidfd and
    # pipes must be closed anyway.
    runner = ProcessRunner(pidfds=True, grace_seconds=0.1, kill_wait_seconds=0.5)
    await runner.run(request(tmp_path, "true"))  # the process tree's own descriptors, opened once
    before = open_fds()
    tracers: list[subprocess.Popen[bytes]] = []

    seized: list[bytes] = []  # the tracer's "result errno"

    async def trace() -> None:
        while not (tmp_path / "pid").exists():
            await anyio.sleep(0.01)
        leader = int((tmp_path / "pid").read_text())
        tracer = subprocess.Popen(
            [sys.executable, "-c", TRACER, str(leader)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        tracers.append(tracer)
        assert tracer.stdout is not None
        seized.append(await anyio.to_thread.run_sync(tracer.stdout.readline))

    try:
        cpu = time.process_time()
        with anyio.fail_after(20):
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(trace)
                script = f"exec {shlex.quote(sys.executable)} -c {shlex.quote(TRACEE)}"
                outcome = await runner.run(request(tmp_path, script, timeout=3))
        cpu = time.process_time() - cpu
        if seized != [b"0 0\n"] and seized and seized[0].split()[-1] == str(errno.EPERM).encode():
            pytest.skip("ptrace is not allowed here (Yama ptrace_scope 2 or 3, or no CAP_SYS_PTRACE)")
        assert seized == [b"0 0\n"]
        assert outcome.timed_out and outcome.stdout.text == "up\n"
        # Its pidfd is readable (it has exited) while it cannot be collected: the wait after SIGKILL
        # polls it instead of spinning the event loop for the whole of that wait (0.5 s of CPU).
        assert cpu < 0.25, cpu
        (tracer,) = tracers
        assert tracer.stdin is not None and tracer.stdout is not None
        theirs = {tracer.stdin.fileno(), tracer.stdout.fileno()}
        after = open_fds()
        assert {fd: what for fd, what in after.items() if before.get(fd) != what and fd not in theirs} == {}
        leader = int((tmp_path / "pid").read_text())
        assert Path(f"/proc/{leader}").exists()  # a zombie the tracer has first
        tracer.stdin.close()
        tracer.wait()  # its tracee's exit goes to its parent now, this process
        await runner.run(request(tmp_path, "true"))  # the next run collects it
        assert not Path(f"/proc/{leader}").exists()
    finally:
        for tracer in tracers:
            for pipe in (tracer.stdin, tracer.stdout):
                if pipe is not None:
                    pipe.close()
            tracer.wait()
        if (tmp_path / "pid").exists():  # not collected by the runner: not left a zombie either
            with contextlib.suppress(ChildProcessError, ValueError):
                os.waitpid(int((tmp_path / "pid").read_text()), os.WNOHANG)
