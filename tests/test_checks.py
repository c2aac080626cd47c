"""The one start-up check (``checks.check``): every problem at once, each with its key path,
through the Python API (``check``, ``build_registry``, ``build_server``) and the command line."""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path

import pytest
from mcp import Client

from mcp_localtools import ConfigProblems, SpecError, build_registry
from mcp_localtools.checks import Network, check
from mcp_localtools.config import Config
from mcp_localtools.errors import ConfigError, Problem
from mcp_localtools.registry import Registry
from mcp_localtools.server import build_server
from mcp_localtools.tools import catalog
from mcp_localtools.workspace import Workspace
from tests.helpers import config_for, installed_command

BAD_TOML = """\
[tools]
enabled = ["fs", "txt"]
rename = {readfile = "Read", nosuchtool = "x"}
[approval]
require = ["shelcommand"]
[exec]
denied_patterns = ["(unclosed"]
[profiles.dev]
disabled = ["nosuch"]
"""
"""Five problems in four tables: a typo in a group, a malformed and an unknown rename, an
unknown approval entry, a regex RE2 cannot compile, and a profile pattern that matches nothing."""

EXPECTED_KEYS = [
    "exec.denied_patterns[0]",
    "tools.enabled",
    "tools.rename",
    "tools.rename",
    "approval.require",
    "profiles.dev.disabled",
]


def _bad_config(root: Path) -> Config:
    return config_for(
        root,
        tools={"enabled": ["fs", "txt"], "rename": {"readfile": "Read", "nosuchtool": "x"}},
        approval={"require": ["shelcommand"]},
        exec={"denied_patterns": ["(unclosed"]},
        profiles={"dev": {"disabled": ["nosuch"]}},
    )


def test_check_returns_every_problem_with_its_key_path(tmp_path: Path) -> None:
    config = _bad_config(tmp_path)
    problems = check(config, catalog(Workspace.from_config(config)), environ={})
    assert [problem.key for problem in problems] == EXPECTED_KEYS
    messages = {str(problem) for problem in problems}
    assert "tools.enabled: 'txt' matches no tool or group; known: " in "\n".join(messages)
    assert "tools.rename: no tool named nosuchtool" in messages
    assert "tools.rename: readfile = 'Read': a tool name is lowercase letters and digits" in messages
    assert any(m.startswith("exec.denied_patterns[0]: not a valid RE2 regex: '(unclosed'") for m in messages)
    assert any(m.startswith("profiles.dev.disabled: 'nosuch' matches no tool") for m in messages)


def test_a_good_config_has_no_problem(tmp_path: Path) -> None:
    config = config_for(tmp_path, profiles={"dev": {"enabled": ["fs"]}})
    assert check(config, catalog(Workspace.from_config(config)), environ={}, profiles=["dev"]) == []


