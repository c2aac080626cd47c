"""The start-up cache (``cli/startcache.py``, ``server/cached.py``): a stdio start served from it
answers exactly what a start that builds everything answers, and a start it cannot serve builds.

Every test spawns real stdio servers (``python -X importtime -m mcp_localtools``) with the cache
in ``tmp_path``; the import trace tells a cached start (no tool module imported before the first
call) from a built one.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from mcp_localtools.cli import startcache
from mcp_localtools.cli.startcache import CACHE_ENV, cache_dir, checks_before, record, start_key
from mcp_localtools.config import Config, load_config
from mcp_localtools.server import build_server
from mcp_localtools.server.cached import LAZY_NOTIFICATIONS, LAZY_REQUESTS

INITIALIZE: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
INITIALIZED: dict[str, Any] = {"jsonrpc": "2.0", "method": "notifications/initialized"}
LIST: dict[str, Any] = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}


def _call(ident: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": ident,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


class Start:
    """One server process's replies (by id), its stderr, and whether it was served from the cache."""

    def __init__(self, replies: dict[Any, dict[str, Any]], stderr: str, status: int) -> None:
        self.replies = replies
        self.stderr = stderr
        self.status = status
        imported = [
            line.rsplit("|", 1)[1].strip() for line in stderr.splitlines() if line.startswith("import time:")
        ]
        self.cached = (
            "mcp_localtools.server.cached" in imported
            and "mcp_localtools.config" not in imported[: imported.index("mcp_localtools.server.cached") + 1]
        )
        # The log's lines without their time stamps.
        self.lines = [
            re.sub(r"^\d{4}-\d\d-\d\d [\d:,]+ ", "", line)
            for line in stderr.splitlines()
            if not line.startswith("import time:")
        ]


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in (CACHE_ENV, "PYTHONPATH")}
    return {**env, "XDG_CACHE_HOME": str(tmp_path / "cache"), **extra}


def _spawn(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.Popen[str]:
    """The server (``-X importtime``: ``Start.cached`` reads the trace) with text pipes."""
    return subprocess.Popen(
        [sys.executable, "-X", "importtime", "-m", "mcp_localtools", *argv],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=cwd,
    )


@contextlib.contextmanager
def _killed_on_failure(process: subprocess.Popen[str]) -> Iterator[None]:
    """Kill ``process`` if the block fails: its pipes' reader threads then end, and the test fails
    instead of waiting for ever on them."""
    try:
        yield
    except BaseException:
        process.kill()
        process.wait(timeout=30)
        raise


def _start(
    argv: list[str], messages: list[dict[str, Any]], env: dict[str, str], cwd: Path, *, linger: float = 0
) -> Start:
    """Spawn the server with ``argv``, send ``messages``, keep stdin open until the cache holds
    an entry written since (at most ``linger`` seconds: an entry is written once the sandbox
    probe has chosen, after the first replies), close it and wait for the server to exit."""
    before = {entry: entry.stat().st_mtime_ns for entry in _entries(env)}
    process = _spawn(argv, env, cwd)
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    # Both pipes are drained from the start: the import trace alone can pass a pipe's 64 KiB, and
    # a server whose stderr is full blocks at its next import, whatever thread makes it (its
    # sandbox probe then "times out" though bwrap ran in milliseconds).
    with ThreadPoolExecutor(2) as readers, _killed_on_failure(process):
        out, err = readers.submit(process.stdout.read), readers.submit(process.stderr.read)
        process.stdin.write("".join(json.dumps(message) + "\n" for message in messages))
        process.stdin.flush()
        deadline = time.monotonic() + linger
        while time.monotonic() < deadline and process.poll() is None:
            if any(before.get(entry) != entry.stat().st_mtime_ns for entry in _entries(env)):
                break
            time.sleep(0.05)
        process.stdin.close()
        process.wait(timeout=120)
        stdout, stderr = out.result(timeout=10), err.result(timeout=10)
    process.stdout.close()
    process.stderr.close()
    replies = {reply.get("id"): reply for reply in map(json.loads, stdout.splitlines())}
    return Start(replies, stderr, process.returncode)


def _entries(env: dict[str, str]) -> list[Path]:
    folder = cache_dir(env)
    assert folder is not None
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


def _built_and_cached(
    argv: list[str], messages: list[dict[str, Any]], env: dict[str, str], cwd: Path
) -> tuple[Start, Start, Start]:
    """A start without the cache, one that writes it, and one served from it."""
    fresh = _start(argv, messages, {**env, CACHE_ENV: "0"}, cwd)
    assert not _entries(env), "a start with the cache off writes nothing"
    writing = _start(argv, messages, env, cwd, linger=30)
    assert not writing.cached and len(_entries(env)) == 1, writing.stderr[-2000:]
    cached = _start(argv, messages, env, cwd)
    assert cached.cached, "the third start is served from the cache"
    return fresh, writing, cached


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "small.txt").write_text("one\ntwo\nthree\n", encoding="utf-8")
    return root


