"""SSE and Streamable HTTP: the installed entry point as a real subprocess on a free loopback port,
driven by the SDK client in both protocol eras and by raw HTTP for the security checks."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client

from tests.helpers import INITIALIZE, error_code, installed_command, processes_with, text_of, wait_until_gone
from tests.support.env import child_env

TOKEN = "test-token-" + "x" * 40
JSON_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Served:
    """A running server subprocess."""

    transport: str
    base: str
    token: str | None
    proc: subprocess.Popen[str]
    log: IO[bytes]
    root: Path
    """The server's stderr (a file, so a long-lived server never blocks on a full pipe)."""

    @property
    def url(self) -> str:
        return self.base + ("/mcp" if self.transport == "streamable-http" else "/sse")

    @asynccontextmanager
    async def connect(
        self, *, mode: str = "auto", token: str | None = "default", elicitation_callback: Any = None
    ) -> AsyncIterator[Client]:
        """The SDK's client, connected with ``token`` (default: the server's own; None: none),
        answering elicitations with ``elicitation_callback`` (None: it declares none)."""
        token = self.token if token == "default" else token
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        async with AsyncExitStack() as stack:
            target: AbstractAsyncContextManager[Any]
            if self.transport == "streamable-http":
                http = await stack.enter_async_context(
                    httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300))
                )
                target = streamable_http_client(self.url, http_client=http)
            else:
                target = sse_client(self.url, headers=headers)
            client = Client(target, mode=mode)
            if elicitation_callback is not None:
                client.elicitation_callback = (
                    elicitation_callback  # before entering: the session is built then
                )
            yield await stack.enter_async_context(client)


def start(
    transport: str, root: Path, *extra: str, env: dict[str, str] | None = None, token: str | None = TOKEN
) -> Served:
    port = free_port()
    environment = child_env({"PATH": os.environ.get("PATH", ""), "HOME": str(root), **(env or {})})
    if token is not None:
        environment.setdefault("MCP_LOCALTOOLS_TOKEN", token)
    log = tempfile.TemporaryFile()  # noqa: SIM115 (closed by stop())
    proc = subprocess.Popen(
        [installed_command(), "--root", str(root), "--transport", transport, "--port", str(port), *extra],
        cwd=root,
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=log,
        text=True,
    )
    served = Served(transport, f"http://127.0.0.1:{port}", token, proc, log, root)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"server exited with {proc.returncode}: {stop(served)}")
        try:
            if httpx2.get(served.base + "/healthz", timeout=1).status_code == 200:
                return served
        except httpx2.TransportError:
            time.sleep(0.1)
    pytest.fail(f"server did not come up within 30 s: {stop(served)}")


def stop(served: Served) -> str:
    """Stop the server (SIGTERM, SIGKILL after 15 s) and return what it wrote on stderr."""
    with served.proc:
        served.proc.terminate()
        try:
            served.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            served.proc.kill()
            served.proc.wait()
    with served.log:
        served.log.seek(0)
        return served.log.read().decode(errors="replace")


