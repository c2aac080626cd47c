"""The JSON command line: exit codes 0/1/2, tools, help; in this process (``main``), and as the
installed console script where the environment matters."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.helpers import installed_command
from tests.support.cli import run_main


def run(*args: str, cwd: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """The command line with ``args``, in this process (``tests/support/cli.py``); the installed
    entry point runs as a real process in the ``_run_env`` tests below."""
    return run_main(*args, cwd=cwd, stdin=stdin)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "a.txt").write_text("alpha\nbeta\n", encoding="utf-8")
    return tmp_path


def test_call_prints_the_result_as_json_and_exits_0(project: Path) -> None:
    done = run("call", "readfile", '{"path": "a.txt", "limit": 1}', cwd=project)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["success"] is True and out["tool"] == "readfile"
    assert out["structuredContent"]["content"] == "alpha\n"
    assert out["content"][0] == {"type": "text", "text": "alpha\n"}


def test_call_reads_the_arguments_from_stdin_with_a_dash(project: Path) -> None:
    done = run("--root", str(project), "call", "statpath", "-", cwd=Path("/"), stdin='{"path": "a.txt"}')
    assert done.returncode == 0
    assert json.loads(done.stdout)["structuredContent"]["sizeBytes"] == 11


def test_call_without_arguments_on_the_command_line_reads_them_from_stdin(project: Path) -> None:
    done = run("--root", str(project), "call", "statpath", cwd=Path("/"), stdin='{"path": "a.txt"}')
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["structuredContent"]["sizeBytes"] == 11


@pytest.mark.parametrize(
    "args", [["call"], ["--no-such-flag"], ["tools", "extra"], ["--transport", "carrier-pigeon"]]
)
def test_a_usage_error_exits_1_not_the_policy_refusal_code_2(project: Path, args: list[str]) -> None:
    done = run(*args, cwd=project)
    assert done.returncode == 1
    assert "usage: mcp-localtools" in done.stderr and "error:" in done.stderr
    assert done.stdout == ""


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["call", "readfile", '{"path": "missing.txt"}'], "not_found"),
        (["call", "readfile", "{not json"], "invalid_json"),
        (["call", "readfile", "[1, 2]"], "invalid_json"),
        (["call", "readfile", "{}"], "invalid_arguments"),
        (["call", "nosuchtool", "{}"], "unknown_tool"),
    ],
)
def test_call_exits_1_on_bad_input_or_a_tool_error(project: Path, args: list[str], code: str) -> None:
    done = run(*args, cwd=project)
    assert done.returncode == 1
    out = json.loads(done.stdout)
    assert out["success"] is False and out["error"]["code"] == code and out["error"]["message"]


@pytest.mark.parametrize("path", ["/etc/passwd", "../outside.txt"])
def test_call_exits_2_on_a_path_policy_refusal(project: Path, path: str) -> None:
    done = run("call", "readfile", json.dumps({"path": path}), cwd=project)
    assert done.returncode == 2
    assert json.loads(done.stdout)["error"]["code"] == "outside_roots"


def test_the_servers_own_config_and_token_files_inside_a_root_are_protected(project: Path) -> None:
    (project / "token").write_text("x" * 64, encoding="utf-8")
    (project / "token").chmod(0o600)
    (project / "c.toml").write_text('[server]\nauth_token_file = "token"\n', encoding="utf-8")
    for target in ("c.toml", "token"):
        arguments = json.dumps({"path": target, "content": "x", "overwrite": True})
        done = run("--config", "c.toml", "call", "writefile", arguments, cwd=project)
        assert done.returncode == 2, done.stdout
        assert json.loads(done.stdout)["error"]["code"] == "protected_path"
    assert (project / "c.toml").read_text(encoding="utf-8").startswith("[server]")
    read = run("--config", "c.toml", "call", "readfile", json.dumps({"path": "c.toml"}), cwd=project)
    assert read.returncode == 0, "protected files stay readable"


def test_an_unknown_config_key_fails_start_up_naming_the_key(project: Path) -> None:
    (project / "c.toml").write_text("[paths]\nallowed_rots = ['.']\n", encoding="utf-8")
    done = run("--config", "c.toml", cwd=project)
    assert done.returncode == 1
    assert "paths.allowed_rots: unknown key" in done.stderr
    assert done.stdout == ""


def test_a_missing_root_fails_start_up(project: Path) -> None:
    done = run("--root", "nope", cwd=project)
    assert done.returncode == 1 and "does not exist" in done.stderr


def test_tools_lists_the_tools_and_json_gives_the_manifests(project: Path) -> None:
    plain = run("tools", cwd=project)
    assert plain.returncode == 0 and "readfile" in plain.stdout
    manifests = json.loads(run("tools", "--json", cwd=project).stdout)
    readfile = next(m for m in manifests if m["name"] == "readfile")
    assert readfile["inputSchema"]["properties"]["path"]["description"]
    assert readfile["annotations"]["readOnlyHint"] is True


def test_read_only_and_config_options_apply_to_call(project: Path) -> None:
    (project / "c.toml").write_text('[tools]\ndisabled = ["readfile"]\n', encoding="utf-8")
    done = run("--config", "c.toml", "call", "readfile", '{"path": "a.txt"}', cwd=project)
    assert done.returncode == 1 and json.loads(done.stdout)["error"]["code"] == "unknown_tool"


def test_help_explains_the_commands_and_exit_codes(project: Path) -> None:
    done = run("--help", cwd=project)
    assert done.returncode == 0
    for needle in [
        "serve",
        "tools",
        "call TOOL [ARGS]",
        "0 success, 1 bad input",
        "2 refused by policy",
        "--root",
    ]:
        assert needle in done.stdout


def _run_env(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run(
        [installed_command(), *args],
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_roots_come_from_mcp_localtools_roots_when_neither_config_nor_root_gives_them(
    tmp_path: Path,
) -> None:
    import os

    one, two, elsewhere = tmp_path / "one", tmp_path / "two", tmp_path / "elsewhere"
    for folder in (one, two, elsewhere):
        folder.mkdir()
    (two / "b.txt").write_text("bee\n", encoding="utf-8")
    env = {"MCP_LOCALTOOLS_ROOTS": f"{one}{os.pathsep}{two}{os.pathsep}"}
    # The installed entry point in a real process reads its environment; the rest run in this one.
    done = _run_env("call", "readfile", json.dumps({"path": str(two / "b.txt")}), cwd=elsewhere, env=env)
    assert done.returncode == 0, done.stderr
    outside = run_main("call", "listdirectory", json.dumps({"path": str(elsewhere)}), cwd=elsewhere, env=env)
    assert outside.returncode == 2 and json.loads(outside.stdout)["error"]["code"] == "outside_roots"
    # --root wins, and so does a config file that names its roots
    flag = run_main(
        "--root", str(elsewhere), "call", "listdirectory", '{"path": "."}', cwd=elsewhere, env=env
    )
    assert flag.returncode == 0, flag.stderr
    (elsewhere / "c.toml").write_text('[paths]\nallowed_roots = ["."]\n', encoding="utf-8")
    configured = run_main(
        "--config",
        "c.toml",
        "call",
        "readfile",
        json.dumps({"path": str(two / "b.txt")}),
        cwd=elsewhere,
        env=env,
    )
    assert configured.returncode == 2


def test_tools_format_prints_openai_anthropic_and_mcp_definitions(project: Path) -> None:
    openai = json.loads(run("tools", "--format", "openai", cwd=project).stdout)
    entry = next(d for d in openai if d["function"]["name"] == "readfile")
    assert entry["type"] == "function"
    assert entry["function"]["parameters"]["properties"]["path"]["type"] == "string"
    assert entry["function"]["description"]
    anthropic = json.loads(run("tools", "--format", "anthropic", cwd=project).stdout)
    entry = next(d for d in anthropic if d["name"] == "readfile")
    assert set(entry) == {"name", "description", "input_schema"}
    mcp = json.loads(run("tools", "--format", "mcp", cwd=project).stdout)
    entry = next(d for d in mcp if d["name"] == "readfile")
    assert {"inputSchema", "outputSchema", "annotations"} <= set(entry)


def test_config_example_prints_the_example_config_shipped_in_the_package(project: Path) -> None:
    from importlib.resources import files

    done = run("config", "--example", cwd=project)
    assert done.returncode == 0, done.stderr
    assert done.stdout == (files("mcp_localtools") / "config.example.toml").read_text(encoding="utf-8")
    (project / "config.toml").write_text(done.stdout, encoding="utf-8")
    assert (
        run("--config", "config.toml", "call", "readfile", '{"path": "a.txt"}', cwd=project).returncode == 0
    )
    assert run("config", cwd=project).returncode == 1  # --example is required: nothing else to print yet


@pytest.mark.parametrize(
    ("command", "own", "foreign"),
    [
        ("tools", ["--profile", "--json", "--format", "--root"], ["--transport", "--port", "--allowed-host"]),
        (
            "call",
            ["--profile", "--root", "--read-only"],
            ["--transport", "--host", "--allow-unauthenticated-loopback"],
        ),
        ("token", ["--file", "--force"], ["--root", "--transport", "--profile"]),
        ("audit", ["--since", "--decision"], ["--root", "--transport", "--profile"]),
        ("config", ["--example"], ["--root", "--transport"]),
        ("serve", ["--transport", "--profile", "--root"], ["--json", "--since"]),
    ],
)
def test_each_subcommand_shows_only_its_own_options(
    project: Path, command: str, own: list[str], foreign: list[str]
) -> None:
    done = run(command, "--help", cwd=project)
    assert done.returncode == 0, done.stderr
    assert all(option in done.stdout for option in own), done.stdout
    assert not [option for option in foreign if option in done.stdout], done.stdout


PROFILES_TOML = '[profiles.reader]\nenabled = ["readfile", "statpath"]\n'


def test_tools_and_call_take_a_profile(project: Path) -> None:
    (project / "c.toml").write_text(PROFILES_TOML, encoding="utf-8")
    listed = run("--config", "c.toml", "tools", "--profile", "reader", "--json", cwd=project)
    assert listed.returncode == 0, listed.stderr
    assert [m["name"] for m in json.loads(listed.stdout)] == ["readfile", "statpath"]
    allowed = run(
        "--config", "c.toml", "call", "--profile", "reader", "readfile", '{"path": "a.txt"}', cwd=project
    )
    assert allowed.returncode == 0, allowed.stdout
    hidden = run(
        "--config",
        "c.toml",
        "call",
        "--profile",
        "reader",
        "writefile",
        '{"path": "b.txt", "content": "x"}',
        cwd=project,
    )
    assert hidden.returncode == 1 and json.loads(hidden.stdout)["error"]["code"] == "unknown_tool"
    assert "profile 'reader'" in json.loads(hidden.stdout)["error"]["message"]
    assert not (project / "b.txt").exists()


def test_tools_and_call_refuse_an_unknown_profile(project: Path) -> None:
    (project / "c.toml").write_text(PROFILES_TOML, encoding="utf-8")
    listed = run("--config", "c.toml", "tools", "--profile", "nosuch", cwd=project)
    assert listed.returncode == 1 and "no profile 'nosuch': [profiles] defines reader" in listed.stderr
    called = run(
        "--config", "c.toml", "call", "--profile", "nosuch", "readfile", '{"path": "a.txt"}', cwd=project
    )
    assert called.returncode == 1 and "no profile 'nosuch'" in json.loads(called.stdout)["error"]["message"]


def test_a_profiles_unusable_token_file_is_named_by_its_key(project: Path) -> None:
    token = project / "reader.token"
    token.write_text("x" * 40 + "\n", encoding="utf-8")
    token.chmod(0o644)  # readable by others: refused
    (project / "c.toml").write_text(PROFILES_TOML + 'token_file = "reader.token"\n', encoding="utf-8")
    done = run("--config", "c.toml", "--transport", "streamable-http", "--port", "1", cwd=project)
    assert done.returncode == 1
    assert "profiles.reader.token_file: refusing the auth token file" in done.stderr


def test_mcp_localtools_allowed_commands_runs_only_the_listed_commands(project: Path) -> None:
    """LLMC's LLMC_ALLOWED_COMMANDS: a colon-separated allowlist from the environment, which only
    the command line reads; it turns on deny_by_default and shows in the descriptions."""
    env = {"MCP_LOCALTOOLS_ALLOWED_COMMANDS": "echo:git status"}
    (project / "c.toml").write_text('[exec.sandbox]\nmode = "off"\n', encoding="utf-8")
    ran = run_main(
        "--config", "c.toml", "call", "shellcommand", '{"commands": ["echo hi"]}', cwd=project, env=env
    )
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["structuredContent"]["results"][0]["stdout"] == "hi\n"
    refused = run_main(
        "--config", "c.toml", "call", "shellcommand", '{"commands": ["ls"]}', cwd=project, env=env
    )
    assert refused.returncode == 2, refused.stderr  # refused by the policy
    error = json.loads(refused.stdout)["error"]
    assert error["code"] == "command_refused" and "ls" in error["message"], error
    listed = run_main("--config", "c.toml", "tools", "--json", cwd=project, env=env)
    shell = next(tool for tool in json.loads(listed.stdout) if tool["name"] == "shellcommand")
    assert "Only these commands run: echo, git status" in shell["description"]
    unset = run_main(
        "--config", "c.toml", "tools", "--json", cwd=project, env={"MCP_LOCALTOOLS_ALLOWED_COMMANDS": " "}
    )
    assert "Only these commands run" not in json.dumps(json.loads(unset.stdout))


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--root", "/srv/a", "--read-only"],
        ["serve", "--root", "/srv/a", "--log-level", "DEBUG"],
        ["--root", "/srv/a", "serve", "--ignore-client-roots"],
        ["--config", "c.toml", "--transport", "stdio"],
    ],
)
def test_the_serving_parser_reads_a_serving_command_line_as_the_whole_parser_does(args: list[str]) -> None:
    # A cached start parses its command line with serve's parser alone (cli/main._real_server).
    from mcp_localtools.cli.main import parser

    assert vars(parser(serving=True).parse_args(args)) == vars(parser().parse_args(args))


@pytest.mark.parametrize(
    "args",
    [
        ["call", "readfile", '{"path": "a.txt", "limit": 1}'],
        ["--config", "missing.toml", "call", "readfile", "{}"],
        ["--config", "missing.toml"],  # serving, with a config that cannot be read
    ],
)
def test_the_command_line_collects_garbage_as_before_once_it_returns(project: Path, args: list[str]) -> None:
    # main pauses the cyclic collector for the start-up (cli/main.resume_collection).
    import gc

    run(*args, cwd=project)
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0, "nothing of this process stays frozen"


def test_the_command_line_leaves_what_its_caller_froze_frozen(project: Path) -> None:
    import gc

    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        run("call", "readfile", '{"path": "a.txt", "limit": 1}', cwd=project)
        assert gc.get_freeze_count() > frozen * 0.9 and gc.isenabled(), "not unfrozen (some may die)"
    finally:
        gc.unfreeze()
