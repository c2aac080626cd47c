"""The login-shell probe (``CommandEnvironment``) of a real server, stopped mid-profile by the end
of the connection that started it or by the server's exit: the profile's cleanup runs to its end
(a fake ``pyenv rehash`` whose lock would otherwise stay, and make every later login shell of the
user wait 60 s) before the connection's end or the server's exit is done."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client

from mcp_localtools import compat
from mcp_localtools.server import build_server
from tests.helpers import INITIALIZE, INITIALIZED, config_for, installed_command
from tests.processes.test_environment import holds_lock, probe_processes, rehash_profile, wait_for
from tests.support.env import child_env

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not compat.HAS_PROCFS, reason="a POSIX login shell, processes read from /proc"),
]


async def test_a_connection_that_ends_mid_probe_lets_the_profile_clean_up(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    host, lock = rehash_profile(tmp_path)
    server = build_server(config_for(root, exec={"sandbox": "off"}), environ=host)
    async with Client(server, mode="legacy") as staying:
        async with Client(server, mode="legacy") as leaving:
            await leaving.list_tools()  # the connection's warm-up starts the probe
            await wait_for(lambda: holds_lock(host, lock), 10)
        await wait_for(lambda: not lock.exists(), 10)  # the connection's tasks end in the background
        await wait_for(lambda: not probe_processes(host["HOME"]), 10)
        assert (await staying.list_tools()).tools  # the server still serves the other connection


def test_a_server_that_exits_mid_probe_lets_the_profile_clean_up_first(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    host, lock = rehash_profile(tmp_path)
    config = tmp_path / "config.toml"
    config.write_text(f'[paths]\nallowed_roots = ["{root}"]\n[exec]\nsandbox = "off"\n', encoding="utf-8")
    env = child_env({**host, "XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"]})
    server = subprocess.Popen(
        [installed_command(), "--config", str(config)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=root,
        env=env,
    )
    assert server.stdin is not None and server.stdout is not None
    try:
        listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        server.stdin.write("".join(json.dumps(m) + "\n" for m in (INITIALIZE, INITIALIZED, listing)))
        server.stdin.flush()
        while json.loads(server.stdout.readline()).get("id") != 2:
            pass
        deadline = time.monotonic() + 10
        while not holds_lock(host, lock):  # the connection's warm-up runs the probe
            assert time.monotonic() < deadline, "the probe never took the lock"
            time.sleep(0.02)
        server.stdin.close()
        assert server.wait(timeout=30) == 0
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(timeout=10)
        server.stdout.close()
    assert not lock.exists(), "the server exited before the profile's cleanup"
    anyio.run(wait_for, lambda: not probe_processes(host["HOME"]), 10)
