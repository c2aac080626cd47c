"""The stdio reader under bad input, through raw bytes to the installed server: every line gets a
JSON-RPC answer, an oversized line costs no more than the line limit, nothing read before EOF
goes unanswered."""

from __future__ import annotations

import array
import contextlib
import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from mcp_localtools.jsonrpc import recover_id
from tests.helpers import INITIALIZE, INITIALIZED, call_message, installed_command

MiB = 1024 * 1024


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def _vmhwm_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as handle:
        return next(int(line.split()[1]) for line in handle if line.startswith("VmHWM:"))


class _Server:
    """The installed server over stdio, fed raw bytes after a handshake."""

    def __init__(self, root: Path, *extra: str) -> None:
        self.proc = subprocess.Popen(
            [installed_command(), "--root", str(root), *extra],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.lines: queue.Queue[bytes] = queue.Queue()
        stdout = self.proc.stdout

        def feed() -> None:
            for line in stdout:
                self.lines.put(line)

        self.reader = threading.Thread(target=feed, daemon=True)
        self.reader.start()
        self.send(_line(INITIALIZE) + _line(INITIALIZED))
        assert self.reply()["id"] == 1
        self.base_kib = _vmhwm_kib(self.proc.pid) if sys.platform == "linux" else 0

    def send(self, data: bytes, *, close: bool = False) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()
        if close:
            self.proc.stdin.close()

    def reply(self, timeout: float = 60) -> dict[str, Any]:
        message: dict[str, Any] = json.loads(self.lines.get(timeout=timeout))
        assert message["jsonrpc"] == "2.0"
        return message

    def extra_mib(self) -> float:
        return (_vmhwm_kib(self.proc.pid) - self.base_kib) / 1024

    def close(self) -> None:
        """Kill the server and close both pipes (the reader ends at the end of stdout)."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)
        self.reader.join(timeout=10)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.close()
        except BrokenPipeError:  # unflushed bytes to a dead server: nothing left to deliver
            pass
        self.proc.stdout.close()


@pytest.fixture
def server(tmp_path: Path) -> Any:
    running = _Server(tmp_path)
    yield running
    running.close()


@pytest.fixture(scope="module")
def shared_server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """One server for the module's tests that each read exactly the replies they ask for."""
    running = _Server(tmp_path_factory.mktemp("stdio"))
    yield running
    running.close()


@pytest.mark.parametrize(
    ("line", "code", "words", "request_id"),
    [
        (b'{"jsonrpc": "2.0", "id": 7, "method": "tools/li\n', -32700, "not valid JSON", 7),
        (b"[]\n", -32600, "empty batch", None),
        (b"42\n", -32600, "JSON object, not a number", None),
        (b'"x"\n', -32600, "JSON object, not a string", None),
        (b'[{"jsonrpc": "2.0", "id": 3, "method": "ping"}]\n', -32600, "batches are not supported", None),
        (
            b'{"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": 5}\n',
            -32602,
            "params must be an object",
            4,
        ),
        (b'{"id": 5, "method": "ping"}\n', -32600, "not a JSON-RPC 2.0 message", 5),
        (b'{"jsonrpc": "2.0", "id": 6, "method": "ping", "x": "\xff"}\n', -32700, "not valid UTF-8", 6),
        (b'{"jsonrpc": "2.0", "id": ' + b"9" * 5000 + b', "method": "ping"}\n', -32700, "digits", None),
        (
            b'{"jsonrpc": "2.0", "id": 8, "method": "ping", "params": {"n": ' + b"9" * 5000 + b"}}\n",
            -32700,
            "digits",
            8,
        ),
        (
            b'{"jsonrpc": "2.0", "id": 10, "method": "ping", "params": {"a": '
            + b"[" * 1000
            + b"]" * 1000
            + b"}}\n",
            -32600,
            "nested",
            10,
        ),
        (
            b'{"jsonrpc": "2.0", "id": 11, "method": "ping", "params": {"a": '
            + b"[" * 200
            + b"]" * 200
            + b"}}\n",
            -32600,
            "nested",
            11,
        ),
        (
            b'{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}\n',
            -32600,
            "id must be a string or an integer",
            None,
        ),
        (b'{"jsonrpc": "2.0", "id": true, "method": "ping"}\n', -32600, "not a boolean", None),
        (b'{"jsonrpc": "2.0", "id": null, "method": "ping"}\n', -32600, "not null", None),
        (b'{"jsonrpc": "2.0", "id": {}, "method": "ping"}\n', -32600, "not an object", None),
        (b'{"jsonrpc": "2.0", "id": [1], "method": "ping"}\n', -32600, "not an array", None),
    ],
)
def test_a_line_that_is_no_json_rpc_request_gets_a_json_rpc_error(
    shared_server: _Server, line: bytes, code: int, words: str, request_id: Any
) -> None:
    server = shared_server
    server.send(line + _line({"jsonrpc": "2.0", "id": 99, "method": "ping"}))
    error = server.reply(timeout=10)
    assert error["id"] == request_id and error["error"]["code"] == code
    assert words in error["error"]["message"]
    assert server.reply(timeout=10)["id"] == 99  # the session goes on


def test_a_lone_surrogate_in_writefile_content_gets_a_clear_error_and_writes_nothing(
    server: _Server, tmp_path: Path
) -> None:
    line = _line(call_message(9, "writefile", {"path": "s.txt", "content": "@"})).replace(b"@", b"\\ud800")
    server.send(line)
    error = server.reply(timeout=10)
    assert error["id"] == 9 and error["error"]["code"] == -32602
    assert "params.arguments.content" in error["error"]["message"]
    assert "lone UTF-16 surrogate" in error["error"]["message"]
    assert not (tmp_path / "s.txt").exists()
    pair = _line(call_message(10, "writefile", {"path": "p.txt", "content": "@"})).replace(
        b"@", b"\\ud83d\\ude00"
    )
    server.send(pair)
    assert server.reply(timeout=30)["result"]["isError"] is False
    assert (tmp_path / "p.txt").read_text(encoding="utf-8") == "\U0001f600"


def test_a_lone_surrogate_in_an_argument_name_is_named_escaped_in_a_reply_that_can_be_sent(
    server: _Server,
) -> None:
    # The refusal quoted the bad key as it was: the reply itself could not be encoded, and the
    # client got a generic "not valid Unicode" error instead of what was wrong.
    line = b'{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"readfile",'
    line += b'"arguments":{"path":"nope","\\ud800\\n":"\\udfff"}}}\n'
    server.send(line)
    error = server.reply(timeout=10)
    assert error["id"] == 6 and error["error"]["code"] == -32602
    message = error["error"]["message"]
    assert "params.arguments.\\ud800\\n holds a lone UTF-16 surrogate" in message
    server.send(_line({"jsonrpc": "2.0", "id": 7, "method": "ping"}))
    assert server.reply(timeout=10)["id"] == 7


def test_a_second_request_with_an_id_in_flight_is_refused_and_the_first_still_answered(
    server: _Server, tmp_path: Path
) -> None:
    slow = call_message(5, "shellcommand", {"commands": ["sleep 1; echo first"]})
    server.send(_line(slow) + _line(call_message(5, "statpath", {"path": "."})))
    refusal = server.reply(timeout=30)
    assert refusal["id"] == 5 and refusal["error"]["code"] == -32600
    assert "already used by a request still in flight" in refusal["error"]["message"]
    first = server.reply(timeout=30)
    assert first["id"] == 5 and first["result"]["isError"] is False
    assert "first" in json.dumps(first["result"])


@pytest.mark.skipif(sys.platform != "linux", reason="VmHWM is read from /proc")
def test_a_200_mib_line_is_refused_unbuffered_with_its_id_and_the_session_goes_on(server: _Server) -> None:
    head = b'{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"writefile",'
    head += b'"arguments":{"path":"b","content":"'

    def write() -> None:
        server.send(head)
        for _ in range(200):
            server.send(b"a" * MiB)
        server.send(b'"}}}\n' + _line({"jsonrpc": "2.0", "id": 21, "method": "ping"}))

    writer = threading.Thread(target=write)
    writer.start()
    refusal = server.reply(timeout=60)
    writer.join(timeout=60)
    assert refusal["id"] == 20 and refusal["error"]["code"] == -32600
    assert "over the limit of 33554432 bytes" in refusal["error"]["message"]
    assert server.reply(timeout=30)["id"] == 21
    assert server.extra_mib() < 100  # 2 x the 16 MiB write limit buffered at most; before: +728 MiB


@pytest.mark.skipif(sys.platform != "linux", reason="VmHWM is read from /proc")
def test_a_configured_line_limit_holds_and_the_server_exits_cleanly_at_eof(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text(f'[paths]\nallowed_roots = ["{tmp_path}"]\n[server]\nmax_stdio_line_bytes = 65536\n')
    server = _Server(tmp_path, "--config", str(config))
    try:
        server.send(b"{" + b" " * (64 * MiB) + b"\n")
        refusal = server.reply(timeout=60)
        assert refusal["id"] is None and refusal["error"]["code"] == -32600
        assert "over the limit of 65536 bytes" in refusal["error"]["message"]
        assert server.extra_mib() < 20
        server.send(b"{" + b" " * MiB, close=True)  # a last line without a newline, then EOF
        assert server.reply(timeout=60)["error"]["code"] == -32600
        assert server.proc.wait(timeout=30) == 0
    finally:
        server.close()


def test_every_request_of_a_pipelined_batch_is_answered_before_exit_at_eof(server: _Server) -> None:
    batch = b"".join(_line(call_message(n, "statpath", {"path": "."})) for n in range(10, 20))
    slow = _line(call_message(20, "shellcommand", {"commands": ["sleep 0.5; echo done"]}))
    server.send(batch + slow, close=True)
    replies = [server.reply(timeout=60) for _ in range(11)]
    assert {reply["id"] for reply in replies} == set(range(10, 21))
    assert all(reply["result"]["isError"] is False for reply in replies)
    assert server.proc.wait(timeout=30) == 0


@pytest.mark.parametrize(
    ("prefix", "found"),
    [
        (b'{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"x":"', 12),
        (b'{"id": "abc", "method"', "abc"),
        (b'{"method":"x","params":{"id":3,"arguments":{"a":"', None),
        (b'{"params":{"s":"\\"id\\": 4"},"id":5,', 5),
        (b'{"id": true}', None),
        (b"[1, 2", None),
    ],
)
def test_the_request_id_is_recovered_from_the_top_level_of_a_cut_message(prefix: bytes, found: Any) -> None:
    assert recover_id(prefix) == found


def test_a_second_initialize_is_refused_and_the_session_goes_on(server: _Server) -> None:
    again = {**INITIALIZE, "id": 2, "params": {**INITIALIZE["params"], "protocolVersion": "2024-11-05"}}
    server.send(_line(again) + _line({"jsonrpc": "2.0", "id": 3, "method": "ping"}))
    refusal = server.reply(timeout=10)
    assert refusal["id"] == 2 and refusal["error"]["code"] == -32600, refusal
    assert "already initialized" in refusal["error"]["message"]
    assert server.reply(timeout=10) == {"jsonrpc": "2.0", "id": 3, "result": {}}


def _wait_until_pipe_holds(fd: int, size: int, seconds: float = 30) -> None:
    """Wait until the pipe read by ``fd`` holds at least ``size`` unread bytes (``FIONREAD``)."""
    import fcntl
    import termios

    deadline = time.monotonic() + seconds
    while True:
        held = array.array("i", [0])
        fcntl.ioctl(fd, termios.FIONREAD, held)
        if held[0] >= size:
            return
        assert time.monotonic() < deadline, f"the pipe holds {held[0]} bytes after {seconds} s"
        time.sleep(0.05)


@pytest.mark.skipif(sys.platform == "win32", reason="the event loop waits on no pipe on Windows")
def test_the_wire_pipes_are_served_non_blocking_and_given_back_blocking(tmp_path: Path) -> None:
    """The event loop reads and writes a pipe wire itself (issue 38: no thread hand-off for a
    request or a reply): both pipes are non-blocking while the server runs (the flag belongs to
    the pipe's description, which the test shares), blocking again once it has exited, and a
    reply larger than the pipe's buffer arrives whole to a reader that starts late."""
    (tmp_path / "wide.txt").write_text(("w" * 99 + "\n") * 1500, encoding="utf-8")  # 150 KB
    read_in, write_in = os.pipe()
    read_out, write_out = os.pipe()
    proc = subprocess.Popen([installed_command(), "--root", str(tmp_path)], stdin=read_in, stdout=write_out)
    try:
        requests = _line(INITIALIZE) + _line(INITIALIZED)
        requests += _line(call_message(2, "readfile", {"path": "wide.txt", "limit": 1500}))
        os.write(write_in, requests)
        _wait_until_pipe_holds(read_out, 60_000)  # the reply (two copies of ~45,000 characters) fills it
        assert not os.get_blocking(read_in) and not os.get_blocking(write_out)
        with os.fdopen(read_out, "rb", closefd=False) as replies:
            assert json.loads(replies.readline())["id"] == 1
            reply = json.loads(replies.readline())
        assert reply["id"] == 2 and len(reply["result"]["structuredContent"]["content"]) > 40_000
        os.close(write_in)  # EOF: the server answers what it read and exits
        assert proc.wait(timeout=30) == 0
        assert os.get_blocking(read_in) and os.get_blocking(write_out)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for fd in (read_in, read_out, write_out):
            os.close(fd)
        with contextlib.suppress(OSError):
            os.close(write_in)
