"""What a tool returns: content items, the structured result, and the result budget helpers.

A ``ToolResult`` knows nothing of MCP; ``server.py`` maps it onto MCP text, image and
embedded-resource content plus ``structuredContent``, and the JSON command line prints it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

__all__ = [
    "Content",
    "ErrorInfo",
    "FileContent",
    "ImageContent",
    "TextContent",
    "ToolResult",
    "cut_text",
    "dump_model",
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


Content = TextContent | ImageContent | FileContent


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
    """

    content: tuple[Content, ...]
    structured: dict[str, Any] | None = None
    error: ErrorInfo | None = field(default=None)

    @property
    def is_error(self) -> bool:
        return self.error is not None

    @classmethod
    def of(cls, result: BaseModel, *extra: Content, text: str | None = None) -> ToolResult:
        """A success: ``result`` as structured content, ``text`` (default: its compact JSON)
        as the first content item, then ``extra`` items."""
        data = dump_model(result)
        rendered = text if text is not None else json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        return cls(content=(TextContent(rendered), *extra), structured=data)

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
