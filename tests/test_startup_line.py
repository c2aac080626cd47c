"""The start-up line: one line on stderr at the default log level (version, transport and address,
roots, sandbox, search), written only once the server listens."""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import time
from pathlib import Path

import pytest

from mcp_localtools._version import __version__
from mcp_localtools.cli.serve import _quiet
from mcp_localtools.cli.startup import announce, startup_line
from mcp_localtools.search import NativeEngine
from mcp_localtools.server import create_server
from mcp_localtools.server.adapter import RegistryServer
from mcp_localtools.server.routes import Route, Routes
from mcp_localtools.tools import build_registry
from mcp_localtools.workspace import Workspace
from tests.helpers import config_for, installed_command


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("MCP_LOCALTOOLS_")}


def _stderr_while_running(args: list[str], cwd: Path, *, seconds: float = 20) -> str:
    """Start the server with stdin held open, wait for its start-up line, stop it, return stderr."""
    proc = subprocess.Popen(
        [installed_command(), *args],
        cwd=cwd,
        env=_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    lines: list[str] = []
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            if not line:
                break
            lines.append(line)
            if line.startswith("mcp-localtools "):
                break
    finally:
        proc.terminate()
        _, rest = proc.communicate(timeout=10)
    return "".join(lines) + rest


def test_stdio_prints_one_start_up_line_at_the_default_level(tmp_path: Path) -> None:
    err = _stderr_while_running(["--root", str(tmp_path)], tmp_path)
    lines = [line for line in err.splitlines() if line.startswith("mcp-localtools ")]
    assert len(lines) == 1, err
    assert lines[0].startswith(f"mcp-localtools {__version__}: serving stdio; roots {tmp_path}")
    assert "; sandbox " in lines[0] and "; search " in lines[0]


def test_a_server_without_roots_says_they_come_from_the_client(tmp_path: Path) -> None:
    err = _stderr_while_running([], Path("/"))
    assert "serving stdio; roots from the client (none of its own)" in err
    assert "never served by default" in err


def _no_exec_server(root: Path) -> RegistryServer:
    config = config_for(root, exec={"enabled": False})
    workspace = Workspace.from_config(config, search=NativeEngine())
    registry = build_registry(config, workspace=workspace)
    return create_server(Routes(Route.of(registry, base_dir=str(root), workspace=workspace)))


def test_quiet_writes_no_line_but_keeps_the_warnings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    server = _no_exec_server(tmp_path)
    announce(server, "stdio", quiet=True).join(30)
    assert "serving" not in capsys.readouterr().err
    assert any("ripgrep" in record.getMessage() for record in caplog.records)  # the python engine
    announce(server, "stdio", quiet=False).join(30)
    assert "serving stdio" in capsys.readouterr().err


def test_the_quiet_level_is_error() -> None:
    assert _quiet(argparse.Namespace(log_level="ERROR")) and not _quiet(argparse.Namespace(log_level=None))


def test_a_root_that_is_the_whole_filesystem_is_a_warning() -> None:
    line, warnings = startup_line(_no_exec_server(Path("/")), "stdio")
    assert "; roots / " in line
    assert any("the filesystem root /: every file below it is served" in warning for warning in warnings)


def test_http_says_serving_only_after_a_successful_bind(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        args = ["--root", str(tmp_path), "--transport", "streamable-http", "--port", str(port)]
        done = subprocess.run(
            [installed_command(), *args, "--allow-unauthenticated-loopback"],
            env=_env(),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert done.returncode == 1
    assert "serving" not in done.stderr
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr
    err = _stderr_while_running([*args, "--allow-unauthenticated-loopback"], tmp_path)
    assert f"serving streamable-http on http://127.0.0.1:{port}/mcp; roots {tmp_path}" in err


def test_the_python_engine_and_a_server_without_command_tools_are_named(tmp_path: Path) -> None:
    line, warnings = startup_line(_no_exec_server(tmp_path), "stdio")
    assert "; no command tools; search python (slower: no ripgrep 14+ found)" in line
    assert len(warnings) == 1 and "ripgrep" in warnings[0]
