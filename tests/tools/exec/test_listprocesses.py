"""listprocesses: this session's processes, oldest first; the per-session cap of running ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import error_code, text_of
from tests.tools.exec.conftest import exec_client
from tests.tools.exec.test_startprocess import call

pytestmark = pytest.mark.anyio


async def test_processes_are_listed_and_the_cap_is_kept(tmp_path: Path) -> None:
    async with exec_client(tmp_path, exec={"max_processes": 2}) as client:
        assert "no background processes" in text_of(await client.call_tool("listprocesses", {}))
        first = (await call(client, "startprocess", command="sleep 30"))["processID"]
        second = (await call(client, "startprocess", command="sleep 30"))["processID"]
        listed = (await call(client, "listprocesses"))["processes"]
        assert [p["processID"] for p in listed] == [first, second]
        over = await client.call_tool("startprocess", {"command": "sleep 1"})
        assert error_code(over) == "too_large" and "2 running processes (max 2)" in text_of(over)
        await call(client, "stopprocess", processID=second, remove=True)
        third = (await call(client, "startprocess", command="true"))["processID"]
        assert [p["processID"] for p in (await call(client, "listprocesses"))["processes"]] == [first, third]
        await call(client, "stopprocess", processID=first)


async def test_an_idle_process_is_killed_and_forgotten_at_the_next_lookup(tmp_path: Path) -> None:
    import anyio

    async with exec_client(tmp_path, exec={"process_idle_seconds": 1}) as client:
        process = (await call(client, "startprocess", command="sleep 60"))["processID"]
        await anyio.sleep(1.5)
        assert (await call(client, "listprocesses"))["processes"] == []
        gone = await client.call_tool("processoutput", {"processID": process})
        assert error_code(gone) == "not_found"
