"""httpget through the SDK client, against a real HTTP server on 127.0.0.1, and the SSRF refusals.

Every network test talks to 127.0.0.1 only. The refusals of 169.254.169.254, 10.x and [::1]
happen before any connection: the address check runs on the literal address.
"""

from __future__ import annotations

import sys
import threading
import time
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from mcp.types import ImageContent

from mcp_localtools.config import parse_config
from tests.helpers import config_for, connect, error_code, make_png, measured_call, text_of

pytestmark = pytest.mark.anyio

PAGE = b"<html><head><title>T</title></head><body><h1>Hello</h1><p>A <a href='/x'>link</a>.</p></body></html>"


class _Handler(BaseHTTPRequestHandler):
    seen: list[str]

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, status: int, body: bytes, content_type: str, **headers: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        self.server.seen.append(f"{self.command} {self.path} host={self.headers.get('Host')}")  # type: ignore[attr-defined]
        port = self.server.server_address[1]  # type: ignore[index]
        routes: dict[str, tuple[int, bytes, str, dict[str, str]]] = {
            "/page.html": (200, PAGE, "text/html; charset=utf-8", {}),
            "/notes.txt": (200, "naïve text\n".encode(), "text/plain; charset=utf-8", {}),
            "/data.json": (200, b'{"a": 1}', "application/json", {}),
            "/pic.png": (200, make_png(40, 30), "image/png", {}),
            "/blob": (200, bytes(range(256)) * 8, "application/octet-stream", {}),
            "/big.txt": (200, b"x" * 200_000, "text/plain", {}),
            "/missing": (404, b"no such page", "text/plain", {}),
            "/to-page": (302, b"", "text/plain", {"Location": "/page.html"}),
            "/to-private": (302, b"", "text/plain", {"Location": "http://10.23.45.67/secret"}),
            "/to-metadata": (
                302,
                b"",
                "text/plain",
                {"Location": "http://169.254.169.254/latest/meta-data/"},
            ),
            "/to-localhost": (302, b"", "text/plain", {"Location": f"http://localhost:{port}/page.html"}),
            "/loop": (302, b"", "text/plain", {"Location": "/loop"}),
            "/huge.png": (200, b"\x89PNG\r\n\x1a\n" + bytes(20_000), "image/png", {}),
        }
        if self.path == "/slow":
            time.sleep(2.5)  # past a 1 s [web] timeout_seconds: the client is gone by then
            return
        status, body, content_type, headers = routes.get(self.path, (404, b"?", "text/plain", {}))
        self._send(status, body, content_type, **headers)


