"""The start-up cache's folder is one of the server's own files: where it lies inside a root (a
root that is the user's home), neither the file tools nor a command may write an entry there, and
that holds before any entry exists (an entry written by a command would be served as this
server's answers at the next start)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from mcp_localtools.cli.startchecks import make_folder, private
from tests.helpers import call_message, client_env, raw_stdio_exchange
from tests.support.cli import run_main
from tests.test_startcache import INITIALIZE, INITIALIZED
from tests.tools.exec.conftest import NEEDS_BWRAP


@pytest.mark.server_process
@pytest.mark.sandbox
@NEEDS_BWRAP
def test_no_tool_or_command_writes_an_entry_into_a_start_folder_that_is_not_there_yet(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    cache = home / ".cache"
    folder = cache / "mcp-localtools" / "start"
    env = {**client_env(), "XDG_CACHE_HOME": str(cache), "MCP_LOCALTOOLS_START_CACHE": "0"}
    forged = str(folder / "forged.json")
    command = f"mkdir -p {folder} && echo '{{}}' > {forged}"
    replies, _ = raw_stdio_exchange(
        home,
        [
            INITIALIZE,
            INITIALIZED,
            call_message(2, "writefile", {"path": forged, "content": "{}"}),
            call_message(3, "shellcommand", {"commands": [command]}),
        ],
        env=env,
    )
    assert replies[2]["result"]["isError"], json.dumps(replies[2])[:600]
    ran = replies[3]["result"]["structuredContent"]["results"][0]
    assert ran["exitCode"] != 0, ran
    assert not os.path.lexists(forged)


def test_the_json_command_line_protects_the_start_folder_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `mcp-localtools call` built its workspace without the folder among its own files: a
    # command it ran (an untrusted Makefile) or a write could forge an entry (a cold review).
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / ".cache"))
    forged = ".cache/mcp-localtools/start/forged.json"
    done = run_main(
        "--root",
        str(tmp_path),
        "call",
        "writefile",
        json.dumps({"path": forged, "content": "{}", "createParents": True}),
        cwd=tmp_path,
    )
    assert done.returncode != 0 and json.loads(done.stdout)["success"] is False, done.stdout
    assert not (tmp_path / forged).exists()


def test_the_folder_and_the_folders_made_above_it_are_private_under_umask_002(tmp_path: Path) -> None:
    # mkdir(parents=True) gave the parents the process's mode: group-writable under umask 002,
    # and the cache then refused itself for good (a cold review).
    folder = tmp_path / "home" / ".cache" / "mcp-localtools" / "start"
    previous = os.umask(0o002)
    try:
        make_folder(folder)
    finally:
        os.umask(previous)
    assert private(folder)
    assert all((path.stat().st_mode & 0o777) == 0o700 for path in (folder, *list(folder.parents)[:3]))
