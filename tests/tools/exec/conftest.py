"""Exec test helpers: a client whose server sees the real environment, and a process finder."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from mcp_localtools.server import build_server
from tests.helpers import config_for


@asynccontextmanager
async def exec_client(
    root: Path, *, environ: dict[str, str] | None = None, **sections: dict[str, Any]
) -> AsyncIterator[Client]:
    """A client of a server rooted in ``root`` whose exec tools see ``environ`` (default: ours)."""
    server = build_server(
        config_for(root, **sections), environ=dict(os.environ) if environ is None else environ
    )
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


def processes_with(marker: str) -> list[int]:
    """Pids of live (non-zombie) processes with an argument that starts with ``marker`` (so not
    the shell whose script merely mentions it)."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/cmdline", "rb") as handle:
                cmdline = handle.read()
            with open(f"/proc/{entry.name}/stat", "rb") as handle:
                state = handle.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if state != b"Z" and any(arg.startswith(marker.encode()) for arg in cmdline.split(b"\0")):
            found.append(int(entry.name))
    return found


async def wait_until_gone(marker: str, seconds: float = 5) -> None:
    """Return once no process carries ``marker``; fail after ``seconds``."""
    with anyio.fail_after(seconds):
        while processes_with(marker):
            await anyio.sleep(0.02)