CONFIGS: dict[str, str] = {
    "default": "",
    "read only, renamed, approval": (
        '[tools]\nread_only = true\nrename = {readfile = "cat"}\n[approval]\nrequire = ["shellcommand"]\n'
    ),
    "some tools, limits": (
        '[tools]\nenabled = ["fs", "text.*"]\ndisabled = ["writefile"]\n[limits]\nmax_result_chars = 20000\n'
    ),
}


@pytest.mark.parametrize("name", list(CONFIGS))
def test_a_cached_start_answers_initialize_and_tools_list_as_a_built_one(
    tmp_path: Path, project: Path, name: str
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f'[paths]\nallowed_roots = ["{project}"]\n{CONFIGS[name]}', encoding="utf-8")
    fresh, writing, cached = _built_and_cached(
        ["--config", str(config)], [INITIALIZE, INITIALIZED, LIST], _env(tmp_path), tmp_path
    )
    for start in (writing, cached):
        assert start.replies == fresh.replies
    assert cached.lines == writing.lines  # the start-up line and its warnings
    assert json.dumps(cached.replies[2]) == json.dumps(fresh.replies[2])


@pytest.mark.parametrize(
    "argv",
    [["--ignore-client-roots"], [], ["--log-level", "ERROR"]],
    ids=["no roots, client roots off", "client roots only", "quiet"],
)
def test_rootless_and_quiet_starts_are_cached_as_they_are_built(tmp_path: Path, argv: list[str]) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = _env(tmp_path, HOME=str(home))
    fresh, writing, cached = _built_and_cached(argv, [INITIALIZE, INITIALIZED, LIST], env, home)
    assert cached.replies == fresh.replies
    assert cached.lines == writing.lines


def test_the_first_call_of_each_tool_from_a_cached_start_is_the_built_ones(
    tmp_path: Path, project: Path
) -> None:
    calls = [
        _call(3, "statpath", {"path": "small.txt"}),
        _call(4, "readfile", {"path": "small.txt"}),
        _call(5, "findtext", {"path": "small.txt", "query": "two"}),
        _call(6, "writefile", {"path": "new.txt", "content": "x\n"}),
        _call(7, "readfile", {"path": "../outside.txt"}),
        _call(8, "nosuchtool", {}),
        _call(9, "readfile", {"nope": 1}),
    ]
    env = _env(tmp_path)
    argv = ["--root", str(project)]
    messages = [INITIALIZE, INITIALIZED, LIST, *calls]
    fresh = _start(argv, messages, {**env, CACHE_ENV: "0"}, tmp_path)
    _start(argv, [INITIALIZE, INITIALIZED, LIST], env, tmp_path, linger=30)  # writes the entry
    (project / "new.txt").unlink()
    cached = _start(argv, messages, env, tmp_path)
    assert cached.cached
    for ident in range(1, 10):
        assert _stable(cached.replies[ident]) == _stable(fresh.replies[ident]), ident
    assert cached.replies[7]["result"]["isError"] and "error" in cached.replies[8]


def _stable(reply: dict[str, Any]) -> Any:
    """A reply without what differs from one run to the next (times)."""
    text = json.dumps(reply)
    for key in ("modifiedTime", "accessedTime", "createdTime", "changedTime", "mtime"):
        text = text.replace(key, "")
    data = json.loads(text)
    result = data.get("result", {})
    structured = result.get("structuredContent")
    if isinstance(structured, dict):
        result["structuredContent"] = {k: v for k, v in structured.items() if not k.endswith("Time")}
        result.pop("content", None)
    return data


