"""``ProcessRunner`` on both of its start paths (pidfds, and ``anyio.open_process`` where there are
none): exit codes, output, timeouts, the event loop's share while a command floods its output,
a timeout and an output stop seen together, and its descriptors once a run is over."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import anyio
import anyio.lowlevel
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
    # read, which then never waits: only the pump itself can give other tasks their turn.
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
    # the stop limit too).
    runner = ProcessRunner(pidfds=pidfds, grace_seconds=0.2)
    script = "touch started; while [ ! -e go ]; do sleep 0.01; done; head -c 65536 /dev/zero; sleep 60"
    outcomes: list[RunOutcome] = []

    async def run() -> None:
        outcomes.append(await runner.run(request(tmp_path, script, timeout=0.5, max_output_bytes=64)))

    with anyio.fail_after(20):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(run)
            while not (tmp_path / "started").exists():
                await anyio.sleep(0.01)
            await anyio.sleep(0.05)  # the run is waiting for its command (and its deadline)
            (tmp_path / "go").touch()
            time.sleep(1.5)  # the event loop is blocked past the deadline while the command floods
    (outcome,) = outcomes
    assert (outcome.exit_code, outcome.timed_out, outcome.output_stopped) == (124, True, "stdout")
