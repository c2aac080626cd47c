"""The audit promise under a full disk, and the scrubber against a table of secret shapes.

The full disk is a small tmpfs in a private mount namespace (``helpers.small_disk_command``);
the server runs in that child with the SDK's in-memory client, so nothing outside ``tmp_path``
is ever filled."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import warnings
from contextlib import suppress
from pathlib import Path

import anyio
import pytest
from mcp import MCPDeprecationWarning
from mcp.types import CallToolResult

from mcp_localtools.audit import AuditLog
from mcp_localtools.config import AuditConfig
from mcp_localtools.scrubber import Scrubber
from tests.helpers import small_disk_command

FULL_DISK = r"""
import anyio, json, os, sys
from mcp import Client
from mcp_localtools.config import parse_config
from mcp_localtools.server import build_server, ERROR_META_KEY

disk, root = sys.argv[1], sys.argv[2]
log = os.path.join(disk, "audit.jsonl")
config = parse_config({
    "paths": {"allowed_roots": [root]},
    "audit": {"enabled": True, "required": True, "path": log},
})

def fill(leave: int) -> None:
    # Take every free block but ``leave`` bytes' worth, through one filler file.
    with open(os.path.join(disk, "filler"), "ab") as handle:
        while True:
            info = os.statvfs(disk)
            free = info.f_bavail * info.f_frsize
            if free <= leave:
                break
            try:
                handle.write(b"\0" * min(4096, free - leave))
                handle.flush()
            except OSError:
                break

def code(result):
    return (result.meta or {}).get(ERROR_META_KEY, {}).get("code") if result.is_error else None

async def main() -> None:
    out = {}
    async with Client(build_server(config)) as client:
        out["first"] = code(await client.call_tool("statpath", {"path": "."}))
        fill(leave=0)  # the disk is full: the next call cannot be audited
        big = {"path": "a.txt", "content": "x", "note": ["y" * 999] * 6}  # a line past the last page
        out["full"] = code(await client.call_tool("writefile", big))
        os.remove(os.path.join(disk, "filler"))  # room again; the last write still failed
        out["after_failure"] = code(await client.call_tool("writefile", {"path": "b.txt", "content": "x"}))
        out["recovered"] = code(await client.call_tool("writefile", {"path": "c.txt", "content": "x"}))
    out["files"] = sorted(os.listdir(root))
    with open(log, "rb") as handle:
        out["log"] = handle.read().decode()
    print(json.dumps(out))

anyio.run(main)
"""

SHORT_WRITE = r"""
import json, os, sys
from mcp_localtools.audit import AuditLog
from mcp_localtools.scrubber import Scrubber
from mcp_localtools.config import AuditConfig

disk = sys.argv[1]
log = AuditLog(path=__import__("pathlib").Path(disk) / "audit.jsonl", required=True, max_bytes=1 << 30,
               keep=1, scrubber=Scrubber.of(AuditConfig()))
assert log.write({"n": 0, "pad": "x" * 3000})
filler = os.open(os.path.join(disk, "filler"), os.O_WRONLY | os.O_CREAT)
try:
    while True:
        os.write(filler, b"\0" * 4096)
except OSError:
    pass
size = os.path.getsize(log.path)
ok = log.write({"n": 1, "pad": "y" * 3000})  # 1,000 bytes fit in the last page: a short write
print(json.dumps({"ok": ok, "before": size, "after": os.path.getsize(log.path), "ready": log.ready(),
                  "failure": log.failure, "tail": open(log.path, "rb").read()[-20:].decode()}))
