"""The container image, run the way the README says, driven by the SDK client.

Runs only when ``MCP_LOCALTOOLS_CONTAINER_IMAGE`` names a built image (``.ci/container`` builds
one and sets it; ``MCP_LOCALTOOLS_CONTAINER_ENGINE`` is ``podman`` by default). The files are
owned by an unprivileged uid and the containers run with ``--user`` of that uid, as the README's
``--user "$(id -u):$(id -g)"`` does for the user who owns them (CI runs as root, so its own uid
would prove nothing about ownership).
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from tests.helpers import text_of

IMAGE = os.environ.get("MCP_LOCALTOOLS_CONTAINER_IMAGE", "")
ENGINE = os.environ.get("MCP_LOCALTOOLS_CONTAINER_ENGINE", "podman")
UID = 4242
TOKEN_IN_CONTAINER = "/run/secrets/mcp-localtools-token"

pytestmark = pytest.mark.skipif(
    not IMAGE, reason="no container image: .ci/container builds one and sets MCP_LOCALTOOLS_CONTAINER_IMAGE"
)


@dataclass
class Host:
    """The host side of a container: its workspace and its 0600 token file, owned by ``UID``."""

    workspace: Path
    token_file: Path
    token: str


@pytest.fixture
def host(tmp_path: Path) -> Host:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "hello.txt").write_text("hello from the host\n", encoding="utf-8")
    secret = tmp_path / "secret"
    secret.mkdir()
    token = secrets.token_urlsafe(32)
    token_file = secret / "token"
    token_file.write_text(token + "\n", encoding="utf-8")
    token_file.chmod(0o600)
    for path in (workspace, workspace / "hello.txt", token_file):
        os.chown(path, UID, UID)
    return Host(workspace, token_file, token)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def engine(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([ENGINE, *args], capture_output=True, text=True, timeout=timeout, check=False)


@dataclass
class Served:
    """A running network container: its name, base URL, and seconds from `run` to healthy."""

    name: str
    base: str
    seconds: float


@pytest.fixture
def served(host: Host) -> Iterator[Served]:
    """The README's network command, running."""
    port = free_port()
    name = f"mcp-localtools-test-{secrets.token_hex(4)}"
    started = time.monotonic()
    run = engine(
        "run", "-d", "--rm", "--name", name,
        "-p", f"127.0.0.1:{port}:8765", "--user", f"{UID}:{UID}",
        "-v", f"{host.workspace}:/workspace",
        "-v", f"{host.token_file}:{TOKEN_IN_CONTAINER}:ro",
        IMAGE,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx2.get(base + "/healthz", timeout=2).status_code == 200:
                    break
            except httpx2.HTTPError:
                pass
            assert time.monotonic() < deadline, engine("logs", name).stderr
            time.sleep(0.05)
        yield Served(name, base, time.monotonic() - started)
    finally:
        engine("stop", "-t", "3", name)


def test_the_image_serves_http_with_the_token_and_a_health_check(served: Served) -> None:
    base = served.base
    assert served.seconds < 30
    assert httpx2.get(base + "/healthz", timeout=5).json()["status"] == "ok"
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
    accept = {"Accept": "application/json, text/event-stream"}
    assert httpx2.post(base + "/mcp", json=init, headers=accept, timeout=5).status_code == 401
    wrong = {**accept, "Authorization": "Bearer " + "x" * 43}
    assert httpx2.post(base + "/mcp", json=init, headers=wrong, timeout=5).status_code == 401
    health = engine("healthcheck", "run", served.name)  # the image's HEALTHCHECK survived the build
    assert health.returncode == 0, health.stdout + health.stderr


@pytest.mark.anyio
async def test_a_client_reads_runs_and_writes_as_the_user_over_http(host: Host, served: Served) -> None:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {host.token}"}, timeout=60)
    async with http, Client(streamable_http_client(served.base + "/mcp", http_client=http)) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert {"readfile", "writefile", "shellcommand"} <= names and len(names) >= 22
        read = await client.call_tool("readfile", {"path": "hello.txt"})
        assert not read.is_error and "hello from the host" in text_of(read)
        ran = await client.call_tool("shellcommand", {"commands": ["id -u"]})
        assert not ran.is_error, text_of(ran)
        assert ran.structured_content["results"][0]["stdout"].strip() == str(UID)
        write = {"path": "made/by/model.txt", "content": "x\n", "createParents": True}
        wrote = await client.call_tool("writefile", write)
        assert not wrote.is_error, text_of(wrote)
    made = host.workspace / "made" / "by" / "model.txt"
    assert made.read_text(encoding="utf-8") == "x\n"
    assert (made.stat().st_uid, made.stat().st_gid) == (UID, UID)


@pytest.mark.anyio
async def test_the_stdio_form_serves_a_client_that_starts_it_with_a_short_path(host: Host) -> None:
    """The README's client JSON: literal values, ``--network none``, and the small environment a
    desktop client gives a server (a short ``PATH``; CONTAINERS_CONF only where this host needs it)."""
    env = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/root")}
    if "CONTAINERS_CONF" in os.environ:
        env["CONTAINERS_CONF"] = os.environ["CONTAINERS_CONF"]
    params = StdioServerParameters(
        command=shutil.which(ENGINE) or ENGINE,
        args=[
            "run", "-i", "--rm", "--network", "none", "--no-healthcheck", "--user", f"{UID}:{UID}",
            "-v", f"{host.workspace}:/workspace", IMAGE, "--root", "/workspace",
        ],
        env=env,
    )  # fmt: skip
    async with Client(params) as client:
        read = await client.call_tool("readfile", {"path": "hello.txt"})
        assert not read.is_error and "hello from the host" in text_of(read)


def test_without_user_an_unreadable_token_is_one_clear_line_not_a_traceback(host: Host) -> None:
    done = engine(
        "run", "--rm", "--no-healthcheck",
        "-v", f"{host.workspace}:/workspace",
        "-v", f"{host.token_file}:{TOKEN_IN_CONTAINER}:ro",
        IMAGE,
    )  # fmt: skip
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert "permission denied" in done.stderr and "--user" in done.stderr


def test_the_engine_is_there() -> None:
    assert shutil.which(ENGINE), f"{ENGINE} is not installed"
