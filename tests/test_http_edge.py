"""The HTTP edge under hostile requests, through raw sockets where httpx would normalise headers:
exact Origin matching, 400 for smuggling-shaped heads, a distinct answer for a wrong token, a
request-head timeout, one request id in flight per session."""

from __future__ import annotations

import json
import logging
import socket
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx2
import pytest

from mcp_localtools.transports import NetworkSettings
from mcp_localtools.transports.serve import (
    ACCEPT_ERROR_LOG_SECONDS,
    HEAD_TIMEOUT_SECONDS,
    _RateLimitedAcceptErrors,
    raise_open_file_limit,
)
from tests.helpers import INITIALIZE, call_message
from tests.test_transports import JSON_HEADERS, TOKEN, Served, start, stop


@pytest.fixture(scope="module")
def http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One Streamable HTTP server for the module's tests that share it."""
    server = start("streamable-http", tmp_path_factory.mktemp("http"))
    yield server
    assert TOKEN not in stop(server)


def _raw(served: Served, head: str, body: bytes = b"", *, timeout: float = 10) -> tuple[int, bytes]:
    """Send a raw request; return the status and the whole answer."""
    port = int(served.base.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(head.replace("\n", "\r\n").encode() + b"\r\n" + body)
        answer = b""
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
    return int(answer.split(b" ", 2)[1]), answer


def _head(port: str, *extra: str, body: bytes = b"{}") -> str:
    lines = [
        "POST /mcp HTTP/1.1",
        f"Host: 127.0.0.1:{port}",
        f"Authorization: Bearer {TOKEN}",
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
        "Connection: close",
        *extra,
    ]
    if not any(line.lower().startswith(("content-length", "transfer-encoding")) for line in extra):
        lines.append(f"Content-Length: {len(body)}")
    return "\n".join(lines) + "\n"


def test_an_origin_must_match_scheme_host_and_numeric_port_exactly(http: Served) -> None:
    port = http.base.rsplit(":", 1)[1]
    auth = {**JSON_HEADERS, "Authorization": f"Bearer {TOKEN}"}
    for origin in [
        f"http://localhost:{port}.evil.example",
        f"http://127.0.0.1:{port}@evil.example",
        "http://localhost:80abc",
        f"http://localhost:{port}/path",
        f"ftp://localhost:{port}",
        "http://localhost.evil.example",
        "null",
    ]:
        response = httpx2.post(http.url, json=INITIALIZE, headers={**auth, "Origin": origin}, timeout=10)
        assert response.status_code == 403, origin
        assert "Invalid Origin header" in response.text
    for origin in [f"http://localhost:{port}", f"https://127.0.0.1:{port}", "http://[::1]:9"]:
        response = httpx2.post(http.url, json=INITIALIZE, headers={**auth, "Origin": origin}, timeout=10)
        assert response.status_code == 200, origin


def test_configured_origins_match_exactly_too() -> None:
    settings = NetworkSettings(
        "streamable-http",
        "127.0.0.1",
        1,
        True,
        allowed_origins=("https://app.example", "http://dev.example:*"),
    )
    assert settings.origin_allowed("https://app.example")
    assert settings.origin_allowed("https://app.example:443")
    assert not settings.origin_allowed("https://app.example:8443")
    assert not settings.origin_allowed("https://app.example.evil")
    assert not settings.origin_allowed("http://app.example")
    assert settings.origin_allowed("http://dev.example:5173")
    assert not settings.origin_allowed("http://dev.example:5173.evil")


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["Host: evil.example"], "more than one Host header"),
        ([f"Authorization: Bearer {TOKEN}"], "more than one Authorization header"),
        (
            ["Transfer-Encoding: chunked", "Content-Length: 2"],
            "Transfer-Encoding together with Content-Length",
        ),
    ],
)
def test_duplicate_host_or_authorization_or_te_with_cl_get_400(
    http: Served, extra: list[str], words: str
) -> None:
    port = http.base.rsplit(":", 1)[1]
    body = b"2\r\n{}\r\n0\r\n\r\n" if "Transfer-Encoding: chunked" in extra else b"{}"
    status, answer = _raw(http, _head(port, *extra, body=body), body)  # within _raw's 10 s timeout
    assert status == 400, answer
    # h11 refuses a second Host and TE with CL itself; what gets past it, the guard names
    assert words.encode() in answer or b"Invalid HTTP request received." in answer


