"""One sandbox per client connection (issue 34, items 1, 2 and 7), through real MCP clients: commands
without ``sessionID`` run in their connection's sandbox and start none of their own, the sandbox is
started when the connection lists its tools and ends with the connection, the cap on live
sandboxes refuses rather than closes a busy one, nothing of the server's environment is inside,
and commands get output made for a reader."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from mcp_localtools.server import build_server
from tests.helpers import config_for, direct_children, error_code
from tests.tools.exec.conftest import NEEDS_BWRAP, run_commands

pytestmark = [pytest.mark.anyio, NEEDS_BWRAP]

CANARY = "MCP_LOCALTOOLS_TEST_CANARY"


def sandboxes() -> set[tuple[int, str]]:
    """The sandboxes this process has started and that still run: each a bubblewrap whose argv
    carries the supervisor (the backend's probe runs ``true``)."""
    return {child for child in direct_children() if child[1] == "bwrap" and _runs_supervisor(child[0])}


def _runs_supervisor(pid: int) -> bool:
    try:
        return b"MCP_LOCALTOOLS_RUN" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


async def wait_for(predicate: Any, seconds: float = 20) -> None:
    with anyio.fail_after(seconds):
        while not predicate():
            await anyio.sleep(0.02)


async def test_sessionless_commands_share_their_connections_sandbox_and_it_ends_with_the_connection(
    tmp_path: Path,
) -> None:
    before = sandboxes()
    server = build_server(config_for(tmp_path), environ=dict(os.environ))
    async with Client(server, mode="legacy", raise_exceptions=True) as client:
        for _ in range(12):
            await run_commands(client, "echo hi")
        await run_commands(client, "echo $$ > pid1")
        await run_commands(client, "echo $$ > pid2; ls /tmp")
        mine = sandboxes() - before
        assert len(mine) == 1, mine  # one bwrap for the connection, not one per call
        data = await run_commands(client, "touch /tmp/left-by-one-call", "ls /tmp")
        again = await run_commands(client, "ls /tmp/left-by-one-call")
        assert again["results"][0]["exitCode"] == 0  # the connection's /tmp, shared by its calls
        assert data["sessionID"] != again["sessionID"]  # exec sessions: a directory and an environment each
    await wait_for(lambda: not (sandboxes() - before) & mine)


async def test_a_connections_sandbox_is_ready_after_it_lists_its_tools(tmp_path: Path) -> None:
    before = sandboxes()
    server = build_server(config_for(tmp_path), environ=dict(os.environ))
    async with Client(server, mode="legacy", raise_exceptions=True) as client:
        await client.list_tools()
        await wait_for(lambda: bool(sandboxes() - before))  # started before any command
        started = sandboxes() - before
        await run_commands(client, "echo first")
        assert sandboxes() - before == started
    await wait_for(lambda: not (sandboxes() - before) & started)


async def test_each_connection_has_its_own_sandbox_and_a_full_cap_refuses_a_new_one(tmp_path: Path) -> None:
    server = build_server(
        config_for(tmp_path, exec={"sandbox": {"max_sandboxes": 1}}), environ=dict(os.environ)
    )
    async with Client(server, mode="legacy", raise_exceptions=True) as first:
        await run_commands(first, "echo one")
        async with Client(server, mode="legacy", raise_exceptions=True) as second:
            refused = await second.call_tool("shellcommand", {"commands": ["echo two"]})
            assert refused.is_error and error_code(refused) == "sandboxes_busy"
            again = await run_commands(first, "echo still here")  # the busy one was not closed
            assert again["results"][0]["stdout"] == "still here\n"


@pytest.mark.parametrize("mode", ["bwrap", "landlock"])
async def test_no_variable_of_the_server_is_readable_by_a_command(
    tmp_path: Path, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every ``/proc/*/environ`` a command can read (the sandbox's init, the supervisor, the
    command itself, anything else it sees) is free of a variable only the server has (an API
    key a client config passes the server)."""
    monkeypatch.setenv(CANARY, "server-only-value-3f9c")  # the server process's own environment
    environ = dict(os.environ)
    config = config_for(tmp_path, exec={"sandbox": {"mode": mode}})
    async with Client(build_server(config, environ=environ), raise_exceptions=True) as client:
        data = await run_commands(
            client,
            "for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f; done 2>&1; echo read-all",
        )
    out = data["results"][0]["stdout"]
    assert out.rstrip().endswith("read-all")
    assert "server-only-value-3f9c" not in out and CANARY not in out


async def test_commands_without_a_terminal_get_output_for_a_reader(tmp_path: Path) -> None:
    environ = {**os.environ, "TERM": "xterm-256color"}
    async with Client(build_server(config_for(tmp_path), environ=environ), raise_exceptions=True) as client:
        data = await run_commands(client, 'echo "$TERM $NO_COLOR"')
    assert data["results"][0]["stdout"] == "dumb 1\n"


async def test_a_single_two_gigabyte_line_is_stopped_once_the_limit_was_read(tmp_path: Path) -> None:
    """Output is stopped by bytes, not lines: the run ends once a stream passed 64 times
    ``max_output_bytes`` (nothing is read past that one read), and its result
    comes back within a hang guard (the sandbox's note scanned the one long line in quadratic time)."""
    async with Client(
        build_server(config_for(tmp_path), environ=dict(os.environ)), raise_exceptions=True
    ) as client:
        with anyio.fail_after(120):
            data = await client.call_tool(
                "shellcommand", {"commands": ["head -c 2000000000 /dev/zero | tr '\\0' x"]}
            )
    (entry,) = (data.structured_content or {})["results"]
    limit = 64 * 256 * 1024
    assert entry["outputStopped"] and entry["exitCode"] != 0
    assert limit < entry["stdoutBytes"] <= limit + 64 * 1024, entry["stdoutBytes"]  # one read past it


async def test_connections_starting_at_once_never_pass_the_cap(tmp_path: Path) -> None:
    """Sandboxes still starting count against ``max_sandboxes``: four connections whose first
    commands race get at most two sandboxes, the others a clear refusal."""
    config = config_for(tmp_path, exec={"sandbox": {"max_sandboxes": 2}}, paths={"client_roots": False})
    server = build_server(config, environ=dict(os.environ))
    before = sandboxes()
    codes: list[str | None] = []
    most = 0
    all_answered = anyio.Event()

    async def connect() -> None:
        nonlocal most
        async with Client(server, mode="legacy", raise_exceptions=True) as client:
            result = await client.call_tool("shellcommand", {"commands": ["sleep 0.5"]})
            codes.append(error_code(result))
            most = max(most, len(sandboxes() - before))
            if len(codes) == 4:
                all_answered.set()
            await all_answered.wait()  # keep the connection (and its sandbox) until all have answered

    async with anyio.create_task_group() as group:
        for _ in range(4):
            group.start_soon(connect)
    assert codes.count(None) == 2 and codes.count("sandboxes_busy") == 2, codes
    assert most <= 2