@pytest.fixture(scope="module", params=["streamable-http", "sse"])
def served(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One server per transport for the module's tests that share it: each test leaves it as it
    found it (its processes stopped, hello.txt as written)."""
    root = tmp_path_factory.mktemp("served")
    (root / "hello.txt").write_text("hello over http\n", encoding="utf-8")
    server = start(request.param, root)
    yield server
    stderr = stop(server)
    assert TOKEN not in stderr  # never logged


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_real_client_lists_tools_and_reads_a_file_over_http(served: Served, mode: str) -> None:
    async with served.connect(mode=mode) as client:
        tools = (await client.list_tools()).tools
        assert "readfile" in {tool.name for tool in tools}
        result = await client.call_tool("readfile", {"path": "hello.txt"})
        assert result.structured_content["content"] == "hello over http\n"
        refused = await client.call_tool("readfile", {"path": "/etc/passwd"})
        assert error_code(refused) == "outside_roots" and "outside allowed roots" in text_of(refused)


def test_no_token_or_a_wrong_token_gets_401(served: Served) -> None:
    for headers in ({}, {"Authorization": "Bearer wrong-token"}, {"Authorization": f"Basic {TOKEN}"}):
        if served.transport == "streamable-http":
            response = httpx2.post(
                served.url, json=INITIALIZE, headers={**JSON_HEADERS, **headers}, timeout=10
            )
        else:
            response = httpx2.get(served.url, headers=headers, timeout=10)
        assert response.status_code == 401, headers
        assert "Bearer" in response.headers.get("www-authenticate", "")
    if served.transport == "sse":
        response = httpx2.post(
            served.base + "/messages/?session_id=abc", json=INITIALIZE, headers=JSON_HEADERS, timeout=10
        )
        assert response.status_code == 401


def test_a_token_in_the_url_is_not_accepted(served: Served) -> None:
    if served.transport == "streamable-http":
        response = httpx2.post(
            f"{served.url}?access_token={TOKEN}", json=INITIALIZE, headers=JSON_HEADERS, timeout=10
        )
    else:
        response = httpx2.get(f"{served.url}?access_token={TOKEN}&token={TOKEN}", timeout=10)
    assert response.status_code == 401


def _post_init(served: Served, **headers: str) -> httpx2.Response:
    auth = {"Authorization": f"Bearer {TOKEN}"}
    if served.transport == "streamable-http":
        return httpx2.post(
            served.url, json=INITIALIZE, headers={**JSON_HEADERS, **auth, **headers}, timeout=10
        )
    with httpx2.stream("GET", served.url, headers={**auth, **headers}, timeout=10) as response:
        return response


def test_a_foreign_host_gets_421_and_a_foreign_origin_403(served: Served) -> None:
    assert _post_init(served, Host="evil.example.com").status_code == 421
    assert _post_init(served, Origin="http://evil.example.com").status_code == 403
    assert _post_init(served, Origin=f"http://localhost:{served.base.rsplit(':', 1)[1]}").status_code == 200


def test_an_oversized_body_gets_413(served: Served) -> None:
    body = b'{"jsonrpc": "2.0", "pad": "' + b"a" * (5 * 1024 * 1024) + b'"}'
    headers = {**JSON_HEADERS, "Authorization": f"Bearer {TOKEN}"}
    url = served.url if served.transport == "streamable-http" else served.base + "/messages/?session_id=0"
    response = httpx2.post(url, content=body, headers=headers, timeout=30)
    assert response.status_code == 413


def test_healthz_needs_no_token_and_says_only_ok_and_the_version(served: Served) -> None:
    response = httpx2.get(served.base + "/healthz", timeout=10)
    assert response.status_code == 200
    assert set(response.json()) == {"status", "version"} and response.json()["status"] == "ok"


@pytest.mark.anyio
async def test_twenty_concurrent_sessions_of_ten_calls_have_no_errors(
    served: Served, capsys: pytest.CaptureFixture[str]
) -> None:
    """Twenty sessions open at once, each calling while the others do: what makes them overlap is
    their number, not the length of each (50 calls each took 8-9 s; throughput is measured by
    ``benchmarks/connections.py``)."""
    sessions, calls = 20, 10
    errors: list[str] = []

    async def session() -> None:
        async with served.connect() as client:
            for _ in range(calls):
                result = await client.call_tool("statpath", {"path": "hello.txt"})
                if result.is_error:
                    errors.append(text_of(result))

    started = time.perf_counter()
    with anyio.fail_after(240):
        async with anyio.create_task_group() as group:
            for _ in range(sessions):
                group.start_soon(session)
    elapsed = time.perf_counter() - started
    assert errors == []
    with capsys.disabled():
        print(
            f"\n[load] {served.transport}: {sessions} sessions x {calls} calls = {sessions * calls} calls "
            f"in {elapsed:.2f} s ({sessions * calls / elapsed:.0f} calls/s)"
        )


def run_cli(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environment = child_env({"PATH": os.environ.get("PATH", ""), "HOME": str(cwd), **(env or {})})
    return subprocess.run(
        [installed_command(), *args],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


@pytest.mark.parametrize("transport", ["streamable-http", "sse"])
def test_a_network_transport_refuses_to_start_without_a_token(tmp_path: Path, transport: str) -> None:
    done = run_cli("--transport", transport, "--port", str(free_port()), cwd=tmp_path)
    assert done.returncode == 1
    assert "no auth token" in done.stderr and "mcp-localtools token --file" in done.stderr


def test_a_token_file_others_can_read_is_refused(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN, encoding="utf-8")
    token_file.chmod(0o644)
    (tmp_path / "c.toml").write_text(f'[server]\nauth_token_file = "{token_file}"\n', encoding="utf-8")
    done = run_cli("--config", "c.toml", "--transport", "sse", "--port", str(free_port()), cwd=tmp_path)
    assert done.returncode == 1 and "chmod 600" in done.stderr


def test_a_short_token_is_refused(tmp_path: Path) -> None:
    done = run_cli(
        "--transport", "sse", "--port", str(free_port()), cwd=tmp_path, env={"MCP_LOCALTOOLS_TOKEN": "short"}
    )
    assert done.returncode == 1 and "at least 32 characters" in done.stderr


@pytest.mark.anyio
async def test_a_token_file_with_mode_0600_is_used(tmp_path: Path) -> None:
    done = run_cli("token", "--file", "secret/token", cwd=tmp_path)
    assert done.returncode == 0
    token_file = tmp_path / "secret" / "token"
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    token = token_file.read_text(encoding="utf-8").strip()
    assert len(token) >= 43  # 32 random bytes in URL-safe base64
    assert token not in done.stderr + done.stdout
    (tmp_path / "c.toml").write_text('[server]\nauth_token_file = "secret/token"\n', encoding="utf-8")
    served = start("streamable-http", tmp_path, "--config", "c.toml", token=None)
    served.token = token
    try:
        async with served.connect() as client:
            assert (await client.list_tools()).tools
    finally:
        stop(served)


def test_the_token_command_never_overwrites_without_force(tmp_path: Path) -> None:
    assert run_cli("token", "--file", "t", cwd=tmp_path).returncode == 0
    first = (tmp_path / "t").read_text(encoding="utf-8")
    again = run_cli("token", "--file", "t", cwd=tmp_path)
    assert again.returncode == 1 and "--force" in again.stderr
    assert (tmp_path / "t").read_text(encoding="utf-8") == first
    assert run_cli("token", "--file", "t", "--force", cwd=tmp_path).returncode == 0
    assert (tmp_path / "t").read_text(encoding="utf-8") != first


def test_binding_a_non_loopback_address_requires_allowed_hosts(tmp_path: Path) -> None:
    env = {"MCP_LOCALTOOLS_TOKEN": TOKEN}
    done = run_cli(
        "--transport", "streamable-http", "--host", "0.0.0.0", "--port", "1", cwd=tmp_path, env=env
    )
    assert done.returncode == 1 and "allowed_hosts" in done.stderr


def test_unauthenticated_mode_is_refused_off_loopback(tmp_path: Path) -> None:
    done = run_cli(
        "--transport",
        "sse",
        "--host",
        "0.0.0.0",
        "--allowed-host",
        "example.lan",
        "--allow-unauthenticated-loopback",
        "--port",
        "1",
        cwd=tmp_path,
    )
    assert done.returncode == 1 and "loopback addresses only" in done.stderr


@pytest.mark.anyio
async def test_unauthenticated_loopback_mode_serves_without_a_token_and_warns(tmp_path: Path) -> None:
    served = start("streamable-http", tmp_path, "--allow-unauthenticated-loopback", token=None)
    try:
        async with served.connect(token=None) as client:
            assert (await client.list_tools()).tools
    finally:
        stderr = stop(served)
    assert "AUTHENTICATION IS OFF" in stderr


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_long_shellcommand_streams_progress_notifications_in_order(served: Served, mode: str) -> None:
    seen: list[tuple[float, str | None]] = []

    async def progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, message))

    script = "for n in 1 2 3 4 5; do echo line-$n; sleep 0.2; done"
    async with served.connect(mode=mode) as client:
        with anyio.fail_after(60):
            result = await client.call_tool(
                "shellcommand", {"commands": [script]}, progress_callback=progress
            )
    assert not result.is_error, text_of(result)
    # Lines that arrive while a notification is being sent join the next one (OutputStreamer).
    lines = [line for _, message in seen for line in (message or "").split("\n") if line.startswith("line-")]
    assert lines == [f"line-{n}" for n in range(1, 6)]
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)


@pytest.mark.anyio
async def test_a_cancelled_call_kills_its_command_and_the_session_stays_usable(served: Served) -> None:
    marker = f"mcpltmark{uuid.uuid4().hex}"
    started = anyio.Event()

    async def progress(progress: float, total: float | None, message: str | None) -> None:
        # Lines that arrive while a notification is sent join the next one (OutputStreamer): on a
        # loaded machine "started" came with the command's own line, and was never seen alone.
        if "started" in (message or "").split("\n"):
            started.set()

    async with served.connect() as client:
        async with anyio.create_task_group() as group:

            async def call() -> None:
                await client.call_tool(
                    "shellcommand",
                    {"commands": [f"echo started; exec -a {marker} sleep 60"]},
                    progress_callback=progress,
                )

            group.start_soon(call)
            with anyio.fail_after(30):
                await started.wait()
                while not processes_with(marker):
                    await anyio.sleep(0.05)
            group.cancel_scope.cancel()
        await wait_until_gone(marker, seconds=15)
        result = await client.call_tool("statpath", {"path": "hello.txt"})
        assert not result.is_error


DISCONNECTING_CLIENT = """
import sys, anyio, httpx2
from mcp import Client
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
url, token, transport, marker = sys.argv[1:5]
headers = {"Authorization": f"Bearer {token}"}
async def main():
    if transport == "sse":
        target = sse_client(url, headers=headers)
    else:
        target = streamable_http_client(url, http_client=httpx2.AsyncClient(headers=headers, timeout=60))
    async with Client(target) as client:
        async def progress(done, total, message):
            print(message, flush=True)
        command = f"echo started; exec -a {marker} sleep 60"
        await client.call_tool("shellcommand", {"commands": [command]}, progress_callback=progress)
anyio.run(main)
"""


def test_a_client_that_disconnects_mid_shellcommand_leaves_no_process(served: Served) -> None:
    marker = f"mcpltmark{uuid.uuid4().hex}"
    client = subprocess.Popen(
        [sys.executable, "-c", DISCONNECTING_CLIENT, served.url, TOKEN, served.transport, marker],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert client.stdout is not None
        deadline = time.monotonic() + 60
        while client.stdout.readline().strip() != "started":
            assert time.monotonic() < deadline and client.poll() is None, "the call never started"
        while not processes_with(marker):
            assert time.monotonic() < deadline, "the command never started"
            time.sleep(0.05)
        client.kill()  # no cancellation, no session teardown: the connection just drops
        client.wait(timeout=10)
        deadline = time.monotonic() + 20
        while processes_with(marker):
            assert time.monotonic() < deadline, "the command outlived its disconnected client"
            time.sleep(0.1)
    finally:
        if client.poll() is None:
            client.kill()
        client.communicate(timeout=10)


@pytest.mark.anyio
async def test_commands_never_see_the_servers_token(served: Served) -> None:
    async with served.connect() as client:
        result = await client.call_tool(
            "shellcommand", {"commands": ['printenv MCP_LOCALTOOLS_TOKEN || echo "no token here"']}
        )
    assert "no token here" in text_of(result)
    assert TOKEN not in text_of(result)


@pytest.mark.anyio
@pytest.mark.parametrize("transport", ["streamable-http", "sse"])
async def test_each_profile_token_sees_and_calls_only_its_profiles_tools(
    tmp_path: Path, transport: str
) -> None:
    reader_token, editor_token = "reader-" + "r" * 40, "editor-" + "e" * 40
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    for name, token in (("reader", reader_token), ("editor", editor_token)):
        file = secrets / f"{name}.token"
        file.write_text(token + "\n", encoding="utf-8")
        file.chmod(0o600)
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("alpha\n", encoding="utf-8")
    (tmp_path / "c.toml").write_text(
        '[profiles.reader]\nenabled = ["fs"]\nread_only = true\ntoken_file = "secrets/reader.token"\n'
        '[profiles.editor]\nenabled = ["readfile", "editfile"]\ntoken_file = "secrets/editor.token"\n',
        encoding="utf-8",
    )
    served = start(transport, work, "--config", str(tmp_path / "c.toml"))
    try:
        async with served.connect(token=reader_token) as client:
            reader = {tool.name for tool in (await client.list_tools()).tools}
            assert not (await client.call_tool("readfile", {"path": "a.txt"})).is_error
            with pytest.raises(Exception, match="Unknown tool"):
                await client.call_tool(
                    "editfile", {"path": "a.txt", "edits": [{"oldText": "alpha", "newText": "x"}]}
                )
        async with served.connect(token=editor_token) as client:
            editor = {tool.name for tool in (await client.list_tools()).tools}
            edited = await client.call_tool(
                "editfile", {"path": "a.txt", "edits": [{"oldText": "alpha", "newText": "beta"}]}
            )
            assert not edited.is_error, text_of(edited)
        async with served.connect() as client:  # the server's own token: every tool
            everything = {tool.name for tool in (await client.list_tools()).tools}
    finally:
        stderr = stop(served)
    assert "readfile" in reader and "searchfiles" in reader and "writefile" not in reader
    assert editor == {"readfile", "editfile"}
    assert {"shellcommand", "writefile"} <= everything
    assert (work / "a.txt").read_text(encoding="utf-8") == "beta\n"
    assert reader_token not in stderr and editor_token not in stderr


@pytest.mark.anyio
async def test_a_profile_token_works_under_its_profiles_roots_and_the_servers_token_under_the_servers(
    tmp_path: Path,
) -> None:
    docs_token = "docs-" + "d" * 40
    work = tmp_path / "work"
    (work / "docs").mkdir(parents=True)
    (work / "docs" / "guide.md").write_text("guide\n", encoding="utf-8")
    (work / "notes.txt").write_text("notes\n", encoding="utf-8")
    token_file = tmp_path / "docs.token"
    token_file.write_text(docs_token + "\n", encoding="utf-8")
    token_file.chmod(0o600)
    (tmp_path / "c.toml").write_text(
        '[profiles.docs]\ntoken_file = "docs.token"\n'
        '[profiles.docs.paths]\nallowed_roots = ["work/docs"]\n'
        "[profiles.docs.exec]\nenabled = false\n",
        encoding="utf-8",
    )
    served = start("streamable-http", work, "--config", str(tmp_path / "c.toml"))
    try:
        async with served.connect(token=docs_token) as client:
            docs_tools = {tool.name for tool in (await client.list_tools()).tools}
            guide = await client.call_tool("readfile", {"path": "guide.md"})
            notes = await client.call_tool("readfile", {"path": str(work / "notes.txt")})
            written = await client.call_tool("writefile", {"path": "../escape.txt", "content": "x"})
        async with served.connect() as client:  # the server's own token: the server's policies
            everything = {tool.name for tool in (await client.list_tools()).tools}
            server_notes = await client.call_tool("readfile", {"path": "notes.txt"})
    finally:
        stop(served)
    assert "shellcommand" not in docs_tools and "shellcommand" in everything
    assert guide.structured_content["content"] == "guide\n"
    assert error_code(notes) == "outside_roots" and "notes\n" not in text_of(notes)
    assert error_code(written) == "outside_roots" and not (work / "escape.txt").exists()
    assert server_notes.structured_content["content"] == "notes\n"


@pytest.mark.anyio
async def test_a_token_of_a_profile_without_overrides_gets_the_servers_policies_not_the_chosen_profiles(
    tmp_path: Path,
) -> None:
    """``--profile admin`` widens the roots for requests without a profile token; a guest token
    (a profile with no policies of its own) still works under the server's narrower roots."""
    guest_token = "guest-" + "g" * 40
    work = tmp_path / "work"
    (work / "narrow").mkdir(parents=True)
    (work / "wide").mkdir()
    (work / "narrow" / "open.txt").write_text("open\n", encoding="utf-8")
    (work / "wide" / "secret.txt").write_text("secret\n", encoding="utf-8")
    token_file = tmp_path / "guest.token"
    token_file.write_text(guest_token + "\n", encoding="utf-8")
    token_file.chmod(0o600)
    (tmp_path / "c.toml").write_text(
        '[profiles.guest]\ntoken_file = "guest.token"\nenabled = ["fs"]\nread_only = true\n'
        '[profiles.admin.paths]\nallowed_roots = ["work"]\n',
        encoding="utf-8",
    )
    secret = str(work / "wide" / "secret.txt")
    served = start(
        "streamable-http", work / "narrow", "--config", str(tmp_path / "c.toml"), "--profile", "admin"
    )
    try:
        async with served.connect(token=guest_token) as client:
            guest_open = await client.call_tool("readfile", {"path": "open.txt"})
            guest_secret = await client.call_tool("readfile", {"path": secret})
        async with served.connect() as client:  # the server's own token: the profile chosen at start
            admin_secret = await client.call_tool("readfile", {"path": secret})
    finally:
        stop(served)
    assert guest_open.structured_content["content"] == "open\n"
    assert error_code(guest_secret) == "outside_roots" and "secret\n" not in text_of(guest_secret)
    assert admin_secret.structured_content["content"] == "secret\n"


@pytest.mark.anyio
async def test_two_tokens_on_the_2026_protocol_never_see_each_others_processes(tmp_path: Path) -> None:
    """The 2026-07-28 revision has no sessions: processes belong to the token (and profile) that
    started them, so another token cannot list, read or stop them (issue 25, item 7)."""
    other_token = "other-" + "o" * 40
    work = tmp_path / "work"
    work.mkdir()
    token_file = tmp_path / "other.token"
    token_file.write_text(other_token + "\n", encoding="utf-8")
    token_file.chmod(0o600)
    (tmp_path / "c.toml").write_text('[profiles.other]\ntoken_file = "other.token"\n', encoding="utf-8")
    served = start("streamable-http", work, "--config", str(tmp_path / "c.toml"))
    try:
        async with served.connect(mode="2026-07-28") as mine:
            started = await mine.call_tool("startprocess", {"command": "sleep 60"})
            assert not started.is_error, text_of(started)
            process_id = started.structured_content["processID"]
            async with served.connect(mode="2026-07-28", token=other_token) as theirs:
                listed = await theirs.call_tool("listprocesses", {})
                assert process_id not in text_of(listed)
                stopped = await theirs.call_tool("stopprocess", {"processID": process_id})
                assert error_code(stopped) == "not_found"
            async with served.connect(mode="2026-07-28") as again:  # the same token, a new request
                listed = await again.call_tool("listprocesses", {})
                assert process_id in text_of(listed)
                assert not (await again.call_tool("stopprocess", {"processID": process_id})).is_error
    finally:
        stop(served)