def test_audit_required_without_enabled_is_refused_not_ignored(tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    config = config_for(tmp_path, audit={"required": True, "path": str(log)})
    with pytest.raises(ConfigProblems, match=r"audit\.required: required = true needs enabled = true"):
        build_server(config)
    assert not log.exists()
    enabled = config_for(tmp_path, audit={"required": True, "enabled": True, "path": str(log)})
    assert check(enabled, catalog(Workspace.from_config(enabled)), environ={}) == []


@pytest.mark.anyio
async def test_an_audit_path_without_enabled_is_refused_not_ignored(tmp_path: Path) -> None:
    """A config with ``[audit] path`` and no ``enabled`` started, served calls and wrote no log."""
    log = tmp_path / "audit.jsonl"
    config = config_for(tmp_path, audit={"path": str(log)})
    with pytest.raises(ConfigProblems, match=r"audit\.path: .*set \[audit\] enabled = true"):
        build_server(config)
    with pytest.raises(ConfigProblems, match=r"audit\.path: "):
        build_registry(config)
    assert not log.exists()
    enabled = config_for(tmp_path, audit={"enabled": True, "path": str(log)})
    assert check(enabled, catalog(Workspace.from_config(enabled)), environ={}) == []
    async with Client(build_server(enabled)) as client:
        await client.call_tool("statpath", {"path": str(tmp_path)})
    assert '"tool":"statpath"' in log.read_text(encoding="utf-8")
    off = config_for(tmp_path, audit={"enabled": False, "path": str(log)})  # said off on purpose
    assert check(off, catalog(Workspace.from_config(off)), environ={}) == []


def test_build_registry_and_build_server_raise_every_problem_at_once(tmp_path: Path) -> None:
    config = _bad_config(tmp_path)
    for build in (build_registry, build_server):
        with pytest.raises(ConfigProblems) as raised:
            build(config)
        assert [problem.key for problem in raised.value.problems] == EXPECTED_KEYS
        assert raised.value.message.startswith("6 problems:\n  exec.denied_patterns[0]: ")


def test_a_profile_asked_for_must_exist(tmp_path: Path) -> None:
    with pytest.raises(ConfigProblems, match=r"^no profile 'nosuch': \[profiles\] defines dev$"):
        build_server(config_for(tmp_path, profiles={"dev": {}}), profile="nosuch")


def test_a_profiles_own_policy_is_checked_under_its_key(tmp_path: Path) -> None:
    config = config_for(tmp_path, profiles={"dev": {"exec": {"denied_patterns": ["(x"]}}})
    with pytest.raises(ConfigProblems) as raised:
        build_server(config)
    assert [problem.key for problem in raised.value.problems] == ["profiles.dev.exec.denied_patterns[0]"]


def _token_file(path: Path, token: str, mode: int = 0o600) -> str:
    path.write_text(token + "\n", encoding="utf-8")
    path.chmod(mode)
    return str(path)


def test_network_tokens_and_bind_rules_are_one_list(tmp_path: Path) -> None:
    shared = "s" * 40
    config = config_for(
        tmp_path,
        server={
            "transport": "streamable-http",
            "host": "0.0.0.0",
            "auth_token_file": _token_file(tmp_path / "server.token", shared),
        },
        profiles={
            "open": {"token_file": _token_file(tmp_path / "open.token", "o" * 40, 0o644)},
            "same": {"token_file": _token_file(tmp_path / "same.token", shared)},
            "short": {"token_file": _token_file(tmp_path / "short.token", "x")},
        },
    )
    problems = check(config, catalog(Workspace.from_config(config)), environ={}, network=Network())
    assert [problem.key for problem in problems] == [
        "profiles.open.token_file",
        "profiles.same.token_file",
        "profiles.short.token_file",
        "server.allowed_hosts",
    ]
    assert "others can access it (mode 0644)" in problems[0].message
    assert problems[1].message == "holds the server's own bearer token; give the profile its own"
    assert "holds no usable token" in problems[2].message


def test_no_token_is_a_problem_unless_asked_for_on_loopback(tmp_path: Path) -> None:
    config = config_for(tmp_path, server={"transport": "sse"})
    known = catalog(Workspace.from_config(config))
    (missing,) = check(config, known, environ={}, network=Network())
    assert (
        missing.key == "server.auth_token_file" and "no auth token for the sse transport" in missing.message
    )
    assert check(config, known, environ={}, network=Network(unauthenticated_loopback=True)) == []
    assert check(config, known, environ={"MCP_LOCALTOOLS_TOKEN": "t" * 40}, network=Network()) == []
    far = config.model_copy(update={"server": config.server.model_copy(update={"host": "10.1.2.3"})})
    assert [
        str(p) for p in check(far, known, environ={}, network=Network(unauthenticated_loopback=True))
    ] == [
        "server.host: --allow-unauthenticated-loopback works on loopback addresses only, not 10.1.2.3",
        "server.allowed_hosts: binding 10.1.2.3 makes the server reachable from the network; name the host "
        "names clients use in [server] allowed_hosts (or --allowed-host), e.g. myhost.lan",
    ]


def test_problem_of_an_error_takes_its_key_path() -> None:
    assert Problem.of(ConfigError("index.languages: no grammar for cobol")) == Problem(
        "index.languages", "no grammar for cobol"
    )
    assert Problem.of(ConfigError("invalid allowed root: /x does not exist"), under="profiles.a") == Problem(
        "profiles.a", "invalid allowed root: /x does not exist"
    )


def test_a_bad_tool_spec_is_a_spec_error_not_a_config_error(tmp_path: Path) -> None:
    registry = build_registry(config_for(tmp_path))
    readfile = registry.get("readfile")
    with pytest.raises(SpecError, match="registered twice") as raised:
        registry.register(readfile)
    assert raised.value.code == "spec_error" and not isinstance(raised.value, ConfigError)
    with pytest.raises(SpecError, match="lowercase"):
        Registry().register(dataclasses.replace(readfile, name="Bad"))


def test_the_command_line_reports_every_problem_at_once(tmp_path: Path) -> None:
    (tmp_path / "c.toml").write_text(BAD_TOML, encoding="utf-8")
    done = subprocess.run(
        [installed_command(), "--config", "c.toml", "--root", str(tmp_path), "tools"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    # Log lines may come first (the virtualenv under /tmp is not shown to commands: a warning).
    logged = done.stderr.splitlines()
    lines = logged[logged.index("mcp-localtools: 6 problems:") :]
    assert all(" WARNING " in line for line in logged[: len(logged) - len(lines)]), done.stderr
    assert [line.split(":")[0].strip() for line in lines[1:7]] == EXPECTED_KEYS


def test_fewer_command_sandboxes_than_network_sessions_is_a_problem(tmp_path: Path) -> None:
    """Each connection has a sandbox of its own: a cap below the session cap would refuse
    commands to connections the server accepts (stdio has one connection: no problem there)."""
    config = config_for(tmp_path, server={"max_sessions": 200}, exec={"sandbox": {"max_sandboxes": 50}})
    known = catalog(Workspace.from_config(config))
    loopback = Network(unauthenticated_loopback=True)
    (problem,) = check(config, known, environ={}, network=loopback)
    assert problem.key == "exec.sandbox.max_sandboxes" and "at least 200" in problem.message
    assert check(config, known, environ={}) == []
    enough = config_for(tmp_path, server={"max_sessions": 200}, exec={"sandbox": {"max_sandboxes": 200}})
    assert check(enough, catalog(Workspace.from_config(enough)), environ={}, network=loopback) == []
