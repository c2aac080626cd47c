"""Protected the whole way down (issue 25, item 2): the directories above a protected file cannot be
moved aside, and git directories a command makes are made safe before the user's git reads them.

Every target is a canary in ``tmp_path``: a config the server would read at its next start, its
audit log, a nested repository, a submodule whose config would run a program.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp import Client

from mcp_localtools.server import build_server
from tests.helpers import config_for
from tests.tools.exec.conftest import NEEDS_BWRAP, host_git
from tests.tools.exec.conftest import run_commands as run

pytestmark = [
    pytest.mark.anyio,
    NEEDS_BWRAP,
    pytest.mark.skipif(shutil.which("git") is None, reason="needs git"),
]


_git = host_git


@asynccontextmanager
async def served(
    root: Path, *, own_files: list[Path] | None = None, **sections: object
) -> AsyncIterator[Client]:
    server = build_server(config_for(root, **sections), environ=dict(os.environ), own_files=own_files or [])  # type: ignore[arg-type]
    async with Client(server, raise_exceptions=True) as client:
        yield client


async def test_the_folder_of_the_servers_config_and_of_its_audit_log_cannot_be_moved_aside(
    tmp_path: Path,
) -> None:
    root = tmp_path / "proj"
    (root / "conf").mkdir(parents=True)
    config = root / "conf" / "server.toml"
    config.write_text('[exec]\nsandbox = "auto"\n', encoding="utf-8")
    audit = root / "logs" / "audit" / "audit.jsonl"
    before = (root / "conf").stat().st_ino
    async with served(root, own_files=[config], audit={"enabled": True, "path": str(audit)}) as client:
        data = await run(
            client,
            "mv conf conf-old && mkdir conf && printf '[exec]\\nsandbox = \"off\"\\n' > conf/server.toml",
            "mv logs logs-old && mkdir -p logs/audit && : > logs/audit/audit.jsonl",
            "mv logs/audit logs/elsewhere",
            executeParallel=True,
        )
    assert [entry["exitCode"] != 0 for entry in data["results"]] == [True, True, True]
    assert "pins the directories" in (data["results"][0].get("sandboxNote") or "")
    assert (root / "conf").stat().st_ino == before and not (root / "conf-old").exists()
    assert config.read_text(encoding="utf-8") == '[exec]\nsandbox = "auto"\n'
    assert not (root / "logs-old").exists() and audit.stat().st_size > 0, "the log is where it was"


async def test_a_nested_repository_cannot_be_replaced_by_moving_its_parent(tmp_path: Path) -> None:
    root = tmp_path / "code"
    app = root / "group" / "app"
    app.mkdir(parents=True)
    assert _git("init", "-q", ".", cwd=app).returncode == 0
    pwned = tmp_path / "PWNED"
    evil = f"git init -q . && git config core.fsmonitor 'touch {pwned}; false'"
    async with served(root) as client:
        data = await run(
            client,
            f"mv group group-old && mkdir -p group/app && cd group/app && {evil}",
            f"mv group/app group/app-old && mkdir group/app && cd group/app && {evil}",
            executeParallel=True,
        )
    assert [entry["exitCode"] != 0 for entry in data["results"]] == [True, True]
    _git("status", cwd=app)
    assert not pwned.exists(), "the user's git status ran a config a command put in place"


async def test_a_submodule_a_command_adds_cannot_make_the_users_git_status_run_a_program(
    tmp_path: Path,
) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "a.txt").write_text("a\n", encoding="utf-8")
    assert _git("init", "-q", ".", cwd=root).returncode == 0
    _git("add", "-A", cwd=root)
    assert (
        _git("-c", "user.name=u", "-c", "user.email=u@x", "commit", "-q", "-m", "x", cwd=root).returncode == 0
    )
    pwned = tmp_path / "PWNED"
    async with served(root) as client:
        data = await run(
            client,
            "mkdir sub && cd sub && git init -q"
            f" && git config core.fsmonitor 'touch {pwned}; false' && git config alias.st '!touch {pwned}'"
            " && git -c user.name=a -c user.email=b commit -q --allow-empty -m x && cd .. && git add sub",
        )
    (entry,) = data["results"]
    assert entry["exitCode"] == 0, entry
    note = entry.get("sandboxNote") or ""
    assert "core.fsmonitor" in note and "alias.st" in note, entry
    _git("status", cwd=root)
    _git("status", cwd=root / "sub")
    assert not pwned.exists(), "the user's git status ran what a command planted in a submodule"


async def test_a_git_pointer_to_a_directory_outside_the_roots_is_set_aside(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    (root / "w").mkdir(parents=True)
    async with served(root) as client:
        data = await run(client, "printf 'gitdir: /etc\\n' > w/.git")
    assert "set aside" in (data["results"][0].get("sandboxNote") or "")
    assert not (root / "w" / ".git").exists() and (root / "w" / ".git.untrusted").exists()
