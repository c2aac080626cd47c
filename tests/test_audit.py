"""The audit log: one scrubbed JSON line per call, fail closed when required, rotation, no
interleaving, and ``mcp-localtools audit``. Commands run with the sandbox off, inside ``tmp_path``."""

from __future__ import annotations

import json
import os
import select
import shutil
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from mcp_localtools.audit import AuditLog
from mcp_localtools.config import AuditConfig
from mcp_localtools.scrubber import Scrubber
from mcp_localtools.server import build_server
from tests.helpers import config_for, connect, error_code, installed_command, text_of
from tests.support.env import child_env

FIELDS = {
    "time",
    "session",
    "client",
    "tool",
    "arguments",
    "decision",
    "rule",
    "approval",
    "approval_rule",
    "result",
    "error_code",
    "duration_ms",
    "bytes_in",
    "bytes_out",
    "output_sha256",
}
ENV_SECRET = "env-secret-value-9f8e7d"
TOKEN_ARG = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
BEARER = "Bearer abcdefghij0123456789klmnop"
FILE_CONTENT = "file-content-that-must-not-be-logged-31337"


def audited(root: Path, log: Path, **audit: Any) -> Any:
    return config_for(root, audit={"enabled": True, "path": str(log), **audit}, exec={"sandbox": "off"})


