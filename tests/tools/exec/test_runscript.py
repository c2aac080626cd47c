"""runscript through the SDK client: extensions and interpreters, quoting, the policy, env and exit codes."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from mcp_localtools.config import ScriptsConfig
from mcp_localtools.errors import ConfigError
from mcp_localtools.processes.shells import Shell
from mcp_localtools.tools.exec.runscript import INTERPRETERS, ScriptPolicy, powershell_quote, script_command
from tests.helpers import error_code, text_of, wire_chars
from tests.tools.exec.conftest import exec_client

pytestmark = pytest.mark.anyio

HELLO = 'printf "NAME=%s\\n" "$1"\nprintf "ENV=%s\\n" "$MYVAR"\n'


async def call(client: Client, **arguments: object) -> dict[str, Any]:
    result = await client.call_tool("runscript", arguments)
    assert not result.is_error, text_of(result)
    data: dict[str, Any] = result.structured_content or {}
    return data


async def test_a_script_runs_in_its_work_dir_with_args_and_env(shell: Client, tmp_path: Path) -> None:
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "hello.sh").write_text(HELLO, encoding="utf-8")
    data = await call(shell, path="hello.sh", workDir="scripts", args=["world"], env={"MYVAR": "hello"})
    assert data["exitCode"] == 0
    assert "NAME=world" in data["stdout"] and "ENV=hello" in data["stdout"]
    assert data["path"] == str(tmp_path / "scripts" / "hello.sh")
    assert data["workDir"] == str(tmp_path / "scripts")


async def test_a_blank_path_or_a_bad_work_dir_is_an_error(shell: Client) -> None:
    blank = await shell.call_tool("runscript", {"path": "  "})
    assert error_code(blank) == "invalid_arguments" and "path is required" in text_of(blank)
    outside = await shell.call_tool("runscript", {"path": "x.sh", "workDir": "/etc"})
    assert error_code(outside) == "outside_roots"


async def test_the_script_must_be_a_regular_file_inside_the_roots(shell: Client, tmp_path: Path) -> None:
    (tmp_path / "dir.sh").mkdir()
    outside = tmp_path.parent / f"{tmp_path.name}-outside.sh"
    outside.write_text("echo escaped\n", encoding="utf-8")
    (tmp_path / "link.sh").symlink_to(outside)
    try:
        for path, code in [
            ("dir.sh", "not_a_file"),
            ("missing.sh", "not_found"),
            ("link.sh", "outside_roots"),
            ("/etc/profile", "outside_roots"),
        ]:
            result = await shell.call_tool("runscript", {"path": path})
            assert error_code(result) == code, (path, text_of(result))
    finally:
        outside.unlink()


async def test_extensions_must_be_allowed_and_mapped(tmp_path: Path) -> None:
    (tmp_path / "x.rb").write_text("puts 1\n", encoding="utf-8")
    (tmp_path / "x.SH").write_text("echo upper\n", encoding="utf-8")
    async with exec_client(tmp_path) as client:
        ruby = await client.call_tool("runscript", {"path": "x.rb"})
        upper = await call(client, path="x.SH")
    assert error_code(ruby) == "unsupported_content"
    assert 'script extension ".rb" is not allowed' in text_of(ruby)
    assert upper["stdout"] == "upper\n"  # case-insensitive
    async with exec_client(tmp_path, exec={"scripts": {"allowed_extensions": ["rb"]}}) as client:
        unmapped = await client.call_tool("runscript", {"path": "x.rb"})
    assert error_code(unmapped) == "unsupported_content"
    assert 'no interpreter mapping for extension ".rb"' in text_of(unmapped)


async def test_args_and_env_are_validated(shell: Client, tmp_path: Path) -> None:
    (tmp_path / "a.sh").write_text("echo ok\n", encoding="utf-8")
    cases: list[tuple[dict[str, Any], str]] = [
        ({"args": ["x"] * 257}, "too many args: 257 (max 256)"),
        ({"args": ["ok", "a\x00b"]}, "args[1] contains NUL byte"),
        ({"args": ["x" * 20_000]}, "args[0] too long"),
        ({"env": {"": "x"}}, 'env "": the name is empty'),
    ]
    for arguments, needle in cases:
        result = await shell.call_tool("runscript", {"path": "a.sh", **arguments})
        assert error_code(result) == "invalid_arguments" and needle in text_of(result), needle


async def test_arguments_pass_through_exactly_and_the_command_is_quoted(
    shell: Client, tmp_path: Path
) -> None:
    (tmp_path / "args.sh").write_text('for a in "$@"; do printf "[%s]\\n" "$a"; done\n', encoding="utf-8")
    tricky = ["it's a test", "$(rm -rf x)", "a;b", ""]
    data = await call(shell, path="args.sh", args=tricky)
    assert data["stdout"] == "[it's a test]\n[$(rm -rf x)]\n[a;b]\n[]\n"
    assert data["command"] == f"sh {tmp_path / 'args.sh'} 'it'\"'\"'s a test' '$(rm -rf x)' 'a;b' ''"


def test_powershell_scripts_are_called_with_doubled_single_quotes() -> None:
    pwsh = Shell("pwsh", "/usr/bin/pwsh")
    assert INTERPRETERS[".ps1"] == ("pwsh", "powershell")
    argv, line = script_command(pwsh, "/w/x.ps1", ["it's"])
    assert argv == [
        "/usr/bin/pwsh",
        "-NoLogo",
        "-NonInteractive",
        "-NoProfile",
        "-Command",
        "& '/w/x.ps1' 'it''s'",
    ]
    assert line == "& '/w/x.ps1' 'it''s'" and pwsh.dialect == "powershell"
    assert powershell_quote("a'b") == "'a''b'"


def test_other_scripts_run_from_an_argv_and_report_it_posix_quoted() -> None:
    python = Shell("python3", "/usr/bin/python3")
    argv, line = script_command(python, "/w/a b.py", ["it's", "$(x)"])
    assert argv == ["/usr/bin/python3", "/w/a b.py", "it's", "$(x)"]
    assert line == "python3 '/w/a b.py' 'it'\"'\"'s' '$(x)'" and python.dialect == "sh"


async def test_a_powershell_script_is_checked_as_powershell_and_run_with_command(tmp_path: Path) -> None:
    fake = tmp_path / "bin" / "pwsh"  # prints its arguments, one per line
    fake.parent.mkdir()
    fake.write_text('#!/bin/sh\nprintf "%s\\n" "$@"\n', encoding="utf-8")
    fake.chmod(0o755)
    (tmp_path / "ok.ps1").write_text("Write-Output hi\n", encoding="utf-8")
    (tmp_path / "other.ps1").write_text("Write-Output hi\n", encoding="utf-8")
    async with exec_client(
        tmp_path,
        exec={"deny_by_default": True, "allowed_commands": ["ok.ps1"], "allowed_env": ["PATH"]},
    ) as client:
        ran = await call(client, path="ok.ps1", args=["it's"], env={"PATH": str(fake.parent)})
        refused = await client.call_tool(
            "runscript", {"path": "other.ps1", "env": {"PATH": str(fake.parent)}}
        )
    line = f"& '{tmp_path / 'ok.ps1'}' 'it''s'"
    assert ran["command"] == line and ran["interpreter"] == str(fake)
    assert ran["stdout"] == f"-NoLogo\n-NonInteractive\n-NoProfile\n-Command\n{line}\n"
    assert error_code(refused) == "command_refused"
    assert text_of(refused).startswith("command not allowed: other.ps1")


async def test_the_constructed_command_goes_through_the_policy(tmp_path: Path) -> None:
    (tmp_path / "a.sh").write_text("echo ok\n", encoding="utf-8")
    (tmp_path / "a.py").write_text("print('ok')\n", encoding="utf-8")
    async with exec_client(
        tmp_path, exec={"deny_by_default": True, "allowed_commands": ["python3"]}
    ) as client:
        shell_script = await client.call_tool("runscript", {"path": "a.sh"})
        python = await client.call_tool("runscript", {"path": "a.py"})
    assert error_code(shell_script) == "command_refused"
    assert text_of(shell_script).startswith("command not allowed: sh")
    assert not python.is_error and python.structured_content["stdout"] == "ok\n"
    async with exec_client(tmp_path, exec={"max_command_length": 20}) as client:
        long = await client.call_tool("runscript", {"path": "a.sh", "args": ["x" * 30]})
    assert error_code(long) == "too_large" and "constructed command too long" in text_of(long)


async def test_the_env_is_the_allowlisted_base_then_the_call(tmp_path: Path) -> None:
    (tmp_path / "env.sh").write_text('echo "$MYVAR|$SECRET|${PATH:+path}"\n', encoding="utf-8")
    import os

    async with exec_client(tmp_path, environ={**os.environ, "SECRET": "s", "MYVAR": "host"}) as client:
        data = await call(client, path="env.sh", env={"MYVAR": "call"})
    assert data["stdout"] == "call||path\n"


async def test_a_script_that_times_out_gives_124_its_own_exit_code_or_127_when_it_cannot_start(
    tmp_path: Path,
) -> None:
    (tmp_path / "slow.sh").write_text("sleep 30\n", encoding="utf-8")
    (tmp_path / "seven.py").write_text("import sys; sys.exit(7)\n", encoding="utf-8")
    fake = tmp_path / "bin" / "python3"
    fake.parent.mkdir()
    fake.write_bytes(b"\x7fELF not really")
    fake.chmod(0o755)
    # The spawn failure of the server's own exec (outside a sandbox); test_sandbox covers it inside.
    off = {"timeout_seconds": 1, "allowed_env": ["PATH"], "sandbox": "off"}
    async with exec_client(tmp_path, exec=off) as client:
        with anyio.fail_after(10):
            slow = await call(client, path="slow.sh")
        seven = await call(client, path="seven.py")
        broken = await call(client, path="seven.py", env={"PATH": str(fake.parent)})
    assert slow["timedOut"] is True and slow["exitCode"] == 124
    assert seven["exitCode"] == 7 and seven["interpreter"].endswith("python3")
    assert broken["exitCode"] == 127 and "Exec format error" in broken["stderr"]


def test_script_policy_normalises_extensions_and_refuses_bad_ones() -> None:
    policy = ScriptPolicy.from_config(ScriptsConfig(allowed_extensions=["SH", ".Py", ""]))
    assert policy.allowed_extensions == {".sh", ".py", ""}
    with pytest.raises(ConfigError, match=r"exec\.scripts\.allowed_extensions\[0\]"):
        ScriptPolicy.from_config(ScriptsConfig(allowed_extensions=[".s h"]))


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX shells")
async def test_a_bash_script_runs_with_bash(shell: Client, tmp_path: Path) -> None:
    (tmp_path / "b.bash").write_text('echo "${BASH_VERSION:+bash}"\n', encoding="utf-8")
    data = await call(shell, path="b.bash")
    assert data["stdout"] == "bash\n" and data["command"].startswith("bash ")


async def test_a_long_output_keeps_head_and_tail_in_the_budget_and_links_all_of_it(tmp_path: Path) -> None:
    (tmp_path / "long.sh").write_text("seq 20000\n", encoding="utf-8")
    sections: dict[str, dict[str, Any]] = {
        "limits": {"max_result_chars": 5000},
        "exec": {"resource_links": True},
    }
    async with exec_client(tmp_path, **sections) as client:
        result = await client.call_tool("runscript", {"path": "long.sh"})
        data = result.structured_content
        assert wire_chars(result) <= 5000
        assert data["stdout"].startswith("1\n2\n") and data["stdout"].endswith("\n19999\n20000\n")
        assert data["stdoutTruncated"] and data["stdoutURI"] in text_of(result)
        assert text_of(result).rstrip().endswith("20000")
        assert [item.type for item in result.content] == ["text", "resource_link"]
        page = (await client.read_resource(data["stdoutURI"])).contents[0]
    assert page.text.startswith("1\n2\n3\n")  # type: ignore[union-attr]


class _RewritingPerson:
    """Approves what it is shown; while it reads, something else rewrites the script (as a
    background process of the session could)."""

    def __init__(self, script: Path, rewrite: str | None) -> None:
        self.script, self.rewrite, self.messages = script, rewrite, []  # type: ignore[var-annotated]

    async def __call__(self, context: Any, params: Any) -> Any:
        from mcp.types import ElicitResult

        self.messages.append(str(getattr(params, "message", "")))
        if self.rewrite is not None:
            self.script.write_text(self.rewrite, encoding="utf-8")
        return ElicitResult(action="accept", content={"decision": "approve"})


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_the_question_shows_the_script_and_a_script_rewritten_after_the_yes_does_not_run(
    tmp_path: Path, mode: str
) -> None:
    """Red-team finding 5: the question showed only the script's path, and what ran was the
    file's content after the yes."""
    import hashlib

    from mcp_localtools.server import build_server
    from tests.helpers import config_for

    script = tmp_path / "lint.sh"
    body = "#!/bin/sh\n" + "".join(f"echo line{n}\n" for n in range(60))
    script.write_text(body, encoding="utf-8")
    config = config_for(tmp_path, approval={"require": ["exec"]}, exec={"sandbox": "off"})
    person = _RewritingPerson(script, "#!/bin/sh\ntouch pwned-after-approval\n")
    async with Client(build_server(config), mode=mode, elicitation_callback=person) as client:
        changed = await client.call_tool("runscript", {"path": "lint.sh"})
        assert not (tmp_path / "pwned-after-approval").exists()
        person.rewrite = None
        ran = await client.call_tool("runscript", {"path": "lint.sh"})
    question = person.messages[0]
    assert "echo line0" in question and "echo line38" in question and "echo line59" not in question
    assert hashlib.sha256(body.encode()).hexdigest() in question and f"{len(body)} bytes" in question
    assert error_code(changed) == "conflict", text_of(changed)
    assert "changed after it was approved" in text_of(changed)
    assert not ran.is_error, text_of(ran)  # asked again, shown the new script: that one runs
    assert "touch pwned-after-approval" in person.messages[-1]


async def test_the_question_about_a_script_stays_small_whatever_the_script(tmp_path: Path) -> None:
    """A script of long lines, or one long line, is shown in part (its size and sha256 whole):
    the question stays under its limit and the head read stays bounded."""

    from mcp_localtools.server import build_server
    from tests.helpers import config_for

    (tmp_path / "wide.sh").write_text("".join(f"echo {'x' * 190} {n}\n" for n in range(40)), encoding="utf-8")
    (tmp_path / "flat.sh").write_bytes(b"#" * (64 * 1024 * 1024))
    config = config_for(tmp_path, approval={"require": ["exec"]}, exec={"sandbox": "off"})
    person = _RewritingPerson(tmp_path / "wide.sh", None)
    async with Client(build_server(config), elicitation_callback=person) as client:
        for name in ("wide.sh", "flat.sh"):
            with anyio.fail_after(60):
                result = await client.call_tool("runscript", {"path": name})
            assert error_code(result) != "approval_denied", text_of(result)
    assert len(person.messages) == 2
    assert "the first" in person.messages[0] and "67108864 bytes" in person.messages[1]
    assert all(len(message) < 6000 for message in person.messages)
