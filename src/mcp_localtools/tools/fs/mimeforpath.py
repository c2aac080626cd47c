"""mimeforpath: the MIME type of a file, from its extension or by sniffing its first bytes."""

from __future__ import annotations

from functools import partial
from typing import Any, Literal

from pydantic import Field

from mcp_localtools.files.read import read_regular_file
from mcp_localtools.mime import (
    SNIFF_BYTES,
    Mode,
    from_extension,
    sniff,
)
from mcp_localtools.offload import offload
from mcp_localtools.policy.paths import PathPolicy
from mcp_localtools.results import ToolResult
from mcp_localtools.spec import READ_ONLY, ToolArgs, ToolOutput, ToolSpec
from mcp_localtools.workspace import Workspace

__all__ = ["MimeForPathArgs", "MimeForPathResult", "mime_for_path", "spec"]


class MimeForPathArgs(ToolArgs):
    path: str = Field(description="File path.")


class MimeForPathResult(ToolOutput):
    path: str = Field(description="Absolute path.")
    extension: str | None = Field(None, description="The extension as found in the path, if any.")
    normalized_extension: str | None = Field(None, description="Lower-case extension with its dot.")
    mime_type: str = Field(description="MIME type, possibly with parameters (`text/plain; charset=utf-8`).")
    base_mime_type: str = Field(alias="baseMIMEType", description="MIME type without parameters.")
    mode: Mode = Field(description="How the tools treat it: text, image, document or default (binary).")
    method: Literal["extension", "sniff"] = Field(
        description="`extension` (from the name) or `sniff` (content)."
    )


def mime_for_path(args: MimeForPathArgs, *, paths: PathPolicy) -> ToolResult:
    """mimeforpath: from the extension table when it decides, else by sniffing."""
    resolved = paths.resolve(args.path)
    suffix = resolved.path.suffix
    info = from_extension(resolved.path)
    if info is None:
        head = read_regular_file(paths, resolved, max_bytes=SNIFF_BYTES, head_only=True)
        info = sniff(head.data, resolved.path)
    result = MimeForPathResult(
        path=str(resolved.path),
        extension=suffix or None,
        normalized_extension=suffix.lower() or None,
        mime_type=info.mime_type,
        base_mime_type=info.base,
        mode=info.mode,
        method=info.method,
    )
    return ToolResult.of(result)


def spec(workspace: Workspace) -> ToolSpec[Any]:
    """The mimeforpath tool, bound to ``workspace``."""
    paths = workspace.paths
    return ToolSpec(
        name="mimeforpath",
        title="MIME type of a file",
        description=(
            "A file's MIME type (by extension, else its first 4096 bytes) and how the tools treat it "
            "(mode: text, image, document or binary)."
        ),
        args_model=MimeForPathArgs,
        result_model=MimeForPathResult,
        handler=offload(partial(mime_for_path, paths=paths)),
        annotations=READ_ONLY,
    )