def lines_of(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_every_call_of_a_session_is_one_line_with_the_documented_fields(
    tmp_path: Path, mode: str
) -> None:
    root, log = tmp_path / "root", tmp_path / "state" / "audit.jsonl"
    root.mkdir()
    async with connect(audited(root, log), mode=mode) as client:
        await client.call_tool("writefile", {"path": "a.txt", "content": "hello\n"})
        await client.call_tool("readfile", {"path": "a.txt"})
        await client.call_tool("readfile", {"path": "/etc/hostname"})
        await client.call_tool("readfile", {"nope": 1})
        await client.call_tool("shellcommand", {"commands": ["echo hi", "exit 3"]})
        await client.call_tool("movepath", {"source": "a.txt", "destination": "b.txt"})
    records = lines_of(log)
    assert [r["tool"] for r in records] == [
        "writefile",
        "readfile",
        "readfile",
        "readfile",
        "shellcommand",
        "movepath",
    ]
    for record in records:
        assert set(record) >= FIELDS, record
        assert record["client"] == "mcp" and record["approval"] == "not_required"
        assert record["session"] == ("mcp-stateless/stdio/-" if mode == "2026-07-28" else record["session"])
        assert record["time"].endswith("Z") and record["duration_ms"] >= 0 and record["bytes_in"] > 0
    write, read, outside, invalid, shell, move = records
    assert write["decision"] == "allowed" and write["result"] == "ok"
    assert write["paths"] == [str(root / "a.txt")]
    assert read["bytes_out"] > 0 and len(read["output_sha256"]) == 64
    assert outside["decision"] == "refused" and outside["rule"] == "outside_roots"
    assert outside["error_code"] == "outside_roots"
    assert invalid["decision"] == "allowed" and invalid["error_code"] == "invalid_arguments"
    assert shell["exit_codes"] == [0, 3] and shell["sandbox"] == "off"
    assert shell["paths"] == [str(root)]
    assert move["paths"] == [str(root / "a.txt"), str(root / "b.txt")]
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    if mode == "legacy":
        assert len({r["session"] for r in records}) == 1 and records[0]["session"].startswith("mcp-")


@pytest.mark.anyio
async def test_secrets_tokens_and_file_contents_never_reach_the_log(tmp_path: Path) -> None:
    root, log = tmp_path / "root", tmp_path / "audit.jsonl"
    root.mkdir()
    async with connect(audited(root, log)) as client:
        await client.call_tool("writefile", {"path": "secret.txt", "content": FILE_CONTENT})
        await client.call_tool("readfile", {"path": "secret.txt"})
        await client.call_tool(
            "shellcommand",
            {
                "commands": [f"echo {TOKEN_ARG}", f"curl -H 'Authorization: {BEARER}' http://127.0.0.1:9"],
                "env": {"PLAIN_VALUE": ENV_SECRET},
                "stdin": FILE_CONTENT,
                "timeoutSeconds": 5,
            },
        )
        await client.call_tool(
            "editfile", {"path": "secret.txt", "edits": [{"oldText": FILE_CONTENT, "newText": "x"}]}
        )
    text = log.read_text(encoding="utf-8")
    for secret in (ENV_SECRET, TOKEN_ARG, BEARER.split()[1], FILE_CONTENT):
        assert secret not in text
    write, _, shell, _ = lines_of(log)
    assert write["arguments"]["content"]["bytes"] == len(FILE_CONTENT)
    assert len(write["arguments"]["content"]["sha256"]) == 64
    assert shell["arguments"]["env"] == {"PLAIN_VALUE": "***"}
    assert shell["arguments"]["commands"][0] == "echo ***"


def test_scrubbing_masks_secret_names_and_assignments_and_keeps_the_rest() -> None:
    scrub = Scrubber.of(AuditConfig())
    assert scrub.arguments({"apiKey": "k", "path": "a.txt", "recursive": True}) == {
        "apiKey": "***",
        "path": "a.txt",
        "recursive": True,
    }
    assert scrub.text("export GITHUB_TOKEN=abc && make") == "export GITHUB_TOKEN=*** && make"
    assert scrub.text("mysql --password hunter2 -u me") == "mysql --password *** -u me"
    assert scrub.text("ls -la --color=auto") == "ls -la --color=auto"
    custom = Scrubber.of(AuditConfig(secret_names=["*PIN*"], content_keys=[]))
    assert custom.arguments({"pin": "1234", "content": "x"}) == {"pin": "***", "content": "x"}


@contextmanager
def read_only_directory(path: Path) -> Iterator[None]:
    """``path`` made unwritable: immutable (chattr +i) when running as root, which ignores mode
    bits, else mode 0500."""
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        chattr = shutil.which("chattr")
        if chattr is None or subprocess.run([chattr, "+i", str(path)], check=False).returncode != 0:
            pytest.skip("running as root and this file system cannot make a directory immutable")
        try:
            yield
        finally:
            subprocess.run([chattr, "-i", str(path)], check=True)
    else:
        path.chmod(0o500)
        try:
            yield
        finally:
            path.chmod(0o700)


@pytest.mark.anyio
async def test_a_read_only_log_directory_with_required_refuses_every_call(tmp_path: Path) -> None:
    root, logs = tmp_path / "root", tmp_path / "logs"
    root.mkdir()
    logs.mkdir()
    with read_only_directory(logs):
        async with connect(audited(root, logs / "audit.jsonl", required=True)) as client:
            write = await client.call_tool("writefile", {"path": "canary.txt", "content": "x"})
            shell = await client.call_tool("shellcommand", {"commands": ["touch canary2.txt"]})
    for result in (write, shell):
        assert error_code(result) == "audit_unavailable"
        assert "the audit log cannot be written" in text_of(result)
    assert not (root / "canary.txt").exists() and not (root / "canary2.txt").exists()


@pytest.mark.anyio
async def test_a_log_that_becomes_unwritable_refuses_calls_and_recovers(tmp_path: Path) -> None:
    root, logs = tmp_path / "root", tmp_path / "logs"
    root.mkdir()
    async with connect(audited(root, logs / "audit.jsonl", required=True)) as client:
        assert not (await client.call_tool("statpath", {"path": "."})).is_error
        shutil.rmtree(logs)
        logs.write_text("a file where the log directory was", encoding="utf-8")
        refused = await client.call_tool("writefile", {"path": "canary.txt", "content": "x"})
        logs.unlink()
        # Writable again, but the last line was lost: refused once more, and that line is written.
        after_loss = await client.call_tool("statpath", {"path": "."})
        again = await client.call_tool("statpath", {"path": "."})
    assert error_code(refused) == "audit_unavailable" and not (root / "canary.txt").exists()
    assert error_code(after_loss) == "audit_unavailable"
    assert not again.is_error
    lines = lines_of(logs / "audit.jsonl")
    assert [(r["tool"], r["error_code"]) for r in lines] == [
        ("statpath", "audit_unavailable"),
        ("statpath", None),
    ]


@pytest.mark.anyio
async def test_without_required_a_broken_log_is_loud_but_calls_run(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "blocker").write_text("not a directory", encoding="utf-8")
    async with connect(audited(root, tmp_path / "blocker" / "audit.jsonl")) as client:
        result = await client.call_tool("writefile", {"path": "ran.txt", "content": "x"})
    assert not result.is_error and (root / "ran.txt").exists()
    assert any(
        "cannot open the audit log" in r.getMessage() for r in caplog.records if r.levelname == "ERROR"
    )


@pytest.mark.anyio
async def test_concurrent_calls_never_interleave_lines(tmp_path: Path) -> None:
    root, log = tmp_path / "root", tmp_path / "audit.jsonl"
    root.mkdir()
    async with connect(audited(root, log)) as client, anyio.create_task_group() as group:
        for n in range(40):
            group.start_soon(client.call_tool, "statpath", {"path": "." + "/." * (n * 50)})
    records = lines_of(log)
    assert len(records) == 40 and all(r["tool"] == "statpath" for r in records)


def test_threads_writing_large_records_at_once_never_interleave(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.jsonl", False, 1 << 30, 2, Scrubber.of(AuditConfig()))

    def writer(n: int) -> None:
        for k in range(50):
            assert log.write({"writer": n, "k": k, "pad": [f"{n}-{k}-" * 40] * 100})

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    records = lines_of(log.path)
    assert len(records) == 400
    assert all(r["pad"][0] == f"{r['writer']}-{r['k']}-" * 40 for r in records)


def test_the_log_rotates_by_size_and_keeps_the_configured_number(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.jsonl", False, 4096, 2, Scrubber.of(AuditConfig()))
    for n in range(100):
        assert log.write({"n": n, "pad": "x" * 200})
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["audit.jsonl", "audit.jsonl.1", "audit.jsonl.2"]
    for name in files:
        assert (tmp_path / name).stat().st_size <= 4096
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o600
    newest = [r["n"] for r in lines_of(tmp_path / "audit.jsonl")]
    assert newest[-1] == 99
    assert [r["n"] for r in lines_of(tmp_path / "audit.jsonl.1")][-1] == newest[0] - 1


@pytest.mark.anyio
async def test_a_log_inside_a_root_is_protected_from_the_tools(tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    async with connect(audited(tmp_path, log)) as client:
        overwrite = await client.call_tool("writefile", {"path": "audit.jsonl", "content": "{}"})
        rotated = await client.call_tool("writefile", {"path": "audit.jsonl.1", "content": "{}"})
        delete = await client.call_tool("deletefile", {"path": "audit.jsonl"})
    assert error_code(overwrite) == error_code(rotated) == error_code(delete) == "protected_path"
    assert [r["decision"] for r in lines_of(log)] == ["refused"] * 3


@pytest.mark.anyio
async def test_approval_outcomes_are_logged(tmp_path: Path) -> None:
    from mcp.types import ElicitResult

    root, log = tmp_path / "root", tmp_path / "audit.jsonl"
    root.mkdir()
    answers = iter(["approve", "deny"])

    async def person(context: Any, params: Any) -> ElicitResult:
        return ElicitResult(action="accept", content={"decision": next(answers)})

    config = config_for(
        root,
        audit={"enabled": True, "path": str(log)},
        approval={"require": ["writefile"]},
    )
    async with Client(build_server(config), mode="legacy", elicitation_callback=person) as client:
        await client.call_tool("writefile", {"path": "a.txt", "content": "x"})
        await client.call_tool("writefile", {"path": "b.txt", "content": "x"})
        await client.call_tool("readfile", {"path": "a.txt"})
    approved, denied, read = lines_of(log)
    assert (approved["approval"], approved["approval_rule"], approved["decision"]) == (
        "approved",
        "writefile",
        "allowed",
    )
    assert (denied["approval"], denied["decision"], denied["rule"]) == (
        "denied",
        "refused",
        "approval_denied",
    )
    assert read["approval"] == "not_required" and read["approval_rule"] is None


def test_the_default_log_lies_in_the_state_directory_outside_the_roots(tmp_path: Path) -> None:
    from mcp_localtools.audit import default_audit_path

    assert default_audit_path({"XDG_STATE_HOME": "/s"}) == Path("/s/mcp-localtools/audit.jsonl")
    assert default_audit_path({"HOME": "/h"}) == Path("/h/.local/state/mcp-localtools/audit.jsonl")


# ---- mcp-localtools audit -------------------------------------------------------------------

RECORDS = [
    {"time": "2026-11-20T10:00:00.000Z", "session": "mcp-1", "tool": "readfile", "decision": "allowed",
     "approval": "not_required", "result": "ok", "duration_ms": 1.0, "arguments": {"path": "a.txt"}},
    {"time": "2026-11-21T10:00:00.000Z", "session": "mcp-1", "tool": "shellcommand", "decision": "refused",
     "rule": "approval_denied", "approval": "denied", "result": "error", "error_code": "approval_denied",
     "duration_ms": 2.0, "arguments": {"commands": ["rm -rf build"]}},
    {"time": "2026-11-22T10:00:00.000Z", "session": "mcp-2", "tool": "readfile", "decision": "refused",
     "rule": "outside_roots", "approval": "not_required", "result": "error", "error_code": "outside_roots",
     "duration_ms": 0.5, "arguments": {"path": "/etc/passwd"}},
]  # fmt: skip


def run_audit(log: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [installed_command(), "audit", "--file", str(log), *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=log.parent,
    )


@pytest.fixture
def sample_log(tmp_path: Path) -> Path:
    log = AuditLog(tmp_path / "audit.jsonl", False, 1 << 20, 2, Scrubber.of(AuditConfig()))
    for record in RECORDS:
        log.write(record)
    return log.path


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ([], [0, 1, 2]),
        (["--tool", "readfile"], [0, 2]),
        (["--session", "mcp-2"], [2]),
        (["--decision", "refused"], [1, 2]),
        (["--decision", "allowed"], [0]),
        (["--since", "2026-11-21T00:00"], [1, 2]),
        (["--until", "2026-11-21T10:00:00Z"], [0, 1]),
        (["--since", "2026-11-21", "--until", "2026-11-21T23:59", "--tool", "shellcommand"], [1]),
        (["--tool", "readfile", "--tool", "shellcommand", "--session", "mcp-1"], [0, 1]),
        (["--since", "1h"], []),
    ],
)
def test_the_audit_command_filters_by_time_tool_session_and_decision(
    sample_log: Path, args: list[str], expected: list[int]
) -> None:
    done = run_audit(sample_log, "--json", *args)
    assert done.returncode == 0, done.stderr
    assert [json.loads(line) for line in done.stdout.splitlines()] == [RECORDS[n] for n in expected]


def test_the_audit_command_prints_a_compact_table_for_people(sample_log: Path) -> None:
    done = run_audit(sample_log, "--decision", "refused")
    assert done.returncode == 0, done.stderr
    header, denied, outside = done.stdout.splitlines()
    assert header.split()[:4] == ["time", "(UTC)", "session", "tool"]
    assert denied.split()[:7] == [
        "2026-11-21",
        "10:00:00",
        "mcp-1",
        "shellcommand",
        "refused",
        "denied",
        "approval_denied",
    ]
    assert denied.endswith("rm -rf build")
    assert "/etc/passwd" in outside and "outside_roots" in outside


def test_the_table_never_puts_a_calls_control_characters_on_the_terminal(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.jsonl", False, 1 << 20, 2, Scrubber.of(AuditConfig()))
    hostile = {
        **RECORDS[0],
        "tool": "read\x1b[2Kfile",
        "arguments": {"path": "\x1b[1A\x1b[2K\r2026-11-27 23:59:59  mcp-9  \u202eevil\u2028x\x9b"},
    }
    log.write(hostile)
    done = run_audit(log.path)
    assert done.returncode == 0, done.stderr
    (_, row) = done.stdout.splitlines()
    assert row.isprintable(), repr(row)
    assert "\\x1b[1A\\x1b[2K\\r2026" in row and "\\u202eevil" in row  # the rest is cut at 60
    assert row.split()[3] == "read\\x1b[2Kfile"


def test_the_audit_command_reads_rotated_files_first_and_refuses_a_bad_time(tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    (tmp_path / "audit.jsonl.1").write_text(json.dumps(RECORDS[0]) + "\nnot json\n", encoding="utf-8")
    log.write_text(json.dumps(RECORDS[1]) + "\n", encoding="utf-8")
    done = run_audit(log, "--json")
    assert [json.loads(line)["tool"] for line in done.stdout.splitlines()] == ["readfile", "shellcommand"]
    bad = run_audit(log, "--since", "yesterday")
    assert bad.returncode == 1 and "--since/--until" in bad.stderr
    missing = run_audit(tmp_path / "none.jsonl")
    assert missing.returncode == 1 and "no audit log at" in missing.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="reads the follower's stdout with a pipe")
def test_the_audit_command_follows_new_records(sample_log: Path) -> None:
    proc = subprocess.Popen(
        [installed_command(), "audit", "--file", str(sample_log), "--json", "--follow", "--tool", "statpath"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        log = AuditLog(sample_log, False, 1 << 20, 2, Scrubber.of(AuditConfig()))
        log.write({**RECORDS[0], "tool": "readfile", "time": "2026-11-23T00:00:00Z"})
        log.write({**RECORDS[0], "tool": "statpath", "time": "2026-11-23T00:00:01Z"})
        assert proc.stdout is not None
        readable, _, _ = select.select([proc.stdout], [], [], 30)  # the follower polls twice a second
        assert readable, "the follower printed nothing within 30 s"
        line = proc.stdout.readline()
        assert json.loads(line)["tool"] == "statpath"
    finally:
        proc.terminate()
        proc.communicate(timeout=10)


@pytest.mark.anyio
async def test_a_call_the_client_cancels_gets_its_line(tmp_path: Path) -> None:
    root, log = tmp_path / "root", tmp_path / "audit.jsonl"
    root.mkdir()
    async with connect(audited(root, log), mode="legacy") as client:
        with anyio.move_on_after(1):
            await client.call_tool("shellcommand", {"commands": ["sleep 300"]})
        with anyio.fail_after(20):
            while not log.exists() or not log.read_text(encoding="utf-8"):
                await anyio.sleep(0.05)
    (record,) = lines_of(log)
    assert record["tool"] == "shellcommand" and record["error_code"] == "cancelled"
    assert record["result"] == "error" and record["duration_ms"] < 300_000  # ended at the cancel


@pytest.mark.anyio
async def test_a_stdio_server_logs_to_the_default_state_directory_and_audit_reads_it(tmp_path: Path) -> None:
    from mcp import StdioServerParameters

    home, root = tmp_path / "home", tmp_path / "root"
    home.mkdir()
    root.mkdir()
    config = tmp_path / "config.toml"
    config.write_text(f'[paths]\nallowed_roots = ["{root}"]\n[audit]\nenabled = true\n', encoding="utf-8")
    env = child_env({"HOME": str(home), "PATH": os.environ.get("PATH", "")})
    params = StdioServerParameters(command=installed_command(), args=["--config", str(config)], env=env)
    async with Client(params, mode="legacy") as client:
        await client.call_tool("statpath", {"path": "."})
        await client.call_tool("readfile", {"path": "/etc/hostname"})
    log = home / ".local" / "state" / "mcp-localtools" / "audit.jsonl"
    assert [r["tool"] for r in lines_of(log)] == ["statpath", "readfile"]
    assert stat.S_IMODE(log.parent.stat().st_mode) == 0o700
    done = subprocess.run(
        [installed_command(), "--config", str(config), "audit", "--json", "--decision", "refused"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert [json.loads(line)["rule"] for line in done.stdout.splitlines()] == ["outside_roots"]


def test_the_audit_command_reads_only_the_rotated_files_the_server_keeps(tmp_path: Path) -> None:
    """A file the server never writes (``audit.jsonl.50`` with ``keep = 5``; a model can write it
    when the log lies in a root, where only the kept names are protected) is not shown as history."""
    log = tmp_path / "audit.jsonl"
    forged = json.dumps({**RECORDS[0], "tool": "forged"})
    (tmp_path / "audit.jsonl.50").write_text(forged + "\n", encoding="utf-8")
    (tmp_path / "audit.jsonl.2").write_text(json.dumps(RECORDS[0]) + "\n", encoding="utf-8")
    log.write_text(json.dumps(RECORDS[1]) + "\n", encoding="utf-8")
    done = run_audit(log, "--json")
    assert [json.loads(line)["tool"] for line in done.stdout.splitlines()] == ["readfile", "shellcommand"]


@pytest.mark.anyio
async def test_the_client_name_is_cut_in_every_line(tmp_path: Path) -> None:
    from mcp.types import Implementation

    root, log = tmp_path / "root", tmp_path / "audit.jsonl"
    root.mkdir()
    name = "c" * 5000
    server = build_server(audited(root, log))
    async with Client(server, mode="legacy", client_info=Implementation(name=name, version="1")) as client:
        await client.call_tool("statpath", {"path": "."})
    (record,) = lines_of(log)
    assert record["client"].startswith("c" * 100) and len(record["client"]) <= 200, len(record["client"])
