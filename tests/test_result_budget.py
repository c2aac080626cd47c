"""Every tool's largest result, under the default configuration, reaches a model whole (issue 35,
item 1): either copy of it, the text items and the compact JSON of ``structuredContent`` (what
Claude Code forwards, and shows inline only up to about 50,000 characters), stays within 45,000
characters, and a result that was cut says how to go on.

The tools are enumerated from the server's own ``tools/list`` (``selecttools`` included), so a
tool added later fails here until it has a case below or an exemption with a reason.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import CallToolResult, TextContent

from mcp_localtools.config import Config, LimitsConfig
from mcp_localtools.server import build_server
from tests.helpers import config_for, make_large_png, text_of

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform == "win32", reason="the exec cases use a POSIX shell"),
]

INLINE_CHARS = 45_000
"""Either copy of a result, at most: Claude Code showed 48,192 characters of forwarded JSON inline
and turned 51,102 into a 2 KB preview and a file path (issue 35)."""

HINTS = (
    "offset=",
    "startLine=",
    "continue",
    "narrow",
    "raise",
    "lower",
    "give a",
    "mcp-localtools://",
    "processoutput",
    "readtextrange",
    "download",
)
"""Words of the sentence with which a cut result's text says how to get the rest."""

EXEMPT: dict[str, str] = {}
"""Tools not asked here, each with the reason (none today)."""


def copies(result: CallToolResult) -> tuple[int, int]:
    """(characters of the text items, characters of the compact JSON of structuredContent)."""
    text = sum(len(item.text) for item in result.content if isinstance(item, TextContent))
    structured = result.structured_content
    data = len(json.dumps(structured, ensure_ascii=False, separators=(",", ":"))) if structured else 0
    return text, data


def was_cut(result: CallToolResult) -> bool:
    """Whether the result says it left something out."""
    data = result.structured_content or {}
    blob = json.dumps(data)
    return (
        '"truncated": true' in blob
        or '"more": true' in blob
        or 'Truncated": true' in blob
        or "[result cut to the" in text_of(result)
    )


def says_how_to_go_on(result: CallToolResult) -> bool:
    """A cut result says so in both copies, and its text how to get the rest: a continuation
    argument, a resource, or how to narrow the request."""
    blob = json.dumps(result.structured_content or {})
    marked = any(
        f'{field}": ' in blob for field in ("truncated", "Truncated", "more", "nextOffset", "nextStartLine")
    )
    return marked and any(hint in text_of(result) for hint in HINTS)


DUP = 'a duplicated "line" with a backslash \\ and wörds'


