"""A server started without a root never serves the whole disk: the working directory is the
default root only when it is a project, not the filesystem root, the home directory (or above it)
or a system directory."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from mcp_localtools.config import parse_config
from mcp_localtools.errors import ConfigError
from mcp_localtools.policy.implicit_root import implicit_root_refusal
from tests.helpers import error_code, installed_command, text_of


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCP_LOCALTOOLS_")}
    env["HOME"] = str(home)
    return env


def run(*args: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [installed_command(), *args],
        cwd=cwd,
        env=_env(home),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home" / "alice"
    (home / "project").mkdir(parents=True)
    (home / "project" / "a.txt").write_text("alpha\n", encoding="utf-8")
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_rsa").write_text("canary-private-key\n", encoding="utf-8")
    return home


def test_call_in_the_filesystem_root_without_a_root_exits_1_with_one_line(home: Path) -> None:
    done = run("call", "listdirectory", '{"path": "."}', cwd=Path("/"), home=home)
    assert done.returncode == 1
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "the filesystem root /" in lines[0] and "--root DIR" in lines[0]


@pytest.mark.parametrize("where", ["home", "above home"])
def test_call_in_the_home_directory_or_above_it_without_a_root_is_refused(home: Path, where: str) -> None:
    cwd = home if where == "home" else home.parent
    done = run("call", "readfile", '{"path": ".ssh/id_rsa"}', cwd=cwd, home=home)
    assert done.returncode == 1
    assert "canary" not in done.stdout + done.stderr
    assert "never served by default" in done.stderr and "--root DIR" in done.stderr


def test_a_project_directory_is_still_the_default_root(home: Path) -> None:
    done = run("call", "readfile", '{"path": "a.txt"}', cwd=home / "project", home=home)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["structuredContent"]["content"] == "alpha\n"


def test_an_explicit_root_serves_even_from_the_filesystem_root(home: Path) -> None:
    done = run(
        "--root", str(home / "project"), "call", "readfile", '{"path": "a.txt"}', cwd=Path("/"), home=home
    )
    assert done.returncode == 0, done.stderr


def test_roots_from_the_environment_serve_even_from_the_filesystem_root(home: Path) -> None:
    env = _env(home) | {"MCP_LOCALTOOLS_ROOTS": str(home / "project")}
    done = subprocess.run(
        [installed_command(), "call", "statpath", '{"path": "a.txt"}'],
        cwd="/",
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_client_that_starts_the_server_in_the_filesystem_root_is_served_nothing(
    home: Path, mode: str
) -> None:
    params = StdioServerParameters(command=installed_command(), args=[], cwd="/", env=_env(home))
    async with Client(params, mode=mode) as client:
        calls: list[tuple[str, dict[str, Any]]] = [
            ("listdirectory", {"path": "."}),
            ("readfile", {"path": str(home / ".ssh" / "id_rsa")}),
            ("searchfiles", {"pattern": "canary", "root": str(home)}),
            ("shellcommand", {"commands": [f"cat {home}/.ssh/id_rsa"]}),
        ]
        for tool, arguments in calls:
            result = await client.call_tool(tool, arguments)
            assert result.is_error, (tool, text_of(result))
            assert error_code(result) == "no_roots", (tool, text_of(result))
            assert "--root DIR" in text_of(result) and "canary" not in text_of(result)


@pytest.mark.parametrize(
    ("cwd", "refused"),
    [
        ("/", True),
        ("/usr", True),
        ("/usr/lib/python3", True),
        ("/etc/nginx", True),
        ("/var", True),
        ("/tmp", True),
        ("/home", True),
        ("/proc/self", True),
        ("/var/www/site", False),
        ("/tmp/build-area", False),
        ("/srv/app", False),
        ("/opt/project", False),
    ],
)
def test_the_filesystem_root_and_system_directories_are_never_a_default_root(cwd: str, refused: bool) -> None:
    assert (implicit_root_refusal(Path(cwd), home=None) is not None) is refused


def test_the_home_directory_and_what_holds_it_are_never_a_default_root(home: Path) -> None:
    assert implicit_root_refusal(home, home=home) == f"your home directory {home}"
    assert "holds your home directory" in (implicit_root_refusal(home.parent, home=home) or "")
    assert implicit_root_refusal(home / "project", home=home) is None


def test_an_empty_roots_list_means_roots_from_the_client_and_takes_no_base_dir() -> None:
    assert parse_config({"paths": {"allowed_roots": []}}).paths.allowed_roots == []
    with pytest.raises(ConfigError, match="work_base_dir"):
        parse_config({"paths": {"allowed_roots": [], "work_base_dir": "/tmp"}})
