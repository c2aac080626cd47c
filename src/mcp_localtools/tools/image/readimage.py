"""The image group: readimage, an image file's metadata and, when asked, the image sized for clients.

Metadata comes from the image header without decoding the pixels: width, height, format, MIME
type, mode, frame count, DPI and EXIF orientation, for every format Pillow opens (PNG, JPEG,
GIF, WebP, BMP, TIFF, ICO, ...); SVG gives width, height and viewBox only. With
``includeBase64Data`` the image comes back as MCP image content that clients accept: turned
upright by its EXIF orientation, downscaled so the long side is at most ``maxDimension`` and the
image as sent at most ``maxBytes``, re-encoded only when needed (PNG for transparency or few
colours, JPEG otherwise, or the ``format`` asked for). The result states both the original and
the returned size. ``readfile`` in binary mode uses the same path.

``maxBytes`` counts the base64 form, because that is what clients measure: Claude Desktop
refuses a result over 1,048,576 characters ("result exceeds maximum length") and the Anthropic
API an image whose base64 is over 5 MiB. A 1 MiB JPEG is 1.4 MB of base64, so the default is
1,000,000, which leaves room for the result's text and structured parts.

All decoding happens in a confined worker process (``parsers``); this module never imports Pillow.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

import anyio.to_thread
from pydantic import Field

from mcp_localtools.config import LimitsConfig
from mcp_localtools.errors import NotADirectory, NotFound, SymlinkRefused
from mcp_localtools.files.entries import rfc3339
from mcp_localtools.files.read import FileData, read_regular_file
from mcp_localtools.parsers import ParserRunner
from mcp_localtools.parsers.images import (
    DEFAULT_MAX_DIMENSION,
    DEFAULT_MAX_IMAGE_BYTES,
    HARD_MAX_DIMENSION,
    HARD_MAX_IMAGE_BYTES,
    ImageFormat,
    ReturnedImage,
    fit_image,
    is_svg,
)
from mcp_localtools.policy.paths import PathPolicy, ResolvedPath
from mcp_localtools.results import ImageContent, ToolResult
from mcp_localtools.spec import READ_ONLY, CallContext, ToolArgs, ToolOutput, ToolSpec
from mcp_localtools.toolnames import served_text
from mcp_localtools.workspace import Workspace

__all__ = ["ReadImageArgs", "ReadImageResult", "read_image", "spec"]


class ReadImageArgs(ToolArgs):
    path: str = Field(description="Image file.")
    include_base64_data: bool = Field(
        False,
        description="Also return the image, upright and fitted (SVG: metadata only).",
    )
    max_dimension: int = Field(
        DEFAULT_MAX_DIMENSION,
        ge=16,
        le=HARD_MAX_DIMENSION,
        description="Longest side of the returned image, pixels.",
    )
    max_bytes: int = Field(
        DEFAULT_MAX_IMAGE_BYTES,
        ge=16 * 1024,
        le=HARD_MAX_IMAGE_BYTES,
        description="Cap on the returned image as base64, bytes; else re-encoded or downscaled.",
    )
    format: ImageFormat = Field(
        "auto",
        description=(
            "`auto`: the file if it fits, else PNG (transparency, few colours) or JPEG; or force one."
        ),
    )


class ReadImageResult(ToolOutput):
    path: str = Field(description="Absolute path of the image.")
    name: str = Field(description="Base name of the file.")
    exists: bool = Field(description="False when nothing is at the path (not an error).")
    size_bytes: int | None = Field(None, description="File size in bytes.")
    mod_time: str | None = Field(None, description="Last modification, RFC 3339 UTC.")
    width: int | None = Field(None, description="Width in pixels as stored (before EXIF orientation).")
    height: int | None = Field(None, description="Height in pixels as stored (before EXIF orientation).")
    format: str | None = Field(
        None, description="Format found in the content: png, jpeg, gif, webp, svg, ..."
    )
    mime_type: str | None = Field(None, description="MIME type of the format.")
    mode: str | None = Field(None, description="Pixel mode: RGB, RGBA, L (grey), P (palette), CMYK, ...")
    frame_count: int | None = Field(
        None, description="Frames (animations, multi-page TIFF); 1 for still images."
    )
    dpi: list[float] | None = Field(
        None, description="Horizontal and vertical resolution, when the file has one."
    )
    orientation: int | None = Field(
        None, description="EXIF orientation (1-8) when present; 6 and 8 mean the stored image is on its side."
    )
    view_box: list[float] | None = Field(None, description="SVG: the viewBox (min-x, min-y, width, height).")
    returned: ReturnedImage | None = Field(
        None, description="With includeBase64Data: the image content as returned (its size and encoding)."
    )
    note: str | None = Field(None, description="Something the caller should know about this result.")


@dataclass(frozen=True, slots=True)
class _Loaded:
    """What the worker thread found: the resolved path, and the file (None when nothing is there)
    with whether it is an SVG."""

    resolved: ResolvedPath
    file: FileData | None
    svg: bool = False


def _load(args: ReadImageArgs, paths: PathPolicy, limits: LimitsConfig) -> _Loaded:
    """In a worker thread: resolve the path, read the image (at most the read cap; for metadata
    only, the first that many bytes of a larger file) and tell SVG from raster images. The file
    is None when nothing is at the path (not an error). A symlink is refused even where the
    policy allows symlinks: it is opened with ``O_NOFOLLOW``, so a swap cannot slip one in.

    Raises:
        SymlinkRefused: the path is a symlink.
        NotAFile, TooLarge, OutsideAllowedRoots, FileSystemError: as ``read_regular_file``.
    """
    resolved = paths.resolve(args.path)
    try:
        file = read_regular_file(
            paths,
            resolved,
            max_bytes=limits.max_read_bytes,
            follow_symlinks=False,
            head_only=not args.include_base64_data,
        )
    except (NotFound, NotADirectory):
        return _Loaded(resolved, None)
    except SymlinkRefused as exc:  # ELOOP from O_NOFOLLOW: the final component is a symlink
        raise SymlinkRefused(
            f"refusing to operate on symlink file: {resolved.path}; pass the target's path"
        ) from exc
    return _Loaded(resolved, file, is_svg(file.path, file.data))


async def read_image(
    args: ReadImageArgs, ctx: CallContext, *, paths: PathPolicy, limits: LimitsConfig, parsers: ParserRunner
) -> ToolResult:
    """The readimage tool body: path checks, file work and MIME sniffing in a worker thread,
    decoding in a worker process."""
    loaded = await anyio.to_thread.run_sync(partial(_load, args, paths, limits), abandon_on_cancel=True)
    file = loaded.file
    if file is None:
        path = loaded.resolved.path
        return ToolResult.of(ReadImageResult(path=str(path), name=path.name, exists=False))
    common: dict[str, Any] = {
        "path": str(file.path),
        "name": file.path.name,
        "exists": True,
        "size_bytes": file.stat.st_size,
        "mod_time": rfc3339(file.stat.st_mtime),
    }
    failure = f"cannot read image {file.path}"
    if loaded.svg:
        parsed = await parsers.run("svg", file.data, {}, failure=failure)
        note = (
            served_text("SVG is vector markup: no image content is returned; read the markup with readfile")
            if args.include_base64_data
            else None
        )
        meta = parsed.result
        result = ReadImageResult(
            **common,
            format="svg",
            mime_type="image/svg+xml",
            width=meta.get("width"),
            height=meta.get("height"),
            view_box=meta.get("viewBox"),
            note=note,
        )
        return ToolResult.of(result)
    if not args.include_base64_data:
        partial_read = len(file.data) < file.stat.st_size
        parsed = await parsers.run(
            "image", file.data, {"encode": False, "partial": partial_read}, failure=failure
        )
        note = (
            f"metadata read from the first {len(file.data)} bytes of a larger file" if partial_read else None
        )
        return ToolResult.of(ReadImageResult(**common, **_meta_fields(parsed.result), note=note))
    fitted = await fit_image(
        parsers,
        file.data,
        failure=failure,
        max_dimension=args.max_dimension,
        max_bytes=args.max_bytes,
        image_format=args.format,
    )
    frames = fitted.meta["frameCount"] or 1
    note = (
        f"the image content is the first of {frames} frames"
        if frames > 1 and fitted.returned.reencoded
        else None
    )
    result = ReadImageResult(**common, **_meta_fields(fitted.meta), returned=fitted.returned, note=note)
    return ToolResult.of(result, ImageContent(fitted.data, fitted.returned.mime_type))


def _meta_fields(meta: dict[str, Any]) -> dict[str, Any]:
    return {
        "format": meta["format"],
        "mime_type": meta["mimeType"],
        "width": meta["width"],
        "height": meta["height"],
        "mode": meta["mode"],
        "frame_count": meta["frameCount"],
        "dpi": meta["dpi"],
        "orientation": meta["orientation"],
    }


def spec(workspace: Workspace) -> ToolSpec[Any]:
    """The readimage tool, bound to ``workspace``."""
    paths = workspace.paths
    limits = workspace.limits
    parsers = workspace.parsers

    async def handler(args: ReadImageArgs, ctx: CallContext) -> ToolResult:
        return await read_image(args, ctx, paths=paths, limits=limits, parsers=parsers)

    return ToolSpec(
        name="readimage",
        title="Read an image",
        description=(
            "An image's size, format, MIME type, mode, frames, DPI and EXIF orientation without decoding "
            "it (SVG: size and viewBox); exists=false when missing. Over 134 million pixels is refused."
        ),
        args_model=ReadImageArgs,
        result_model=ReadImageResult,
        handler=handler,
        annotations=READ_ONLY,
    )
