"""Exec test helpers: a client whose server sees the real environment, and a process finder."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from mcp_localtools.sandbox.bwrap import find_bwrap
from mcp_localtools.server import build_server
from tests.helpers import config_for, processes_with, text_of, wait_until_gone

__all__ = ["NEEDS_BWRAP", "exec_client", "host_git", "processes_with", "run_commands", "wait_until_gone"]


NEEDS_BWRAP = pytest.mark.skipif(
    not sys.platform.startswith("linux") or find_bwrap() is None, reason="needs bwrap"
)
"""For the sandbox tests: bubblewrap is the backend they exercise."""


def host_git(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``git`` as the user runs it later, outside the sandbox, with no global/system config."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(cwd),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
    }
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=30, check=False
    )


async def run_commands(client: Client, *commands: str, **arguments: Any) -> dict[str, Any]:
    """shellcommand's structured result for ``commands``; fails the test on an error result."""
    result = await client.call_tool("shellcommand", {"commands": list(commands), **arguments})
    assert not result.is_error, text_of(result)
    assert result.structured_content is not None
    data: dict[str, Any] = result.structured_content
    return data


@asynccontextmanager
async def exec_client(
    root: Path, *, environ: dict[str, str] | None = None, **sections: dict[str, Any]
) -> AsyncIterator[Client]:
    """A client of a server rooted in ``root`` whose exec tools see ``environ`` (default: ours
    with ``HOME`` an empty directory of the test's own: a login shell's probe then never runs the
    real profile, whose ``pyenv rehash``, cut short by a client's close, left its lock in the real
    home and held every later login shell on this machine for 60 s)."""
    with tempfile.TemporaryDirectory(prefix="exec-home-") as home:
        env = {**os.environ, "HOME": home} if environ is None else environ
        server = build_server(config_for(root, **sections), environ=env)
        async with Client(server, raise_exceptions=True) as client:
            yield client


@pytest.fixture
async def shell(tmp_path: Path) -> AsyncIterator[Client]:
    """A client with the default exec policy, rooted in ``tmp_path``."""
    async with exec_client(tmp_path) as client:
        yield client


@pytest.fixture
def marker() -> str:
    """A unique word to find a test's processes by."""
    return f"mcpltmark{uuid.uuid4().hex}"