class _Site(BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        body = "".join(f"line {n} of a long page of text, with some words on it\n" for n in range(40_000))
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@contextmanager
def page_site() -> Iterator[str]:
    """A real HTTP server on 127.0.0.1 serving a 2.4 MB text page; its URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Site)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/page.txt"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@pytest.fixture
def site() -> Iterator[str]:
    with page_site() as url:
        yield url


def make_project(root: Path) -> None:
    """Big files, trees and code under ``root``."""
    (root / "big.log").write_text(
        "".join(
            f'2026-12-06T10:{n % 60:02}:00 INFO request {n} served in {n % 97} ms "quoted"\n'
            for n in range(60_000)
        )
    )
    (root / "wide.txt").write_text("".join(f"{n:06} " + 'wörd \\ "x" ' * 30 + "\n" for n in range(5000)))
    for top in range(60):
        folder = root / "tree" / f"dir{top:03}"
        folder.mkdir(parents=True)
        for index in range(100):
            (folder / f"file-with-a-longer-name-{index:03}.txt").write_text("needle here\n" * 3)
    flat = root / "flat"
    flat.mkdir()
    for index in range(6000):
        (flat / f"entry-number-{index:05}.dat").write_bytes(b"x")
    code = root / "code"
    code.mkdir()
    lines = ["def target(value):", "    return value", ""]
    for index in range(400):
        lines += [f"def caller_{index}(item):", f"    return target(item) + target({index})", ""]
    for index in range(400):
        lines += [
            f"class Widget{index}:",
            f"    def method_{index}(self):",
            "        return target(self)",
            "",
        ]
    (code / "module.py").write_text("\n".join(lines) + "\n")
    for index in range(30):
        (code / f"other_{index}.py").write_text(
            "from module import target\n\n"
            + "".join(f"def use_{index}_{n}():\n    return target({n})\n\n" for n in range(60))
        )
    (root / "dups1.txt").write_text((DUP + "\n") * 3000)
    (root / "dups2.txt").write_text((DUP + "\n") * 3000)
    (root / "picture.png").write_bytes(make_large_png(3000, 2000))
    (root / "script.sh").write_text("#!/bin/sh\nseq 1 300000\nseq 1 100000 >&2\n")


Call = Callable[[Client, Path, str], Awaitable[list[CallToolResult]]]


async def _one(client: Client, tool: str, arguments: dict[str, Any]) -> list[CallToolResult]:
    return [await client.call_tool(tool, arguments)]


async def _processes(client: Client, root: Path, url: str) -> dict[str, list[CallToolResult]]:
    """startprocess, waitprocess, processoutput, writeprocess, listprocesses, stopprocess on
    processes with a lot of output."""
    started = await client.call_tool(
        "startprocess",
        {"command": "seq 1 400000; seq 1 100000 >&2; echo done-marker", "waitFor": "done-marker"},
    )
    pid = (started.structured_content or {}).get("processID", "")
    waited = await client.call_tool("waitprocess", {"processID": pid, "timeoutSeconds": 30})
    output = await client.call_tool("processoutput", {"processID": pid, "stdoutOffset": 0, "stderrOffset": 0})
    repl = await client.call_tool("startprocess", {"command": "cat"})
    cat = (repl.structured_content or {}).get("processID", "")
    written = await client.call_tool("writeprocess", {"processID": cat, "text": "y" * 300_000 + "\n"})
    await client.call_tool("waitprocess", {"processID": cat, "waitFor": "y{1000}", "timeoutSeconds": 10})
    for index in range(4):
        await client.call_tool("startprocess", {"command": f"sleep 30 # {'padding ' * 40} {index}"})
    long = await client.call_tool(
        "startprocess",
        {
            "command": "cat > started.txt <<'EOF'\n" + "a heredoc line\n" * 4000 + "EOF\nseq 1 9999",
            "waitFor": "^9999$",
        },
    )
    listed = await client.call_tool("listprocesses", {})
    stopped = await client.call_tool("stopprocess", {"processID": cat})
    return {
        "startprocess": [started, long],
        "waitprocess": [waited],
        "processoutput": [output],
        "writeprocess": [written],
        "listprocesses": [listed],
        "stopprocess": [stopped],
    }


CASES: dict[str, Callable[[Client, Path, str], Awaitable[list[CallToolResult]]]] = {
    # A recursive copy answers with counts, whatever the tree's size: one folder of ``tree``
    # (100 files) gives the same result as all of it (6,000 files, 4-15 s of copying).
    "copypath": lambda c, r, u: _one(
        c, "copypath", {"source": "tree/dir000", "destination": "tree-copy", "recursive": True}
    ),
    "deletefile": lambda c, r, u: _one(c, "deletefile", {"path": "tree-copy", "recursive": True}),
    "deletetextlines": lambda c, r, u: _one(
        c, "deletetextlines", {"path": "dups1.txt", "matchLines": [DUP], "expectedDeletions": 3000}
    ),
    "directorytree": lambda c, r, u: _one(c, "directorytree", {"path": "tree", "maxEntries": 10_000}),
    "editfile": lambda c, r, u: _one(
        c,
        "editfile",
        {"path": "big.log", "edits": [{"oldText": "INFO", "newText": "NOTICE", "replaceAll": True}]},
    ),
    "findsymbol": lambda c, r, u: _one(
        c, "findsymbol", {"name": "target", "includeReferences": True, "maxResults": 500}
    ),
    "findtext": lambda c, r, u: _one(
        c, "findtext", {"path": "wide.txt", "query": "wörd", "contextLines": 2000, "maxMatches": 500}
    ),
    "globfiles": lambda c, r, u: _one(c, "globfiles", {"pattern": "**/*", "maxResults": 10_000}),
    "httpget": lambda c, r, u: _one(c, "httpget", {"url": u, "maxBytes": 10_000_000}),
    "inserttextlines": lambda c, r, u: _one(
        c,
        "inserttextlines",
        {"path": "wide.txt", "linesToInsert": ['inserted "line" ' * 10] * 3000, "position": "start"},
    ),
    "listdirectory": lambda c, r, u: _one(
        c, "listdirectory", {"path": "flat", "details": True, "maxEntries": 10_000}
    ),
    "makedirectory": lambda c, r, u: _one(c, "makedirectory", {"path": "a/" * 50 + "deep", "parents": True}),
    "mimeforextension": lambda c, r, u: _one(c, "mimeforextension", {"extension": "tar.gz"}),
    "mimeforpath": lambda c, r, u: _one(c, "mimeforpath", {"path": "big.log"}),
    "movepath": lambda c, r, u: _one(c, "movepath", {"source": "flat", "destination": "flat-moved"}),
    "readfile": lambda c, r, u: _many(
        c,
        ("readfile", {"path": "big.log", "limit": 100_000}),
        ("readfile", {"path": "big.log", "tail": 100_000}),
        ("readfile", {"path": "wide.txt", "limit": 100_000, "lineNumbers": True}),
    ),
    "readimage": lambda c, r, u: _one(c, "readimage", {"path": "picture.png", "includeBase64Data": True}),
    "readtextrange": lambda c, r, u: _one(
        c, "readtextrange", {"path": "wide.txt", "startLine": 1, "endLine": 5000}
    ),
    "replaceinfiles": lambda c, r, u: _one(
        c,
        "replaceinfiles",
        {"pattern": "needle", "replacement": "pin", "include": ["tree/dir00[0-4]/*.txt"], "maxFiles": 500},
    ),
    "replacetextlines": lambda c, r, u: _one(
        c,
        "replacetextlines",
        {
            "path": "dups2.txt",
            "matchLines": [DUP],
            "replaceWithLines": [DUP + "!"],
            "expectedReplacements": 3000,
        },
    ),
    "repomap": lambda c, r, u: _one(c, "repomap", {"path": "code", "maxChars": 40_000}),
    "runscript": lambda c, r, u: _one(c, "runscript", {"path": "script.sh"}),
    "searchfiles": lambda c, r, u: _many(
        c,
        (
            "searchfiles",
            {"pattern": "request", "outputMode": "matches", "maxResults": 10_000, "contextLines": 5},
        ),
        ("searchfiles", {"pattern": "needle", "outputMode": "files", "maxResults": 10_000}),
    ),
    "semanticsearch": lambda c, r, u: _one(
        c,
        "semanticsearch",
        {"query": "target caller widget method", "maxResults": 50, "includeContent": True},
    ),
    "shellcommand": lambda c, r, u: _many(
        c,
        ("shellcommand", {"commands": ["seq 1 300000", "seq 1 300000 >&2; seq 1 9999"]}),
        ("shellcommand", {"commands": [f"seq 1 9999 # {n}" for n in range(64)], "executeParallel": True}),
        (
            "shellcommand",
            {
                "commands": [
                    "cat > heredoc.txt <<'EOF'\n" + "a line of a long heredoc\n" * 2000 + "EOF\nseq 1 9999"
                ]
            },
        ),
    ),
    "statpath": lambda c, r, u: _one(c, "statpath", {"path": "big.log"}),
    "symbols": lambda c, r, u: _many(
        c, ("symbols", {"path": "code/module.py"}), ("symbols", {"path": "code"})
    ),
    "writefile": lambda c, r, u: _one(c, "writefile", {"path": "written.txt", "content": "w" * 1_000_000}),
    "selecttools": lambda c, r, u: _one(c, "selecttools", {}),
}
"""Per tool: the calls that give its largest results (a case may make several calls)."""

PROCESS_TOOLS = (
    "startprocess",
    "waitprocess",
    "processoutput",
    "writeprocess",
    "listprocesses",
    "stopprocess",
)


async def _many(client: Client, *calls: tuple[str, dict[str, Any]]) -> list[CallToolResult]:
    return [await client.call_tool(tool, arguments) for tool, arguments in calls]


async def largest_results(client: Client, root: Path, url: str) -> dict[str, list[CallToolResult]]:
    """Every case's results, by tool, in a project ``make_project`` made under ``root`` (the
    served page at ``url``); ``benchmarks/result_sizes.py`` prints them."""
    results = {name: await CASES[name](client, root, url) for name in sorted(CASES)}
    results.update(await _processes(client, root, url))
    return results


def server_config(root: Path) -> Config:
    """The default configuration, rooted in ``root``, with ``selecttools`` served and
    ``httpget`` allowed to reach 127.0.0.1."""
    return config_for(root, server={"select_tools": True}, web={"allowed_hosts": ["127.0.0.1"]})


def test_the_default_budget_is_what_claude_code_shows_inline() -> None:
    assert LimitsConfig().max_result_chars == INLINE_CHARS


async def test_every_tools_largest_result_fits_in_either_copy(tmp_path: Path, site: str) -> None:
    make_project(tmp_path)
    config = server_config(tmp_path)
    assert config.limits.max_result_chars == LimitsConfig().max_result_chars  # the default budget
    sizes: dict[str, tuple[int, int]] = {}
    problems: list[str] = []
    async with Client(
        build_server(config, environ=dict(os.environ)), mode="legacy", raise_exceptions=True
    ) as client:
        served = {tool.name for tool in (await client.list_tools()).tools}
        missing = served - CASES.keys() - set(PROCESS_TOOLS) - EXEMPT.keys()
        assert not missing, f"tools without a largest-result case here: {sorted(missing)}"
        with anyio.fail_after(300):
            results = await largest_results(client, tmp_path, site)
    for name, calls in sorted(results.items()):
        for index, result in enumerate(calls):
            text, data = copies(result)
            sizes[f"{name}[{index}]"] = (text, data)
            if max(text, data) > INLINE_CHARS:
                problems.append(f"{name}[{index}]: text {text:,}, structured JSON {data:,} characters")
            if result.is_error:
                problems.append(f"{name}[{index}] failed: {text_of(result)[:300]}")
            elif was_cut(result) and not says_how_to_go_on(result):
                problems.append(f"{name}[{index}] was cut without saying how to get the rest")
            if name == "shellcommand" and not result.is_error:
                ran = (result.structured_content or {}).get("results")
                if not ran:
                    problems.append(f"{name}[{index}]: no command's result kept: {text_of(result)[:300]}")
                elif not all("9998\n9999" in entry["stdout"] or "elided" in entry["stdout"] for entry in ran):
                    problems.append(f"{name}[{index}]: the output was not kept")
                elif "9998\n9999" not in text_of(result):
                    problems.append(f"{name}[{index}]: the output was not kept in the text")
    assert not problems, "\n".join(problems) + "\n" + json.dumps(sizes)
