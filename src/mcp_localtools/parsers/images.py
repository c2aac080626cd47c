"""Images fitted for a model: decoded in a parser worker, turned upright, downscaled and re-encoded
only when needed, so the base64 stays within what clients accept.

``maxBytes`` counts the base64 form, because that is what clients measure: Claude Desktop
refuses a result over 1,048,576 characters ("result exceeds maximum length") and the Anthropic
API an image whose base64 is over 5 MiB. A 1 MiB JPEG is 1.4 MB of base64, so the default is
1,000,000, which leaves room for the result's text and structured parts. Shared by readimage
and readfile's binary mode; this module never imports Pillow.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field

from mcp_localtools.errors import UnsupportedContent
from mcp_localtools.mime import SNIFF_BYTES, detect_mime
from mcp_localtools.parsers.runner import ParserRunner
from mcp_localtools.spec import ToolOutput

__all__ = [
    "DEFAULT_MAX_DIMENSION",
    "DEFAULT_MAX_IMAGE_BYTES",
    "HARD_MAX_DIMENSION",
    "HARD_MAX_IMAGE_BYTES",
    "MAX_JPEG_SCANS",
    "FittedImage",
    "ImageFormat",
    "MiB",
    "ReturnedImage",
    "fit_image",
    "is_svg",
]


MiB = 1024 * 1024


DEFAULT_MAX_DIMENSION = 1568
"""Long side of returned images (px): what Claude models see without downscaling themselves."""


DEFAULT_MAX_IMAGE_BYTES = 1_000_000
"""Base64 size of returned images: Claude Desktop refuses tool results over 1,048,576 characters,
and this leaves about 48 KB of that for the rest of the result."""


HARD_MAX_DIMENSION = 8000
"""Most a call may ask for: the pixel limit of the strictest model API."""


HARD_MAX_IMAGE_BYTES = 5 * MiB
"""Most a call may ask for: the Anthropic API's per-image limit, measured on the base64."""


ImageFormat = Literal["auto", "png", "jpeg", "webp"]


class ReturnedImage(ToolOutput):
    width: int = Field(description="Width of the returned image in pixels (upright).")
    height: int = Field(description="Height of the returned image in pixels (upright).")
    size_bytes: int = Field(description="Size of the returned image file in bytes (before base64).")
    mime_type: str = Field(description="MIME type of the returned image.")
    reencoded: bool = Field(description="False when the file's own bytes were returned unchanged.")
    resized: bool = Field(description="True when the image was downscaled to fit the limits.")


@dataclass(frozen=True, slots=True)
class FittedImage:
    """An image fitted for a client.

    Attributes:
        meta: the worker's metadata (camelCase keys as in ``ReadImageResult``).
        returned: the size and encoding of ``data``.
        data: the bytes to send: the file's own, or the re-encoded image.
    """

    meta: dict[str, Any]
    returned: ReturnedImage
    data: bytes


def is_svg(path: str | Any, head: bytes) -> bool:
    """True for an SVG file: by extension or MIME sniffing, or XML text with an ``<svg`` root."""
    mime = detect_mime(path, head[:SNIFF_BYTES])
    if mime.base == "image/svg+xml":
        return True
    return mime.mode == "text" and b"<svg" in head[:SNIFF_BYTES]


MAX_JPEG_SCANS = 500
"""Most scans (SOS markers) a JPEG may have to be decoded: a progressive JPEG from an encoder has
about 10; one of 10,000 scans took 15-16 s of CPU to decode (libjpeg-turbo's own advice is to cap
them). Counting ``FF DA`` is exact: in entropy-coded data a literal ``FF`` is followed by ``00``."""


async def fit_image(
    parsers: ParserRunner,
    data: bytes,
    *,
    failure: str,
    max_dimension: int = DEFAULT_MAX_DIMENSION,
    max_bytes: int = DEFAULT_MAX_IMAGE_BYTES,
    image_format: ImageFormat = "auto",
    hint: str = "",
) -> FittedImage:
    """Decode ``data`` in a worker and fit it for a client: upright, long side at most
    ``max_dimension``, base64 at most ``max_bytes`` characters.

    Raises:
        UnsupportedContent: not a readable image (corrupt, truncated, unknown format), or a
            JPEG with more than ``MAX_JPEG_SCANS`` scans.
        TooLarge: the canvas is over the decompression-bomb limit, or decoding needs more
            memory than a worker may use.
        ToolTimeout: decoding took longer than the parser timeout.
    """
    if data.startswith(b"\xff\xd8") and (scans := data.count(b"\xff\xda")) > MAX_JPEG_SCANS:
        raise UnsupportedContent(
            f"{failure}: a JPEG with {scans} scans (over {MAX_JPEG_SCANS}): decoding one costs seconds of "
            "CPU per thousand scans, and no camera or encoder writes more than a few dozen; re-encode it"
        )
    raw_budget = 3 * (max_bytes // 4)  # base64 of n bytes is 4 * ceil(n / 3) characters
    request = {"encode": True, "partial": False, "maxDimension": max_dimension, "maxBytes": raw_budget}
    parsed = await parsers.run("image", data, {**request, "format": image_format}, failure=failure, hint=hint)
    meta = dict(parsed.result)
    returned = ReturnedImage.model_validate(meta.pop("returned"))
    return FittedImage(meta=meta, returned=returned, data=parsed.payload if returned.reencoded else data)
