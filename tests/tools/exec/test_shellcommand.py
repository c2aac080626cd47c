"""shellcommand through the SDK client: validation, the policy, sessions, stdin, timeouts, output capture,
progress."""

from __future__ import annotations

import base64
import json
import os
import pwd
import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from mcp_localtools.policy.paths import PathPolicy
from mcp_localtools.processes.runner import OUTPUT_STOP_FACTOR, ProcessRunner, RunRequest
from mcp_localtools.server import build_server
from mcp_localtools.tools import build_registry
from mcp_localtools.tools.exec._group import ExecGroup
from mcp_localtools.tools.exec.shellcommand import ShellCommandArgs
from mcp_localtools.workspace import Workspace
from tests.helpers import (
    INITIALIZE,
    INITIALIZED,
    call_message,
    config_for,
    error_code,
    installed_command,
    text_of,
)
from tests.tools.exec.conftest import exec_client

pytestmark = pytest.mark.anyio


async def run(client: Client, *commands: str, **arguments: object) -> dict[str, Any]:
    result = await client.call_tool("shellcommand", {"commands": list(commands), **arguments})
    assert not result.is_error, text_of(result)
    data: dict[str, Any] = result.structured_content or {}
    return data


async def test_a_command_reports_its_output_shell_path_and_directory(shell: Client, tmp_path: Path) -> None:
    data = await run(shell, "echo hello; echo oops >&2")
    (entry,) = data["results"]
    assert entry["stdout"] == "hello\n" and entry["stderr"] == "oops\n" and entry["exitCode"] == 0
    assert entry["command"] == "echo hello; echo oops >&2" and entry["timedOut"] is False
    assert entry["stdoutBytes"] == 6 and entry["stdoutTruncated"] is False
    assert entry["workDir"] == str(tmp_path) == data["workDir"]  # the directory used, absolute
    assert os.path.isabs(entry["shellPath"]) and entry["shell"] in (
        "bash",
        "zsh",
        "sh",
        "dash",
        "ksh",
        "fish",
    )


async def test_the_text_rendering_shows_command_status_and_streams(shell: Client) -> None:
    result = await shell.call_tool("shellcommand", {"commands": ["echo out; echo err >&2"]})
    text = text_of(result)
    assert "$ echo out; echo err >&2\n[exit 0," in text and "out\n[stderr]\nerr" in text


async def test_blank_commands_are_dropped_and_none_left_is_an_error(shell: Client) -> None:
    data = await run(shell, "  ", "echo one", "")
    assert [entry["command"] for entry in data["results"]] == ["echo one"]
    result = await shell.call_tool("shellcommand", {"commands": ["   ", "\n"]})
    assert error_code(result) == "invalid_arguments" and "commands is required" in text_of(result)


async def test_more_commands_than_the_maximum_is_an_error(tmp_path: Path) -> None:
    async with exec_client(tmp_path, exec={"max_commands": 2}) as client:
        result = await client.call_tool("shellcommand", {"commands": ["true", "true", "true"]})
    assert error_code(result) == "invalid_arguments" and "too many commands: 3 (max 2)" in text_of(result)


async def test_an_unknown_session_is_an_error(shell: Client) -> None:
    result = await shell.call_tool("shellcommand", {"commands": ["true"], "sessionID": "sess_" + "0" * 32})
    assert error_code(result) == "not_found" and "unknown sessionID: sess_" in text_of(result)


async def test_a_new_session_is_returned_and_dropped_when_the_call_fails(tmp_path: Path) -> None:
    workspace = Workspace.from_config(config_for(tmp_path), environ=dict(os.environ))
    registry = build_registry(workspace.config, workspace=workspace)
    group = workspace.shared(ExecGroup.create)  # the one the registry's exec tools share
    ok = await registry.call("shellcommand", {"commands": ["true"]})
    assert (
        ok.structured is not None
        and ok.structured["sessionID"].startswith("sess_")
        and len(group.sessions) == 1
    )
    refused = await registry.call("shellcommand", {"commands": ["rm -rf x"]})
    assert refused.error is not None and refused.error.code == "command_refused"
    assert len(group.sessions) == 1


