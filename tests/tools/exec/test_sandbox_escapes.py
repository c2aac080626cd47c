"""Escapes a cold review of the sandbox found, each now closed (or, marked xfail, documented):
capabilities of a root server's commands, git's commondir and nested repositories, env names,
host UNIX sockets, temp dirs left behind.

Every attack targets canaries under ``tmp_path`` (a file a command or a later ``git`` would
create there), never a real system path.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.helpers import (
    INITIALIZE,
    INITIALIZED,
    call_message,
    error_code,
    installed_command,
    raw_stdio_exchange,
    text_of,
)
from tests.tools.exec.conftest import NEEDS_BWRAP, exec_client, host_git
from tests.tools.exec.conftest import run_commands as run

pytestmark = [
    pytest.mark.anyio,
    NEEDS_BWRAP,
    pytest.mark.skipif(shutil.which("git") is None, reason="needs git"),
]


_git = host_git


@pytest.fixture
def repo(tmp_path: Path) -> dict[str, Path]:
    """A root that is a git repository, and an outside spot where a planted hook would leave a mark."""
    root = tmp_path / "proj"
    root.mkdir()
    assert _git("init", "-q", ".", cwd=root).returncode == 0
    outside = tmp_path / "outside"
    outside.mkdir()
    return {"root": root, "pwned": outside / "PWNED"}


# --- protected paths -------------------------------------------------------------------------


async def test_a_command_cannot_point_git_at_a_config_of_its_own_through_git_commondir(
    repo: dict[str, Path],
) -> None:
    # .git/config and .git/hooks are read-only, but .git itself is writable: git reads
    # $GIT_DIR/commondir and then takes config (and hooks) from the directory it names. A later,
    # innocent `git status` by the user (outside the sandbox) then runs core.fsmonitor.
    root, pwned = repo["root"], repo["pwned"]
    async with exec_client(root) as client:
        data = await run(
            client,
            "mkdir -p evil/objects evil/refs"
            " && printf '[core]\\n\\trepositoryformatversion = 0\\n"
            f'\\tfsmonitor = "touch {pwned}; false"\\n\''
            " > evil/config && echo ../evil > .git/commondir",
        )
    _git("status", cwd=root)
    assert not pwned.exists(), "a command planted code that the user's next `git status` ran"
    assert data["results"][0]["exitCode"] != 0 or not (root / ".git" / "commondir").exists()


async def test_the_file_tools_cannot_point_git_at_a_config_of_their_own_through_git_commondir(
    repo: dict[str, Path],
) -> None:
    root, pwned = repo["root"], repo["pwned"]
    async with exec_client(root) as client:
        for path in ("evil/objects/.keep", "evil/refs/.keep"):
            await client.call_tool("writefile", {"path": path, "content": "", "createParents": True})
        await client.call_tool(
            "writefile",
            {"path": "evil/config", "content": f'[core]\n\tfsmonitor = "touch {pwned}; false"\n'},
        )
        planted = await client.call_tool("writefile", {"path": ".git/commondir", "content": "../evil\n"})
    _git("status", cwd=root)
    assert not pwned.exists(), "the file tools planted code that the user's next `git status` ran"
    assert error_code(planted) == "protected_path"


async def test_git_config_of_a_nested_repository_in_a_root_stays_read_only(tmp_path: Path) -> None:
    # A careless but common setup: the root is a directory of projects (~/code), each a repo.
    # None of their .git/config files is protected, from commands or from the file tools.
    root = tmp_path / "code"
    (root / "app").mkdir(parents=True)
    assert _git("init", "-q", ".", cwd=root / "app").returncode == 0
    pwned = tmp_path / "PWNED"
    async with exec_client(root) as client:
        data = await run(client, f"git -C app config core.fsmonitor 'touch {pwned}; false'")
        write = await client.call_tool(
            "writefile",
            {"path": "app/.git/hooks/post-checkout", "content": f"#!/bin/sh\ntouch {pwned}\n"},
        )
    _git("status", cwd=root / "app")
    assert not pwned.exists(), "a command set core.fsmonitor of a repository inside the root"
    assert data["results"][0]["exitCode"] != 0
    assert error_code(write) == "protected_path"


async def test_a_root_inside_a_repository_cannot_be_given_a_git_dir_of_its_own(tmp_path: Path) -> None:
    # The root is a subdirectory of a repository (a monorepo package): the repository's
    # .git/config is outside the root (safe), but a command may create root/.git with any config,
    # which the user's next git command in that directory would obey. A .git a command makes is
    # untrusted: what makes git run a program is removed from its config after the command.
    repo_dir = tmp_path / "mono"
    (repo_dir / "pkg").mkdir(parents=True)
    assert _git("init", "-q", ".", cwd=repo_dir).returncode == 0
    pwned = tmp_path / "PWNED"
    async with exec_client(repo_dir / "pkg") as client:
        await run(client, f"git init -q . && git config core.fsmonitor 'touch {pwned}; false'")
    _git("status", cwd=repo_dir / "pkg")
    assert not pwned.exists()


# --- env -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "value", "command"),
    [
        ("BASH_FUNC_ls%%", "() { echo PWNED-by-$(id -u); }", "ls"),
        ("XDG_CONFIG_HOME", "{root}/cfg", "git status"),
        ("HOME", "{root}/cfg/git-home", "git status"),
        ("GIT_DIR", "{root}/evil", "git status"),
    ],
    ids=["exported-bash-function", "xdg-config-home", "home", "git-dir"],
)
async def test_deny_by_default_env_cannot_turn_an_allowed_command_into_another_program(
    tmp_path: Path, name: str, value: str, command: str
) -> None:
    # deny_by_default runs only `ls` and `git`; REFUSED_ENV exists so that a call's env cannot
    # make them run something else. Exported bash functions replace `ls`; HOME / XDG_CONFIG_HOME /
    # GIT_DIR hand git a config (written with writefile) whose core.fsmonitor runs any program.
    root = tmp_path / "proj"
    root.mkdir()
    fsmonitor = '[core]\n\tfsmonitor = "echo PWNED-by-fsmonitor >&2; false"\n'
    for place in ("cfg/git/config", "cfg/git-home/.gitconfig", "evil/config"):
        (root / place).parent.mkdir(parents=True, exist_ok=True)
        (root / place).write_text(fsmonitor, encoding="utf-8")
    (root / "evil" / "objects").mkdir()
    (root / "evil" / "refs").mkdir()
    (root / "evil" / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    _git("init", "-q", ".", cwd=root)
    exec_section = {"deny_by_default": True, "allowed_commands": ["ls", "git"]}
    async with exec_client(root, exec=exec_section) as client:
        result = await client.call_tool(
            "shellcommand", {"commands": [command], "env": {name: value.replace("{root}", str(root))}}
        )
    assert error_code(result) == "command_refused" or "PWNED" not in text_of(result), text_of(result)


# --- robustness ------------------------------------------------------------------------------


def test_the_servers_temp_dir_goes_when_it_exits_and_a_killed_servers_at_the_next_start(
    tmp_path: Path,
) -> None:
    # Removed at exit (atexit); a server killed with SIGKILL cannot, so the next one sweeps
    # the temp dirs whose server pid is gone. The servers get a temp directory of this test's
    # own (TMPDIR), so other programs and other test runs, whose folders come and go in /tmp,
    # are neither counted nor swept.
    private = tmp_path / "tmp"
    private.mkdir()
    env = {**os.environ, "TMPDIR": str(private)}

    def ours(pid: int | str = "*") -> list[str]:
        return glob.glob(os.path.join(private, f"mcp-localtools-{pid}-*"))

    command = call_message(2, "shellcommand", {"commands": ['echo hi > "$TMPDIR/x"']})
    killed = subprocess.Popen(
        [installed_command(), "--root", str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert killed.stdin is not None and killed.stdout is not None
    try:
        for message in (INITIALIZE, INITIALIZED, command):
            killed.stdin.write(json.dumps(message) + "\n")
        killed.stdin.flush()
        while '"id": 2' not in (line := killed.stdout.readline()) and '"id":2' not in line:
            assert line, "the server died"
        assert ours(killed.pid), "a sandboxed session has its temp dir"
    finally:
        killed.kill()
        killed.communicate(timeout=10)
    assert ours(killed.pid), "SIGKILL left it behind"
    raw_stdio_exchange(tmp_path, [INITIALIZE, INITIALIZED, command], env=env)
    assert not ours(killed.pid), "the next server swept the dead one's temp dir"
    assert ours() == [], "a server that exits removes its own"


# --- a server running as root ------------------------------------------------------------------


@pytest.fixture
def outside(tmp_path: Path) -> dict[str, Path]:
    root = tmp_path / "proj"
    root.mkdir()
    out = tmp_path / "outside"
    out.mkdir()
    (out / "canary.txt").write_text("keep", encoding="utf-8")
    (out / "secret.txt").write_text("canary-secret-5f2d", encoding="utf-8")
    return {"root": root, "outside": out}


@pytest.mark.skipif(os.geteuid() != 0, reason="the server runs as root")
async def test_a_command_of_a_root_server_has_no_capabilities_inside_bwrap(outside: dict[str, Path]) -> None:
    # bwrap started by root without --unshare-user keeps the capabilities (CAP_SYS_ADMIN ...).
    async with exec_client(outside["root"]) as client:
        data = await run(client, "grep CapEff /proc/self/status")
    assert data["results"][0]["stdout"].split()[-1] == "0000000000000000", data["results"][0]["stdout"]


@pytest.mark.skipif(os.geteuid() != 0, reason="the server runs as root")
async def test_a_command_of_a_root_server_cannot_unmount_the_sandbox_to_read_and_write_outside(
    outside: dict[str, Path],
) -> None:
    # With CAP_SYS_ADMIN, a command unmounts the empty /tmp bwrap put over the real one (reading
    # what is hidden), then binds a directory outside the roots onto itself and remounts it
    # writable. Only this test's canaries under tmp_path are targeted; the mounts live and die in
    # the sandbox's own mount namespace.
    out = outside["outside"]
    async with exec_client(outside["root"]) as client:
        data = await run(
            client,
            "umount -l /tmp; cat " + str(out / "secret.txt") + "; "
            f"mount --bind {out} {out} && mount -o remount,bind,rw {out}"
            f" && echo pwned > {out / 'canary.txt'}",
        )
    stdout = data["results"][0]["stdout"]
    written = (out / "canary.txt").read_text(encoding="utf-8") != "keep"
    read = "canary-secret-5f2d" in stdout
    assert not (written or read), (
        f"a file outside the roots was written: {written}; a hidden file was read: {read}"
    )


# --- host services over UNIX sockets ---------------------------------------------------------------


async def test_with_the_network_off_a_command_cannot_reach_a_host_service_on_a_unix_socket(
    tmp_path: Path,
) -> None:
    # /run stays visible (only /run/user and /run/media are hidden), so the host's daemons
    # (/run/dbus/system_bus_socket, /run/docker.sock, /run/systemd/private: for a root server,
    # systemd-run outside the sandbox) answer a sandboxed command. Our own listener stands in for one.
    import socket
    import threading

    root = tmp_path / "proj"
    root.mkdir()
    place = tempfile.mkdtemp(prefix="mcp-review-", dir="/run" if os.access("/run", os.W_OK) else None)
    try:
        path = os.path.join(place, "daemon.sock")
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(path)
        os.chmod(place, 0o755)
        os.chmod(path, 0o777)
        server.listen(2)
        server.settimeout(15)
        got: list[bytes] = []
        done = b"the-test-is-done"

        def accept() -> None:  # every connection, until the test's own last one
            while True:
                try:
                    conn, _ = server.accept()
                except OSError:
                    return
                with conn:
                    data = conn.recv(100)
                if data == done:
                    return
                got.append(data)

        thread = threading.Thread(target=accept, daemon=True)
        thread.start()
        async with exec_client(root) as client:
            await run(
                client,
                'python3 -c "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]);'
                f" s.sendall(b'hello-from-sandbox')\" {path}",
            )
        # The listener takes connections in the order they came: one the command made is taken
        # before this one, which ends the thread (rather than its 15 s timeout).
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as last:
            last.connect(path)
            last.sendall(done)
        thread.join(15)
        server.close()
    finally:
        shutil.rmtree(place, ignore_errors=True)
    assert got == [], f"the host listener heard the sandbox: {got}"