@pytest.fixture
def site() -> Iterator[ThreadingHTTPServer]:
    """A real HTTP server on 127.0.0.1 (an ephemeral port), stopped after the test."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.seen = []  # type: ignore[attr-defined]
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def _url(site: ThreadingHTTPServer, path: str) -> str:
    return f"http://127.0.0.1:{site.server_address[1]}{path}"


def _allowing(tmp_path: Path, *hosts: str, **web: Any) -> Any:
    return config_for(tmp_path, web={"allowed_hosts": list(hosts), **web})


async def test_an_html_page_comes_back_as_markdown_with_status_type_and_final_url(
    tmp_path: Path, site: ThreadingHTTPServer
) -> None:
    async with connect(_allowing(tmp_path, "127.0.0.1")) as client:
        result = await client.call_tool("httpget", {"url": _url(site, "/to-page")})
    assert error_code(result) is None, text_of(result)
    data = result.structured_content or {}
    assert data["status"] == 200
    assert data["kind"] == "markdown"
    assert data["contentType"].startswith("text/html")
    assert data["finalUrl"] == _url(site, "/page.html")
    assert data["redirects"] == [_url(site, "/to-page")]
    text = text_of(result)
    assert "# Hello" in text and "[link](" in text and "<h1>" not in text


async def test_raw_keeps_the_html(tmp_path: Path, site: ThreadingHTTPServer) -> None:
    async with connect(_allowing(tmp_path, "127.0.0.1")) as client:
        result = await client.call_tool("httpget", {"url": _url(site, "/page.html"), "raw": True})
    assert "<h1>Hello</h1>" in text_of(result)
    assert (result.structured_content or {})["kind"] == "text"


async def test_text_and_json_come_back_as_text_decoded_by_their_charset(
    tmp_path: Path, site: ThreadingHTTPServer
) -> None:
    async with connect(_allowing(tmp_path, "127.0.0.1")) as client:
        notes = await client.call_tool("httpget", {"url": _url(site, "/notes.txt")})
        data = await client.call_tool("httpget", {"url": _url(site, "/data.json")})
    assert "naïve text" in text_of(notes)
    assert '{"a": 1}' in text_of(data)


async def test_an_image_comes_back_as_image_content(tmp_path: Path, site: ThreadingHTTPServer) -> None:
    async with connect(_allowing(tmp_path, "127.0.0.1")) as client:
        result = await client.call_tool("httpget", {"url": _url(site, "/pic.png")})
    images = [block for block in result.content if isinstance(block, ImageContent)]
    assert len(images) == 1 and images[0].mime_type == "image/png"
    assert (result.structured_content or {})["returned"]["width"] == 40


async def test_other_types_are_described_not_returned(tmp_path: Path, site: ThreadingHTTPServer) -> None:
    async with connect(_allowing(tmp_path, "127.0.0.1")) as client:
        result = await client.call_tool("httpget", {"url": _url(site, "/blob")})
    data = result.structured_content or {}
    assert data["kind"] == "binary" and data["bytesRead"] == 2048
    assert "application/octet-stream" in text_of(result)


async def test_a_404_is_a_result_not_an_error(tmp_path: Path, site: ThreadingHTTPServer) -> None:
    async with connect(_allowing(tmp_path, "127.0.0.1")) as client:
        result = await client.call_tool("httpget", {"url": _url(site, "/missing")})
    assert error_code(result) is None
    assert (result.structured_content or {})["status"] == 404
    assert "no such page" in text_of(result)


async def test_head_returns_the_headers_without_a_body(tmp_path: Path, site: ThreadingHTTPServer) -> None:
    async with connect(_allowing(tmp_path, "127.0.0.1")) as client:
        result = await client.call_tool("httpget", {"url": _url(site, "/page.html"), "method": "HEAD"})
    data = result.structured_content or {}
    assert data["kind"] == "none" and data["contentLength"] == len(PAGE) and data["bytesRead"] == 0
    assert site.seen[-1].startswith("HEAD /page.html")  # type: ignore[attr-defined]


async def test_a_body_over_the_cap_is_cut_and_says_so(tmp_path: Path, site: ThreadingHTTPServer) -> None:
    async with connect(_allowing(tmp_path, "127.0.0.1", max_bytes=4096)) as client:
        result = await client.call_tool("httpget", {"url": _url(site, "/big.txt"), "maxBytes": 100_000})
    data = result.structured_content or {}
    assert data["bytesRead"] == 4096 and data["truncated"] is True
    assert "4096 bytes" in data["note"]


async def test_a_fetch_past_the_time_budget_is_a_timeout(tmp_path: Path, site: ThreadingHTTPServer) -> None:
    async with connect(_allowing(tmp_path, "127.0.0.1", timeout_seconds=1)) as client:
        result = await client.call_tool("httpget", {"url": _url(site, "/slow")})
    assert error_code(result) == "timeout"
    assert "took longer than 1 s" in text_of(result)


async def test_an_image_over_the_byte_budget_is_described_not_decoded(
    tmp_path: Path, site: ThreadingHTTPServer
) -> None:
    async with connect(_allowing(tmp_path, "127.0.0.1")) as client:
        result = await client.call_tool("httpget", {"url": _url(site, "/huge.png"), "maxBytes": 4096})
    data: dict[str, Any] = result.structured_content or {}
    assert not result.is_error and data["kind"] == "binary" and data["truncated"] is True
    assert data["bytesRead"] == 4096 and "image larger than 4096 bytes" in text_of(result)
    assert not [block for block in result.content if isinstance(block, ImageContent)]


async def test_too_many_redirects_is_a_network_error(tmp_path: Path, site: ThreadingHTTPServer) -> None:
    async with connect(_allowing(tmp_path, "127.0.0.1", max_redirects=3)) as client:
        result = await client.call_tool("httpget", {"url": _url(site, "/loop")})
    assert error_code(result) == "network_error"
    assert len(site.seen) == 4  # type: ignore[attr-defined]


async def test_the_request_keeps_the_host_name_in_the_host_header(
    tmp_path: Path, site: ThreadingHTTPServer
) -> None:
    port = site.server_address[1]
    async with connect(_allowing(tmp_path, "localhost")) as client:
        result = await client.call_tool("httpget", {"url": f"http://localhost:{port}/page.html"})
    if error_code(result) == "network_error":  # localhost resolved to ::1 first, where nothing listens
        pytest.skip("localhost resolves to ::1 here")
    assert error_code(result) is None, text_of(result)
    assert site.seen[-1] == f"GET /page.html host=localhost:{port}"  # type: ignore[attr-defined]


# --- SSRF: the default config refuses every non-public address, before connecting ---------------


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:{port}/page.html",
        "http://localhost:{port}/page.html",  # a DNS name resolving to loopback
        "http://[::1]:{port}/page.html",
        "http://169.254.169.254/latest/meta-data/",  # cloud metadata: refused before connecting
        "http://10.23.45.67/",  # a private address
        "http://192.168.1.1/",
        "http://[::ffff:127.0.0.1]:{port}/",  # IPv4-mapped loopback
        "http://0.0.0.0:{port}/",
    ],
)
async def test_the_default_config_refuses_loopback_private_and_metadata_addresses(
    tmp_path: Path, site: ThreadingHTTPServer, url: str
) -> None:
    async with connect(config_for(tmp_path)) as client:
        result = await client.call_tool("httpget", {"url": url.format(port=site.server_address[1])})
    assert error_code(result) == "policy_violation", text_of(result)  # refused, not timed out
    assert "[web] allowed_hosts" in text_of(result)
    assert site.seen == []  # type: ignore[attr-defined]


async def test_a_redirect_from_an_allowed_host_to_a_private_one_is_refused(
    tmp_path: Path, site: ThreadingHTTPServer
) -> None:
    async with connect(_allowing(tmp_path, "127.0.0.1")) as client:
        private = await client.call_tool("httpget", {"url": _url(site, "/to-private")})
        metadata = await client.call_tool("httpget", {"url": _url(site, "/to-metadata")})
        by_name = await client.call_tool("httpget", {"url": _url(site, "/to-localhost")})
    for result in (private, metadata, by_name):
        assert error_code(result) == "policy_violation", text_of(result)
    assert "10.23.45.67" in text_of(private)
    assert "169.254.169.254" in text_of(metadata)
    assert "localhost" in text_of(by_name)


async def test_listing_a_network_allows_it_but_never_the_metadata_address(tmp_path: Path) -> None:
    async with connect(_allowing(tmp_path, "169.254.0.0/16")) as client:
        result = await client.call_tool("httpget", {"url": "http://169.254.169.254/"})
    assert error_code(result) == "policy_violation"
    assert "metadata" in text_of(result)


async def test_a_bare_star_means_any_public_host_not_loopback(
    tmp_path: Path, site: ThreadingHTTPServer
) -> None:
    async with connect(_allowing(tmp_path, "*")) as client:
        result = await client.call_tool("httpget", {"url": _url(site, "/page.html")})
    assert error_code(result) == "policy_violation"


async def test_a_host_outside_a_nonempty_allowlist_is_refused_before_resolving(tmp_path: Path) -> None:
    async with connect(_allowing(tmp_path, "docs.example.org")) as client:
        result = await client.call_tool("httpget", {"url": "https://other.invalid/"})
    assert error_code(result) == "policy_violation"
    assert "not in [web] allowed_hosts" in text_of(result)


async def test_blocked_hosts_win_over_allowed_hosts(tmp_path: Path, site: ThreadingHTTPServer) -> None:
    config = config_for(tmp_path, web={"allowed_hosts": ["127.0.0.1"], "blocked_hosts": ["127.0.0.0/8"]})
    async with connect(config) as client:
        result = await client.call_tool("httpget", {"url": _url(site, "/page.html")})
    assert error_code(result) == "policy_violation"
    assert "blocked_hosts" in text_of(result)


@pytest.mark.parametrize(
    ("url", "code", "says"),
    [
        ("file:///etc/passwd", "policy_violation", ["file: URLs are not fetched", "readfile", "/etc/passwd"]),
        ("FILE://localhost/etc/hosts", "policy_violation", ["file: URLs are not fetched", "/etc/hosts"]),
        ("file:notes.txt", "policy_violation", ["file: URLs are not fetched", "readfile"]),
        ("example.com/docs", "invalid_arguments", ["no scheme", "https://example.com/docs"]),
        ("www.example.com", "invalid_arguments", ["no scheme", "https://www.example.com"]),
        ("localhost:8080/x", "invalid_arguments", ["no scheme", "https://localhost:8080/x"]),
        ("/etc/passwd", "invalid_arguments", ["a file path", "readfile"]),
        ("./notes.txt", "invalid_arguments", ["a file path", "readfile"]),
        ("ftp://127.0.0.1/", "policy_violation", ["refusing scheme 'ftp'", "http and https"]),
        ("data:text/plain,hi", "policy_violation", ["refusing scheme 'data'", "http and https"]),
    ],
)
async def test_a_url_that_is_no_http_url_is_refused_saying_what_to_do_instead(
    tmp_path: Path, url: str, code: str, says: list[str]
) -> None:
    """``file:///etc/passwd`` was refused with "refusing scheme ''"."""
    async with connect(config_for(tmp_path)) as client:
        result = await client.call_tool("httpget", {"url": url})
    assert error_code(result) == code, text_of(result)
    assert all(part in text_of(result) for part in says), text_of(result)
    assert "scheme ''" not in text_of(result)


