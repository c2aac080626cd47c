"""Registry results as MCP results: the one mapping from ``ToolResult`` to ``CallToolResult``.

Text → ``TextContent``, images → ``ImageContent``, files → an embedded ``BlobResourceContents``,
links → ``ResourceLink``, the typed result → ``structuredContent``; a failure → ``isError`` with
the error's stable code and message under ``_meta[ERROR_META_KEY]``.
"""

from __future__ import annotations

import base64

from mcp.types import (
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
)

from mcp_localtools.results import Content, FileContent, LinkContent, ToolResult
from mcp_localtools.results import ImageContent as ImageItem
from mcp_localtools.results import TextContent as TextItem

__all__ = ["ERROR_META_KEY", "to_call_tool_result"]

ERROR_META_KEY = "mcp-localtools/error"
"""The ``_meta`` key of an error result: ``{"code": ..., "message": ...}``, the error's stable code
(``errors.py``) and its message, for clients that act on failures without parsing prose.

The code travels in ``_meta`` rather than ``structuredContent`` because clients built on the
TypeScript SDK validate any ``structuredContent`` of a result, error or not, against the tool's
output schema, and would turn the error into a protocol exception."""


def _content_block(item: Content) -> TextContent | ImageContent | EmbeddedResource | ResourceLink:
    if isinstance(item, TextItem):
        return TextContent(type="text", text=item.text)
    if isinstance(item, LinkContent):
        return ResourceLink(
            type="resource_link",
            uri=item.uri,
            name=item.name,
            description=item.description,
            mime_type=item.mime_type,
            size=item.size,
        )
    if isinstance(item, ImageItem):
        return ImageContent(
            type="image", data=base64.b64encode(item.data).decode("ascii"), mime_type=item.mime_type
        )
    assert isinstance(item, FileContent)
    blob = BlobResourceContents(
        uri=item.uri, mime_type=item.mime_type, blob=base64.b64encode(item.data).decode("ascii")
    )
    return EmbeddedResource(type="resource", resource=blob)


def to_call_tool_result(result: ToolResult) -> CallToolResult:
    """Map a registry result onto an MCP ``CallToolResult``: content items, ``structuredContent``
    for a success, and for a failure ``isError`` with the code and message under
    ``_meta[ERROR_META_KEY]``."""
    meta = None
    if result.error is not None:
        meta = {ERROR_META_KEY: {"code": result.error.code, "message": result.error.message}}
    return CallToolResult(
        content=[_content_block(item) for item in result.content],
        structured_content=result.structured,
        is_error=result.is_error,
        _meta=meta,
    )