async def test_work_dir_beats_the_sessions_which_beats_the_base_and_must_be_a_directory_inside(
    shell: Client, tmp_path: Path
) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "file.txt").touch()
    first = await run(shell, "pwd", workDir="sub")
    assert first["results"][0]["stdout"] == f"{tmp_path / 'sub'}\n"
    again = await run(shell, "pwd", sessionID=first["sessionID"])  # the session's workDir
    assert again["workDir"] == str(tmp_path / "sub")
    fresh = await run(shell, "pwd")  # no session: the base directory
    assert fresh["workDir"] == str(tmp_path)
    for work_dir, code in [
        ("/etc", "outside_roots"),
        ("missing", "not_found"),
        ("file.txt", "not_a_directory"),
    ]:
        result = await shell.call_tool("shellcommand", {"commands": ["pwd"], "workDir": work_dir})
        assert error_code(result) == code, (work_dir, text_of(result))


async def test_invalid_env_is_refused_before_anything_runs(shell: Client, tmp_path: Path) -> None:
    result = await shell.call_tool("shellcommand", {"commands": ["touch ran"], "env": {"A=B": "x"}})
    assert error_code(result) == "invalid_arguments" and "env 'A=B'" in text_of(result)
    assert not (tmp_path / "ran").exists()


async def test_commands_see_the_allowlisted_environment_never_the_servers_secrets(tmp_path: Path) -> None:
    host = {**os.environ, "AWS_SECRET_ACCESS_KEY": "s3cr3t", "OPERATOR_TOKEN": "op", "LC_TEST": "c"}
    async with exec_client(tmp_path, environ=host, exec={"base_env": ["OPERATOR_TOKEN"]}) as client:
        data = await run(client, "env")
    lines = data["results"][0]["stdout"].splitlines()
    assert "OPERATOR_TOKEN=op" in lines and "LC_TEST=c" in lines
    assert not any(line.startswith("AWS_SECRET_ACCESS_KEY=") for line in lines)
    assert any(line.startswith("PATH=") for line in lines)


async def test_session_env_persists_and_later_values_win(shell: Client) -> None:
    first = await run(shell, 'echo "$MYVAR"', env={"MYVAR": "hello"})
    session = first["sessionID"]
    assert first["results"][0]["stdout"] == "hello\n"
    assert (await run(shell, 'echo "$MYVAR"', sessionID=session))["results"][0]["stdout"] == "hello\n"
    assert (await run(shell, 'echo "$MYVAR"', sessionID=session, env={"MYVAR": "bye"}))["results"][0][
        "stdout"
    ] == "bye\n"
    last = await run(shell, 'echo "$MYVAR"', sessionID=session)
    assert last["results"][0]["stdout"] == "bye\n" and last["sessionID"] == session


async def test_the_least_recently_used_session_is_evicted(tmp_path: Path) -> None:
    async with exec_client(tmp_path, exec={"max_sessions": 2}) as client:
        first = (await run(client, "true"))["sessionID"]
        await run(client, "true")
        await run(client, "true")
        result = await client.call_tool("shellcommand", {"commands": ["true"], "sessionID": first})
    assert error_code(result) == "not_found" and f"unknown sessionID: {first}" in text_of(result)


