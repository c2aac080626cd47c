"""What every transport checks of an incoming JSON-RPC message before the SDK sees it.

One parser for stdio (``stdio.py``) and HTTP (``transports.py``), so a message is refused the same
way on both, with the request id when it can be recovered:

- not UTF-8, not JSON, or an integer longer than ``MAX_INT_DIGITS`` digits (Python refuses to
  convert one, with a ``ValueError`` that killed the stdio server) → ``-32700``;
- JSON nested deeper than ``MAX_NESTING`` (Python's parser raises ``RecursionError`` near 1,000,
  which was a 500 and a traceback over HTTP) → ``-32600``;
- a message with a ``method`` and an ``id`` that is neither a string nor an integer (``1.5``,
  ``true``, ``null``, ``{}``) → ``-32600`` with ``id: null`` (the SDK took it for a notification
  and never answered; MCP requires a string or integer id, JSON-RPC 2.0 a reply to every request).

Nothing here imports the MCP SDK: the transports turn a ``Refusal`` into their own error reply.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "MAX_INT_DIGITS",
    "MAX_NESTING",
    "PARSE_ERROR",
    "Refusal",
    "id_refusal",
    "json_type",
    "parse",
    "recover_id",
    "too_deep",
    "valid_id",
]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

MAX_INT_DIGITS = min(4300, sys.get_int_max_str_digits() or 4300)
"""Longest integer (decimal digits) a message may hold: CPython's limit on converting between
``int`` and ``str`` (``sys.get_int_max_str_digits``, 4,300 by default), beyond which it raises."""
MAX_NESTING = 128
"""Deepest nesting of arrays and objects a message may have; MCP messages need a handful."""
ID_SCAN_BYTES = 64 * 1024
"""How much of a refused message is read to recover its request id."""

_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKETS = re.compile(rb"[^\[\]{}]+")
_DEPTH_STEP = bytes.maketrans(b"[]{}", b"\x01\xff\x01\xff")


@dataclass(frozen=True, slots=True)
class Refusal:
    """A message that gets an error reply instead of reaching the SDK."""

    id: int | str | None
    code: int
    message: str


def json_type(value: Any) -> str:
    """``value``'s JSON type with its article, for messages: ``a string``, ``an array``, ``null``."""
    if isinstance(value, bool):
        return "a boolean"
    names = {str: "a string", int: "a number", float: "a number", list: "an array", dict: "an object"}
    return "null" if value is None else names.get(type(value), "a value")


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise ValueError(f"an integer of {len(text.lstrip('-'))} digits (at most {MAX_INT_DIGITS})")
    return int(text)


def too_deep(data: bytes) -> bool:
    """True when ``data`` nests arrays and objects deeper than ``MAX_NESTING`` outside strings.
    Costs two byte counts for an ordinary message; the walk runs only when there are enough
    brackets to be that deep."""
    if data.count(b"[") + data.count(b"{") <= MAX_NESTING:
        return False
    steps = _BRACKETS.sub(b"", _STRING.sub(b"", data)).translate(_DEPTH_STEP)
    return any(depth > MAX_NESTING for depth in accumulate(b if b < 128 else b - 256 for b in steps))


def parse(data: bytes) -> Any:
    """The JSON value of one message, or a ``Refusal`` (see the module docstring).

    Never raises: every way a message can fail to parse is a ``Refusal`` carrying the request
    id recovered from its first bytes when there is one."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Refusal(
            recover_id(data[:ID_SCAN_BYTES]),
            PARSE_ERROR,
            f"Parse error: the message is not valid UTF-8 (byte {exc.start}); send UTF-8 JSON, "
            "one message a line",
        )
    if too_deep(data):
        return _nested(data)
    try:
        return json.loads(text, parse_int=_bounded_int)
    except json.JSONDecodeError as exc:
        return Refusal(
            recover_id(data[:ID_SCAN_BYTES]),
            PARSE_ERROR,
            f"Parse error: the message is not valid JSON ({exc.msg} at character {exc.pos}); "
            "send one complete JSON-RPC message per line",
        )
    except ValueError as exc:  # an integer past MAX_INT_DIGITS
        return Refusal(
            recover_id(data[:ID_SCAN_BYTES]),
            PARSE_ERROR,
            f"Parse error: the message holds {exc}; send large numbers as strings",
        )
    except RecursionError:  # a deeper stack than usual; MAX_NESTING normally refuses it first
        return _nested(data)


def _nested(data: bytes) -> Refusal:
    return Refusal(
        recover_id(data[:ID_SCAN_BYTES]),
        INVALID_REQUEST,
        f"Invalid Request: the message is nested more than {MAX_NESTING} levels deep",
    )


def valid_id(value: Any) -> int | str | None:
    """``value`` when it can be a request id (a string or an integer, not a boolean), else None."""
    return (
        value if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)) else None
    )


def id_refusal(message: Any) -> Refusal | None:
    """The refusal of a request (a JSON object with a ``method``) whose ``id`` is present but
    neither a string nor an integer; None for anything else. It is answered with ``id: null``
    (JSON-RPC 2.0: the id could not be determined), never taken for a notification."""
    if not isinstance(message, dict) or "method" not in message or "id" not in message:
        return None
    found = message["id"]
    if valid_id(found) is not None:
        return None
    return Refusal(
        None,
        INVALID_REQUEST,
        f"Invalid Request: id must be a string or an integer, not {json_type(found)}"
        + (" (a number with a fraction)" if isinstance(found, float) else ""),
    )


def recover_id(prefix: bytes) -> int | str | None:
    """The top-level ``"id"`` of a JSON object that may be cut short or invalid further on, when
    it appears in ``prefix``; None otherwise. Reads strings and nesting properly, so an ``"id"``
    inside ``params`` is never taken for the request's."""
    text = prefix.decode("utf-8", errors="replace")
    decoder = json.JSONDecoder(parse_int=_bounded_int)
    depth = 0
    index = 0
    expect_key = False
    while index < len(text):
        char = text[index]
        if char == '"':
            try:
                value, after = decoder.scan_once(text, index)  # type: ignore[attr-defined]
            except (StopIteration, ValueError, RecursionError):
                return None
            if depth == 1 and expect_key and value == "id":
                return _id_after(decoder, text[after:])
            expect_key = False
            index = after
            continue
        if char in "{[":
            depth += 1
            expect_key = char == "{" and depth == 1
        elif char in "}]":
            depth -= 1
        elif char == "," and depth == 1:
            expect_key = True
        index += 1
    return None


def _id_after(decoder: json.JSONDecoder, rest: str) -> int | str | None:
    rest = rest.lstrip()
    if not rest.startswith(":"):
        return None
    value = rest[1:].lstrip()
    try:
        found, end = decoder.raw_decode(value)
    except (ValueError, RecursionError):
        return None
    if value[end:].lstrip()[:1] not in (",", "}"):
        return None  # a number cut short (``"id": 12`` of ``"id": 1234,``) is not the id
    return valid_id(found)