def test_a_changed_config_env_or_version_is_a_new_entry(tmp_path: Path, project: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f'[paths]\nallowed_roots = ["{project}"]\n', encoding="utf-8")
    env = _env(tmp_path)
    argv = ["--config", str(config)]
    messages = [INITIALIZE, INITIALIZED, LIST]
    _start(argv, messages, env, tmp_path, linger=30)
    assert _start(argv, messages, env, tmp_path).cached
    config.write_text(
        f'[paths]\nallowed_roots = ["{project}"]\n[tools]\nread_only = true\n', encoding="utf-8"
    )
    changed = _start(argv, messages, env, tmp_path, linger=30)
    assert not changed.cached
    assert "writefile" not in json.dumps(changed.replies[2])
    again = _start(argv, messages, env, tmp_path)
    assert again.cached and again.replies == changed.replies
    assert not _start(argv, messages, {**env, "SOME_VARIABLE": "1"}, tmp_path).cached
    key = start_key(argv, env, str(tmp_path))
    assert key != start_key(argv, {**env, "PATH": env.get("PATH", "") + ":/x"}, str(tmp_path))
    assert key != start_key([*argv, "--read-only"], env, str(tmp_path))
    assert key != start_key(argv, env, str(project))


def test_another_version_is_another_key(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    before = start_key([], {}, str(tmp_path))
    monkeypatch.setattr(startcache, "__version__", "0.0.0-other")
    assert start_key([], {}, str(tmp_path)) != before


def test_a_root_that_moved_is_not_served_from_the_cache(tmp_path: Path, project: Path) -> None:
    link = tmp_path / "link"
    link.symlink_to(project)
    env = _env(tmp_path)
    argv = ["--root", str(link)]
    messages = [INITIALIZE, INITIALIZED, LIST]
    _start(argv, messages, env, tmp_path, linger=30)
    other = tmp_path / "other"
    other.mkdir()
    link.unlink()
    link.symlink_to(other)
    moved = _start(argv, messages, env, tmp_path)
    assert not moved.cached
    assert str(other) in moved.replies[1]["result"]["instructions"]


@pytest.mark.parametrize("damage", ["{not json", '{"format": 1}', "", "[]"])
def test_a_corrupt_entry_is_a_start_without_the_cache(tmp_path: Path, project: Path, damage: str) -> None:
    env = _env(tmp_path)
    argv = ["--root", str(project)]
    messages = [INITIALIZE, INITIALIZED, LIST, _call(3, "statpath", {"path": "small.txt"})]
    first = _start(argv, messages, env, tmp_path, linger=30)
    (entry,) = _entries(env)
    entry.write_text(damage, encoding="utf-8")
    damaged = _start(argv, messages, env, tmp_path, linger=30)
    assert damaged.status == 0 and not damaged.cached
    assert _stable(damaged.replies[2]) == _stable(first.replies[2])
    assert not damaged.replies[3]["result"]["isError"]
    assert json.loads(entry.read_text(encoding="utf-8"))["format"] == 1, "rewritten"


def test_a_config_that_fails_the_check_is_never_cached(tmp_path: Path, project: Path) -> None:
    config = tmp_path / "config.toml"
    good = f'[paths]\nallowed_roots = ["{project}"]\n'
    config.write_text(good, encoding="utf-8")
    env = _env(tmp_path)
    argv = ["--config", str(config)]
    _start(argv, [INITIALIZE, INITIALIZED, LIST], env, tmp_path, linger=30)
    assert _entries(env)
    config.write_text(good + '[tools]\nenabled = ["nosuchtool"]\n', encoding="utf-8")
    for _ in range(2):
        failed = _start(argv, [INITIALIZE], env, tmp_path, linger=2)
        assert failed.status == 1 and "nosuchtool" in failed.stderr
        assert not failed.cached
    assert len(_entries(env)) == 1


def test_profiles_and_select_tools_are_always_built(tmp_path: Path, project: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        f'[paths]\nallowed_roots = ["{project}"]\n[server]\nselect_tools = true\n', encoding="utf-8"
    )
    env = _env(tmp_path)
    for _ in range(2):
        start = _start(["--config", str(config)], [INITIALIZE, INITIALIZED, LIST], env, tmp_path, linger=2)
        assert not start.cached and "selecttools" in json.dumps(start.replies[2])
    assert not _entries(env)


def test_lazy_methods_are_the_real_servers(tmp_path: Path) -> None:
    """The cached server registers the real server's request methods with the same params
    models, so its capabilities and parsing are the real server's."""
    server = build_server(Config.model_validate({"paths": {"allowed_roots": [str(tmp_path)]}}))
    lowlevel = server._lowlevel_server
    served = set(lowlevel._request_handlers) - {"ping", "server/discover", "tools/list"}
    assert served <= set(LAZY_REQUESTS)
    for method in served:
        assert lowlevel._request_handlers[method].params_type is LAZY_REQUESTS[method]
    assert set(lowlevel._notification_handlers) <= set(LAZY_NOTIFICATIONS)


def _mark_cached_tools(env: dict[str, str]) -> None:
    """Retitle every tool in the one entry, so a client can tell a ``tools/list`` from the cache."""
    (entry,) = _entries(env)
    data = json.loads(entry.read_text(encoding="utf-8"))
    for tool in data["tools"]["tools"]:
        tool["title"] = "from the cache"
    entry.write_text(json.dumps(data), encoding="utf-8")


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_approval_and_client_roots_from_a_cached_start(
    tmp_path: Path, project: Path, mode: str
) -> None:
    from mcp import Client, StdioServerParameters

    from tests.server.test_roots import SharedRoots
    from tests.test_approval import Person

    (project / "shared").mkdir()
    config = tmp_path / "config.toml"
    config.write_text(
        f'[paths]\nallowed_roots = ["{project}"]\n[approval]\nrequire = ["writefile"]\n'
        '[tools]\ndisabled = ["exec"]\n',
        encoding="utf-8",
    )
    env = _env(tmp_path)
    argv = ["--config", str(config)]
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "mcp_localtools", *argv], env=env, cwd=tmp_path
    )
    for decision in ("approve", "deny"):
        _start(argv, [INITIALIZE, INITIALIZED, LIST], env, tmp_path, linger=30)
        _mark_cached_tools(env)  # the server built behind it finds the entry stale and removes it
        person = Person(decision)
        roots = SharedRoots(project / "shared")
        async with Client(
            params, mode=mode, elicitation_callback=person, list_roots_callback=roots
        ) as client:
            assert {tool.title for tool in (await client.list_tools()).tools} == {"from the cache"}
            name = f"shared/{mode}-{decision}.txt"
            result = await client.call_tool("writefile", {"path": str(project / name), "content": "hi"})
            outside = await client.call_tool("readfile", {"path": str(tmp_path / "config.toml")})
            unshared = await client.call_tool("readfile", {"path": str(project / "small.txt")})
        assert len(person.questions) == 1
        assert result.is_error == (decision == "deny")
        assert (project / name).exists() == (decision == "approve")
        assert outside.is_error
        # The handshake era's client roots narrow the server's root; 2026-07-28 carries none.
        assert unshared.is_error == (mode == "legacy")
        assert bool(roots.asked) == (mode == "legacy")
        assert not _entries(env), "an entry that no longer tells what the server would is removed"


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_a_cache_others_may_write_is_not_read(tmp_path: Path, project: Path) -> None:
    env = _env(tmp_path)
    argv = ["--root", str(project)]
    messages = [INITIALIZE, INITIALIZED, LIST]
    _start(argv, messages, env, tmp_path, linger=30)
    assert _start(argv, messages, env, tmp_path).cached
    (entry,) = _entries(env)
    entry.parent.chmod(0o777)
    assert not _start(argv, messages, env, tmp_path).cached


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_client_of_either_era_sees_the_same_server_cached_or_built(
    tmp_path: Path, project: Path, mode: str
) -> None:
    from mcp import Client, StdioServerParameters

    env = {**_env(tmp_path), CACHE_ENV: "1"}
    argv = ["--root", str(project)]
    _start(argv, [INITIALIZE, INITIALIZED, LIST], env, tmp_path, linger=30)
    (entry,) = _entries(env)
    data = json.loads(entry.read_text(encoding="utf-8"))
    for tool in data["tools"]["tools"]:  # tells a cached start from a built one
        tool["title"] += " (from the cache)"
    entry.write_text(json.dumps(data), encoding="utf-8")
    seen = []
    for cache in ("0", "1"):
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "mcp_localtools", *argv],
            env={**env, CACHE_ENV: cache},
            cwd=tmp_path,
        )
        async with Client(params, mode=mode) as client:
            listed = (await client.list_tools()).model_dump(mode="json")
            called = await client.call_tool("statpath", {"path": "small.txt"})
            templates = (await client.list_resource_templates()).model_dump(mode="json")
            said = client.instructions
            info = client.server_info.model_dump(mode="json") if client.server_info else None
            capabilities = client.server_capabilities.model_dump(mode="json")
        assert not called.is_error
        titles = [tool["title"] for tool in listed["tools"]]
        assert all(title.endswith(" (from the cache)") == (cache == "1") for title in titles)
        tools = json.loads(json.dumps(listed).replace(" (from the cache)", ""))
        seen.append((tools, templates, sorted(called.structured_content or {}), said, info, capabilities))
    assert seen[0] == seen[1]


