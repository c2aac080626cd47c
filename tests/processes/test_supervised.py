"""A supervised run (a session sandbox's command) never loses output its process wrote before it
exited, however little time is left to drain the pipes."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import anyio
import pytest

from mcp_localtools.processes.runner import RunRequest
from mcp_localtools.processes.supervised import run_supervised
from mcp_localtools.processes.supervision import SupervisedSandbox

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the supervisor runs on Linux"),
]


async def test_output_written_before_the_exit_is_kept_with_no_time_to_drain(tmp_path: Path) -> None:
    sandbox = SupervisedSandbox([], {})  # the supervisor uncontained: the protocol alone
    await sandbox.start()
    try:
        script = "head -c 300000 /dev/zero | tr '\\0' x; echo; echo END; echo ERR >&2; exit 3"
        request = RunRequest(
            argv=["/bin/sh", "-c", script],
            cwd=tmp_path,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
            stdin=None,
            timeout=60,
            max_output_bytes=1 << 20,
        )
        for _ in range(5):
            async with anyio.create_task_group() as busy:
                busy.start_soon(_hog_the_loop)  # the pipes' readiness and the exit arrive together
                outcome = await run_supervised(sandbox, request, grace_seconds=1, drain_seconds=0)
                busy.cancel_scope.cancel()
            assert outcome.exit_code == 3
            assert outcome.stdout.total_bytes == 300005 and outcome.stdout.text.endswith("\nEND\n")
            assert outcome.stderr.text == "ERR\n"
    finally:
        sandbox.close()


async def _hog_the_loop() -> None:
    while True:
        time.sleep(0.05)  # blocks the event loop, as a slow synchronous step would
        await anyio.sleep(0)
