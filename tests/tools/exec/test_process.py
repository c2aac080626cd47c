"""Process hygiene: nothing a command started outlives it, escaped descendants included."""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client

from mcp_localtools.processes.runner import ProcessRunner, RunRequest
from tests.tools.exec.conftest import exec_client, processes_with, wait_until_gone

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(
        not sys.platform.startswith("linux"), reason="escaped processes are found through /proc"
    ),
]


def request(tmp_path: Path, script: str, *, timeout: float = 10) -> RunRequest:
    return RunRequest(
        argv=["/bin/sh", "-c", script],
        cwd=tmp_path,
        env={"PATH": os.environ.get("PATH", os.defpath)},
        stdin=None,
        timeout=timeout,
        max_output_bytes=4096,
    )


async def test_a_setsid_grandchild_is_killed_when_its_command_times_out(tmp_path: Path, marker: str) -> None:
    async with exec_client(tmp_path, exec={"timeout_seconds": 1}) as client:
        with anyio.fail_after(15):
            result = await client.call_tool(
                "shellcommand", {"commands": [f"setsid -f sh -c 'sleep 60; exit 0' {marker}; sleep 60"]}
            )
    assert result.structured_content is not None
    assert result.structured_content["results"][0]["timedOut"] is True
    assert processes_with(marker) == []


async def test_a_double_forked_grandchild_is_killed_when_its_command_times_out(
    tmp_path: Path, marker: str
) -> None:
    async with exec_client(tmp_path, exec={"timeout_seconds": 1, "allow_dangerous": True}) as client:
        with anyio.fail_after(15):
            await client.call_tool(
                "shellcommand", {"commands": [f"(setsid sh -c 'sleep 60; exit 0' {marker} &); sleep 60"]}
            )
    assert processes_with(marker) == []


async def test_processes_left_behind_by_a_finished_command_are_stopped(shell: Client, marker: str) -> None:
    with anyio.fail_after(15):
        result = await shell.call_tool(
            "shellcommand", {"commands": [f"setsid -f sh -c 'sleep 60; exit 0' {marker}; echo done"]}
        )
    assert result.structured_content is not None
    assert result.structured_content["results"][0]["stdout"] == "done\n"
    assert processes_with(marker) == []


async def test_a_process_that_escapes_every_check_cannot_hang_the_call(tmp_path: Path, marker: str) -> None:
    # It leaves the session, clears its environment and is orphaned: the documented limit. It
    # still holds the stdout pipe; the bounded drain returns anyway.
    runner = ProcessRunner(drain_seconds=0.3)
    script = f"(env -i setsid sh -c 'sleep 5; exit 0' {marker} &); echo out"
    try:
        with anyio.fail_after(4):
            outcome = await runner.run(request(tmp_path, script))
        assert outcome.exit_code == 0 and outcome.stdout.text == "out\n"
    finally:
        for pid in processes_with(marker):
            os.kill(pid, 9)
        await wait_until_gone(marker)


def server_children() -> dict[int, tuple[bytes, int]]:
    """This process's children, zombies included: pid -> (state, start in clock ticks)."""
    found = {}
    for task in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{task}/children", "rb") as handle:
            for pid in map(int, handle.read().split()):
                try:
                    with open(f"/proc/{pid}/stat", "rb") as stat:
                        fields = stat.read().rpartition(b")")[2].split()
                except OSError:
                    continue
                found[pid] = (fields[0], int(fields[19]))
    return found


def clock_ticks() -> int:
    """Now, in the unit of /proc/PID/stat start times."""
    return int(time.clock_gettime(time.CLOCK_BOOTTIME) * os.sysconf("SC_CLK_TCK"))


async def test_escaped_processes_that_exit_are_reaped_and_no_other_child_is(
    tmp_path: Path, marker: str
) -> None:
    # Children this process waits for itself (as asyncio does for commands and parser workers,
    # subprocess for rg): one with its own session started before the runs, one in the server's
    # session started while the first run runs. Their exit statuses must stay theirs.
    before = subprocess.Popen(["sh", "-c", "exit 7"], start_new_session=True)
    with anyio.fail_after(5):  # start times are in clock ticks: let the one of `before` pass
        born = clock_ticks()
        while clock_ticks() < born + 2:
            await anyio.sleep(0.005)
    since = clock_ticks()
    runner = ProcessRunner(drain_seconds=0.3)
    # One process exits while its run still runs (setsid -f), one escapes every check and exits
    # after its run, when the test says so.
    wait_for_die = "while [ ! -e die ]; do sleep 0.01; done"
    script = (
        f"setsid -f sh -c 'exit 0'; (env -i setsid sh -c '{wait_for_die}' {marker} &); "
        "while [ ! -e go ]; do sleep 0.01; done; sleep 0.2"
    )
    try:
        with anyio.fail_after(20):
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(runner.run, request(tmp_path, script))
                escaped: list[int] = []
                while not escaped:  # the escaped shell, once re-parented to us
                    await anyio.sleep(0.01)
                    escaped = [pid for pid in processes_with(marker) if pid in server_children()]
                during = subprocess.Popen(["sh", "-c", "exit 5"])
                (tmp_path / "go").touch()
            assert server_children()[escaped[0]][0] != b"Z"  # alive after its run
            (tmp_path / "die").touch()
            while server_children()[escaped[0]][0] != b"Z":
                await anyio.sleep(0.01)
            await runner.run(request(tmp_path, "true"))
    finally:  # a failed run must not leave the escaped loop waiting for a file forever
        (tmp_path / "go").touch()
        (tmp_path / "die").touch()
        await wait_until_gone(marker)
    assert escaped[0] not in server_children()
    assert before.wait(timeout=5) == 7 and during.wait(timeout=5) == 5
    assert [
        pid for pid, (state, start) in server_children().items() if state == b"Z" and start >= since
    ] == []