def test_an_entry_that_is_json_but_not_an_entry_is_a_full_start(tmp_path: Path, project: Path) -> None:
    env = _env(tmp_path)
    argv = ["--root", str(project)]
    _start(argv, [INITIALIZE, INITIALIZED, LIST], env, tmp_path, linger=30)
    (entry,) = _entries(env)
    data = json.loads(entry.read_text(encoding="utf-8"))
    data["tools"] = {"tools": [{"name": 5}]}
    entry.write_text(json.dumps(data), encoding="utf-8")
    damaged = _start(argv, [INITIALIZE, INITIALIZED, LIST], env, tmp_path, linger=30)
    assert damaged.status == 0 and len(damaged.replies) == 2, damaged.stderr[-2000:]
    (entry,) = _entries(env)  # built in full, and written again
    assert all(isinstance(tool["name"], str) for tool in json.loads(entry.read_text())["tools"]["tools"])


def test_a_config_saved_while_the_server_is_built_leaves_no_entry(
    tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The checks are taken before the config is read: a config that changed while the server was
    # built never pairs with that server's answers; unchanged, the entry is written.
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    config_file = tmp_path / "config.toml"
    config_file.write_text(f'[paths]\nallowed_roots = ["{project}"]\n[tools]\ndisabled = ["exec"]\n')
    argv = ["--config", str(config_file)]
    for saved_meanwhile in (True, False):
        read = checks_before(str(config_file))
        config = load_config(str(config_file))
        built = checks_before(str(config_file), config)
        if saved_meanwhile:
            config_file.write_text(config_file.read_text() + "read_only = true\n")
        server = build_server(config)
        written = record(
            argv, config, str(config_file), (read, built), server, log_level="WARNING", line=None, warnings=[]
        )
        assert (written is None) == saved_meanwhile


def _tool_modules(start: Start) -> list[list[str]]:
    """The tool modules a cached start had imported each time it built a tool (its debug log)."""
    found = [re.search(r"built the tool \w+; tool modules imported: (.*)$", line) for line in start.lines]
    return [match.group(1).split(", ") for match in found if match is not None]


def _imported_before_a_tool_was_built(start: Start) -> set[str]:
    """The modules a start had imported when it logged its first tool built (the server, the
    tool and all they import; the call's answer comes after)."""
    lines = start.stderr.splitlines()
    built = next(i for i, line in enumerate(lines) if re.search(r"built the tool \w+; tool modules", line))
    return {line.rsplit("|", 1)[1].strip() for line in lines[:built] if line.startswith("import time:")}


NOT_FOR_A_FIRST_READ = {
    "mcp_localtools.search.native",  # the search engines: at the first search
    "mcp_localtools.search.rg",
    "mcp_localtools.policy.scanner",  # the command scanner: at the first command read
    "mcp_localtools.transports.serve",  # the HTTP app: a network server's
    "mcp_localtools.transports.edge",
}
"""Modules a cached start's first read (``statpath``, ``readfile``) never imports."""


def _audit_lines(path: Path) -> list[dict[str, Any]]:
    """The audit log's lines without what differs from one run to the next."""
    lines = (
        [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []
    )
    path.unlink(missing_ok=True)
    varying = ("ts", "time", "session", "durationMs", "duration_ms", "elapsedMs")
    return [{key: value for key, value in line.items() if key not in varying} for line in lines]


LAZY_CALLS: dict[str, tuple[dict[str, Any], list[str]]] = {  # a call, the tool modules it needs
    "statpath": (_call(3, "statpath", {"path": "small.txt"}), ["fs.statpath"]),
    "renamed readfile": (_call(3, "cat", {"path": "small.txt"}), ["fs.readfile"]),
    "writefile needing approval": (  # writefile imports readfile (its Encoding)
        _call(3, "writefile", {"path": "new.txt", "content": "x\n"}),
        ["fs.readfile", "fs.writefile"],
    ),
    "shellcommand": (_call(3, "shellcommand", {"command": "echo hi"}), ["exec.shellcommand"]),
    "refused path": (
        _call(3, "findtext", {"path": "../outside.txt", "query": "a"}),
        ["text.readtextrange", "text.findtext"],
    ),  # findtext imports readtextrange
}


@pytest.mark.parametrize("name", list(LAZY_CALLS))
def test_a_cached_starts_first_call_imports_that_tool_only_and_answers_as_a_built_one(
    tmp_path: Path, project: Path, name: str
) -> None:
    """A cached start builds the called tool alone (its module the only tool module imported)
    and answers, refuses, asks and audits exactly as a start that built everything."""
    audit = tmp_path / "audit.jsonl"
    config = tmp_path / "config.toml"
    config.write_text(
        f'[paths]\nallowed_roots = ["{project}"]\n[tools]\nrename = {{readfile = "cat"}}\n'
        f'[approval]\nrequire = ["writefile"]\n[audit]\nenabled = true\npath = "{audit}"\n',
        encoding="utf-8",
    )
    call, modules = LAZY_CALLS[name]
    env = _env(tmp_path)
    argv = ["--config", str(config), "--log-level", "DEBUG"]
    messages = [INITIALIZE, INITIALIZED, LIST, call]
    fresh = _start(argv, messages, {**env, CACHE_ENV: "0"}, tmp_path)
    fresh_audit = _audit_lines(audit)
    _start(argv, [INITIALIZE, INITIALIZED, LIST], env, tmp_path, linger=30)  # writes the entry
    _audit_lines(audit)
    (project / "new.txt").unlink(missing_ok=True)
    cached = _start(argv, messages, env, tmp_path)
    assert cached.cached
    assert [_stable(cached.replies[ident]) for ident in (1, 2, 3)] == [
        _stable(fresh.replies[ident]) for ident in (1, 2, 3)
    ]
    assert _audit_lines(audit) == fresh_audit and len(fresh_audit) == 1
    assert _tool_modules(cached) == [modules]
    assert _tool_modules(fresh) == [], "a full start builds every tool up front"
    if name in ("statpath", "renamed readfile"):
        assert not _imported_before_a_tool_was_built(cached) & NOT_FOR_A_FIRST_READ
    assert len(_entries(env)) == 1, "the entry still tells what the server would"


@pytest.mark.parametrize("stale", ["the called tool", "the instructions"])
def test_an_entry_that_differs_from_what_is_built_is_removed_and_the_call_answered(
    tmp_path: Path, project: Path, stale: str
) -> None:
    """A cached start compares each tool with the entry when it builds it, and the rest once the
    first call was answered: an entry that differs is removed; the call is the built tool's."""
    env = _env(tmp_path)
    argv = ["--root", str(project)]
    messages = [INITIALIZE, INITIALIZED, LIST, _call(3, "statpath", {"path": "small.txt"})]
    fresh = _start(argv, messages, {**env, CACHE_ENV: "0"}, tmp_path)
    _start(argv, [INITIALIZE, INITIALIZED, LIST], env, tmp_path, linger=30)
    (entry,) = _entries(env)
    data = json.loads(entry.read_text(encoding="utf-8"))
    if stale == "the called tool":
        (tool,) = [tool for tool in data["tools"]["tools"] if tool["name"] == "statpath"]
        tool["description"] = "stale"
    else:
        data["info"]["instructions"] = "stale"
    entry.write_text(json.dumps(data), encoding="utf-8")
    cached = _start(argv, messages, env, tmp_path)
    assert cached.cached
    assert _stable(cached.replies[3]) == _stable(fresh.replies[3])
    assert not _entries(env), "an entry that no longer tells what the server would is removed"


@pytest.mark.anyio
async def test_a_client_roots_route_of_a_cached_start_builds_only_the_called_tool(
    tmp_path: Path, project: Path
) -> None:
    """A handshake-era client sharing roots works on a route of its own: from a cached start it
    holds its tools until their first call too, and the entry still holds."""
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from tests.server.test_roots import SharedRoots

    (project / "shared").mkdir()
    (project / "shared" / "a.txt").write_text("a\n", encoding="utf-8")
    env = _env(tmp_path)
    argv = ["--root", str(project), "--log-level", "DEBUG"]
    _start(argv, [INITIALIZE, INITIALIZED, LIST], env, tmp_path, linger=30)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "mcp_localtools", *argv], env=env, cwd=tmp_path
    )
    roots = SharedRoots(project / "shared")
    with (tmp_path / "stderr.txt").open("w", encoding="utf-8") as errlog:
        async with Client(
            stdio_client(params, errlog=errlog), mode="legacy", list_roots_callback=roots
        ) as client:
            inside = await client.call_tool("statpath", {"path": str(project / "shared" / "a.txt")})
            outside = await client.call_tool("statpath", {"path": str(project / "small.txt")})
    assert not inside.is_error and outside.is_error and roots.asked
    logged = (tmp_path / "stderr.txt").read_text(encoding="utf-8")
    assert re.findall(r"built the tool \w+; tool modules imported: (.*)", logged) == ["fs.statpath"]
    assert len(_entries(env)) == 1, "the entry still tells what the server would"


