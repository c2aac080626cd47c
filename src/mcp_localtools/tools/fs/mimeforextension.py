"""mimeforextension: the MIME type of a file extension, without touching any file."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from mcp_localtools.errors import InvalidPath
from mcp_localtools.mime import (
    OCTET_STREAM,
    Mode,
    base_type,
    lookup_extension,
    mode_of,
    normalise_extension,
)
from mcp_localtools.offload import offload
from mcp_localtools.results import ToolResult
from mcp_localtools.spec import READ_ONLY, ToolArgs, ToolOutput, ToolSpec
from mcp_localtools.workspace import Workspace

__all__ = ["MimeForExtensionArgs", "MimeForExtensionResult", "mime_for_extension", "spec"]


class MimeForExtensionArgs(ToolArgs):
    extension: str = Field(description="`png` or `.PNG`; case and dot do not matter.")


class MimeForExtensionResult(ToolOutput):
    extension: str = Field(description="The extension as given, trimmed.")
    normalized_extension: str = Field(description="Lower-case extension with its dot.")
    mime_type: str = Field(description="MIME type; `application/octet-stream` when unknown.")
    base_mime_type: str = Field(alias="baseMIMEType", description="MIME type without parameters.")
    mode: Mode = Field(description="text, image, document or default.")
    known: bool = Field(description="False when the extension is not in the table.")


def mime_for_extension(args: MimeForExtensionArgs) -> ToolResult:
    """mimeforextension: table lookup only; an unknown extension is not an error."""
    given = args.extension.strip()
    if not given or given == ".":
        raise InvalidPath('invalid path: extension is empty; pass an extension such as "png" or ".png"')
    found = lookup_extension(given)
    mime = found or OCTET_STREAM
    result = MimeForExtensionResult(
        extension=given,
        normalized_extension=normalise_extension(given),
        mime_type=mime,
        base_mime_type=base_type(mime),
        mode=mode_of(mime),  # "default" for octet-stream
        known=found is not None,
    )
    return ToolResult.of(result)


def spec(workspace: Workspace) -> ToolSpec[Any]:
    """The mimeforextension tool, bound to ``workspace``."""
    return ToolSpec(
        name="mimeforextension",
        title="MIME type of an extension",
        description=(
            "MIME type of a file extension; no file access. Unknown: application/octet-stream, known=false."
        ),
        args_model=MimeForExtensionArgs,
        result_model=MimeForExtensionResult,
        handler=offload(mime_for_extension),
        annotations=READ_ONLY,
    )
