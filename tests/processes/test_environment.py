"""The command environment: the allowlist and BootstrapDefaults (the login shell's environment)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from mcp_localtools import compat
from mcp_localtools.processes.environment import (
    BEGIN_MARKER,
    END_MARKER,
    PROBE_STOP_GRACE_SECONDS,
    CommandEnvironment,
    filter_env,
    parse_probe,
    probe_argv,
)
from mcp_localtools.processes.runner import ProcessRunner
from mcp_localtools.processes.shells import Shell
from tests.helpers import live_processes

pytestmark = pytest.mark.anyio

HOST = {
    "PATH": "/usr/bin:/bin",
    "HOME": "/home/u",
    "LC_MESSAGES": "C",
    "GIT_AUTHOR_NAME": "me",
    "NVM_DIR": "/home/u/.nvm",
    "PS1": "$ ",
    "PROMPT_COMMAND": "history -a",
    "ZSH_THEME": "agnoster",
    "AWS_SECRET_ACCESS_KEY": "s3cr3t",
    "OPENAI_API_KEY": "sk-x",
    "MCP_LOCALTOOLS_TOKEN": "t",
}


def test_bd_only_allowlisted_names_and_prefixes_pass_secrets_never_do() -> None:
    assert filter_env(HOST) == {
        "PATH": "/usr/bin:/bin",
        "HOME": "/home/u",
        "LC_MESSAGES": "C",
        "GIT_AUTHOR_NAME": "me",
        "NVM_DIR": "/home/u/.nvm",
    }


def test_bd_base_env_names_the_operator_lists_pass_too() -> None:
    assert filter_env(HOST, ["OPENAI_API_KEY"])["OPENAI_API_KEY"] == "sk-x"
    assert "AWS_SECRET_ACCESS_KEY" not in filter_env(HOST, ["OPENAI_API_KEY"])


def test_bd_the_windows_allowlist_compares_upper_case_names() -> None:
    env = {
        "Path": "C:\\bin",
        "SystemRoot": "C:\\Windows",
        "GIT_X": "1",
        "LC_ALL": "C",
        "AWS_SECRET_ACCESS_KEY": "s",
    }
    assert filter_env(env, windows=True) == {"Path": "C:\\bin", "SystemRoot": "C:\\Windows", "GIT_X": "1"}


@pytest.mark.parametrize(
    ("shell", "head"),
    [
        (Shell("bash", "/bin/bash"), ["/bin/bash", "-lic"]),
        (Shell("zsh", "/bin/zsh"), ["/bin/zsh", "-lic"]),
        (Shell("fish", "/bin/fish"), ["/bin/fish", "-l", "-i", "-c"]),
        (Shell("ksh", "/bin/ksh"), ["/bin/ksh", "-lc"]),
        (Shell("dash", "/bin/dash"), ["/bin/dash", "-c"]),
        (Shell("sh", "/bin/sh"), ["/bin/sh", "-c"]),
        (Shell("pwsh", "/bin/pwsh"), ["/bin/pwsh", "-NoLogo", "-NonInteractive", "-Command"]),
    ],
)
def test_each_shell_is_probed_as_a_login_shell_where_it_can_be(shell: Shell, head: list[str]) -> None:
    argv = probe_argv(shell)
    assert argv[: len(head)] == head and len(argv) == len(head) + 1
    assert BEGIN_MARKER in argv[-1] and END_MARKER in argv[-1]


def test_the_probe_output_is_parsed_between_the_markers() -> None:
    output = f"motd\r\n{BEGIN_MARKER}\r\nA=1\r\nnot a variable\r\nB=x=y\r\n=nokey\r\n{END_MARKER}\r\nC=3\r\n"
    assert parse_probe(output) == {"A": "1", "B": "x=y"}
    with pytest.raises(ValueError, match="markers"):
        parse_probe("A=1\n")


def environment(host: dict[str, str], tmp_path: Path, **options: object) -> CommandEnvironment:
    return CommandEnvironment(
        host,
        base_env=options.get("base_env", []),  # type: ignore[arg-type]
        default_shell=str(options.get("default_shell", "auto")),
        runner=ProcessRunner(pidfds=bool(options.get("pidfds", True))),
        cwd=tmp_path,
        bootstrap_seconds=float(options.get("bootstrap_seconds", 10)),  # type: ignore[arg-type]
        probe_stop_grace_seconds=float(
            options.get("probe_stop_grace_seconds", PROBE_STOP_GRACE_SECONDS)  # type: ignore[arg-type]
        ),
    )


async def test_the_login_environment_is_read_once_filtered_and_wins_over_the_servers(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bash_profile").write_text(
        'export PATH="$HOME/tools/bin:$PATH"\n'
        'export NVM_DIR="$HOME/.nvm"\n'
        "export AWS_SECRET_ACCESS_KEY=from-profile PS1=prompt MY_TOOL=login\n"
        'echo probed >> "$HOME/probes"\n',
        encoding="utf-8",
    )
    host = {
        "HOME": str(home),
        "SHELL": "/bin/bash",
        "PATH": "/usr/bin:/bin",
        "AWS_SECRET_ACCESS_KEY": "server",
        "MY_TOOL": "server",
    }
    env = environment(host, tmp_path, base_env=["MY_TOOL"])
    first = await env.defaults()
    assert await env.defaults() is first
    assert (home / "probes").read_text(encoding="utf-8") == "probed\n"  # once per server
    assert first.problem is None and first.shell is not None and first.shell.name == "bash"
    assert first.env["PATH"].startswith(f"{home}/tools/bin:")
    assert first.env["NVM_DIR"] == f"{home}/.nvm" and first.env["MY_TOOL"] == "login"
    assert "AWS_SECRET_ACCESS_KEY" not in first.env and "PS1" not in first.env
    base = await env.base()
    assert base["MY_TOOL"] == "login" and "AWS_SECRET_ACCESS_KEY" not in base


async def test_a_failing_bootstrap_is_not_fatal(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bash_profile").write_text("exit 3\n", encoding="utf-8")
    env = environment({"HOME": str(home), "SHELL": "/bin/bash", "PATH": os.defpath}, tmp_path)
    defaults = await env.defaults()
    assert defaults.problem is not None and "markers" in defaults.problem
    assert await env.base() == {"HOME": str(home), "SHELL": "/bin/bash", "PATH": os.defpath}


async def test_a_probe_with_nothing_usable_is_reported(tmp_path: Path) -> None:
    fake = tmp_path / "bin" / "bash"
    fake.parent.mkdir()
    fake.write_text(
        f"#!/bin/sh\nprintf '%s\\n' {BEGIN_MARKER} PS1=x SECRET=y {END_MARKER}\n", encoding="utf-8"
    )
    fake.chmod(0o755)
    env = environment({"SHELL": str(fake), "PATH": os.defpath}, tmp_path)
    defaults = await env.defaults()
    assert defaults.problem == "bootstrap env produced no usable variables" and defaults.env == {}


@pytest.mark.skipif(compat.IS_WINDOWS, reason="a POSIX login shell")
async def test_a_probe_stopped_mid_profile_lets_the_profile_clean_up(tmp_path: Path) -> None:
    # pyenv's rehash (run by many profiles, often twice) holds a lock file that its EXIT trap
    # removes. An interactive shell ignores SIGTERM: a probe stopped with it went on to the next
    # rehash, which the SIGKILL half a second later cut short, lock left behind, and every later
    # login shell waited 60 s for it. The probe is stopped as a terminal's hang-up stops a shell.
    home = tmp_path / "home"
    home.mkdir()
    lock = home / "lock"
    (home / "rehash").write_text(
        f"trap 'rm -f {lock}' EXIT\n: > {lock}\nwhile :; do :; done\n", encoding="utf-8"
    )
    (home / ".bash_profile").write_text(f"bash {home / 'rehash'}\nbash {home / 'rehash'}\n", encoding="utf-8")
    env = environment({"HOME": str(home), "SHELL": "/bin/bash", "PATH": os.defpath}, tmp_path)
    with anyio.move_on_after(30):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(env.defaults)
            with anyio.fail_after(10):
                while not lock.exists():
                    await anyio.sleep(0.05)
            tasks.cancel_scope.cancel()  # the server stops while the profile runs
    await anyio.sleep(0.5)
    assert not lock.exists(), "the profile's EXIT traps ran, and no second rehash was cut short"


@pytest.mark.skipif(compat.IS_WINDOWS, reason="a POSIX login shell")
async def test_what_a_finished_probe_leaves_running_is_stopped_with_sigterm(tmp_path: Path) -> None:
    # An agent the profile started (gpg-agent, dbus) stays after the probe's shell exits and is
    # stopped as any run's leftovers are: SIGTERM, on which it cleans up (SIGHUP would make many
    # such programs reload instead, and the SIGKILL after it would cut them short).
    home = tmp_path / "home"
    home.mkdir()
    log = home / "agent.log"
    ready = home / "ready"
    (home / ".bash_profile").write_text(
        f"( trap 'echo stopped-cleanly >> {log}; exit' TERM; trap 'echo reloaded >> {log}' HUP;"
        f" : > {ready}; while :; do sleep 0.05; done ) &\n"
        f"while [ ! -e {ready} ]; do sleep 0.01; done\n",  # its traps are set before the shell ends
        encoding="utf-8",
    )
    env = environment({"HOME": str(home), "SHELL": "/bin/bash", "PATH": os.defpath}, tmp_path)
    assert (await env.defaults()).problem is None
    assert log.read_text(encoding="utf-8") == "stopped-cleanly\n"


CLEANUP_SECONDS = 1.5
"""How long the fake rehash's cleanup takes once it is told to stop: a ``rm -f`` on a loaded machine
(CI runs many servers at once) can take longer than the runner's grace of half a second."""