async def test_a_proxy_from_the_environment_receives_the_request(
    tmp_path: Path, site: ThreadingHTTPServer
) -> None:
    from mcp import Client

    from mcp_localtools.server import build_server

    config = parse_config(
        {"paths": {"allowed_roots": [str(tmp_path)]}, "web": {"allowed_hosts": ["127.0.0.1"]}}
    )
    proxy = f"http://127.0.0.1:{site.server_address[1]}"
    server = build_server(config, environ={"http_proxy": proxy})
    async with Client(server, raise_exceptions=True) as client:
        # the URL's own port is closed; the "proxy" (our test server) answers the absolute-form request
        result = await client.call_tool("httpget", {"url": "http://127.0.0.1:9/page.html"})
    assert error_code(result) is None, text_of(result)
    assert site.seen[-1].startswith("GET http://127.0.0.1:9/page.html")  # type: ignore[attr-defined]


async def test_read_only_leaves_httpget_out_unless_hosts_are_allowlisted(tmp_path: Path) -> None:
    async with connect(config_for(tmp_path, tools={"read_only": True})) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
    assert "httpget" not in names and "readfile" in names
    async with connect(
        config_for(tmp_path, tools={"read_only": True}, web={"allowed_hosts": ["docs.python.org"]})
    ) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
    assert "httpget" in names


