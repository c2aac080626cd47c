"""readfile's forms of a whole file read into memory: binary mode (images as image content, PDFs
as an embedded resource, any other file as its size, type and hash with its bytes in base64 when
they fit the result budget) and a PDF's text layer, page by page.

Images go through readimage's path (``parsers/images.py``): upright and fitted to the limits
clients accept (1568 px, 1,000,000 bytes of base64), unless the call asks for the ``original``
bytes. PDFs and images are parsed in a confined worker process (``mcp_localtools.parsers``), never
in the server. An embedded resource of a type other than PDF breaks anthropic's MCP helper
(``docs/clients.md``), so such files go as base64 text.
"""

from __future__ import annotations

import base64
from typing import TypeVar

import anyio.to_thread

from mcp_localtools.files.read import FileData
from mcp_localtools.parsers import ParserRunner
from mcp_localtools.parsers.images import fit_image
from mcp_localtools.parsers.pdf import extract_pdf_text
from mcp_localtools.registry import ToolOutput
from mcp_localtools.results import FileContent, ImageContent, ToolResult
from mcp_localtools.tools.fs._textwindow import count_lines, lines_wanted, text_result, text_window

__all__ = ["read_binary", "read_pdf_text"]

ResultT = TypeVar("ResultT", bound=ToolOutput)


async def read_binary(
    base: ResultT,
    file: FileData,
    mime_type: str,
    sha256: str,
    *,
    original: bool,
    parsers: ParserRunner,
    budget: int,
) -> ToolResult:
    """Binary mode: ``file`` as image content (fitted unless ``original``), a PDF as an embedded
    resource, anything else as base64 text when it fits ``budget`` characters.

    Args:
        base: the result model with the common fields set (``encoding`` binary, path, size,
            MIME type, SHA-256); the image fields are added here.
        sha256: the file's SHA-256 (for the summary line).

    Raises:
        UnsupportedContent: the image cannot be decoded (and ``original`` is false).
    """
    summary = f"{file.path}: {len(file.data)} bytes, {mime_type}, sha256 {sha256}"
    is_image = mime_type.startswith("image/") and mime_type != "image/svg+xml"
    if not is_image or original:  # the file's bytes as they are
        if mime_type == "application/pdf":  # a document block in every client of clients.md
            return ToolResult.of(base, FileContent(file.data, mime_type, file.path.as_uri()), text=summary)
        if not is_image:
            return _binary_as_text(base, file.data, summary, budget)
        own = ImageContent(file.data, mime_type)
        return ToolResult.of(base, own, text=summary + "; the file's own bytes")
    fitted = await fit_image(
        parsers,
        file.data,
        failure=f"cannot read image {file.path}",
        hint="; pass original=true to get the file's bytes as they are",
    )
    returned = fitted.returned
    width, height = fitted.meta["width"], fitted.meta["height"]
    summary += f"; image {width}x{height}"
    if returned.reencoded:
        summary += (
            f", returned as {returned.width}x{returned.height} {returned.mime_type} ({returned.size_bytes} "
            "bytes) to fit what clients accept; original=true returns the file's bytes"
        )
    result = base.model_copy(update={"width": width, "height": height, "returned": returned})
    return ToolResult.of(result, ImageContent(fitted.data, returned.mime_type), text=summary)


def _binary_as_text(result: ToolOutput, data: bytes, summary: str, budget: int) -> ToolResult:
    """Any other binary file as text: its size, MIME type and SHA-256, and its bytes in base64 when
    they fit the result budget (twice: text and structured content). An embedded resource of such
    a type makes anthropic's MCP helper raise and lose the whole result (``clients.md``)."""
    room = (budget - 2 * len(summary) - 1000) // 2
    if len(base64_chars := base64.b64encode(data).decode("ascii")) <= room:
        fitted = result.model_copy(update={"content_base64": base64_chars})
        return ToolResult.of(fitted, text=f"{summary}\nbase64:\n{base64_chars}")
    fits = room * 3 // 4
    note = (
        f"[{len(data)} bytes is more than the {fits} bytes a result can carry in base64; the file is "
        "described, not returned: copy or unpack it with shellcommand (unzip -l, tar -tvf, xxd -l 512)]"
    )
    return ToolResult.of(result.model_copy(update={"truncated": True}), text=f"{summary}\n{note}")


async def read_pdf_text(
    base: ResultT,
    file: FileData,
    *,
    pages: str | None,
    offset: int,
    limit: int | None,
    tail: int | None,
    line_numbers: bool,
    default_limit: int,
    budget: int,
    parsers: ParserRunner,
) -> ToolResult:
    """A PDF's text layer (``pages``: 1-based pages like ``1-3,7``, None: all), cut to the line
    window (``offset``/``limit``/``tail``, as for a text file) and to ``budget`` characters.

    Args:
        base: the result model with the common fields set; the page fields are added here.

    Raises:
        InvalidArguments: a malformed ``pages``, or ``offset`` past the end of the text.
        UnsupportedContent: the PDF cannot be read.
    """
    pdf = await extract_pdf_text(parsers, file.data, pages=pages, name=str(file.path))
    notes: list[str] = []
    if pdf.cut:
        notes.append(
            f"[text extraction stopped after page {pdf.pages[-1]} at the text size cap; pass pages to read "
            "later pages]"
        )
    if pdf.pages and len(pdf.empty_pages) == len(pdf.pages):
        notes.append(
            f"[no text layer: the selected pages of {file.path} contain no extractable text (a scanned "
            'PDF?); read it with encoding "binary" to get the file itself]'
        )
    if pdf.page_count == 0:
        notes.append(f"[the PDF {file.path} has no pages]")
    with_pages = base.model_copy(update={"page_count": pdf.page_count, "pages": list(pdf.pages)})

    def finish() -> ToolResult:  # decoding and cutting up to 16 Mi characters: off the event loop
        text = pdf.decode()
        total = count_lines(text)
        first, count = lines_wanted(total, offset=offset, limit=limit, tail=tail, default_limit=default_limit)
        if first or count < total:  # the wanted lines, verbatim (no budget yet)
            text = text_window(text, offset=first, limit=count, budget=len(text)).text
        return text_result(
            with_pages,
            text,
            first=first,
            total=total,
            tail=tail,
            line_numbers=line_numbers,
            budget=budget,
            cut=pdf.cut,
            notes=notes,
        )

    return await anyio.to_thread.run_sync(finish, abandon_on_cancel=True)