def rehash_profile(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """A login profile that runs a fake ``pyenv rehash``: it takes a lock file with noclobber (a
    second one would wait for it), holds it, and removes it in its EXIT trap, which takes
    ``CLEANUP_SECONDS``. Returns the environment the server gets (HOME, SHELL, PATH) and the lock."""
    home = tmp_path / "home"
    home.mkdir()
    lock = home / ".pyenv-shim"
    (home / "rehash").write_text(
        f"set -o noclobber\n: > {lock} || exit 1\nset +o noclobber\n"
        f"trap 'trap \"\" HUP; sleep {CLEANUP_SECONDS}; rm -f {lock}' EXIT\n"
        "sleep 30\n",
        encoding="utf-8",
    )
    (home / ".bash_profile").write_text(f"bash {home / 'rehash'}\n", encoding="utf-8")
    return {"HOME": str(home), "SHELL": "/bin/bash", "PATH": os.defpath}, lock


def probe_processes(home: str) -> list[int]:
    """Pids of live processes whose environment has ``HOME=home``: the probe's shell and what it ran."""
    wanted = f"HOME={home}\0".encode()
    found = []
    for process in live_processes():
        try:
            environ = Path(f"/proc/{process.pid}/environ").read_bytes()
        except OSError:
            continue
        if wanted in b"\0" + environ:
            found.append(process.pid)
    return found


def holds_lock(host: dict[str, str], lock: Path) -> bool:
    """Whether the fake rehash of ``rehash_profile`` holds its lock with its EXIT trap set: its
    ``sleep 30`` runs. A hang-up before that could find the trap not yet set, or reach the forked
    ``sleep`` before its exec, where bash's own handler takes it and the exec forgets it: that
    ``sleep`` then outlived the hang-up, and the stop waited out its whole grace for it."""
    if not lock.exists():
        return False
    ours = set(probe_processes(host["HOME"]))
    return any(process.name == "sleep" and process.pid in ours for process in live_processes())


async def wait_for(condition: Callable[[], object], seconds: float) -> None:
    with anyio.fail_after(seconds):
        while not condition():
            await anyio.sleep(0.02)


@pytest.mark.skipif(not compat.HAS_PROCFS, reason="a POSIX login shell, processes read from /proc")
@pytest.mark.parametrize("pidfds", [True, False], ids=["pidfd", "asyncio"])
async def test_a_probe_cancelled_mid_profile_gets_its_cleanup(tmp_path: Path, pidfds: bool) -> None:
    # pyenv's rehash holds $PYENV_ROOT/shims/.pyenv-shim and removes it in an EXIT trap; a probe
    # SIGTERMed and SIGKILLed before that trap is done (0.25 and 0.5 s after its hang-up) leaves
    # the lock, and every later login shell of the user waits 60 s for it. The server stopping (or
    # the connection that started the probe ending) cancels the probe: the hung-up shell is given
    # PROBE_STOP_GRACE_SECONDS to end by itself, and the cancellation ends when it has.
    host, lock = rehash_profile(tmp_path)
    env = environment(host, tmp_path, pidfds=pidfds)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(env.defaults)
        await wait_for(lambda: holds_lock(host, lock), 10)
        tasks.cancel_scope.cancel()
    assert not lock.exists(), "the profile's cleanup was cut short"
    await wait_for(lambda: not probe_processes(host["HOME"]), 10)


@pytest.mark.skipif(not compat.HAS_PROCFS, reason="a POSIX login shell, processes read from /proc")
@pytest.mark.parametrize("pidfds", [True, False], ids=["pidfd", "asyncio"])
async def test_a_probe_that_times_out_mid_profile_gets_its_cleanup(tmp_path: Path, pidfds: bool) -> None:
    host, lock = rehash_profile(tmp_path)
    env = environment(host, tmp_path, bootstrap_seconds=2, pidfds=pidfds)
    defaults = await env.defaults()
    assert defaults.problem is not None and "took longer than 2 s" in defaults.problem
    assert not lock.exists(), "the profile's cleanup was cut short"
    await wait_for(lambda: not probe_processes(host["HOME"]), 10)


@pytest.mark.skipif(not compat.HAS_PROCFS, reason="a POSIX login shell, processes read from /proc")
async def test_a_probe_whose_profile_ignores_the_hang_up_is_still_stopped_in_bounded_time(
    tmp_path: Path,
) -> None:
    # The grace is for the shell's own end; one that ignores the hang-up gets SIGTERM and SIGKILL
    # after it, and what its profile left running too. A grace of 1 s, not the default's 5: the
    # bound below is the same sum with either, and the test waits it out whole.
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bash_profile").write_text("trap '' HUP TERM\nsleep 60\n", encoding="utf-8")
    host = {"HOME": str(home), "SHELL": "/bin/bash", "PATH": os.defpath}
    grace = 1.0
    env = environment(host, tmp_path, bootstrap_seconds=1, probe_stop_grace_seconds=grace)
    began = anyio.current_time()
    defaults = await env.defaults()
    assert defaults.problem is not None and "took longer than 1 s" in defaults.problem
    assert anyio.current_time() - began < 1 + grace + 5
    await wait_for(lambda: not probe_processes(str(home)), 10)
