"""Git works inside the sandbox (issue 25, item 4): the host's identity and nothing else of its
config, a clear note when a write to a protected git file is refused, the daily commands."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.tools.exec.conftest import NEEDS_BWRAP, exec_client, host_git
from tests.tools.exec.conftest import run_commands as run

pytestmark = [
    pytest.mark.anyio,
    NEEDS_BWRAP,
    pytest.mark.skipif(shutil.which("git") is None, reason="needs git"),
]


@pytest.fixture
def host(tmp_path: Path) -> dict[str, Path]:
    """A host home whose ~/.gitconfig has an identity and keys no command may inherit."""
    home, root = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    root.mkdir()
    pwned = tmp_path / "PWNED"
    (home / ".gitconfig").write_text(
        "[user]\n\tname = Ada Host\n\temail = ada@host.example\n"
        f"[alias]\n\tst = !touch {pwned}\n[core]\n\tpager = touch {pwned}\n"
        "[credential]\n\thelper = store\n",
        encoding="utf-8",
    )
    (root / "a.txt").write_text("a\n", encoding="utf-8")
    return {"home": home, "root": root, "pwned": pwned}


async def test_git_init_add_commit_use_the_hosts_identity_and_only_it(host: dict[str, Path]) -> None:
    environ = {**os.environ, "HOME": str(host["home"])}
    async with exec_client(host["root"], environ=environ) as client:
        data = await run(
            client,
            "git init -q && git add -A && git commit -q -m x",
            "git log -1 --format='%an <%ae> / %cn <%ce>'",
            "git config --global --list",
        )
        later = await run(
            client,
            "git switch -q -c feature && echo b >> a.txt && git stash -q && git tag v1 && git stash list",
            "git tag && git branch --show-current",
            sessionID=data["sessionID"],
        )
    assert [entry["exitCode"] for entry in data["results"]] == [0, 0, 0], data["results"]
    assert data["results"][1]["stdout"].strip() == "Ada Host <ada@host.example> / Ada Host <ada@host.example>"
    assert data["results"][2]["stdout"].splitlines() == ["user.name=Ada Host", "user.email=ada@host.example"]
    assert [entry["exitCode"] for entry in later["results"]] == [0, 0], later["results"]
    assert "stash@{0}" in later["results"][0]["stdout"]
    assert later["results"][1]["stdout"].split() == ["v1", "feature"]
    assert not host["pwned"].exists()


@pytest.mark.parametrize("piped", [False, True], ids=["plain", "through-a-pipe"])
async def test_a_refused_write_to_git_config_names_the_path_and_the_way_that_works(
    host: dict[str, Path], piped: bool
) -> None:
    root = host["root"]
    assert host_git("init", "-q", cwd=root).returncode == 0  # a repository the connection's sandbox finds
    async with exec_client(root, environ={**os.environ, "HOME": str(host["home"])}) as client:
        command = "git config user.email other@example.com" + (" 2>&1 | tail -n 3" if piped else "")
        data = await run(client, command)
    (entry,) = data["results"]
    assert (entry["exitCode"] == 0) == piped
    note = entry.get("sandboxNote")
    assert note is not None and ".git/config" in note, entry
    assert "git -c" in note and "unprotected_paths" in note
    assert "other@example.com" not in (root / ".git" / "config").read_text(encoding="utf-8")
