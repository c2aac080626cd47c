"""A command started the short way (``spawn.open_command`` with pidfds) behaves as one started by
``anyio.open_process``: its output, its stdin, its exit status, its start failures, its stop."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import anyio
import pytest

from mcp_localtools.processes.spawn import PidfdProcess, open_command, pidfds_work

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="POSIX processes"),
]

ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
BOTH = pytest.mark.parametrize(
    "pidfds",
    [pytest.param(True, marks=pytest.mark.skipif(not pidfds_work(), reason="no pidfds")), False],
)


async def _read_all(stream: anyio.abc.ByteReceiveStream) -> bytes:
    chunks = []
    try:
        while True:
            chunks.append(await stream.receive())
    except anyio.EndOfStream:
        return b"".join(chunks)


@BOTH
async def test_a_command_gets_its_stdin_and_gives_its_output_and_exit_status(
    tmp_path: Path, pidfds: bool
) -> None:
    script = 'read line; echo "out:$line:$(pwd)"; echo err >&2; exit 3'
    process = await open_command(["/bin/sh", "-c", script], cwd=tmp_path, env=ENV, stdin=True, pidfds=pidfds)
    assert isinstance(process, PidfdProcess) is pidfds
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    await process.stdin.send(b"hello\n")
    await process.stdin.aclose()
    with anyio.fail_after(10):
        out, err = await _read_all(process.stdout), await _read_all(process.stderr)
        assert await process.wait() == 3
    await process.aclose()
    assert (out, err, process.returncode) == (f"out:hello:{tmp_path}\n".encode(), b"err\n", 3)


@BOTH
async def test_a_command_sees_only_its_env_in_its_own_session_with_null_stdin(
    tmp_path: Path, pidfds: bool
) -> None:
    script = 'echo "$ONLY $HOME"; cat; ps -o sid= -p $$'
    env = {**ENV, "ONLY": "this"}
    process = await open_command(["/bin/sh", "-c", script], cwd=tmp_path, env=env, stdin=False, pidfds=pidfds)
    assert process.stdin is None and process.stdout is not None
    with anyio.fail_after(10):
        out = (await _read_all(process.stdout)).decode().split("\n")
        assert await process.wait() == 0
    await process.aclose()
    assert out[0] == "this " and int(out[1]) == process.pid  # nothing else; the leader of a new session


@BOTH
async def test_a_program_or_directory_that_is_not_there_raises_oserror(tmp_path: Path, pidfds: bool) -> None:
    before = set(os.listdir("/proc/self/fd"))
    with pytest.raises(FileNotFoundError):
        await open_command([str(tmp_path / "nope")], cwd=tmp_path, env=ENV, stdin=False, pidfds=pidfds)
    with pytest.raises(FileNotFoundError):
        await open_command(["/bin/true"], cwd=tmp_path / "gone", env=ENV, stdin=True, pidfds=pidfds)
    assert set(os.listdir("/proc/self/fd")) <= before  # no pipe left open (others may close)


@pytest.mark.skipif(not pidfds_work(), reason="no pidfds")
async def test_a_killed_process_is_seen_and_collected_and_a_cancelled_wait_kills_it(tmp_path: Path) -> None:
    before = set(os.listdir("/proc/self/fd"))
    process = await open_command(["/bin/sleep", "30"], cwd=tmp_path, env=ENV, stdin=False, pidfds=True)
    assert process.returncode is None
    process.send_signal(signal.SIGTERM)
    with anyio.fail_after(10):
        assert await process.wait() == -signal.SIGTERM
    await process.aclose()
    other = await open_command(["/bin/sleep", "30"], cwd=tmp_path, env=ENV, stdin=True, pidfds=True)
    with anyio.move_on_after(0.1):
        await other.aclose()  # cancelled while it waits: the process is killed and collected
    assert other.returncode == -signal.SIGKILL
    assert set(os.listdir("/proc/self/fd")) <= before  # every pipe and pidfd closed


@pytest.mark.parametrize("made", [0, 1, 2])
async def test_a_start_that_runs_out_of_descriptors_leaves_none_of_its_own_open(
    tmp_path: Path, made: int
) -> None:
    # The server at its descriptor limit: the first, second or third pipe cannot be made. What
    # was made must be closed again, or every later call leaks more and the server never recovers.
    import resource

    if not pidfds_work():
        pytest.skip("no pidfds")
    before = set(os.listdir("/proc/self/fd"))
    probe = os.open(os.devnull, os.O_RDONLY)  # the lowest free descriptor
    os.close(probe)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (probe + 2 * made + 1, hard))
    try:
        with pytest.raises(OSError):
            await open_command(["true"], cwd=tmp_path, env=ENV, stdin=True, pidfds=True)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert set(os.listdir("/proc/self/fd")) <= before