async def test_cancelling_a_run_stops_its_whole_tree_before_returning(tmp_path: Path, marker: str) -> None:
    runner = ProcessRunner()
    script = f"sh -c 'sleep 60; exit 0' {marker}-a & setsid -f sh -c 'sleep 60; exit 0' {marker}-b; wait"
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(runner.run, request(tmp_path, script))
            while len(processes_with(marker)) < 2:
                await anyio.sleep(0.01)
            tasks.cancel_scope.cancel()
    assert processes_with(marker) == []


async def test_the_server_becomes_a_subreaper_and_non_dumpable_once_a_command_ran(tmp_path: Path) -> None:
    await ProcessRunner().run(request(tmp_path, "true"))
    libc = ctypes.CDLL(None, use_errno=True)
    flag = ctypes.c_int(-1)
    assert libc.prctl(37, ctypes.byref(flag), 0, 0, 0) == 0 and flag.value == 1  # PR_GET_CHILD_SUBREAPER
    assert libc.prctl(3, 0, 0, 0, 0) == 0  # PR_GET_DUMPABLE


async def test_a_missing_working_directory_at_spawn_gives_127(tmp_path: Path) -> None:
    outcome = await ProcessRunner().run(
        RunRequest(["/bin/true"], tmp_path / "gone", {}, None, timeout=5, max_output_bytes=1024)
    )
    assert outcome.exit_code == 127 and "cannot start /bin/true in" in outcome.stderr.text


_PROBE = """
import importlib.util, os, subprocess, sys
spec = importlib.util.spec_from_file_location("proctree", sys.argv[1])
module = importlib.util.module_from_spec(spec)
sys.modules["proctree"] = module
spec.loader.exec_module(module)
if sys.argv[2] == "hardened":
    module.harden_server_process()
me = os.getpid()
script = f"echo FORGED > /proc/{me}/fd/1; cat /proc/{me}/environ >/dev/null && echo READ-ENV >&2"
done = subprocess.run(["sh", "-c", script], stdin=subprocess.DEVNULL, capture_output=True, text=True)
sys.stderr.write(done.stderr)
"""


@pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None or not Path("/usr/bin/python3").exists(),
    reason="needs root to run the check as an unprivileged user (as root, /proc permissions prove nothing)",
)
@pytest.mark.parametrize("mode", ["plain", "hardened"])
def test_a_non_dumpable_server_keeps_same_user_commands_out_of_its_stdout_and_environ(mode: str) -> None:
    # The server and its command run as the same unprivileged user (nobody), the server's stdout
    # is a pipe that user owns, as with a real client. "plain" shows the attack works at all.
    import tempfile

    from mcp_localtools.processes import tree

    source = Path(tree.__file__).resolve()
    with tempfile.TemporaryDirectory() as scratch:
        os.chmod(scratch, 0o755)
        shutil.copy(source, Path(scratch, "proctree.py"))
        # It takes prctl from compat, which imports nothing else of the package but its own modules.
        Path(scratch, "mcp_localtools").mkdir()
        Path(scratch, "mcp_localtools", "__init__.py").touch()
        shutil.copytree(
            source.parents[1] / "compat",
            Path(scratch, "mcp_localtools", "compat"),
            ignore=shutil.ignore_patterns("__pycache__"),
        )
        Path(scratch, "probe.py").write_text(_PROBE, encoding="utf-8")
        done = subprocess.run(
            [
                "setpriv",
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                "sh",
                "-c",
                f"/usr/bin/python3 {scratch}/probe.py {scratch}/proctree.py {mode} | cat",
            ],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=scratch,
        )
    forged, read_env = "FORGED" in done.stdout, "READ-ENV" in done.stderr
    assert (forged, read_env) == ((True, True) if mode == "plain" else (False, False)), done