def test_a_wrong_token_is_called_invalid_and_a_missing_one_required(http: Served) -> None:
    wrong = httpx2.post(
        http.url, json=INITIALIZE, headers={**JSON_HEADERS, "Authorization": "Bearer wrong-token"}, timeout=10
    )
    assert wrong.status_code == 401
    assert wrong.json()["error_description"] == "invalid bearer token"
    assert 'error_description="invalid bearer token"' in wrong.headers["www-authenticate"]
    missing = httpx2.post(http.url, json=INITIALIZE, headers=JSON_HEADERS, timeout=10)
    assert missing.status_code == 401
    assert missing.json()["error_description"] == "Authentication required"


@pytest.fixture
def short_head_timeout() -> Iterator[str]:
    """The serving stack's own protocol class with a head timeout of 0.2 s (the server's is
    ``HEAD_TIMEOUT_SECONDS``) in front of ``/healthz``, served by uvicorn in a thread; yields
    its base URL."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.routing import Route

    from mcp_localtools.transports.serve import _bind, _head_timeout_protocol, _healthz

    listener = _bind("127.0.0.1", 0)
    app = Starlette(routes=[Route("/healthz", _healthz)])
    config = uvicorn.Config(app, log_config=None, access_log=False, http=_head_timeout_protocol(0.2))
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    try:
        while not server.started:
            assert thread.is_alive(), "uvicorn did not start"
            time.sleep(0.01)
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        listener.close()


def test_a_connection_that_never_finishes_its_head_is_closed(short_head_timeout: str) -> None:
    assert HEAD_TIMEOUT_SECONDS == 10.0  # what the server uses; this test takes 0.2 s
    port = int(short_head_timeout.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        assert sock.recv(1024) == b""  # closed by the server, the head never finished
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:  # a whole head is served
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        assert sock.makefile("rb").readline().startswith(b"HTTP/1.1 200")
    assert httpx2.get(short_head_timeout + "/healthz", timeout=10).status_code == 200


def test_a_second_request_with_an_id_in_flight_on_the_session_is_refused(http: Served) -> None:
    headers = {**JSON_HEADERS, "Authorization": f"Bearer {TOKEN}"}
    opened = httpx2.post(http.url, json=INITIALIZE, headers=headers, timeout=10)
    session = opened.headers["mcp-session-id"]
    headers |= {"Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-11-25"}
    httpx2.post(
        http.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers, timeout=10
    )
    first: list[httpx2.Response] = []
    began, go = http.root / "began", http.root / "go"
    waits = "touch began; while [ ! -e go ]; do sleep 0.02; done; echo first"
    slow = call_message(5, "shellcommand", {"commands": [waits]})
    thread = threading.Thread(
        target=lambda: first.append(httpx2.post(http.url, json=slow, headers=headers, timeout=60))
    )
    thread.start()
    deadline = time.monotonic() + 30
    while not began.exists():  # the first request's command is running
        assert time.monotonic() < deadline and thread.is_alive(), [r.text for r in first]
        time.sleep(0.02)
    second = httpx2.post(
        http.url, json=call_message(5, "statpath", {"path": "."}), headers=headers, timeout=10
    )
    assert not first  # answered while the first request was in flight
    go.touch()
    error = second.json()
    assert error["id"] == 5 and error["error"]["code"] == -32600
    assert "already used by a request still in flight" in error["error"]["message"]
    thread.join(timeout=60)
    began.unlink()
    go.unlink()
    assert first and first[0].status_code == 200 and "first" in first[0].text
    again = httpx2.post(
        http.url, json=call_message(5, "statpath", {"path": "."}), headers=headers, timeout=10
    )
    assert '"isError":false' in again.text.replace(" ", "")  # the id is free again once answered


def test_the_non_loopback_warning_says_the_token_travels_in_clear_text() -> None:
    settings = NetworkSettings("streamable-http", "0.0.0.0", 8765, True, allowed_hosts=("myhost.lan",))
    assert any("clear text" in warning and "TLS" in warning for warning in settings.check())


@pytest.mark.skipif(sys.platform == "win32", reason="no RLIMIT_NOFILE on Windows")
def test_the_soft_open_file_limit_is_raised_to_the_hard_limit() -> None:
    import resource

    before = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(256, before[1]), before[1]))
        changed = raise_open_file_limit()
        assert changed is not None
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        assert soft == changed[1] and (soft == hard or hard == resource.RLIM_INFINITY)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, before)


def test_repeated_accept_errors_are_logged_once_per_interval() -> None:
    gate = _RateLimitedAcceptErrors()

    def record() -> logging.LogRecord:
        return logging.LogRecord(
            "asyncio", logging.ERROR, __file__, 1, "socket.accept() out of system resource", None, None
        )

    passed = [gate.filter(record()) for _ in range(1000)]
    assert passed.count(True) == 1
    gate.last -= ACCEPT_ERROR_LOG_SECONDS
    later = record()
    assert gate.filter(later) and "999 more like it" in str(later.msg)
    assert gate.filter(logging.LogRecord("asyncio", logging.ERROR, __file__, 1, "other", None, None))


def test_at_max_sessions_a_new_client_evicts_the_least_recently_used_idle_session(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text(
        f'[paths]\nallowed_roots = ["{tmp_path}"]\n[server]\nmax_sessions = 3\n', encoding="utf-8"
    )
    server = start("streamable-http", tmp_path, "--config", str(config))
    try:
        headers = {**JSON_HEADERS, "Authorization": f"Bearer {TOKEN}"}

        def ping(session: str) -> int:
            message = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
            extra = {"Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-11-25"}
            return httpx2.post(server.url, json=message, headers={**headers, **extra}, timeout=10).status_code

        sessions = []
        for _ in range(3):
            opened = httpx2.post(server.url, json=INITIALIZE, headers=headers, timeout=10)
            assert opened.status_code == 200
            sessions.append(opened.headers["mcp-session-id"])
        assert ping(sessions[0]) == 200  # the first is now the most recently used; the second the least
        for _ in range(3):  # before: 503 "Too many open sessions" for 30 minutes
            opened = httpx2.post(server.url, json=INITIALIZE, headers=headers, timeout=10)
            assert opened.status_code == 200, opened.text
            sessions.append(opened.headers["mcp-session-id"])
        assert ping(sessions[1]) == 404 and ping(sessions[2]) == 404 and ping(sessions[0]) == 404
        assert ping(sessions[-1]) == 200
    finally:
        stop(server)


def test_new_sessions_arriving_together_close_idle_ones_and_are_never_refused(tmp_path: Path) -> None:
    """With 3 idle sessions open at max_sessions = 3, new sessions opened eight at a time got 503
    ("Too many open sessions": every slot held a session still being opened) and 404 (a session
    still being opened was closed as idle by another)."""
    config = tmp_path / "c.toml"
    config.write_text(
        f'[paths]\nallowed_roots = ["{tmp_path}"]\n[server]\nmax_sessions = 3\n', encoding="utf-8"
    )
    server = start("streamable-http", tmp_path, "--config", str(config))
    try:
        headers = {**JSON_HEADERS, "Authorization": f"Bearer {TOKEN}"}

        def open_one(_: int) -> int:
            return httpx2.post(server.url, json=INITIALIZE, headers=headers, timeout=30).status_code

        assert [open_one(n) for n in range(3)] == [200, 200, 200]  # idle from now on
        with ThreadPoolExecutor(8) as pool:
            codes = list(pool.map(open_one, range(48)))
        assert {code: codes.count(code) for code in set(codes)} == {200: 48}
    finally:
        stop(server)


def test_a_second_initialize_on_a_session_is_refused(http: Served) -> None:
    headers = {**JSON_HEADERS, "Authorization": f"Bearer {TOKEN}"}
    opened = httpx2.post(http.url, json=INITIALIZE, headers=headers, timeout=10)
    headers |= {"Mcp-Session-Id": opened.headers["mcp-session-id"], "Mcp-Protocol-Version": "2025-11-25"}
    httpx2.post(
        http.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers, timeout=10
    )
    again = httpx2.post(http.url, json={**INITIALIZE, "id": 2}, headers=headers, timeout=10)
    assert again.status_code == 200, again.text
    error = json.loads(next(line for line in again.text.splitlines() if line.startswith("data:"))[5:])
    assert error["id"] == 2 and error["error"]["code"] == -32600, error
    assert "already initialized" in error["error"]["message"]
    listed = httpx2.post(
        http.url, json={"jsonrpc": "2.0", "id": 3, "method": "tools/list"}, headers=headers, timeout=10
    )
    assert '"tools"' in listed.text


_HOSTILE_BODIES = [
    (
        b'{"jsonrpc":"2.0","id":12,"method":"ping","params":{"a":' + b"[" * 1000 + b"]" * 1000 + b"}}",
        -32600,
        12,
    ),
    (
        b'{"jsonrpc":"2.0","id":13,"method":"ping","params":{"a":' + b"[" * 100_000 + b"]" * 100_000 + b"}}",
        -32600,
        13,
    ),
    (b'{"jsonrpc":"2.0","id":' + b"9" * 5000 + b',"method":"ping"}', -32700, None),
    (b'{"jsonrpc":"2.0","id":14,"method":"ping","params":{"n":' + b"9" * 5000 + b"}}", -32700, 14),
    (b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', -32600, None),
    (b'{"jsonrpc":"2.0","id":null,"method":"tools/list"}', -32600, None),
    (b'{"jsonrpc":"2.0","id":{},"method":"ping"}', -32600, None),
]


@pytest.mark.parametrize("with_session", [False, True])
def test_hostile_json_gets_a_json_rpc_error_with_its_id_and_no_traceback(
    tmp_path: Path, with_session: bool
) -> None:
    http = start("streamable-http", tmp_path)
    try:
        headers = {**JSON_HEADERS, "Authorization": f"Bearer {TOKEN}"}
        if with_session:
            opened = httpx2.post(http.url, json=INITIALIZE, headers=headers, timeout=10)
            headers |= {
                "Mcp-Session-Id": opened.headers["mcp-session-id"],
                "Mcp-Protocol-Version": "2025-11-25",
            }
        for body, code, request_id in _HOSTILE_BODIES:
            answer = httpx2.post(http.url, content=body, headers=headers, timeout=30)
            assert answer.status_code == 400, (body[:60], answer.status_code, answer.text[:300])
            error = answer.json()
            assert error["id"] == request_id and error["error"]["code"] == code, (body[:60], error)
        alive = httpx2.post(
            http.url, json=INITIALIZE, headers=JSON_HEADERS | {"Authorization": f"Bearer {TOKEN}"}
        )
        assert alive.status_code == 200
    finally:
        log = stop(http)
    assert "Traceback" not in log and "RecursionError" not in log, log[-2000:]


@pytest.mark.parametrize("transport", ["streamable-http", "sse"])
def test_a_body_announced_over_the_cap_is_refused_from_the_header(tmp_path: Path, transport: str) -> None:
    """``Content-Length: 50000000`` and no body got no answer until the client gave up (the
    edge waited for the body before its cap was ever reached)."""
    served = start(transport, tmp_path)
    try:
        port = served.base.rsplit(":", 1)[1]
        path = "/mcp" if transport == "streamable-http" else "/messages/?session_id=0"
        head = _head(port, "Content-Length: 50000000").replace("POST /mcp ", f"POST {path} ")
        status, answer = _raw(served, head, b"", timeout=10)  # no body follows
        assert status == 413, answer[:300]
        assert b"50000000" in answer and b"max_request_body_bytes" in answer, answer[:300]
        body = json.dumps(INITIALIZE).encode()
        small = _head(port, body=body).replace("POST /mcp ", f"POST {path} ")
        expected = 200 if transport == "streamable-http" else 400  # sse: session_id 0 is no session
        assert _raw(served, small, body)[0] == expected  # a body within the cap is read as before
    finally:
        assert TOKEN not in stop(served)