def _gzip(chunks: Iterator[bytes]) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS, 9, zlib.Z_RLE)
    return b"".join([*(compressor.compress(chunk) for chunk in chunks), compressor.flush()])


@pytest.fixture(scope="module")
def bomb_site() -> Iterator[str]:
    """A loopback server whose /bomb is 256 MiB of zeros gzipped twice (about 1 KB on the wire,
    sent as ``Content-Encoding: gzip, gzip``), /single the same gzipped once (250 KB), /br a body
    in an encoding httpget does not know, /redirect-bomb a redirect carrying the bomb."""
    inner = _gzip(bytes(1 << 20) for _ in range(256))
    bodies = {
        "/bomb": (_gzip(iter([inner])), "gzip, gzip", 200),
        "/gzip-in-gzip": (_gzip(iter([inner])), "gzip", 200),
        "/single": (inner, "gzip", 200),
        "/deflate": (zlib.compress(b"plain words\n" * 100), "deflate", 200),
        "/br": (b"\x1b\x00\x00", "br", 200),
        "/redirect-bomb": (_gzip(iter([inner])), "gzip, gzip", 302),
    }

    class Bombs(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            body, encoding, status = bodies.get(self.path, (b"ok", "identity", 200))
            self.send_response(status)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Encoding", encoding)
            self.send_header("Content-Length", str(len(body)))
            if status == 302:
                self.send_header("Location", "/ok")
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Bombs)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def _fetch_measured(tmp_path: Path, url: str, base: str) -> dict[str, Any]:
    config = {"paths": {"allowed_roots": [str(tmp_path)]}, "web": {"allowed_hosts": ["127.0.0.1"]}}
    warm = [("httpget", {"url": base + "/ok"})]  # imports httpx
    return measured_call(config, "httpget", {"url": url}, warm=warm)


@pytest.mark.skipif(sys.platform != "linux", reason="VmHWM comes from /proc")
@pytest.mark.parametrize("path", ["/bomb", "/gzip-in-gzip", "/single", "/redirect-bomb"])
def test_a_decompression_bomb_costs_no_more_than_max_bytes(tmp_path: Path, bomb_site: str, path: str) -> None:
    report = _fetch_measured(tmp_path, bomb_site + path, bomb_site)
    assert report["grown_kib"] < 64 * 1024, report
    if path == "/bomb":
        assert report["error"] == "unsupported_content"
        assert "gzip, gzip" in report["text"] and "one content encoding" in report["text"]
    elif path == "/redirect-bomb":
        assert report["error"] is None and report["structured"]["finalUrl"].endswith("/ok")
    elif path == "/gzip-in-gzip":  # one layer decoded: what is left is a small gzip file
        assert report["error"] is None and report["structured"]["bytesRead"] < 1024 * 1024
    else:
        structured = report["structured"]
        assert structured["truncated"] is True and structured["bytesRead"] == 4 * 1024 * 1024, structured
        assert "decoded" in structured["note"] and "cut" in structured["note"]


async def test_one_known_content_encoding_is_decoded_and_others_are_refused(
    tmp_path: Path, bomb_site: str
) -> None:
    async with connect(_allowing(tmp_path, "127.0.0.1")) as client:
        deflated = await client.call_tool("httpget", {"url": bomb_site + "/deflate"})
        brotli = await client.call_tool("httpget", {"url": bomb_site + "/br"})
    assert text_of(deflated).endswith("plain words\n" * 2)
    assert (deflated.structured_content or {})["bytesRead"] == 1200
    assert error_code(brotli) == "unsupported_content"
    assert "'br'" in text_of(brotli) and "gzip" in text_of(brotli)
