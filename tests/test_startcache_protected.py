"""The start-up cache's folder is one of the server's own files: where it lies inside a root (a
root that is the user's home), neither the file tools nor a command may write an entry there, and
that holds before any entry exists (an entry written by a command would be served as this
server's answers at the next start)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.helpers import call_message, client_env, raw_stdio_exchange
from tests.test_startcache import INITIALIZE, INITIALIZED
from tests.tools.exec.conftest import NEEDS_BWRAP

pytestmark = [pytest.mark.server_process, pytest.mark.sandbox, NEEDS_BWRAP]


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
