"""A seeded fuzz run of the stdio transport: 10,000 messages from a grammar of JSON-RPC shapes
(requests, notifications, client replies, bad envelopes, bad ids, deep nesting, long integers,
broken JSON and UTF-8, batches, blank lines) through the installed server. Every request gets
exactly one reply, a notification or a client reply none, and the server answers everything and
exits cleanly at EOF. The expected reply of each line comes from the grammar, not from the
server: a line with a valid top-level request id (always written first) is answered under that
id, every other line that must be answered is answered with ``id: null``."""

from __future__ import annotations

import json
import random
import resource
import subprocess
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.helpers import INITIALIZE, INITIALIZED, installed_command

SEED = 26
MESSAGES = 10_000

_METHODS = [
    "ping",
    "tools/list",
    "resources/list",
    "resources/templates/list",
    "prompts/list",
    "resources/read",
    "tools/call",
    "initialize",
    "completion/complete",
    "sampling/createMessage",
    "no/such/method",
    "notifications/initialized",
    "",
]
_NOTIFICATIONS = [
    "notifications/initialized",
    "notifications/progress",
    "notifications/roots/list_changed",
    "notifications/no_such_thing",
]
_TOOL_CALLS: list[dict[str, Any]] = [
    {"name": "mimeforextension", "arguments": {"extension": ".py"}},
    {"name": "mimeforextension", "arguments": {"extension": 5}},
    {"name": "statpath", "arguments": {"path": "."}},
    {"name": "statpath", "arguments": {"path": "/etc/hostname"}},
    {"name": "nosuchtool", "arguments": {}},
    {"name": "statpath"},
    {"name": "statpath", "arguments": {"path": "."}, "_meta": {"progressToken": 1}},
    {"name": 5, "arguments": {}},
    {"arguments": {}},
]


@dataclass(frozen=True)
class _Line:
    data: bytes
    reply: str  # "id" (answered under its id), "null" (answered with id null), "none"
    request_id: int | str | None = None


