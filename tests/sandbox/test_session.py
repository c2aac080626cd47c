"""One sandbox per exec session, through a real MCP client (issue 25, item 3 and 7): loopback shared
by the session's commands and nobody else, the filtering proxy, the limits, UNIX sockets, and
background processes that outlive idle worker threads."""

from __future__ import annotations

import http.server
import os
import socket
import socketserver
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from mcp_localtools.server import build_server
from tests.helpers import config_for, direct_children, text_of
from tests.tools.exec.conftest import NEEDS_BWRAP, exec_client, run_commands

pytestmark = [pytest.mark.anyio, NEEDS_BWRAP]


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, text_of(result)
    data: dict[str, Any] = result.structured_content or {}
    return data


FETCH = "curl -s -m 5 -o /dev/null -w '%{http_code}'"
"""The HTTP status of a URL (curl runs where bwrap contains it)."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_a_dev_server_is_reached_by_its_connections_later_commands_and_by_nobody_else(
    tmp_path: Path,
) -> None:
    """The README's dev-server example: python3 -m http.server without -u matches waitFor (the
    server makes Python unbuffered), curl from a later command of the same client connection gets
    200, with or without the process's sessionID (one sandbox per connection); another connection
    to the same server and the host get nothing (each connection has its own loopback)."""
    (tmp_path / "index.html").write_text("hello from the session\n", encoding="utf-8")
    port = free_port()
    server = build_server(config_for(tmp_path), environ=dict(os.environ))
    async with (
        Client(server, mode="legacy", raise_exceptions=True) as client,
        Client(server, mode="legacy", raise_exceptions=True) as stranger,
    ):
        started = await call(
            client,
            "startprocess",
            command=f"python3 -m http.server {port} --bind 127.0.0.1",
            waitFor="Serving HTTP",
            timeoutSeconds=20,
        )
        assert started["matchedLine"] and "Serving HTTP" in started["matchedLine"]
        session = started["sessionID"]
        fetched = await run_commands(client, f"{FETCH} http://127.0.0.1:{port}/index.html", sessionID=session)
        assert fetched["results"][0]["stdout"] == "200"
        sessionless = await run_commands(client, f"{FETCH} http://127.0.0.1:{port}/index.html")
        assert sessionless["results"][0]["stdout"] == "200"
        other = await run_commands(stranger, f"{FETCH} http://127.0.0.1:{port}/ || echo unreachable")
        assert other["results"][0]["stdout"].strip().endswith("unreachable"), other["results"][0]
        with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=2):
            pass  # the host's loopback has nothing there
        await call(client, "stopprocess", processID=started["processID"])


async def test_a_background_process_survives_the_retirement_of_idle_worker_threads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """bwrap's --die-with-parent follows the thread that started it; anyio retires idle worker
    threads (after 10 s; 0.5 s here). A session's sandbox is started by a thread that lives as long
    as it does, so an idle background process is still running once the threads it idled past
    are retired (by the next call that needs a thread)."""
    from anyio._backends._asyncio import WorkerThread

    monkeypatch.setattr(WorkerThread, "MAX_IDLE_TIME", 0.5)
    async with exec_client(tmp_path) as client:
        started = await call(client, "startprocess", command="sleep 600")
        await anyio.sleep(1.5)  # three idle lifetimes
        await call(client, "listprocesses")  # retires the idle threads
        await anyio.sleep(0.5)
        listed = await call(client, "listprocesses")
        mine = [p for p in listed["processes"] if p["processID"] == started["processID"]]
        assert mine and mine[0]["status"] == "running", listed
        await call(client, "stopprocess", processID=started["processID"])


async def test_nine_starts_after_eight_ended_processes_work(tmp_path: Path) -> None:
    async with exec_client(tmp_path) as client:
        for n in range(8):
            started = await call(client, "startprocess", command=f"echo {n}")
            await call(client, "waitprocess", processID=started["processID"], timeoutSeconds=20)
        ninth = await call(client, "startprocess", command="echo nine")
        assert ninth["processID"]


async def test_startprocess_says_when_waitfor_saw_no_output(tmp_path: Path) -> None:
    async with exec_client(tmp_path) as client:
        result = await client.call_tool(
            "startprocess", {"command": "sleep 30", "waitFor": "never", "timeoutSeconds": 1}
        )
        text = text_of(result)
        assert "no output" in text and "tty" in text
        data = result.structured_content or {}
        await call(client, "stopprocess", processID=data["processID"])


async def test_a_tty_process_writes_through_a_pseudo_terminal(tmp_path: Path) -> None:
    async with exec_client(tmp_path) as client:
        started = await call(
            client,
            "startprocess",
            command="test -t 1 && echo on-a-tty || echo no-tty",
            tty=True,
            waitFor="tty",
            timeoutSeconds=10,
        )
        assert started["matchedLine"] == "on-a-tty"


async def test_commands_get_unbuffered_output_variables(tmp_path: Path) -> None:
    async with exec_client(tmp_path) as client:
        data = await run_commands(client, "echo $PYTHONUNBUFFERED")
    assert data["results"][0]["stdout"].strip() == "1"


async def test_a_unix_socket_in_a_root_is_unreachable_with_the_network_off(tmp_path: Path) -> None:
    """A socket a host service listens on inside a root (a mounted docker.sock) is out of reach;
    a socketpair, which reaches nothing outside, still works."""
    path = tmp_path / "service.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)
    accepted: list[bytes] = []

    def serve() -> None:
        listener.settimeout(15)
        try:
            conn, _ = listener.accept()
            accepted.append(conn.recv(100))
            conn.close()
        except OSError:
            pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    probe = (
        "import socket; s = socket.socket(socket.AF_UNIX); s.connect('service.sock'); s.send(b'escaped'); "
        "print('connected')"
    )
    pair = "import socket; a, b = socket.socketpair(); a.send(b'x'); print('pair', b.recv(1))"
    try:
        async with exec_client(tmp_path) as client:
            result = await client.call_tool("shellcommand", {"commands": [f'python3 -c "{probe}"']})
            paired = await run_commands(client, f'python3 -c "{pair}"')
    finally:
        with socket.socket(socket.AF_UNIX) as ours:  # the service's first caller, once the calls are done
            ours.connect(str(path))
            ours.sendall(b"ours")
        thread.join(timeout=20)
        listener.close()
    (entry,) = (result.structured_content or {})["results"]
    assert entry["stdout"] == "" and accepted == [b"ours"]
    assert "Permission denied" in entry["stderr"] and "allow_unix_sockets" in entry["sandboxNote"]
    assert paired["results"][0]["stdout"].strip() == "pair b'x'"


async def test_a_fork_loop_is_stopped_by_the_process_limit_and_the_server_lives(tmp_path: Path) -> None:
    loop = (
        "import os, time\n"
        "while True:\n"
        "    try:\n"
        "        os.fork() or time.sleep(30)\n"
        "    except OSError as e:\n"
        "        print('limit', e); raise SystemExit(1)\n"
    )
    (tmp_path / "forks.py").write_text(loop, encoding="utf-8")
    async with exec_client(tmp_path, exec={"sandbox": {"max_processes": 64}}) as client:
        result = await client.call_tool(
            "shellcommand", {"commands": ["python3 forks.py"], "timeoutSeconds": 30}
        )
        text = text_of(result)
        assert "limit" in text and "max_processes" in text, text
        after = await run_commands(client, "echo alive")
    assert after["results"][0]["stdout"] == "alive\n"


async def test_a_memory_hog_is_stopped_by_the_memory_limit_and_the_server_lives(tmp_path: Path) -> None:
    hog = "x = []\nwhile True:\n    x.append(bytearray(16 * 1024 * 1024))\n"
    (tmp_path / "hog.py").write_text(hog, encoding="utf-8")
    async with exec_client(tmp_path, exec={"sandbox": {"memory_mb": 256}}) as client:
        result = await client.call_tool(
            "shellcommand", {"commands": ["python3 hog.py"], "timeoutSeconds": 60}
        )
        text = text_of(result)
        assert "memory_mb" in text, text
        after = await run_commands(client, "echo alive")
    assert after["results"][0]["stdout"] == "alive\n"


async def test_the_session_temp_space_is_bounded(tmp_path: Path) -> None:
    async with exec_client(tmp_path, exec={"sandbox": {"tmp_mb": 8}}) as client:
        result = await client.call_tool(
            "shellcommand", {"commands": ['head -c 20000000 /dev/zero > "$TMPDIR/big"']}
        )
    text = text_of(result)
    assert "tmp_mb" in text, text


class _Index(http.server.SimpleHTTPRequestHandler):
    """A package index (PEP 503 simple pages) served from a directory."""

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def package_index(tmp_path: Path) -> Iterator[str]:
    """A tiny package index on 127.0.0.2 (the host's loopback, outside every sandbox): the stand-in
    for an allowed domain. Serves ``tinypkg`` 1.0 as a wheel."""
    import zipfile

    files = tmp_path / "index"
    (files / "simple" / "tinypkg").mkdir(parents=True)
    wheel = files / "simple" / "tinypkg" / "tinypkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("tinypkg/__init__.py", "VALUE = 1\n")
        archive.writestr(
            "tinypkg-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.0\n"
        )
        archive.writestr(
            "tinypkg-1.0.dist-info/WHEEL",
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        )
        archive.writestr("tinypkg-1.0.dist-info/RECORD", "")
    (files / "simple" / "tinypkg" / "index.html").write_text(
        f'<a href="{wheel.name}">{wheel.name}</a>\n', encoding="utf-8"
    )
    handler = lambda *args: _Index(*args, directory=str(files))  # noqa: E731
    server = socketserver.ThreadingTCPServer(("127.0.0.2", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.2:{server.server_address[1]}/simple/"
    finally:
        server.shutdown()
        server.server_close()


async def test_pip_download_works_through_an_allowed_domain_and_the_proxy_refuses_others(
    tmp_path: Path, package_index: str
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    pip = "python3 -m pip download --no-deps --disable-pip-version-check --retries 0 --timeout 10 -d dl"
    refused_url = package_index.replace("127.0.0.2", "127.0.0.3")
    index_port = package_index.split("/")[2].rpartition(":")[2]  # an entry opens 80 and 443, or its port
    allowed = {"allowed_domains": [f"127.0.0.2:{index_port}"]}
    async with exec_client(work, exec={"sandbox": allowed}) as client:
        done = await run_commands(client, f"{pip} --index-url {package_index} tinypkg")
        refused = await client.call_tool(
            "shellcommand", {"commands": [f"{pip} --index-url {refused_url} tinypkg"]}
        )
    assert (work / "dl" / "tinypkg-1.0-py3-none-any.whl").is_file(), done
    text = text_of(refused)
    assert "allowed_domains" in text and "127.0.0.3" in text, text
    assert not list((work / "dl").glob("*")) or len(list((work / "dl").glob("*"))) == 1


async def test_with_no_allowed_domain_there_is_no_proxy_and_no_network(tmp_path: Path) -> None:
    async with exec_client(tmp_path) as client:
        data = await run_commands(client, "echo ${HTTPS_PROXY:-none}")
    assert data["results"][0]["stdout"].strip() == "none"


def test_host_root_is_untouched(tmp_path: Path) -> None:
    assert os.path.isdir(tmp_path)
    time.sleep(0)


async def test_a_root_servers_commands_cannot_read_what_only_root_may(tmp_path: Path) -> None:
    """A root server's commands run as root in a user namespace of their own, without
    capabilities; what only root may read in /etc (the shadow files, sudoers, private keys) is
    covered, and the process limit holds (a pids cgroup: RLIMIT_NPROC never binds uid 0)."""
    if os.geteuid() != 0:
        pytest.skip("needs a server running as root")
    async with exec_client(tmp_path) as client:
        result = await client.call_tool(
            "shellcommand",
            {"commands": ["cat /etc/shadow", "grep Cap /proc/self/status"], "executeParallel": True},
        )
    shadow, caps = (result.structured_content or {})["results"]
    assert "root:" not in shadow["stdout"]
    assert "CapEff:\t0000000000000000" in caps["stdout"]


async def test_a_profiles_commands_see_only_the_profiles_roots(tmp_path: Path) -> None:
    from mcp_localtools.server import build_server
    from tests.helpers import config_for

    mine, other = tmp_path / "mine", tmp_path / "other"
    mine.mkdir()
    other.mkdir()
    (other / "secret.txt").write_text("not for this profile\n", encoding="utf-8")
    profiles = {"narrow": {"paths": {"allowed_roots": [str(mine)]}}}
    config = config_for(tmp_path, paths={"allowed_roots": [str(mine), str(other)]}, profiles=profiles)
    server = build_server(config, environ=dict(os.environ), profile="narrow")
    async with Client(server, raise_exceptions=True) as client:
        result = await client.call_tool("shellcommand", {"commands": [f"cat {other}/secret.txt"]})
    assert "not for this profile" not in text_of(result)


async def test_every_sandbox_is_reaped_when_its_session_ends(tmp_path: Path) -> None:
    """No defunct bwrap: each session's sandbox ends with its MCP session and is collected."""
    from mcp_localtools.tools import build_registry
    from tests.helpers import config_for

    registry = build_registry(config_for(tmp_path), environ=dict(os.environ))
    before = set(direct_children(defunct=False))  # other tests' servers may still hold sandboxes
    defunct_before = set(direct_children(defunct=True))  # and other tests' own bwraps may have left some
    for _ in range(3):
        assert not (await registry.call("shellcommand", {"commands": ["echo hi"]}, session_id="s1")).is_error
    started = await registry.call("startprocess", {"command": "sleep 60"}, session_id="s1")
    assert started.structured is not None
    await registry.call("stopprocess", {"processID": started.structured["processID"]}, session_id="s1")
    await registry.call("startprocess", {"command": "sleep 60"}, session_id="s1")  # still running at the end
    mine = [child for child in direct_children(defunct=False) if child not in before and child[1] == "bwrap"]
    assert mine
    await registry.end_session("s1")
    with anyio.fail_after(20):  # only against a hang: each bwrap ends and is collected
        while any(child in mine for child in direct_children(defunct=False)):
            await anyio.sleep(0.05)
        while [child for child in direct_children(defunct=True) if child not in defunct_before]:
            await anyio.sleep(0.05)


async def test_under_landlock_a_root_servers_commands_have_no_capability(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs a server running as root")
    async with exec_client(tmp_path, exec={"sandbox": {"mode": "landlock"}}) as client:
        data = await run_commands(client, "grep -E '^Cap(Prm|Eff|Bnd|Amb)' /proc/self/status")
    lines = data["results"][0]["stdout"].splitlines()
    assert len(lines) == 4 and all(line.endswith("0000000000000000") for line in lines), lines


async def test_an_in_memory_clients_sandbox_and_processes_end_when_it_closes(tmp_path: Path) -> None:
    """The SDK's in-memory ``Client`` speaks the 2026-07-28 revision (no MCP session to end): the
    server ends what it served when its last connection closes (its lifespan ends)."""
    before = set(direct_children(defunct=False))
    async with exec_client(tmp_path) as client:
        await run_commands(client, "echo hi")
        await call(client, "startprocess", command="sleep 60")
        mine = [
            child for child in direct_children(defunct=False) if child not in before and child[1] == "bwrap"
        ]
        assert len(mine) == 1  # one sandbox for the connection: the command's and the process's
    with anyio.fail_after(15):
        while set(mine) & set(direct_children(defunct=False)):
            await anyio.sleep(0.05)


async def test_a_shared_mapping_past_the_memory_limit_is_stopped_where_a_memory_cgroup_exists(
    tmp_path: Path,
) -> None:
    """RLIMIT_DATA does not count MAP_SHARED: a 9 GiB shared mapping passed it. The sandbox's
    memory cgroup counts it: the process is stopped, the note says why, the server lives."""
    from mcp_localtools.sandbox.cgroups import SandboxCgroups

    probe = SandboxCgroups.create(processes=64, memory_bytes=64 << 20, total_processes=8192)
    if probe is None or "memory" not in probe.controllers:
        pytest.skip("no memory cgroup can be made here")
    probe.remove()
    hog = (
        "import mmap\n"
        "m = mmap.mmap(-1, 9 << 30, flags=mmap.MAP_SHARED)\n"
        "for i in range(0, 9 << 30, 4096):\n"
        "    m[i] = 1\n"
        "print('survived')\n"
    )
    (tmp_path / "shared.py").write_text(hog, encoding="utf-8")
    async with exec_client(tmp_path, exec={"sandbox": {"memory_mb": 256}}) as client:
        result = await client.call_tool(
            "shellcommand", {"commands": ["python3 shared.py"], "timeoutSeconds": 120}
        )
        (entry,) = (result.structured_content or {})["results"]
        after = await run_commands(client, "echo alive")
    assert entry["exitCode"] != 0 and "survived" not in entry["stdout"]
    assert "memory_mb" in (entry.get("sandboxNote") or ""), entry
    assert after["results"][0]["stdout"] == "alive\n"


def test_the_servers_sandboxes_share_one_process_total(tmp_path: Path) -> None:
    """``total_processes`` is the ``pids.max`` of the group that holds every sandbox of the server
    process (a server of its own: the first sandbox of a process sets it)."""
    script = f"""
import anyio, os
from pathlib import Path
from mcp_localtools.tools import build_registry
from tests.helpers import config_for
from mcp_localtools.sandbox import cgroups

async def main():
    config = config_for(Path({str(tmp_path)!r}), exec={{"sandbox": {{"total_processes": 3000}}}})
    registry = build_registry(config, environ=dict(os.environ))
    result = await registry.call("shellcommand", {{"commands": ["echo hi"]}}, session_id="s1")
    assert not result.is_error
    for group in cgroups._servers.values():
        if (group / "pids.max").exists():
            children = [p.name for p in group.iterdir() if p.is_dir()]
            print((group / "pids.max").read_text().strip(), group.name, children)
    await registry.end_session("s1")

anyio.run(main)
"""
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == 0, done.stderr[-2000:]
    if not done.stdout.strip():
        pytest.skip("no pids cgroup can be made here")
    total, name, children = done.stdout.split(" ", 2)
    assert total == "3000" and name.startswith("mcp-localtools-") and "sandbox-" in children
