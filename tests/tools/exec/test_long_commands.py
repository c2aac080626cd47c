"""Long commands through the real client: every one is answered, and the check of a long command
runs off the event loop, so the connection's other calls are answered while it runs."""

from __future__ import annotations

import threading
from pathlib import Path

import anyio
import anyio.to_thread
import pytest
from mcp import Client

from mcp_localtools.server import build_server
from tests.helpers import LONG_BYTES, LONG_SHAPES, config_for, error_code, text_of

pytestmark = pytest.mark.anyio

CLIENT_SHAPES = (
    "one long word",
    "many short words",
    "nested quotes and substitutions",
    "many semicolons",
    "a fork-bomb-like prefix",
)
"""The shapes sent through the client (each one harmless if it runs)."""


@pytest.mark.slow  # runs about 2,000 command substitutions: a few seconds
async def test_commands_of_65536_bytes_of_every_shape_are_answered(tmp_path: Path) -> None:
    async with Client(build_server(config_for(tmp_path)), raise_exceptions=True) as client:
        with anyio.fail_after(60):  # a hang guard: each took 0.1-21 s of the loop's time before
            for shape in CLIENT_SHAPES:
                command = LONG_SHAPES[shape](LONG_BYTES)
                assert len(command.encode()) == LONG_BYTES
                result = await client.call_tool("shellcommand", {"commands": [command]})
                if result.is_error:  # refused: by the policy, never a failure of the server
                    assert error_code(result) == "command_refused", (shape, text_of(result)[:300])
                else:  # run (a reply over the text budget is cut: its results may be left out)
                    assert result.structured_content is not None, shape
                    ran = result.structured_content["results"]
                    assert all(entry["exitCode"] == 0 for entry in ran), (shape, text_of(result)[:300])


async def test_a_statpath_is_answered_while_a_long_commands_check_runs(tmp_path: Path) -> None:
    """The host's command rule is the first step of the check: it waits (at most 20 s) for the
    statpath sent meanwhile to be answered. On the event loop it blocked the connection, so the
    statpath was answered only after the check had ended."""
    checking, answered = threading.Event(), threading.Event()
    events: list[str] = []

    def rule(command: str) -> bool | None:
        if len(command) > LONG_BYTES // 2 and not checking.is_set():
            checking.set()
            answered.wait(20)
            events.append("check ended")
        return None

    command = LONG_SHAPES["one long word"](LONG_BYTES)
    server = build_server(config_for(tmp_path), command_rule=rule)
    async with Client(server, raise_exceptions=True) as client:

        async def run_long() -> None:
            result = await client.call_tool("shellcommand", {"commands": [command]})
            assert not result.is_error, text_of(result)[:300]
            events.append("shellcommand answered")

        async def stat() -> None:
            await anyio.to_thread.run_sync(checking.wait, 20)
            result = await client.call_tool("statpath", {"path": str(tmp_path)})
            assert not result.is_error, text_of(result)
            events.append("statpath answered")
            answered.set()

        with anyio.fail_after(60):
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(run_long)
                tasks.start_soon(stat)
    assert events == ["statpath answered", "check ended", "shellcommand answered"]
