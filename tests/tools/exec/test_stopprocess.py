"""stopprocess: a process that ignores SIGTERM is killed after the grace period; remove forgets."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import error_code
from tests.tools.exec.conftest import exec_client
from tests.tools.exec.test_startprocess import call

pytestmark = pytest.mark.anyio


async def test_a_process_ignoring_sigterm_is_killed_after_the_grace(tmp_path: Path) -> None:
    # Unsandboxed: inside bubblewrap, SIGTERM ends the sandbox and with it everything at once.
    async with exec_client(tmp_path, exec={"sandbox": "off"}) as client:
        process = (
            await call(
                client,
                "startprocess",
                command="trap 'echo ignored-term' TERM; echo up; while :; do sleep 0.05; done",
                waitFor="up",
            )
        )["processID"]
        data = await call(client, "stopprocess", processID=process, graceSeconds=0.5)
        # SIGTERM first (it said so and went on), SIGKILL once the grace was over (137)
        assert data["status"] == "exited" and data["exitCode"] == 137
        output = await call(client, "processoutput", processID=process, stdoutOffset=0)
        assert "ignored-term" in output["stdout"], output
        await call(client, "stopprocess", processID=process, remove=True)
        gone = await client.call_tool("processoutput", {"processID": process})
        assert error_code(gone) == "not_found"