"""


def _on_small_disk(tmp_path: Path, script: str, size: str, *args: str) -> dict[str, object]:
    disk = tmp_path / "disk"
    disk.mkdir()
    command = small_disk_command({disk: f"size={size}"}, [sys.executable, "-c", script, str(disk), *args])
    if command is None:
        pytest.skip("needs Linux, unshare and a mount namespace")
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    report: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


def test_with_required_a_full_disk_and_a_failed_write_refuse_calls_until_a_line_is_written(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    report = _on_small_disk(tmp_path, FULL_DISK, "128k", str(root))
    assert report["first"] is None
    assert report["full"] == "audit_unavailable"
    # Room again, but the last line could not be written: refused once, its own line written.
    assert report["after_failure"] == "audit_unavailable"
    assert report["recovered"] is None
    assert report["files"] == ["c.txt"]  # nothing ran unaudited
    log = str(report["log"])
    assert log.endswith("\n")
    lines = [json.loads(line) for line in log.splitlines()]  # no torn line
    assert [(line["tool"], line["error_code"]) for line in lines] == [
        ("statpath", None),
        ("writefile", "audit_unavailable"),
        ("writefile", None),
    ]


def test_a_short_write_on_a_full_disk_is_cut_back_to_the_last_newline(tmp_path: Path) -> None:
    report = _on_small_disk(tmp_path, SHORT_WRITE, "64k")
    assert report["ok"] is False and report["after"] == report["before"], report
    assert str(report["tail"]).endswith('"}\n')
    assert report["ready"] is False and "short write" in str(report["failure"])


def test_a_torn_last_line_from_a_crash_is_cut_when_the_log_is_opened(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    path.write_bytes(b'{"n":1}\n{"n":2}\n{"n":3,"pad":"cut sh')
    log = AuditLog(path=path, required=True, max_bytes=1 << 20, keep=1, scrubber=Scrubber.of(AuditConfig()))
    assert log.write({"n": 4})
    assert path.read_bytes() == b'{"n":1}\n{"n":2}\n{"n":4}\n'


SECRETS = [
    # (string as a tool argument, the secret that must not survive, text that must survive)
    ("mysql -u root -pS3cretPass1 db", "S3cretPass1", "mysql -u root"),
    ("mysqldump -pS3cretPass2", "S3cretPass2", "mysqldump"),
    ("mysql -p'S3cret Quoted1' db", "S3cret Quoted1", "mysql"),
    ('mariadb -u app -p"S3cretQuoted2" -h db', "S3cretQuoted2", "-h db"),
    ("tool -p'S3cretQuoted3'", "S3cretQuoted3", "tool"),
    ("psql --password=S3cretPass3 -h db", "S3cretPass3", "-h db"),
    ("tool --password S3cretPass4", "S3cretPass4", "tool --password"),
    ("tool -password S3cretPass5", "S3cretPass5", "tool"),
    ("git clone https://alice:S3cretPass6@github.com/o/r.git", "S3cretPass6", "github.com/o/r.git"),
    ("curl ftp://bob:S3cretPass7@ftp.example.com/x", "S3cretPass7", "ftp.example.com/x"),
    (
        "git clone https://ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaS8x@github.com/o/r",
        "ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaS8x",
        "github.com",
    ),
    ("https://x-token-auth:S3cretPass9@bitbucket.org/r", "S3cretPass9", "bitbucket.org/r"),
    ("curl 'https://api.example.com/v1?api_key=S3cretKey10&q=1'", "S3cretKey10", "q=1"),
    ("https://example.com/cb?code=1&access_token=S3cretTok11", "S3cretTok11", "example.com/cb"),
    ("https://s3.amazonaws.com/b/k?X-Amz-Signature=S3cretSig12&X-Amz-Date=1", "S3cretSig12", "X-Amz-Date=1"),
    ("https://x.blob.core.windows.net/c?sv=2020&sig=S3cretSig13", "S3cretSig13", "sv=2020"),
    ("https://example.com/?password=S3cretPass14", "S3cretPass14", "example.com"),
    ("https://example.com/?client_secret=S3cretSec15&id=7", "S3cretSec15", "id=7"),
    ("curl -H 'Authorization: Bearer S3cretBearer16xyz' http://h", "S3cretBearer16xyz", "http://h"),
    ("curl -H 'Authorization: Basic dXNlcjpTM2NyZXQxNw==' http://h", "dXNlcjpTM2NyZXQxNw==", "http://h"),
    ("Authorization: token S3cretTok18abcdef", "S3cretTok18abcdef", "Authorization"),
    ("authorization:S3cretRaw19", "S3cretRaw19", "authorization"),
    ("Proxy-Authorization: Bearer S3cretProxy20", "S3cretProxy20", "Proxy-Authorization"),
    ("export GITHUB_TOKEN=S3cretTok21 && make", "S3cretTok21", "make"),
    ("AWS_SECRET_ACCESS_KEY=S3cretKey22 aws s3 ls", "S3cretKey22", "aws s3 ls"),
    ("PGPASSWORD='S3cret Pass23' psql", "S3cret Pass23", "psql"),
    ('{"password": "S3cretPass24", "user": "me"}', "S3cretPass24", '"user": "me"'),
    ("db_password: S3cretPass25", "S3cretPass25", "db_password"),
    ("echo ghp_S3cretGithub26aaaaaaaaaaaaaaaaaaaaaaaa", "ghp_S3cretGithub26aaaaaaaaaaaaaaaaaaaaaaaa", "echo"),
    ("key sk-proj-S3cretOpenAI27aaaaaaaaaaaa", "sk-proj-S3cretOpenAI27aaaaaaaaaaaa", "key"),
    ("stripe sk_live_S3cretStripe28aaaaaaaa", "sk_live_S3cretStripe28aaaaaaaa", "stripe"),
    ("aws AKIAS3CRETKEY29ABCDE", "AKIAS3CRETKEY29ABCDE", "aws"),
    ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.S3cretSignature30abc", "S3cretSignature30abc", "jwt"),
    ("slack xoxb-S3cretSlack31-aaaaaa", "xoxb-S3cretSlack31-aaaaaa", "slack"),
    ("glpat-S3cretGitlab32aaaaaaa", "glpat-S3cretGitlab32aaaaaaa", ""),
    ("curl -u alice:S3cretPass33 http://h", "S3cretPass33", "http://h"),
    ("curl --user alice:S3cretPass34 http://h", "S3cretPass34", "http://h"),
    ("Cookie: session=S3cretCookie35; theme=dark", "S3cretCookie35", "Cookie"),
    ("google AIzaS3cretGoogle36aaaaaaaaaaaaaaaaaaaaaa", "AIzaS3cretGoogle36aaaaaaaaaaaaaaaaaaaaaa", "google"),
    ("npm npm_S3cretNpm37aaaaaaaaaaaaaaaaaaaaaaaaaa", "npm_S3cretNpm37aaaaaaaaaaaaaaaaaaaaaaaaaa", "npm"),
    ("hf hf_S3cretHugging38aaaaaaaaaaaaaaaaaaaaa", "hf_S3cretHugging38aaaaaaaaaaaaaaaaaaaaa", "hf"),
    (
        "key -----BEGIN OPENSSH PRIVATE KEY-----\nS3cretPem39aaaa\n-----END OPENSSH PRIVATE KEY-----",
        "S3cretPem39aaaa",
        "key",
    ),
    ("redis://:S3cretRedis40@localhost:6379/0", "S3cretRedis40", "localhost:6379/0"),
    ("tool --verbose --password S3cretPass41", "S3cretPass41", "tool --verbose --password"),
    ("tool -x --api-key S3cretKey42", "S3cretKey42", "tool -x --api-key"),
    ("mysql -uroot --password S3cretPass43", "S3cretPass43", "mysql -uroot"),
    ("sshpass -p S3cretPass44 ssh deploy@host", "S3cretPass44", "ssh deploy@host"),
    ("sshpass -p 'S3cret Pass45' ssh host", "S3cret Pass45", "ssh host"),
    ("docker login -p S3cretPass46 registry.example.com", "S3cretPass46", "registry.example.com"),
    ("docker login -u me -p S3cretPass47 registry.example.com", "S3cretPass47", "-u me"),
    ("podman login --username me -p S3cretPass48 quay.io", "S3cretPass48", "quay.io"),
    ("openssl pkcs12 -export -passout pass:S3cretPass49 -out x.p12", "S3cretPass49", "-out x.p12"),
    ("openssl rsa -in k.pem -passin 'pass:S3cretPass50'", "S3cretPass50", "-in k.pem"),
    ("AWS_SECRET_ACCESS_KEY = S3cretKey51", "S3cretKey51", "AWS_SECRET_ACCESS_KEY"),
    ("db_password   =   S3cretPass52 # x", "S3cretPass52", "# x"),
    ("aws configure set aws_secret_access_key S3cretKey53", "S3cretKey53", "aws configure set"),
    ("npm config set //registry.npmjs.org/:_authToken S3cretTok54", "S3cretTok54", "npm config set"),
    # after a URL's userinfo (its password was masked and the query's token logged in clear)
    ("curl https://bob:S3cretPass55@host/x?token=S3cretTok55", "S3cretTok55", "bob:***@host/x?token="),
    ("curl https://bob:S3cretPass56@host/x?token=S3cretTok56", "S3cretPass56", "?token=***"),
    ("curl https://bob.smith:pw@host/?a=1&api_key=S3cretKey57", "S3cretKey57", "a=1&api_key=***"),
    ("git clone https://u:p@h/r.git --config http.password=S3cretPass58", "S3cretPass58", "u:***@h/r.git"),
    ("GET https://x:y@h/cb?access_token=S3cretTok59 HTTP/1.1", "S3cretTok59", "HTTP/1.1"),
]


@pytest.mark.parametrize(("text", "secret", "kept"), SECRETS, ids=[s for _, s, _ in SECRETS])
def test_a_secret_anywhere_in_a_string_is_masked_and_the_rest_kept(text: str, secret: str, kept: str) -> None:
    scrub = Scrubber.of(AuditConfig())
    masked = scrub.text(text)
    assert secret not in masked, masked
    assert kept in masked, masked
    nested = scrub.arguments({"commands": [text], "url": text, "edits": [{"note": text}]})
    assert secret not in json.dumps(nested), nested


def test_ordinary_commands_are_not_masked() -> None:
    scrub = Scrubber.of(AuditConfig())
    for text in (
        "mkdir -p build/out",
        "ssh -p 22 host",
        "ls -la --color=auto",
        "git log --format=%H -n 5",
        "https://example.com/path?q=search&page=2",
        "python -c 'print(1)'",
        "cp -pr src dst",
        "ssh -p 22 host",
        "ls --color --all -l",
        "x = 1",
        "aws configure set region eu-west-1",
    ):
        assert scrub.text(text) == text


@pytest.mark.parametrize(
    "text",
    [
        "a." * 500_000,
        "a:" * 500_000,
        "-a " * 300_000,
        "a" * 1_000_000 + "=",
        "x://a." * 150_000,
        "sshpass -p x " * 80_000,
        "docker " * 150_000 + "login -p x",
        "config set " * 100_000,
        "a " * 500_000 + "=",
        "-passin pass:" * 80_000,
    ],
    ids=[
        "dots",
        "colons",
        "flags",
        "one-long-name",
        "schemes",
        "sshpass",
        "docker",
        "config",
        "spaces",
        "openssl",
    ],
)
def test_scrubbing_a_hostile_megabyte_takes_linear_time(text: str) -> None:
    import time

    began = time.process_time()
    masked = Scrubber.of(AuditConfig()).text(text)
    assert time.process_time() - began < 1.0
    assert len(masked) < 1200 and "cut:" in masked


def test_a_secret_at_the_cut_is_masked_not_shown_in_part() -> None:
    scrub = Scrubber.of(AuditConfig())
    for at in range(900, 1100, 7):
        text = "x" * at + " token=S3cretValueThatIsLong" + "y" * 5000
        assert "S3cret" not in scrub.text(text)
        pem = "z" * at + "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n" * 3
        assert "MIIEvQ" not in scrub.text(pem + "q" * 5000)


def _blocked_writing(fd: int) -> bool:
    """Whether a thread of this process is blocked in ``write(2)`` on ``fd`` now (Linux: the
    syscall a task is in, with its arguments, is in ``/proc/self/task/TID/syscall``)."""
    for task in Path("/proc/self/task").iterdir():
        try:
            fields = (task / "syscall").read_text().split()
        except OSError:  # the thread ended meanwhile
            continue
        if len(fields) > 1 and fields[0] == "1" and int(fields[1], 16) == fd:
            return True
    return False


@pytest.mark.anyio
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/task/*/syscall")
async def test_auditing_a_hostile_argument_does_not_stall_other_calls(tmp_path: Path) -> None:
    """The audit line of a call is scrubbed, built and written in a worker thread, never on the
    event loop (a 60 KB ``a.a.a...`` argument stalled every session of the server for 25 s). The
    log is a FIFO whose buffer the test fills, so the server's write of the hostile call's line
    blocks; while it is blocked the server still answers a ping, and the call answers once the
    test reads the FIFO. Events decide, not a clock."""
    from tests.helpers import config_for, connect

    log = tmp_path / "audit.jsonl"
    os.mkfifo(log)
    config = config_for(tmp_path, audit={"enabled": True, "path": str(log)})
    answered: list[CallToolResult] = []
    release, finished, drained = threading.Event(), threading.Event(), bytearray()

    def drain() -> None:  # a thread: it must run even if a write blocked the event loop
        release.wait(60)  # set once the ping is answered; the 60 s only end a blocked event loop
        while not finished.is_set():
            try:
                drained.extend(os.read(reader, 1 << 16))
            except BlockingIOError:
                finished.wait(0.01)

    async with connect(config, mode="legacy") as client:  # legacy: ping is a 2025-11-25 request
        (server_fd,) = [int(fd.name) for fd in Path("/proc/self/fd").iterdir() if _links_to(fd, log)]
        writer = os.open(log, os.O_WRONLY | os.O_NONBLOCK)  # the server holds a reading end
        reader = os.open(log, os.O_RDONLY | os.O_NONBLOCK)
        drainer = threading.Thread(target=drain)
        try:
            with suppress(BlockingIOError):
                while True:
                    os.write(writer, b"\n" * 4096)  # fill the pipe: the next write blocks
            drainer.start()

            async def hostile() -> None:
                answered.append(await client.call_tool("readfile", {"path": "a." * 100_000}))

            async with anyio.create_task_group() as tasks:
                tasks.start_soon(hostile)
                with anyio.fail_after(60):  # only against a hang: the order of events decides
                    while not _blocked_writing(server_fd):
                        await anyio.sleep(0.01)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", MCPDeprecationWarning)
                        await client.send_ping()  # the event loop answers while the line waits
                    assert answered == []
                    release.set()  # the test reads the FIFO: the line is written, the call answers
        finally:
            release.set()
            finished.set()
            if drainer.is_alive():
                drainer.join()
            with suppress(BlockingIOError):
                drained.extend(os.read(reader, 1 << 16))
            os.close(writer)
            os.close(reader)
    (line,) = [json.loads(line) for line in drained.split(b"\n") if line]
    assert line["tool"] == "readfile" and len(json.dumps(line["arguments"])) < 1200, line
    assert answered[0].is_error


def _links_to(fd: Path, target: Path) -> bool:
    try:
        return os.readlink(fd) == str(target)
    except OSError:
        return False
