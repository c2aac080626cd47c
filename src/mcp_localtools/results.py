"""What a tool returns: content items, the structured result, and the result budget helpers.

A ``ToolResult`` knows nothing of MCP; ``server/results.py`` maps it onto MCP text, image and
embedded-resource content plus ``structuredContent``, and the JSON command line prints it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from json.encoder import encode_basestring
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticSerializationError, to_json

__all__ = [
    "Content",
    "ErrorInfo",
    "FileContent",
    "ImageContent",
    "LinkContent",
    "ResourcePage",
    "TextContent",
    "ToolResult",
    "cut_text",
    "dump_model",
    "enforce_budget",
    "fit_within",
    "head_tail",
    "json_chars",
    "json_chars_around",
    "wire_chars",
]


@dataclass(frozen=True, slots=True)
class TextContent:
    """Text for the model."""

    text: str


@dataclass(frozen=True, slots=True)
class ImageContent:
    """An image for the model: raw encoded bytes (PNG, JPEG, ...) and their MIME type."""

    data: bytes
    mime_type: str


@dataclass(frozen=True, slots=True)
class FileContent:
    """A binary file as an embedded resource: raw bytes, MIME type and a ``file://`` URI."""

    data: bytes
    mime_type: str
    uri: str


@dataclass(frozen=True, slots=True)
class LinkContent:
    """A link to a resource the client can read with ``resources/read`` (an MCP
    ``resource_link``): its URI, a short name, a description, MIME type and size in bytes."""

    uri: str
    name: str
    description: str
    mime_type: str
    size: int


Content = TextContent | ImageContent | FileContent | LinkContent