async def test_cd_and_export_do_not_carry_over_between_commands(shell: Client, tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    data = await run(shell, "cd sub && export X=1 && pwd", 'pwd; echo "X=$X"')
    assert data["results"][0]["stdout"] == f"{tmp_path / 'sub'}\n"
    assert data["results"][1]["stdout"] == f"{tmp_path}\nX=\n"


async def test_a_refused_later_command_keeps_the_earlier_results(shell: Client, tmp_path: Path) -> None:
    result = await shell.call_tool("shellcommand", {"commands": ["echo first", "rm -rf /", "echo never"]})
    assert error_code(result) == "command_refused"
    data = result.structured_content
    assert data is not None
    first, refused = data["results"]
    assert first["stdout"] == "first\n" and first["exitCode"] == 0
    assert refused["command"] == "rm -rf /" and "exitCode" not in refused
    assert refused["error"].startswith("blocked command: rm") and "deletefile" in refused["error"]
    text = text_of(result)
    assert "first" in text and "[refused: blocked command: rm" in text and "never" not in text


async def test_a_refused_first_command_is_a_plain_policy_error(shell: Client) -> None:
    result = await shell.call_tool("shellcommand", {"commands": ["sudo ls"]})
    assert error_code(result) == "command_refused" and result.structured_content is None
    assert text_of(result).startswith("blocked command: sudo")


async def test_over_long_and_nul_commands_are_refused(tmp_path: Path) -> None:
    async with exec_client(tmp_path, exec={"max_command_length": 10}) as client:
        long = await client.call_tool("shellcommand", {"commands": ["echo 12345678"]})
        nul = await client.call_tool("shellcommand", {"commands": ["echo a\x00b"]})
    assert error_code(long) == "too_large" and "commands[0] too long (13 bytes; max 10)" in text_of(long)
    assert error_code(nul) == "invalid_arguments" and "commands[0] contains NUL byte" in text_of(nul)


async def test_by_default_a_failure_stops_the_call_and_execute_parallel_goes_on(shell: Client) -> None:
    stopped = await run(shell, "echo a", "exit 3", "echo c")
    assert [entry["exitCode"] for entry in stopped["results"]] == [0, 3] and stopped["skipped"] == 1
    every = await run(shell, "echo a", "exit 3", "echo c", executeParallel=True)
    assert [entry["exitCode"] for entry in every["results"]] == [0, 3, 0] and every["skipped"] == 0


async def test_a_shell_that_cannot_start_gives_exit_127_and_the_error(tmp_path: Path) -> None:
    fake = tmp_path / "bin" / "zsh"
    fake.parent.mkdir()
    fake.write_bytes(b"\x7fELF not really")
    fake.chmod(0o755)
    # The spawn failure of the server's own exec (outside a sandbox); test_sandbox covers it inside.
    async with exec_client(tmp_path, exec={"allowed_env": ["PATH"], "sandbox": "off"}) as shell:
        data = await run(shell, "echo hi", shell="zsh", env={"PATH": str(fake.parent)})
    (entry,) = data["results"]
    assert entry["exitCode"] == 127 and "Exec format error" in entry["stderr"]


async def test_a_timed_out_command_is_stopped_with_124(tmp_path: Path) -> None:
    async with exec_client(tmp_path, exec={"timeout_seconds": 1}) as client:
        with anyio.fail_after(120):  # only against a hang: the command alone would run 300 s
            data = await run(client, "echo started; sleep 300")
    (entry,) = data["results"]
    assert entry["timedOut"] is True and entry["exitCode"] == 124 and entry["stdout"] == "started\n"
    assert 900 <= entry["durationMS"] < 300_000  # ran to its timeout, stopped before its own end


async def test_a_command_that_ignores_sigterm_is_killed_after_the_grace(tmp_path: Path) -> None:
    async with exec_client(tmp_path, exec={"timeout_seconds": 1}) as client:
        with anyio.fail_after(10):
            data = await run(client, "trap '' TERM; echo ready; sleep 30; echo survived")
    (entry,) = data["results"]
    assert entry["timedOut"] is True and entry["exitCode"] == 124 and "survived" not in entry["stdout"]


async def test_timeout_seconds_is_clamped_to_the_maximum(tmp_path: Path) -> None:
    async with exec_client(tmp_path, exec={"timeout_seconds": 1, "max_timeout_seconds": 1}) as client:
        with anyio.fail_after(10):
            data = await run(client, "sleep 30", timeoutSeconds=3600)
    assert data["timeoutSeconds"] == 1 and data["results"][0]["timedOut"] is True


async def test_the_exit_code_is_the_commands_own_or_128_plus_the_killing_signal(shell: Client) -> None:
    data = await run(shell, "exit 7", "kill -TERM $$", "kill -KILL $$", executeParallel=True)
    assert [entry["exitCode"] for entry in data["results"]] == [7, 143, 137]


async def test_an_output_flood_is_capped_keeping_head_and_tail(tmp_path: Path) -> None:
    async with exec_client(tmp_path, exec={"max_output_bytes": 4096}) as client:
        with anyio.fail_after(30):
            data = await run(client, "yes | head -c 60000; echo END")
    (entry,) = data["results"]
    assert entry["stdoutTruncated"] is True and entry["stdoutBytes"] == 60000 + 4
    assert entry["outputStopped"] is False and entry["exitCode"] == 0
    stdout = entry["stdout"]
    assert stdout.startswith("y\ny\ny\n") and stdout.endswith("y\ny\nEND\n")
    assert "bytes elided; 60004 bytes in all" in stdout and len(stdout) < 4096 + 100


@pytest.mark.parametrize("command", ["yes", "yes 1>&2"])
async def test_a_stream_that_passes_a_multiple_of_the_cap_stops_the_command_and_says_so(
    tmp_path: Path, command: str
) -> None:
    """``yes`` used to be drained for the whole timeout (40-131 GB, up to 54 s of server CPU)."""
    async with exec_client(tmp_path, exec={"max_output_bytes": 64 * 1024}) as client:
        cpu = time.process_time()
        with anyio.fail_after(30):  # stopped at the cap, not at the 600 s timeout
            result = await client.call_tool("shellcommand", {"commands": [command], "timeoutSeconds": 600})
        cpu = time.process_time() - cpu
    (entry,) = result.structured_content["results"]
    assert entry["outputStopped"] is True and entry["timedOut"] is False
    assert entry["exitCode"] in (143, 137)
    total = entry["stdoutBytes"] + entry["stderrBytes"]
    assert OUTPUT_STOP_FACTOR * 64 * 1024 < total < 256 * 1024 * 1024
    assert cpu < 10  # the server's CPU, not the clock
    assert f"passed {OUTPUT_STOP_FACTOR} times the output cap" in text_of(result)


async def test_invalid_utf8_is_replaced(shell: Client) -> None:
    data = await run(shell, r"printf '\377\376ok'")
    assert data["results"][0]["stdout"] == "\ufffd\ufffdok"


async def test_stdin_is_empty_unless_given_and_then_fed_and_closed(shell: Client) -> None:
    with anyio.fail_after(10):
        empty = await run(shell, "cat; echo EOF-at-once")
        fed = await run(shell, "cat | tr a-z A-Z", stdin="hello\nworld\n")
    assert empty["results"][0]["stdout"] == "EOF-at-once\n"
    assert fed["results"][0]["stdout"] == "HELLO\nWORLD\n"


async def test_explicit_shells_run_or_are_named_when_missing(shell: Client) -> None:
    data = await run(shell, "echo $0", shell="sh")
    assert data["results"][0]["shell"] == "sh" and data["results"][0]["stdout"].strip().endswith("sh")
    result = await shell.call_tool("shellcommand", {"commands": ["true"], "shell": "ksh"})
    if shutil.which("ksh") is None:
        assert error_code(result) == "not_found" and "shell not found: ksh" in text_of(result)
    invalid = await shell.call_tool("shellcommand", {"commands": ["true"], "shell": "tcsh"})
    assert error_code(invalid) == "invalid_arguments"
    assert text_of(invalid) == (
        "invalid arguments for shellcommand: shell: Input should be 'auto', 'bash', 'zsh', 'sh', "
        "'dash', 'ksh', 'fish', 'pwsh' or 'powershell'"
    )


async def test_the_configured_default_shell_is_used_for_auto(tmp_path: Path) -> None:
    async with exec_client(tmp_path, exec={"default_shell": "dash"}) as client:
        data = await run(client, "true")
    assert data["results"][0]["shell"] == "dash"


async def test_deny_by_default_is_enforced_through_the_tool(tmp_path: Path) -> None:
    async with exec_client(tmp_path, exec={"deny_by_default": True, "allowed_commands": ["ls"]}) as client:
        allowed = await client.call_tool("shellcommand", {"commands": ["ls && echo ok"]})
        refused = await client.call_tool("shellcommand", {"commands": ["cat /etc/hostname"]})
    assert not allowed.is_error
    assert error_code(refused) == "command_refused"
    assert text_of(refused).startswith("command not allowed: cat")


async def test_progress_notifications_carry_the_output_lines_in_order(shell: Client) -> None:
    updates: list[tuple[float, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append((progress, message))

    script = "for i in 1 2 3 4 5; do echo line$i; sleep 0.02; done; echo warn >&2"
    result = await shell.call_tool(
        "shellcommand", {"commands": [script, "echo second"]}, progress_callback=on_progress
    )
    assert not result.is_error
    progress = [value for value, _ in updates]
    assert progress == sorted(progress) and len(set(progress)) == len(progress)
    streamed = "\n".join(message or "" for _, message in updates).splitlines()
    assert streamed == [
        f"$ {script}",
        "line1",
        "line2",
        "line3",
        "line4",
        "line5",
        "[stderr] warn",
        "$ echo second",
        "second",
    ]


async def test_cancellation_mid_command_kills_its_processes(shell: Client, marker: str) -> None:
    from tests.tools.exec.conftest import processes_with, wait_until_gone

    started = anyio.Event()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        if message and "running" in message:
            started.set()

    async def call() -> None:
        await shell.call_tool(
            "shellcommand",
            {"commands": [f"echo running; sh -c 'sleep 60; exit 0' {marker}"]},
            progress_callback=on_progress,
        )

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(call)
            await started.wait()
            with anyio.fail_after(5):
                while not processes_with(marker):
                    await anyio.sleep(0.01)
            tasks.cancel_scope.cancel()
        await wait_until_gone(marker)


async def test_exec_tools_follow_exec_enabled_and_stay_known_to_tools_selection(tmp_path: Path) -> None:
    off = build_registry(config_for(tmp_path, exec={"enabled": False}, tools={"disabled": ["shellcommand"]}))
    assert "shellcommand" not in off and "runscript" not in off and "readfile" in off
    read_only = build_registry(config_for(tmp_path, tools={"read_only": True}))
    assert "shellcommand" not in read_only


def test_the_arguments_schema_uses_the_seeds_wire_names() -> None:
    fields = {field.alias for field in ShellCommandArgs.model_fields.values()}
    assert {
        "commands",
        "workDir",
        "env",
        "shell",
        "executeParallel",
        "sessionID",
        "stdin",
        "timeoutSeconds",
    } == fields


def _wire_chars(data: Any) -> int:
    """What a result costs against the budget: the larger of its two copies (``results.wire_chars``:
    the budget bounds each copy, since a client reads one or the other)."""
    text = sum(len(item.text) for item in data.content if getattr(item, "type", "") == "text")
    return max(text, len(json.dumps(data.structured_content, ensure_ascii=False, separators=(",", ":"))))


async def _read_all(client: Client, first: str) -> bytes:
    base, pages, out = first.rsplit("/", 1)[0], 1, b""
    while True:
        try:
            read = await client.read_resource(f"{base}/{pages}")
        except Exception:  # past the last page: "not found"
            return out
        item = read.contents[0]
        out += item.text.encode() if hasattr(item, "text") else base64.b64decode(item.blob)
        pages += 1


async def test_long_output_stays_in_the_budget_shows_the_tail_and_links_every_byte(tmp_path: Path) -> None:
    async with exec_client(
        tmp_path,
        limits={"max_result_chars": 20_000},
        exec={"max_output_bytes": 4 * 1024 * 1024, "resource_links": True},
    ) as client:
        data = await client.call_tool("shellcommand", {"commands": ["seq 1 200000"]})
        text = text_of(data)
        assert _wire_chars(data) <= 20_000
        assert text.rstrip().endswith("199999\n200000") or "\n200000\n" in text
        assert "\n1\n2\n3\n" in text  # the head too
        entry = data.structured_content["results"][0]
        assert entry["stdoutTruncated"] and entry["stdout"].endswith("200000\n")
        links = [item for item in data.content if item.type == "resource_link"]
        assert [str(link.uri) for link in links] == [entry["stdoutURI"]]
        assert entry["stdoutURI"] in text and entry["stdoutURI"] in entry["stdout"]
        full = await _read_all(client, entry["stdoutURI"])
    assert full == subprocess.run(["seq", "1", "200000"], capture_output=True, check=True).stdout


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_kept_output_is_read_in_pages_and_is_the_sessions_own(tmp_path: Path, mode: str) -> None:
    server = build_server(config_for(tmp_path, limits={"max_result_chars": 5_000}), environ=dict(os.environ))
    async with Client(server, mode=mode) as client:
        data = await client.call_tool("shellcommand", {"commands": ["seq 1 20000"]})
        uri = data.structured_content["results"][0]["stdoutURI"]
        assert uri.endswith("/stdout/1")
        page = (await client.read_resource(uri)).contents[0]
        assert page.text.startswith("1\n2\n") and len(page.text) <= 2_500  # type: ignore[union-attr]
        assert len(await _read_all(client, uri)) == len(
            subprocess.run(["seq", "1", "20000"], capture_output=True).stdout
        )
    if mode == "legacy":  # the session ended with its connection: its outputs went with it
        async with Client(server, mode="legacy") as other:
            with pytest.raises(Exception, match="no kept output"):
                await other.read_resource(uri)


async def test_a_short_output_is_whole_and_links_nothing(shell: Client) -> None:
    data = await shell.call_tool("shellcommand", {"commands": ["echo hi"]})
    assert [item.type for item in data.content] == ["text"]
    assert "stdoutURI" not in data.structured_content["results"][0]


async def test_work_dir_shell_and_script_lookups_run_off_the_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loop = threading.get_ident()
    calls: list[tuple[str, int]] = []

    def recorded(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            calls.append((name, threading.get_ident()))
            return function(*args, **kwargs)

        return wrapper

    monkeypatch.setattr(PathPolicy, "resolve", recorded("resolve", PathPolicy.resolve))
    monkeypatch.setattr(shutil, "which", recorded("which", shutil.which))
    monkeypatch.setattr(pwd, "getpwuid", recorded("getpwuid", pwd.getpwuid))
    (tmp_path / "a.sh").write_text("echo ok\n", encoding="utf-8")
    async with exec_client(tmp_path) as client:
        shell = await client.call_tool(
            "shellcommand", {"commands": ["echo ok"], "workDir": ".", "shell": "sh"}
        )
        auto = await client.call_tool("shellcommand", {"commands": ["echo ok"]})
        script = await client.call_tool("runscript", {"path": "a.sh", "workDir": "."})
    assert not shell.is_error and not auto.is_error and not script.is_error
    assert {name for name, _ in calls} == {"resolve", "which", "getpwuid"}
    assert [name for name, thread in calls if thread == loop] == []
    gone, is_dir = tmp_path / "gone", Path.is_dir

    def checked(path: Path) -> bool:
        if path == gone:
            calls.append(("is_dir", threading.get_ident()))
        return is_dir(path)

    runner = ProcessRunner()
    await runner.run(RunRequest(["/bin/true"], tmp_path, {}, None, timeout=5, max_output_bytes=1024))
    monkeypatch.setattr(Path, "is_dir", checked)
    outcome = await runner.run(RunRequest(["/bin/true"], gone, {}, None, timeout=5, max_output_bytes=1024))
    assert outcome.exit_code == 127 and f"in {gone}" in outcome.stderr.text
    assert ("is_dir", loop) not in calls and "is_dir" in {name for name, _ in calls}


async def test_without_resource_links_the_uri_is_in_text_and_structure(tmp_path: Path) -> None:
    async with exec_client(tmp_path, limits={"max_result_chars": 5_000}) as client:
        data = await client.call_tool("shellcommand", {"commands": ["seq 1 20000"]})
        uri = data.structured_content["results"][0]["stdoutURI"]
        assert [item.type for item in data.content] == ["text"] and uri in text_of(data)
        assert (await client.read_resource(uri)).contents


async def test_pages_rebuild_multibyte_and_invalid_output_byte_exact(tmp_path: Path) -> None:
    line = "é€😀".encode() + b"\xff\n"
    (tmp_path / "out.bin").write_bytes(line * 4000)
    async with exec_client(tmp_path, limits={"max_result_chars": 5_000}) as client:
        data = await client.call_tool("shellcommand", {"commands": ["cat out.bin"]})
        uri = data.structured_content["results"][0]["stdoutURI"]
        assert await _read_all(client, uri) == line * 4000


async def test_env_as_a_list_of_name_value_objects_is_what_is_published_and_the_object_form_still_works(
    shell: Client,
) -> None:
    """Strict converters keep a list of closed {name, value} objects; an open map they refuse or
    empty (issue 15)."""
    tool = next(tool for tool in (await shell.list_tools()).tools if tool.name == "shellcommand")
    env = tool.input_schema["properties"]["env"]
    assert env["type"] == "array" and env["default"] == []
    assert env["items"]["required"] == ["name", "value"]
    listed = await run(
        shell,
        'printf "%s %s" "$ONE" "$TWO"',
        env=[{"name": "ONE", "value": "1"}, {"name": "TWO", "value": "2"}],
    )
    assert listed["results"][0]["stdout"] == "1 2"
    mapped = await run(shell, 'printf "%s" "$ONE"', env={"ONE": "object form"})
    assert mapped["results"][0]["stdout"] == "object form"
    for bad, says in [
        ([{"name": "A", "value": "1"}, {"name": "A", "value": "2"}], "A is given twice"),
        ([{"name": "A"}], 'item 0 must be {"name": "...", "value": "..."}'),
        ([{"name": "A", "value": 1}], "name must be a string, value a string or null"),
    ]:
        result = await shell.call_tool("shellcommand", {"commands": ["true"], "env": bad})
        assert error_code(result) == "invalid_arguments" and says in text_of(result), text_of(result)


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="pidfds are Linux only")
def test_the_installed_server_waits_for_a_command_through_a_pidfd_not_a_thread(tmp_path: Path) -> None:
    """The stdio server waits for its commands' processes through pidfds (what Python 3.12 and
    later do by themselves; 3.11 started a waitpid thread per process, issue 38): while a command
    runs (sandbox off), the server holds a pidfd for it (and one for the login-shell probe, if
    that still runs). The pidfd is opened as soon as the process has started: the command looks
    for it for up to 5 s (under load its shell may get there first)."""
    config = tmp_path / "config.toml"
    config.write_text(
        f'[paths]\nallowed_roots = ["{tmp_path}"]\n[exec.sandbox]\nmode = "off"\n', encoding="utf-8"
    )
    command = (
        "i=0; while [ $i -lt 50 ]; do n=$(ls -l /proc/$PPID/fd | grep -c pidfd); "
        '[ "$n" -ge 1 ] && break; sleep 0.1; i=$((i+1)); done; echo "$n"'
    )
    messages = [
        INITIALIZE,
        INITIALIZED,
        call_message(2, "shellcommand", {"commands": [command], "shell": "sh"}),
    ]
    done = subprocess.run(
        [installed_command(), "--config", str(config)],
        input="".join(json.dumps(message) + "\n" for message in messages),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    reply = next(json.loads(line) for line in done.stdout.splitlines() if json.loads(line).get("id") == 2)
    assert int(reply["result"]["structuredContent"]["results"][0]["stdout"]) >= 1
