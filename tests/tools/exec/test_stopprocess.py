"""stopprocess: a process that ignores SIGTERM is killed after the grace period; remove forgets."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.helpers import error_code
from tests.tools.exec.conftest import exec_client
from tests.tools.exec.test_startprocess import call

pytestmark = pytest.mark.anyio


async def test_a_process_ignoring_sigterm_is_killed_after_the_grace(tmp_path: Path) -> None:
    # Unsandboxed: inside bubblewrap, SIGTERM ends the sandbox and with it everything at once.
    async with exec_client(tmp_path, exec={"sandbox": "off"}) as client:
        started = await call(
            client,
            "startprocess",
            command="trap 'echo ignored-term' TERM; echo up $$; while :; do sleep 0.05; done",
            waitFor="up",
        )
        process = started["processID"]
        group = _group_of(int(started["stdout"].split()[1])) if sys.platform == "linux" else None
        data = await call(client, "stopprocess", processID=process, graceSeconds=0.5)
        # SIGTERM first (it said so and went on), SIGKILL once the grace was over (137)
        assert data["status"] == "exited" and data["exitCode"] == 137
        if group is not None:
            # Nothing of its group is left, not even the zombie of the sleep it started, which
            # the server (a child subreaper) inherits: the stop collects it (it once waited out
            # its whole SIGKILL wait, 5 s, for that zombie, and left it behind).
            assert not _members_of(group)
        output = await call(client, "processoutput", processID=process, stdoutOffset=0)
        assert "ignored-term" in output["stdout"], output
        await call(client, "stopprocess", processID=process, remove=True)
        gone = await client.call_tool("processoutput", {"processID": process})
        assert error_code(gone) == "not_found"


def _group_of(pid: int) -> int:
    """The process group of ``pid`` (``/proc/PID/stat``'s fifth field)."""
    stat = Path(f"/proc/{pid}/stat").read_bytes()
    return int(stat[stat.rindex(b")") + 2 :].split()[2])


def _members_of(group: int) -> list[int]:
    """Pids of the processes of ``group``, zombies included."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_bytes()
            except OSError:
                continue
            if int(stat[stat.rindex(b")") + 2 :].split()[2]) == group:
                found.append(int(entry.name))
    return found