@dataclass(frozen=True, slots=True)
class ResourcePage:
    """What ``resources/read`` returns for one URI: ``text``, or ``data`` (bytes that are not
    UTF-8), with its MIME type."""

    uri: str
    mime_type: str
    text: str | None = None
    data: bytes | None = None


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    """Why a call failed: the error's stable code, its message, and whether a policy refused it."""

    code: str
    message: str
    policy: bool = False


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The outcome of one call.

    Attributes:
        content: what the model reads, in order.
        structured: the typed result as JSON-ready data (camelCase keys), or None for errors.
        error: set when the call failed; ``content`` then holds the message as text.
        structured_chars: characters of the compact JSON of ``structured`` when known (it is
            the text of a result whose text is that JSON), so the budget need not serialize it
            again only to count it; None: counted when needed.
    """

    content: tuple[Content, ...]
    structured: dict[str, Any] | None = None
    error: ErrorInfo | None = field(default=None)
    structured_chars: int | None = field(default=None, compare=False)

    @property
    def is_error(self) -> bool:
        return self.error is not None

    @classmethod
    def of(cls, result: BaseModel, *extra: Content, text: str | None = None) -> ToolResult:
        """A success: ``result`` as structured content, ``text`` (default: its compact JSON)
        as the first content item, then ``extra`` items."""
        data = dump_model(result)
        rendered = text if text is not None else json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        known = len(rendered) if text is None else None
        return cls(content=(TextContent(rendered), *extra), structured=data, structured_chars=known)

    @classmethod
    def failure(cls, code: str, message: str, *, policy: bool = False) -> ToolResult:
        """An error result carrying ``message`` as its only content."""
        return cls(
            content=(TextContent(message),), error=ErrorInfo(code=code, message=message, policy=policy)
        )


def dump_model(model: BaseModel) -> dict[str, Any]:
    """A result model as JSON-ready data with wire (camelCase) keys; ``None`` fields left out."""
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def cut_text(text: str, budget: int) -> tuple[str, bool]:
    """Cut ``text`` to at most ``budget`` characters, at a line break when one is near the end.

    Returns:
        ``(text, was_cut)``.
    """
    if len(text) <= budget:
        return text, False
    head = text[:budget]
    newline = head.rfind("\n")
    if newline >= budget * 3 // 4:
        head = head[: newline + 1]
    return head, True


# -- The result budget ---------------------------------------------------------------------------
#
# A result reaches the model as text (most clients) or as structuredContent (pydantic-ai, Claude
# Code); llama-index and google-genai pass on both (measured per client in docs/clients.md). So
# the payload is in both places, cut the same way, and the budget bounds each copy: it counts
# the payload once, as the larger of the text items and the compact JSON of structuredContent
# (``wire_chars``). A client that shows the model both copies shows it up to twice the budget.


def json_chars(data: Any) -> int:
    """Characters of ``data`` as compact JSON (non-ASCII kept as is), as it goes on the wire."""
    return len(json.dumps(data, ensure_ascii=False, separators=(",", ":")))


def json_chars_around(data: dict[str, Any], key: str) -> int:
    """``json_chars(data)`` for a ``data`` whose string at ``key`` is long (a window of text):
    that string is escaped alone (by pydantic-core, as the reply will be: a sixth of the time
    the ``json`` module takes; by it for a string pydantic-core refuses, a lone surrogate) and
    the rest serialized without it, so the long text is not copied into a whole JSON document
    only to be counted."""
    text = data[key]
    try:
        escaped = len(to_json(text).decode("utf-8"))
    except (PydanticSerializationError, UnicodeError):
        escaped = len(encode_basestring(text))
    return json_chars({**data, key: ""}) + escaped - 2


def wire_chars(result: ToolResult) -> int:
    """What ``result`` costs against the budget: the larger of its two copies, the characters
    of its text items (links count their URI, name and description; images and embedded files
    are bounded by their own limits and not counted) and those of the compact JSON of its
    structured content (``structured_chars`` when known, else serialized once here)."""
    text = 0
    for item in result.content:
        if isinstance(item, TextContent):
            text += len(item.text)
        elif isinstance(item, LinkContent):
            text += len(item.uri) + len(item.name) + len(item.description)
    if result.structured is None:
        return text
    known = result.structured_chars
    return max(text, known if known is not None else json_chars(result.structured))


def fit_within(build: Callable[[int], ToolResult], budget: int, start: int) -> ToolResult:
    """Build a result whose payload limit shrinks until the whole result fits ``budget``.

    Args:
        build: ``(payload_chars) -> ToolResult``: the tool's own result with its payload (lines,
            entries, output) cut to at most ``payload_chars`` characters of text.
        budget: the result budget (``wire_chars``).
        start: the first payload limit tried (the budget less what goes around the payload).

    Returns:
        The first result that fits, or the last one tried (``enforce_budget`` then cuts it).
    """
    limit = max(start, 0)
    result = _measured(build(limit))
    size = wire_chars(result)
    known: list[tuple[int, int]] = []  # (limit, size) tried
    for _ in range(8):
        if size <= budget or limit == 0:
            break
        known.append((limit, size))
        # The result grows about linearly with its payload: aim at the budget along the line
        # through the last two tries (through the origin after the first), a little under it.
        if len(known) >= 2 and known[-2][0] != known[-1][0] and known[-2][1] != known[-1][1]:
            (l0, s0), (l1, s1) = known[-2], known[-1]
            slope = max((s1 - s0) / (l1 - l0), 1e-9)
            target = l1 - (s1 - budget) / slope
        else:
            # The first try, or a step that changed nothing (a payload cut back to the same line
            # break): in proportion, never a jump to nothing.
            target = limit * min(budget / size, 0.9)
        limit = max(0, min(limit - 1, int(target * 0.98)))
        result = _measured(build(limit))
        size = wire_chars(result)
    return result


def _measured(result: ToolResult) -> ToolResult:
    """``result`` with ``structured_chars`` counted (once: ``enforce_budget`` then need not
    serialize the structured content again only to measure it)."""
    if result.structured is None or result.structured_chars is not None:
        return result
    return replace(result, structured_chars=json_chars(result.structured))


def head_tail(text: str, limit: int, marker: Callable[[int], str]) -> tuple[str, bool]:
    """``text`` cut to about ``limit`` characters keeping its head and its tail, at line breaks
    when one is near, with ``marker(elided_characters)`` in between.

    Returns:
        ``(text, was_cut)``.
    """
    if len(text) <= limit:
        return text, False
    keep = max(limit, 0)
    head_len, tail_len = keep * 2 // 5, keep - keep * 2 // 5
    head, tail = text[:head_len], text[len(text) - tail_len :] if tail_len else ""
    newline = head.rfind("\n")
    if newline >= head_len * 3 // 4:
        head = head[: newline + 1]
    newline = tail.find("\n")
    if 0 <= newline < tail_len // 4:
        tail = tail[newline + 1 :]
    elided = len(text) - len(head) - len(tail)
    lead = "" if not head or head.endswith("\n") else "\n"
    return f"{head}{lead}{marker(elided)}\n{tail}", True


_CUT_MARK = "…[cut]"


def enforce_budget(result: ToolResult, budget: int) -> ToolResult:
    """``result`` within ``budget`` characters (``wire_chars``): the last guard, applied to
    every result. Tools cut their payload themselves (``fit_within``), so this seldom acts;
    when it does, it halves the longest strings and lists of the structured content until that
    fits the budget, cuts the text items to it, sets a top-level ``truncated`` flag and adds a
    note."""
    if wire_chars(result) <= budget:
        return result
    note = f"[result cut to the {budget}-character budget; narrow the request]"
    structured = result.structured
    if structured is not None:
        structured = _shrink(structured, max(budget - 20, 0))
        if isinstance(structured.get("truncated"), bool):
            structured["truncated"] = True
    room = budget - len(note) - 1
    content: list[Content] = []
    for item in result.content:
        if isinstance(item, TextContent):
            kept, _ = cut_text(item.text, max(room, 0))
            room -= len(kept)
            if kept:
                content.append(TextContent(kept))
        elif isinstance(item, LinkContent):
            room -= len(item.uri) + len(item.name) + len(item.description)
            content.append(item)
        else:
            content.append(item)
    content.append(TextContent(note))
    return replace(result, content=tuple(content), structured=structured, structured_chars=None)


def _shrink(data: dict[str, Any], target: int) -> dict[str, Any]:
    """A copy of ``data`` whose compact JSON is at most about ``target`` characters: the
    largest string or list is halved, again and again (lists lose their last items but never
    their only one, strings their end, marked ``…[cut]``)."""
    data = json.loads(json.dumps(data))
    for _ in range(200):
        if json_chars(data) <= target:
            break
        found = _largest(data)
        if found is None:
            break
        holder, key, value = found
        if isinstance(value, str):
            holder[key] = value[: max(len(value) // 2 - len(_CUT_MARK), 0)] + _CUT_MARK
        else:
            del value[len(value) // 2 :]
    return data


def _largest(node: Any) -> tuple[Any, Any, Any] | None:
    """``(container, key, value)`` of the longest cuttable string, or list of two items or more,
    in ``node``."""
    best: tuple[Any, Any, Any] | None = None
    best_size = 0
    stack: list[Any] = [node]
    while stack:
        container = stack.pop()
        pairs = container.items() if isinstance(container, dict) else enumerate(container)
        for key, value in pairs:
            if isinstance(value, str):
                size = len(value)
                if size > len(_CUT_MARK) * 2 and size > best_size:
                    best, best_size = (container, key, value), size
            elif isinstance(value, list):
                size = json_chars(value)
                # A list of one item is never emptied (a command's only result, a map's only
                # file): what is inside it is cut instead.
                if len(value) > 1 and size > best_size:
                    best, best_size = (container, key, value), size
                stack.append(value)
            elif isinstance(value, dict):
                stack.append(value)
    return best
