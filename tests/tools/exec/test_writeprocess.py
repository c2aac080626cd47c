"""writeprocess: closing stdin ends input; writing after that is a clear error."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from mcp_localtools.processes import background
from tests.helpers import error_code, text_of
from tests.tools.exec.conftest import exec_client
from tests.tools.exec.test_startprocess import call

pytestmark = pytest.mark.anyio


async def test_close_stdin_ends_input_and_a_later_write_says_so(tmp_path: Path) -> None:
    async with exec_client(tmp_path) as client:
        process = (await call(client, "startprocess", command="wc -l"))["processID"]
        await call(client, "writeprocess", processID=process, text="a\nb\n", closeStdin=True)
        done = await call(client, "waitprocess", processID=process, timeoutSeconds=10)
        assert done["stdout"].strip() == "2"
        again = await client.call_tool("writeprocess", {"processID": process, "text": "c\n"})
        assert error_code(again) == "invalid_arguments" and "closed" in text_of(again)


async def test_a_write_the_process_never_reads_does_not_hold_up_the_next_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write a process does not read blocks in its thread; its call cancelled, the next write
    is told so within ``STDIN_WAIT_SECONDS`` (1 s here, 5 by default: the test waits it out)
    instead of waiting behind it, and stopprocess ends the process (its reaper never hangs on
    that write)."""
    monkeypatch.setattr(background, "STDIN_WAIT_SECONDS", 1.0)
    async with exec_client(tmp_path) as client:
        process = (await call(client, "startprocess", command="sleep 600"))["processID"]
        with anyio.move_on_after(1):  # 512 KiB fill the pipe; nobody reads
            await client.call_tool("writeprocess", {"processID": process, "text": "x" * (512 * 1024)})
        again = await client.call_tool("writeprocess", {"processID": process, "text": "y\n"})
        assert error_code(again) == "invalid_arguments" and "still waiting" in text_of(again), text_of(again)
        stopped = await call(client, "stopprocess", processID=process)
        assert stopped["status"] != "running", stopped
