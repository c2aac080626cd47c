"""startprocess and the process tools together: start, wait for a line, page, talk, stop, and
nothing left behind (issue 16). Each tool also has its own file for its own edges."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from mcp_localtools.server import build_server
from tests.helpers import config_for, error_code, installed_command, text_of
from tests.tools.exec.conftest import NEEDS_BWRAP, exec_client, processes_with, run_commands, wait_until_gone

pytestmark = pytest.mark.anyio

READY_AFTER = 1.0
SERVER = f"""
import os, sys, time
time.sleep({READY_AFTER})
print("ready", flush=True)
while not os.path.exists("go"):  # the rest once the test has its answer to startprocess
    time.sleep(0.01)
for n in range(200):
    print(f"line {{n}}", flush=True)
    time.sleep(0.001)
"""


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, text_of(result)
    data: dict[str, Any] = result.structured_content or {}
    return data


@pytest.fixture
def marker() -> str:
    return f"mcp-localtools-test-{uuid.uuid4().hex}"


async def test_wait_for_ready_returns_within_the_delay_and_the_rest_pages_through(tmp_path: Path) -> None:
    (tmp_path / "srv.py").write_text(SERVER, encoding="utf-8")
    async with exec_client(tmp_path) as client:
        data = await call(
            client, "startprocess", command="python3 srv.py", waitFor="^ready$", timeoutSeconds=20
        )
        # Answered at the match: the process waits for "go" before it prints another line.
        assert data["matchedLine"] == "ready" and data["status"] == "running"
        assert data["stdout"] == "ready\n"
        (tmp_path / "go").touch()
        process = data["processID"]
        waited_for = await call(
            client, "waitprocess", processID=process, waitFor=r"^line 5$", timeoutSeconds=20
        )
        assert waited_for["matchedLine"] == "line 5"
        seen = data["stdout"] + waited_for["stdout"]
        while True:
            page = await call(client, "processoutput", processID=process)
            seen += page["stdout"]
            if page["status"] == "exited" and not page["more"]:
                break
            await anyio.sleep(0.2)
        assert page["exitCode"] == 0
        assert seen == "ready\n" + "".join(f"line {n}\n" for n in range(200))
        # Output of a finished process stays readable, from any offset.
        again = await call(client, "processoutput", processID=process, stdoutOffset=0)
        assert again["stdout"].startswith("ready\nline 0\n") and again["exitCode"] == 0


async def test_writeprocess_round_trips_through_cat_and_python(tmp_path: Path) -> None:
    async with exec_client(tmp_path) as client:
        cat = (await call(client, "startprocess", command="cat"))["processID"]
        await call(client, "writeprocess", processID=cat, text="hello\n")
        echoed = await call(client, "waitprocess", processID=cat, waitFor="^hello$", timeoutSeconds=10)
        assert echoed["matchedLine"] == "hello"
        await call(client, "writeprocess", processID=cat, text="bye\n", closeStdin=True)
        ended = await call(client, "waitprocess", processID=cat, timeoutSeconds=10)
        assert ended["status"] == "exited" and ended["exitCode"] == 0 and "bye" in ended["stdout"]
        repl = (await call(client, "startprocess", command="python3 -i -q"))["processID"]
        await call(client, "writeprocess", processID=repl, text="print(6 * 7)\n")
        answer = await call(client, "waitprocess", processID=repl, waitFor="^42$", timeoutSeconds=10)
        assert answer["matchedLine"] == "42"
        await call(client, "stopprocess", processID=repl)


async def test_stopprocess_leaves_no_process_of_the_group(tmp_path: Path, marker: str) -> None:
    async with exec_client(tmp_path) as client:
        data = await call(  # a shell and its child, both carrying the marker
            client, "startprocess", command=f"sh -c 'sh -c \"sleep 300\" {marker}; true' {marker}"
        )
        with anyio.fail_after(10):
            while len(processes_with(marker)) < 2:
                await anyio.sleep(0.05)
        stopped = await call(client, "stopprocess", processID=data["processID"], graceSeconds=1)
        assert stopped["status"] == "exited"
        await wait_until_gone(marker)
        listed = await call(client, "listprocesses")
        assert [p["processID"] for p in listed["processes"]] == [data["processID"]]
        await call(client, "stopprocess", processID=data["processID"], remove=True)
        assert (await call(client, "listprocesses"))["processes"] == []


async def test_the_end_of_the_session_stops_its_processes(tmp_path: Path, marker: str) -> None:
    """A handshake-era connection is a session; the 2026-07-28 revision has none, so there a
    process lives until stopped, idle for process_idle_seconds, or the server exits."""
    server = build_server(config_for(tmp_path), environ=dict(os.environ))
    async with Client(server, mode="legacy") as client:
        await call(client, "startprocess", command=f"sh -c 'sleep 300' {marker}")
        with anyio.fail_after(10):
            while not processes_with(marker):
                await anyio.sleep(0.05)
    await wait_until_gone(marker, seconds=15)


def test_killing_the_client_mid_wait_leaves_no_process(tmp_path: Path, marker: str) -> None:
    """A real stdio server whose client dies while a waitprocess is in flight."""
    server = subprocess.Popen(
        [installed_command(), "--root", str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=tmp_path,
    )
    assert server.stdin is not None and server.stdout is not None

    def send(message: dict[str, Any]) -> None:
        assert server.stdin is not None
        server.stdin.write((json.dumps(message) + "\n").encode())
        server.stdin.flush()

    def answer() -> dict[str, Any]:
        assert server.stdout is not None
        reply: dict[str, Any] = json.loads(server.stdout.readline())
        return reply

    try:
        send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            }
        )
        answer()
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "startprocess", "arguments": {"command": f"sh -c 'sleep 300' {marker}"}},
            }
        )
        started = answer()
        process = started["result"]["structuredContent"]["processID"]
        send(
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "waitprocess", "arguments": {"processID": process, "timeoutSeconds": 300}},
            }
        )
        deadline = time.monotonic() + 10
        while not processes_with(marker):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        server.stdin.close()  # the client is gone: its end of the pipes closes
        server.stdout.close()
        server.wait(timeout=30)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    deadline = time.monotonic() + 15
    while processes_with(marker):
        assert time.monotonic() < deadline, "a background process outlived its server"
        time.sleep(0.05)


async def test_another_session_can_neither_read_nor_stop_a_process(tmp_path: Path) -> None:
    server = build_server(config_for(tmp_path), environ=dict(os.environ))
    async with Client(server, mode="legacy") as owner, Client(server, mode="legacy") as other:
        data = await call(owner, "startprocess", command="sleep 30")
        process = data["processID"]
        calls: list[tuple[str, dict[str, Any]]] = [
            ("processoutput", {}),
            ("waitprocess", {"timeoutSeconds": 1}),
            ("writeprocess", {"text": "x"}),
            ("stopprocess", {}),
        ]
        for tool, arguments in calls:
            result = await other.call_tool(tool, {"processID": process, **arguments})
            assert error_code(result) == "not_found" and "unknown processID" in text_of(result), tool
        assert (await call(other, "listprocesses"))["processes"] == []
        refused = await other.call_tool(
            "shellcommand", {"commands": ["true"], "sessionID": data["sessionID"]}
        )
        assert error_code(refused) == "not_found"
        assert (await call(owner, "listprocesses"))["processes"][0]["status"] == "running"
        await call(owner, "stopprocess", processID=process)


async def test_a_flood_of_lines_keeps_memory_bounded_to_the_kept_output(tmp_path: Path) -> None:
    """1,000 lines a second for 10 s, scaled: 20,000 lines as fast as they come, 64 KiB kept."""
    flood = "import sys\nfor n in range(20000):\n    print(f'line {n:06d} ' + 'x' * 40)\n"
    (tmp_path / "flood.py").write_text(flood, encoding="utf-8")
    async with exec_client(tmp_path, exec={"process_output_bytes": 65536}) as client:
        data = await call(client, "startprocess", command="python3 flood.py")
        ended = await call(client, "waitprocess", processID=data["processID"], timeoutSeconds=30)
        assert ended["status"] == "exited" and ended["stdoutBytes"] == 20000 * 53
        page = await call(client, "processoutput", processID=data["processID"], stdoutOffset=0)
        assert page["lostBytes"] == 20000 * 53 - 65536  # only the most recent 64 KiB are kept
        kept = page["stdout"]
        while page["more"]:
            page = await call(client, "processoutput", processID=data["processID"])
            kept += page["stdout"]
        assert len(kept) == 65536 and kept.endswith("line 019999 " + "x" * 40 + "\n")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@NEEDS_BWRAP
async def test_with_the_network_on_a_background_server_is_reachable_from_a_later_command(
    tmp_path: Path,
) -> None:
    (tmp_path / "index.html").write_text("hello from the background\n", encoding="utf-8")
    port = _free_port()
    async with exec_client(tmp_path, exec={"sandbox": {"network": True}}) as client:
        data = await call(
            client,
            "startprocess",
            command=f"{sys.executable} -u -m http.server {port} --bind 127.0.0.1",
            waitFor="Serving HTTP",
            timeoutSeconds=20,
        )
        fetched = await run_commands(
            client,
            f"{sys.executable} -c \"import urllib.request as u; print(u.urlopen('http://127.0.0.1:{port}/index.html').read().decode())\"",
            sessionID=data["sessionID"],
        )
        assert "hello from the background" in fetched["results"][0]["stdout"]
        await call(client, "stopprocess", processID=data["processID"])