@pytest.mark.anyio
async def test_tools_list_after_the_first_call_is_the_built_ones(tmp_path: Path, project: Path) -> None:
    """Once a call built the real server, ``tools/list`` comes from its routes (the entry's tools,
    held): the same list as a start that built everything."""
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    env = {**_env(tmp_path), CACHE_ENV: "1"}  # the key holds the whole environment
    argv = ["--root", str(project), "--log-level", "DEBUG"]
    _start(argv, [INITIALIZE, INITIALIZED, LIST], env, tmp_path, linger=30)
    seen = []
    for cache in ("0", "1"):
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "mcp_localtools", *argv],
            env={**env, CACHE_ENV: cache},
            cwd=tmp_path,
        )
        with (tmp_path / f"stderr{cache}.txt").open("w", encoding="utf-8") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                called = await client.call_tool("statpath", {"path": "small.txt"})
                seen.append((called.is_error, (await client.list_tools()).model_dump(mode="json")))
    assert seen[0] == seen[1] and not seen[0][0]
    assert "built the tool statpath" in (tmp_path / "stderr1.txt").read_text(encoding="utf-8"), "cached"
    assert len(_entries(env)) == 1, "the entry still holds"


def test_a_config_saved_after_the_start_checked_it_is_served_as_it_is_now(
    tmp_path: Path, project: Path
) -> None:
    # The entry's checks hold at spawn; the config is saved (read_only) before the server is built
    # (after initialize). The build must see that and serve the config as it is now: a cached
    # build once served the entry's writing tools under the read-only config (a cold review).
    config = tmp_path / "config.toml"
    config.write_text("", encoding="utf-8")
    argv = ["--root", str(project), "--config", str(config)]
    env = _env(tmp_path)
    _start(argv, [INITIALIZE, INITIALIZED, LIST], env, tmp_path, linger=30)  # writes the entry
    process = _spawn(argv, env, tmp_path)
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    with ThreadPoolExecutor(2) as reader, _killed_on_failure(process):
        err = reader.submit(process.stderr.read)
        process.stdin.write(json.dumps(INITIALIZE) + "\n")
        process.stdin.flush()
        assert json.loads(reader.submit(process.stdout.readline).result(timeout=60))["id"] == 1
        config.write_text("[tools]\nread_only = true\n", encoding="utf-8")
        write = _call(3, "writefile", {"path": "new.txt", "content": "x\n"})
        process.stdin.write(json.dumps(INITIALIZED) + "\n" + json.dumps(write) + "\n")
        process.stdin.flush()
        reply = json.loads(reader.submit(process.stdout.readline).result(timeout=60))
        process.stdin.close()
        process.wait(timeout=60)
        stderr = err.result(timeout=10)
    process.stdout.close()
    process.stderr.close()
    assert Start({}, stderr, 0).cached, "served from the entry up to its build"
    assert reply["id"] == 3 and ("error" in reply or reply["result"]["isError"]), reply
    assert not (project / "new.txt").exists()
    assert not _entries(env), "the entry that no longer matches the config is removed"
