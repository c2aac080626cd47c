"""waitprocess: a line, the exit, or the timeout; an invalid regex."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from tests.helpers import error_code, text_of
from tests.tools.exec.conftest import exec_client, processes_with, wait_until_gone
from tests.tools.exec.test_startprocess import call

pytestmark = pytest.mark.anyio


async def test_it_wakes_at_the_matching_line_not_at_the_timeout_or_the_exit(tmp_path: Path) -> None:
    """The wait ends at the line itself: the process goes on running (no exit ended it) and the
    timeout is far off (not timedOut). How soon after the line it wakes is a speed, polled every
    20 ms (``_processview.wait_for_line``), not decided here."""
    script = "import time\ntime.sleep(0.2)\nprint(repr(time.time()), flush=True)\ntime.sleep(600)\n"
    (tmp_path / "stamp.py").write_text(script, encoding="utf-8")
    async with exec_client(tmp_path) as client:
        process = (await call(client, "startprocess", command="python3 stamp.py"))["processID"]
        data = await call(client, "waitprocess", processID=process, waitFor=r"^\d+\.\d+$", timeoutSeconds=300)
        assert float(data["matchedLine"]) > 0 and data["timedOut"] is False and data["status"] == "running"
        await call(client, "stopprocess", processID=process)


async def test_the_timeout_ends_the_wait_and_the_process_keeps_running(tmp_path: Path) -> None:
    async with exec_client(tmp_path) as client:
        process = (await call(client, "startprocess", command="sleep 30"))["processID"]
        data = await call(client, "waitprocess", processID=process, waitFor="never", timeoutSeconds=0.3)
        assert data["timedOut"] is True and "matchedLine" not in data and data["status"] == "running"
        waited = await client.call_tool(
            "waitprocess", {"processID": process, "waitFor": "x", "timeoutSeconds": 0.1}
        )
        assert "no match within 0.1 s" in text_of(waited)
        await call(client, "stopprocess", processID=process)


async def test_without_wait_for_it_waits_for_the_exit(tmp_path: Path) -> None:
    async with exec_client(tmp_path) as client:
        started = await call(client, "startprocess", command="echo done; exit 3")
        data = await call(client, "waitprocess", processID=started["processID"], timeoutSeconds=10)
        assert data["status"] == "exited" and data["exitCode"] == 3
        # "the output since the last read": startprocess's result already read what came before
        # it returned (most of the time, all of it), so the two results together hold it once
        assert started["stdout"] + data["stdout"] == "done\n"


async def test_the_exit_is_reported_with_all_the_output_written_before_it(tmp_path: Path) -> None:
    script = "head -c 300000 /dev/zero | tr '\\0' x; echo; echo END; exit 3"
    async with exec_client(tmp_path, exec={"process_output_bytes": 1 << 20}) as client:
        for _ in range(3):
            started = await call(client, "startprocess", command=script)
            data = await call(client, "waitprocess", processID=started["processID"], timeoutSeconds=20)
            assert data["status"] == "exited" and data["exitCode"] == 3
            assert data["stdoutBytes"] == 300005
            tail = await call(client, "processoutput", processID=started["processID"], stdoutOffset=299990)
            assert tail["stdout"] == "xxxxxxxxxx\nEND\n"


async def test_what_a_process_left_behind_delays_its_exit_a_bounded_time_and_stopprocess_ends_it(
    tmp_path: Path,
) -> None:
    marker = f"{uuid.uuid4().hex[:8]}"
    script = f"(exec -a {marker} sleep 60) &\necho done\nexit 3\n"  # the sleep keeps the pipes
    (tmp_path / "linger.sh").write_text(script, encoding="utf-8")
    async with exec_client(tmp_path) as client:
        started = await call(client, "startprocess", command="bash linger.sh")
        data = await call(client, "waitprocess", processID=started["processID"], timeoutSeconds=30)
        # the leftover holds the pipes open (for 60 s): the exit is reported after a bounded wait
        # for them, within the 30 s of this wait
        assert data["status"] == "exited" and data["exitCode"] == 3
        assert started["stdout"] + data["stdout"] == "done\n"
        assert processes_with(marker)
        stopped = await call(client, "stopprocess", processID=started["processID"], graceSeconds=1)
        assert stopped["status"] == "exited"
        await wait_until_gone(marker)  # "everything it started", even after its first process ended


async def test_an_invalid_regex_and_an_unknown_id_are_clear_errors(tmp_path: Path) -> None:
    async with exec_client(tmp_path) as client:
        process = (await call(client, "startprocess", command="sleep 5"))["processID"]
        bad = await client.call_tool("waitprocess", {"processID": process, "waitFor": "(a"})
        assert error_code(bad) == "invalid_arguments" and "RE2" in text_of(bad)
        unknown = await client.call_tool("waitprocess", {"processID": "proc_0000000000000000"})
        assert error_code(unknown) == "not_found" and "listprocesses" in text_of(unknown)
        await call(client, "stopprocess", processID=process)