class _Grammar:
    """Builds lines and says what each must get back."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.next_id = 1000

    def fresh_id(self) -> int | str:
        self.next_id += 1
        return self.next_id if self.rng.random() < 0.7 else f"r-{self.next_id}"

    def value(self, depth: int = 0) -> Any:
        rng = self.rng
        kind = rng.randrange(9 if depth < 3 else 6)
        if kind == 0:
            return rng.randint(-(2**70), 2**70)
        if kind == 1:
            return rng.random() * 10 ** rng.randint(-5, 300)
        if kind == 2:
            return "".join(
                rng.choice('ab "\\/\n\t\u00e9\u4e2d\U0001f600{}[]') for _ in range(rng.randrange(12))
            )
        if kind == 3:
            return rng.choice([True, False, None])
        if kind in (4, 5):
            return rng.choice(["", "x", "id", "method"])
        if kind == 6:
            return [self.value(depth + 1) for _ in range(rng.randrange(4))]
        return {rng.choice(["a", "id", "method", "params", "_meta"]): self.value(depth + 1) for _ in range(3)}

    def params(self, method: str) -> tuple[bool, Any]:
        rng = self.rng
        roll = rng.random()
        if roll < 0.15:
            return False, None
        if roll < 0.25:
            return True, self.value()  # any JSON, mostly not an object
        if method == "tools/call" and roll < 0.9:
            return True, rng.choice(_TOOL_CALLS)
        if method == "resources/read" and roll < 0.9:
            return True, {"uri": rng.choice(["mcp-localtools://x", "file:///etc/passwd", 5])}
        if method == "initialize" and roll < 0.9:
            return True, INITIALIZE["params"]
        return True, {"cursor": self.value()} if roll < 0.95 else {}

    def request(self) -> _Line:
        rng = self.rng
        method = rng.choice(_METHODS)
        request_id = self.fresh_id()
        message: dict[str, Any] = {"id": request_id}
        if rng.random() < 0.95:
            message["jsonrpc"] = "2.0"
        else:
            message["jsonrpc"] = rng.choice(["1.0", 2, None])
        message["method"] = method
        has, params = self.params(method)
        if has:
            message["params"] = params
        return _Line(_dump(message), "id", request_id)

    def bad_id(self) -> _Line:
        bad = self.rng.choice([1.5, 2.0, True, False, None, {}, [], [1], {"a": 1}, -0.0, 1e300])
        message = {"id": bad, "jsonrpc": "2.0", "method": self.rng.choice(["ping", "tools/list", "x"])}
        return _Line(_dump(message), "null")

    def notification(self) -> _Line:
        rng = self.rng
        method = rng.choice(_NOTIFICATIONS)
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if rng.random() < 0.5:
            message["params"] = {"progressToken": self.value(), "progress": rng.random()}
        return _Line(_dump(message), "none")

    def cancelled(self) -> _Line:
        # Never an id in use: a cancelled request is owed no reply, which would blur the count.
        params = {"requestId": f"never-{self.rng.randrange(10**6)}", "reason": "fuzz"}
        return _Line(_dump({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}), "none")

    def client_reply(self) -> _Line:
        rng = self.rng
        reply_id: Any = rng.choice([self.fresh_id(), 1.5, None, True])
        body: dict[str, Any] = {"id": reply_id, "jsonrpc": "2.0"}
        if rng.random() < 0.5:
            body["result"] = {"x": self.value()}
        else:
            body["error"] = {"code": rng.randint(-33000, 0), "message": "nope"}
        return _Line(_dump(body), "none")

    def deep(self) -> _Line:
        request_id = self.fresh_id()
        depth = self.rng.choice([129, 300, 1000, 5000, 50_000])
        opener, closer = self.rng.choice([("[", "]"), ('{"a":', "}"), ("[1,", "]")])
        nested = opener * depth + "0" + closer * depth
        return _Line(_ping(request_id, "x", nested), "id", request_id)

    def long_int(self) -> _Line:
        digits = "9" * self.rng.choice([4301, 5000, 20_000])
        if self.rng.random() < 0.5:
            request_id = self.fresh_id()
            return _Line(_ping(request_id, "n", digits), "id", request_id)
        return _Line(b'{"id": ' + digits.encode() + b', "jsonrpc": "2.0", "method": "ping"}', "null")

    def broken(self) -> _Line:
        rng = self.rng
        request_id = self.fresh_id()
        whole = _dump({"id": request_id, "jsonrpc": "2.0", "method": "ping", "params": {"x": "y"}})
        kind = rng.randrange(6)
        if kind == 0:
            cut = whole[: rng.randrange(1, len(whole) - 1)].rstrip(b"\\")
            return _Line(cut, "id" if b"," in cut[7:] else "null", request_id)  # the id whole, or not
        if kind == 1:
            at = whole.index(b'"y"') + 1
            return _Line(whole[:at] + b"\xff\xfe" + whole[at:], "id", request_id)
        if kind == 2:
            return _Line(rng.choice([b"42", b'"x"', b"null", b"true", b"[]", b"[1, 2]", b"{}"]), "null")
        if kind == 3:
            return _Line(b"[" + whole + b"]", "null")
        if kind == 4:
            return _Line(
                b"not json at all " + bytes(rng.randrange(256) for _ in range(8)).replace(b"\n", b""), "null"
            )
        return _Line(rng.choice([b"", b"   ", b"\t"]), "none")

    def line(self) -> _Line:
        roll = self.rng.random()
        for weight, make in (
            (0.40, self.request),
            (0.10, self.bad_id),
            (0.12, self.notification),
            (0.03, self.cancelled),
            (0.08, self.client_reply),
            (0.07, self.deep),
            (0.05, self.long_int),
        ):
            if roll < weight:
                return make()
            roll -= weight
        return self.broken()


def _ping(request_id: int | str, name: str, raw_value: str) -> bytes:
    """A ping whose ``params`` hold ``name`` with ``raw_value`` written as it is (not valid JSON
    of Python's making: too deep, or too long a number)."""
    head = '{"id": ' + json.dumps(request_id) + ', "jsonrpc": "2.0", "method": "ping", "params": {"'
    return (head + name + '": ' + raw_value + "}}").encode()


def _dump(message: dict[str, Any]) -> bytes:
    return json.dumps(message, ensure_ascii=False).encode("utf-8", "surrogatepass")


def test_ten_thousand_fuzzed_messages_each_get_exactly_their_reply_and_the_server_lives(
    tmp_path: Path,
) -> None:
    grammar = _Grammar(random.Random(SEED))
    lines = [grammar.line() for _ in range(MESSAGES)]
    head = [json.dumps(INITIALIZE).encode(), json.dumps(INITIALIZED).encode()]
    stdin = b"\n".join(head + [line.data for line in lines]) + b"\n"
    began, before = time.monotonic(), resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [installed_command(), "--root", str(tmp_path)],
        input=stdin,
        capture_output=True,
        timeout=120,
        check=False,
    )
    elapsed = time.monotonic() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-3000:]
    assert b"Traceback" not in done.stderr, done.stderr.decode(errors="replace")[-3000:]
    replies = [json.loads(raw) for raw in done.stdout.splitlines()]
    by_id = Counter(json.dumps(reply.get("id")) for reply in replies)
    assert by_id.pop("1") == 1  # the initialize
    for reply in replies:
        assert reply.get("jsonrpc") == "2.0" and ("result" in reply) != ("error" in reply), reply
    expected = Counter(json.dumps(line.request_id) for line in lines if line.reply == "id")
    expected["null"] = sum(line.reply == "null" for line in lines)
    assert by_id == expected, (by_id - expected, expected - by_id)
    # The server's CPU time is the bound: the wall time depends on what else the machine runs.
    assert cpu < 25, f"{MESSAGES} messages took {cpu:.1f} s of CPU ({elapsed:.1f} s)"
    print(f"[fuzz] {MESSAGES} messages, {len(replies)} replies in {elapsed:.1f} s ({cpu:.1f} s CPU)")
