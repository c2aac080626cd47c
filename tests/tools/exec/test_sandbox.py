"""Commands are contained by the operating system: the roots are the only place a command can write.

Every attack runs against canaries in ``tmp_path`` (outside the root the server is given), never
against a real system path. If the sandbox failed, the worst a test command could do is change
its own canary, or signal a ``sleep`` the test started. The "kill the server" case runs against
a server in a subprocess.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_localtools.config import parse_config
from mcp_localtools.sandbox.bwrap import find_bwrap
from mcp_localtools.tools import build_registry
from tests.helpers import (
    INITIALIZE,
    INITIALIZED,
    call_message,
    config_for,
    error_code,
    installed_command,
    text_of,
)
from tests.tools.exec.conftest import NEEDS_BWRAP, exec_client
from tests.tools.exec.conftest import run_commands as run

pytestmark = [
    pytest.mark.anyio,
    NEEDS_BWRAP,
]

SECRET = "canary-secret-5f2d"


@pytest.fixture
def layout(tmp_path: Path) -> dict[str, Path]:
    """A root (``proj``) and, beside it, an outside canary file, directory and secret."""
    root = tmp_path / "proj"
    root.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "canary.txt").write_text("keep", encoding="utf-8")
    (outside / "canary.txt").chmod(0o644)
    (outside / "tree").mkdir()
    (outside / "tree" / "leaf.txt").write_text("keep", encoding="utf-8")
    (outside / "secret.txt").write_text(SECRET, encoding="utf-8")
    return {"root": root, "outside": outside, "canary": outside / "canary.txt"}


def untouched(layout: dict[str, Path], *, mode_too: bool = True) -> None:
    canary = layout["canary"]
    assert canary.read_text(encoding="utf-8") == "keep"
    if mode_too:
        assert stat.S_IMODE(canary.stat().st_mode) == 0o644
    assert (layout["outside"] / "tree" / "leaf.txt").read_text(encoding="utf-8") == "keep"


@pytest.mark.parametrize(
    ("mode", "relaxed", "visible"),
    [("auto", False, False), ("auto", True, False), ("auto", False, True), ("landlock", False, False)],
    ids=["default", "heuristics-off", "outside-visible-read-only", "landlock"],
)
async def test_commands_the_blocklist_lets_through_cannot_touch_anything_outside_the_root(
    layout: dict[str, Path], mode: str, relaxed: bool, visible: bool
) -> None:
    # The canaries live in tmp_path, which is under /tmp, which commands cannot see; with
    # read_paths they see it read-only, which proves writes are refused, not only missed.
    canary, outside = layout["canary"], layout["outside"]
    (layout["root"] / "repo").mkdir()
    attacks = [
        f"python3 -c \"open('{canary}', 'w').write('gone')\"",
        f"find {outside}/tree -delete",
        f"cp /dev/null {canary}",
        f"cp /bin/rm ./zap && ./zap -rf {outside}/tree {canary}",
        f"chmod 666 {canary}",
        f"cd repo && git init -q && git -c core.fsmonitor='echo gone > {canary}; false' status",
        f"cat {outside}/secret.txt",
        f"cat${{IFS}}{outside}/secret.txt",
        f"python3 -c \"print(open('{outside}/secret.txt').read())\"",
    ]
    settings: dict[str, Any] = {"allow_dangerous": relaxed, "sandbox": {"mode": mode}}
    if visible:
        settings["sandbox"]["read_paths"] = [str(outside)]
    chmod = f"chmod 666 {canary}"
    if mode == "landlock":  # Landlock cannot stop chmod: the strict preset refuses it by name
        attacks.remove(chmod)
    async with exec_client(layout["root"], exec=settings) as client:
        data = await run(client, *attacks, executeParallel=True)
        refused = await client.call_tool("shellcommand", {"commands": [chmod]})
    assert (error_code(refused) == "command_refused") == (mode == "landlock")
    assert data["sandbox"] == ("bwrap" if mode == "auto" else mode)
    assert len(data["results"]) == len(attacks)
    if visible:
        assert "Read-only file system" in data["results"][2]["stderr"]
        assert SECRET in data["results"][6]["stdout"], "read_paths makes it readable"
    else:
        for entry in data["results"]:
            assert SECRET not in entry["stdout"] + entry["stderr"], entry["command"]
    untouched(layout)


async def test_writes_inside_the_root_and_the_session_temp_dir_still_work(layout: dict[str, Path]) -> None:
    async with exec_client(layout["root"]) as client:
        data = await run(
            client, "echo made > made.txt && mkdir -p sub && cp made.txt sub/", 'echo t > "$TMPDIR/t"'
        )
        again = await run(client, 'cat "$TMPDIR/t"', sessionID=data["sessionID"])
    assert (layout["root"] / "sub" / "made.txt").read_text(encoding="utf-8") == "made\n"
    assert again["results"][0]["stdout"] == "t\n", "the session's temp dir outlives one call"
    assert not str(layout["root"] / "made.txt").startswith(again["results"][0]["stdout"])


async def test_a_refused_write_says_the_sandbox_refused_it_and_how_to_allow_it(
    layout: dict[str, Path],
) -> None:
    async with exec_client(layout["root"]) as client:
        data = await run(client, "touch /etc/mcp-localtools-canary")
    (entry,) = data["results"]
    assert entry["exitCode"] != 0 and "Read-only file system" in entry["stderr"]
    assert "write_paths" in entry["sandboxNote"]
    assert not Path("/etc/mcp-localtools-canary").exists()


async def test_the_toolchains_run_pip_git_and_pytest_on_a_project_in_the_root(
    layout: dict[str, Path],
) -> None:
    root = layout["root"]
    (root / "test_small.py").write_text("def test_one():\n    assert 1 + 1 == 2\n", encoding="utf-8")
    # The user's own toolchains: this machine's HOME (pyenv's Python with pytest lives there)
    async with exec_client(root, environ=dict(os.environ)) as client:
        data = await run(
            client,
            "python3 -m pip --version",
            "git init -q && git status --short",
            "python3 -m pytest -q -p no:cacheprovider test_small.py",
            f"{sys.executable} -c 'import sys; print(sys.prefix)'",  # the server's own Python
            executeParallel=True,
        )
    assert [entry["exitCode"] for entry in data["results"]] == [0, 0, 0, 0], data["results"]
    assert "1 passed" in data["results"][2]["stdout"]
    # A virtualenv that is a whole folder of the temporary directory is not shown to commands
    # (the server warns): there its interpreter runs as the one it was made from.
    hidden = Path(sys.prefix).parent == Path(tempfile.gettempdir()).resolve()
    assert data["results"][3]["stdout"].strip() == (sys.base_prefix if hidden else sys.prefix)


def test_the_interpreter_under_the_home_directory_is_what_commands_run(tmp_path: Path) -> None:
    # On the project's machines python3 comes from pyenv in the home directory: it must run.
    python = Path(shutil.which("python3") or "/usr/bin/python3").resolve()
    if not python.is_relative_to(Path.home()):
        pytest.skip("python3 is not installed under the home directory here")
    done = subprocess.run(
        [installed_command(), "--root", str(tmp_path), "call", "shellcommand", "-"],
        input=json.dumps({"commands": ["python3 -c 'import sys; print(sys.executable)'"]}),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    report = json.loads(done.stdout)
    (entry,) = report["structuredContent"]["results"]
    assert report["structuredContent"]["sandbox"] == "bwrap" and entry["exitCode"] == 0
    assert Path(entry["stdout"].strip()).resolve().is_relative_to(Path.home())


async def test_a_secret_in_the_home_directory_outside_the_roots_cannot_be_read(tmp_path: Path) -> None:
    home, root = tmp_path / "home", tmp_path / "proj"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(SECRET, encoding="utf-8")
    root.mkdir()
    environ = {**os.environ, "HOME": str(home)}
    async with exec_client(root, environ=environ) as client:
        data = await run(client, "cat ~/.ssh/id_rsa", "ls -a ~", executeParallel=True)
    assert SECRET not in json.dumps(data)
    assert data["results"][0]["exitCode"] != 0
    assert ".ssh" not in data["results"][1]["stdout"]


@pytest.fixture
def listener() -> Iterator[tuple[int, list[bool]]]:
    """A TCP listener on a free loopback port; the list records every accepted connection."""
    accepted: list[bool] = []
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.2)
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                connection, _ = server.accept()
            except TimeoutError:
                continue
            accepted.append(True)
            connection.close()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1], accepted
    stop.set()
    thread.join(timeout=5)
    server.close()


CONNECT = (
    "python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 2); print('connected')\""
)


@pytest.mark.parametrize("mode", ["auto", "landlock"])
async def test_the_network_is_off_by_default_and_the_result_says_how_to_turn_it_on(
    layout: dict[str, Path], listener: tuple[int, list[bool]], mode: str
) -> None:
    port, accepted = listener
    async with exec_client(layout["root"], exec={"sandbox": mode}) as client:
        data = await run(client, CONNECT.format(port=port))
        bash = await client.call_tool("shellcommand", {"commands": [f"exec 3<>/dev/tcp/127.0.0.1/{port}"]})
    assert data["results"][0]["exitCode"] != 0
    assert "network = true" in data["results"][0]["sandboxNote"]
    if mode == "landlock":  # the strict preset refuses a redirect into /dev before it runs
        assert error_code(bash) == "command_refused"
    else:
        assert bash.structured_content is not None and bash.structured_content["results"][0]["exitCode"] != 0
    assert accepted == []


async def test_with_network_on_a_command_reaches_a_loopback_listener(
    layout: dict[str, Path], listener: tuple[int, list[bool]]
) -> None:
    port, accepted = listener
    async with exec_client(layout["root"], exec={"sandbox": {"network": True}}) as client:
        data = await run(client, CONNECT.format(port=port))
    assert data["results"][0]["stdout"] == "connected\n"
    assert accepted == [True]


@pytest.mark.parametrize("mode", ["auto", "landlock"])
async def test_a_command_cannot_see_or_signal_processes_outside_its_sandbox(
    layout: dict[str, Path], mode: str
) -> None:
    outside = subprocess.Popen(["sleep", "60"])  # a harmless target the test owns
    try:
        async with exec_client(layout["root"], exec={"sandbox": mode}) as client:
            kill = f'python3 -c "import os; os.kill({outside.pid}, 9)"'  # not by name: strict refuses kill
            data = await run(client, kill, "ps -e -o pid= | wc -l", executeParallel=True)
        assert outside.poll() is None, "the command killed a process outside its sandbox"
        assert data["results"][0]["exitCode"] != 0
        if mode == "auto":  # Landlock scopes signals but has no PID namespace: ps sees everything
            assert int(data["results"][1]["stdout"]) <= 5, (
                "it sees only its session's processes (bwrap's init, the supervisor, sh, ps, wc)"
            )
    finally:
        outside.kill()
        outside.wait(timeout=10)


def test_a_command_cannot_kill_the_server(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    server = subprocess.Popen(
        [installed_command(), "--root", str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdin is not None and server.stdout is not None
    try:
        kill = call_message(2, "shellcommand", {"commands": [f"kill -9 {server.pid}", "kill -9 $PPID"]})
        after = call_message(3, "statpath", {"path": "."})
        for message in (INITIALIZE, INITIALIZED, kill, after):
            server.stdin.write(json.dumps(message) + "\n")
        server.stdin.flush()
        replies: dict[Any, Any] = {}
        while len(replies) < 3:
            line = server.stdout.readline()
            assert line, "the server died"
            reply = json.loads(line)
            if "id" in reply:
                replies[reply["id"]] = reply
        assert replies[3]["result"]["structuredContent"]["exists"] is True
        assert server.poll() is None
    finally:
        server.kill()
        server.communicate(timeout=10)


async def test_protected_paths_refuse_writes_through_the_file_tools_and_commands(
    layout: dict[str, Path],
) -> None:
    root = layout["root"]
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / ".git" / "config").write_text("[core]\n", encoding="utf-8")
    (root / "notes.txt").write_text("free\n", encoding="utf-8")
    async with exec_client(root) as client:
        data = await run(
            client,
            "echo '[core] fsmonitor = evil' >> .git/config",
            "echo evil > .git/hooks/pre-commit",
            "mv .git .git2",
            "echo ok >> notes.txt",
            executeParallel=True,
        )
        write = await client.call_tool(
            "writefile", {"path": ".git/config", "content": "x", "overwrite": True}
        )
        edit = await client.call_tool(
            "editfile", {"path": ".git/config", "edits": [{"oldText": "[core]", "newText": "[x]"}]}
        )
        delete = await client.call_tool("deletefile", {"path": ".git", "recursive": True})
        move = await client.call_tool("movepath", {"source": ".git", "destination": "git-away"})
        hook = await client.call_tool("writefile", {"path": ".git/hooks/pre-commit", "content": "x"})
        read = await client.call_tool("readfile", {"path": ".git/config"})
    assert [entry["exitCode"] != 0 for entry in data["results"]] == [True, True, True, False]
    assert [error_code(r) for r in (write, edit, delete, move, hook)] == ["protected_path"] * 5
    assert "unprotected_paths" in text_of(write)
    assert not read.is_error
    assert (root / ".git" / "config").read_text(encoding="utf-8") == "[core]\n"
    assert not (root / ".git" / "hooks" / "pre-commit").exists()
    assert (root / "notes.txt").read_text(encoding="utf-8") == "free\nok\n"


async def test_a_protected_path_can_be_lifted_on_purpose(layout: dict[str, Path]) -> None:
    root = layout["root"]
    (root / ".git" / "hooks").mkdir(parents=True)
    async with exec_client(root, paths={"unprotected_paths": [".git/hooks"]}) as client:
        data = await run(client, "echo 'exit 0' > .git/hooks/pre-commit")
        config = await client.call_tool("writefile", {"path": ".git/config", "content": "x"})
    assert data["results"][0]["exitCode"] == 0
    assert error_code(config) == "protected_path", "only the lifted path is lifted"


async def test_variables_that_turn_a_command_into_another_program_are_refused(
    layout: dict[str, Path],
) -> None:
    root = layout["root"]
    (root / "x.sh").write_text(f"cp /dev/null {layout['canary']}\n", encoding="utf-8")
    async with exec_client(root, exec={"deny_by_default": True, "allowed_commands": ["ls"]}) as client:
        results = [
            await client.call_tool("shellcommand", {"commands": ["ls"], "env": {name: value}})
            for name, value in [
                ("BASH_ENV", "x.sh"),
                ("LD_PRELOAD", "./evil.so"),
                ("GIT_CONFIG_GLOBAL", "x"),
                ("PAGER", "sh x.sh"),
                ("PATH", f"{root}:/usr/bin:/bin"),
            ]
        ]
    assert [error_code(r) for r in results] == ["command_refused"] * 5
    assert "allowed_env" in text_of(results[0])
    untouched(layout)


async def test_allowed_env_lifts_a_refused_variable(layout: dict[str, Path]) -> None:
    async with exec_client(layout["root"], exec={"allowed_env": ["PAGER"]}) as client:
        data = await run(client, 'echo "$PAGER"', env={"PAGER": "cat"})
    assert data["results"][0]["stdout"] == "cat\n"


async def test_with_auto_and_no_bwrap_commands_fall_back_to_landlock(layout: dict[str, Path]) -> None:
    missing = layout["outside"] / "no-such-bwrap"
    async with exec_client(layout["root"], exec={"sandbox": {"bwrap_path": str(missing)}}) as client:
        data = await run(client, f"cp /dev/null {layout['canary']}", "touch inside", executeParallel=True)
    assert data["sandbox"] == "landlock"
    assert [entry["exitCode"] for entry in data["results"]] == [1, 0]
    untouched(layout)


async def test_with_no_backend_commands_fail_closed_with_a_clear_message(layout: dict[str, Path]) -> None:
    missing = layout["outside"] / "no-such-bwrap"
    sandbox = {"mode": "bwrap", "bwrap_path": str(missing)}
    async with exec_client(layout["root"], exec={"sandbox": sandbox}) as client:
        result = await client.call_tool("shellcommand", {"commands": [f"cp /dev/null {layout['canary']}"]})
        script = await client.call_tool("runscript", {"path": "nothing.sh"})
        still = await client.call_tool("statpath", {"path": "."})
    assert error_code(result) == "sandbox_unavailable" == error_code(script)
    message = text_of(result)
    assert str(missing) in message and 'mode = "off"' in message and "bubblewrap" in message
    assert not still.is_error, "the other tools still work"
    untouched(layout)


async def test_a_program_that_cannot_start_in_the_sandbox_gives_127_and_the_error(tmp_path: Path) -> None:
    fake = tmp_path / "bin" / "zsh"
    fake.parent.mkdir()
    fake.write_bytes(b"\x7fELF not really")
    fake.chmod(0o755)
    async with exec_client(tmp_path, exec={"allowed_env": ["PATH"]}) as client:
        data = await run(client, "echo hi", shell="zsh", env={"PATH": str(fake.parent)})
    (entry,) = data["results"]
    assert entry["exitCode"] == 127 and entry["stderr"]


def test_the_sandbox_works_for_a_server_running_as_an_unprivileged_user() -> None:
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root to start the server as uid 65534")
    bwrap = find_bwrap()
    assert bwrap is not None
    root = Path(tempfile.mkdtemp(prefix="mcp-localtools-nobody-"))  # nobody cannot enter tmp_path
    try:
        root.chmod(0o777)
        probe = (
            "import anyio, json, os, sys\n"
            "from mcp_localtools.config import parse_config\n"
            "from mcp_localtools.tools import build_registry\n"
            "config = parse_config({'paths': {'allowed_roots': [sys.argv[1]]}})\n"
            "env = {'PATH': os.environ['PATH'], 'HOME': '/nonexistent'}\n"
            "registry = build_registry(config, environ=env)\n"
            "commands = ['id -u', 'touch inside', 'touch /etc/mcp-localtools-canary']\n"
            "args = {'commands': commands, 'executeParallel': True}\n"
            "result = anyio.run(registry.call, 'shellcommand', args)\n"
            "data = {'uid': os.getuid(), 'data': result.structured, 'text': str(result.content)}\n"
            "print(json.dumps(data))\n"
        )
        # /root (where the interpreter lives here) is 0700: an outer sandbox, started as root,
        # lays an open tmpfs over it with the interpreter bound back, then drops to uid 65534.
        home = Path.home()
        outer = [bwrap, "--bind", "/", "/", "--dev-bind", "/dev", "/dev", "--die-with-parent"]
        if home != Path("/") and not os.access(home, os.X_OK, effective_ids=False):
            outer += ["--tmpfs", str(home)]
        for prefix in {Path(sys.base_prefix), Path(sys.prefix)}:
            if prefix.is_relative_to(home):
                top = home / prefix.relative_to(home).parts[0]
                outer += ["--ro-bind", str(top), str(top)]
        command = [*outer, "--", "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        done = subprocess.run(
            [*command, sys.executable, "-c", probe, str(root)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            cwd="/",
        )
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        assert report["data"] is not None, report["text"] + done.stderr[-3000:]
        results = report["data"]["results"]
        assert report["uid"] == 65534 and report["data"]["sandbox"] == "bwrap"
        assert [entry["exitCode"] for entry in results][:2] == [0, 0] and results[0]["stdout"] == "65534\n"
        assert results[2]["exitCode"] != 0 and "Read-only file system" in results[2]["stderr"]
        assert (root / "inside").exists() and (root / "inside").stat().st_uid == 65534
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_the_config_spells_the_sandbox_mode_either_way() -> None:
    short = parse_config({"exec": {"sandbox": "off"}}).exec.sandbox
    table = parse_config({"exec": {"sandbox": {"mode": "off", "network": True}}}).exec.sandbox
    assert short.mode == table.mode == "off" and table.network and not short.network


def _refusal_logged(caplog: pytest.LogCaptureFixture, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if any("COMMANDS WILL BE REFUSED" in record.getMessage() for record in caplog.records):
            return True
        time.sleep(0.02)
    return False


def test_the_sandbox_is_probed_only_when_a_command_tool_is_served(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR)
    sandbox = {"mode": "bwrap", "bwrap_path": str(tmp_path / "missing-bwrap")}
    build_registry(config_for(tmp_path, exec={"enabled": False, "sandbox": sandbox}))
    build_registry(config_for(tmp_path, exec={"sandbox": sandbox}, tools={"read_only": True}))
    assert not _refusal_logged(caplog, 1.0), "no command tool is served: nothing to probe or refuse"
    build_registry(config_for(tmp_path, exec={"sandbox": sandbox}))
    assert _refusal_logged(caplog, 10.0), "served: the start-up log says commands will be refused"
