"""readfile's binary forms and a PDF's text layer: images as image content and PDFs as an
embedded resource (the whole file read into memory), any other file, or any file read with
``offset``/``length``, as a piece of its bytes in base64 (``binary_piece``: only the piece is read,
so a file of any size is read in pieces that fit the result budget, ``nextOffset`` continuing; the
llmtools-go seed's ranged binary read); a PDF's text layer, page by page.

Images go through readimage's path (``parsers/images.py``): upright and fitted to the limits
clients accept (1568 px, 1,000,000 bytes of base64), unless the call asks for the ``original``
bytes. PDFs and images are parsed in a confined worker process (``mcp_localtools.parsers``), never
in the server. An embedded resource of a type other than PDF breaks anthropic's MCP helper
(``docs/clients.md``), so such files go as base64 text.
"""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import TypeVar

import anyio.to_thread

from mcp_localtools.errors import FileSystemError, InvalidArguments, from_os_error
from mcp_localtools.files.lineindex import pread
from mcp_localtools.files.read import FileData
from mcp_localtools.parsers import ParserRunner
from mcp_localtools.parsers.images import fit_image
from mcp_localtools.parsers.pdf import extract_pdf_text
from mcp_localtools.results import FileContent, ImageContent, ToolResult
from mcp_localtools.spec import ToolOutput
from mcp_localtools.tools.fs._textwindow import count_lines, lines_wanted, text_result, text_window

__all__ = ["binary_piece", "is_whole_file_form", "read_binary", "read_pdf_text"]

ResultT = TypeVar("ResultT", bound=ToolOutput)


_ROOM_FOR_FIELDS = 1000
"""Characters of a piece's result kept for everything but its base64 (the other fields)."""


def is_whole_file_form(mime_type: str) -> bool:
    """Whether binary mode returns a file of ``mime_type`` whole (an image as image content, a
    PDF as an embedded resource) rather than as pieces of base64."""
    return mime_type == "application/pdf" or (mime_type.startswith("image/") and mime_type != "image/svg+xml")


async def read_binary(
    base: ResultT,
    file: FileData,
    mime_type: str,
    sha256: str,
    *,
    original: bool,
    parsers: ParserRunner,
) -> ToolResult:
    """Binary mode on a whole-file form (``is_whole_file_form``): an image as image content
    (fitted to what clients accept unless ``original``), a PDF as an embedded resource.

    Args:
        base: the result model with the common fields set (``encoding`` binary, path, size,
            MIME type, SHA-256); the image fields are added here.
        sha256: the file's SHA-256 (for the summary line).

    Raises:
        UnsupportedContent: the image cannot be decoded (and ``original`` is false).
    """
    summary = f"{file.path}: {len(file.data)} bytes, {mime_type}, sha256 {sha256}"
    if mime_type == "application/pdf":  # a document block in every client of clients.md
        return ToolResult.of(base, FileContent(file.data, mime_type, file.path.as_uri()), text=summary)
    if original:
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


def binary_piece(
    base: ResultT,
    fd: int,
    info: os.stat_result,
    *,
    path: Path,
    summary: str,
    offset: int,
    length: int | None,
    budget: int,
) -> ToolResult:
    """Bytes ``offset`` .. ``offset + length - 1`` of the regular file open at ``fd`` (``fstat``:
    ``info``) in base64, as much of them as ``budget`` characters carry (in the text and in the
    structured content, each within the budget); ``nextOffset`` is set when bytes remain. Not an
    embedded resource: anthropic's MCP helper raises on one of a type other than image or PDF
    (``docs/clients.md``).
    Only the piece is read (O(piece)); runs in a worker thread.

    Args:
        base: the result model with the common fields set (path, size, MIME type, SHA-256).
        summary: the first line of the text ("PATH: N bytes, TYPE, sha256 ...").
        offset: bytes to skip; ``length``: most bytes wanted (None: what fits).

    Raises:
        InvalidArguments: ``offset`` is at or past the end of a non-empty file.
        FileSystemError: the read failed, or the file changed while it was read.
    """
    size = info.st_size
    if offset and offset >= size:
        raise InvalidArguments(
            f"offset {offset} is past the end of {path} ({size} bytes); use a smaller offset"
        )
    room = max(4, budget - (len(summary) + 100) - _ROOM_FOR_FIELDS)
    count = min(size - offset, room // 4 * 3 or 3, length if length is not None else size)
    data = _read_piece(fd, info, path, offset, count)
    end = offset + len(data)
    encoded = base64.b64encode(data).decode("ascii")
    update: dict[str, object] = {"content_base64": encoded}
    if end < size:
        update.update(next_offset=end, truncated=True)
        summary += f"; bytes {offset}-{end - 1} ({len(data)}), nextOffset {end} continues"
    elif offset:
        summary += f"; bytes {offset}-{end - 1} ({len(data)}), the end of the file"
    return ToolResult.of(base.model_copy(update=update), text=f"{summary}\nbase64:\n{encoded}")


def _read_piece(fd: int, info: os.stat_result, path: Path, offset: int, count: int) -> bytes:
    """``count`` bytes at ``offset`` of the file open at ``fd``, refused when the file is no longer
    the version ``info`` describes (a piece of another version would not match the hash)."""
    chunks: list[bytes] = []
    got = 0
    try:
        while got < count:
            chunk = pread(fd, count - got, offset + got)
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
        after = os.fstat(fd)
    except OSError as exc:
        raise from_os_error(exc, str(path)) from exc
    if got < count or (after.st_size, after.st_mtime_ns, after.st_ctime_ns) != (
        info.st_size,
        info.st_mtime_ns,
        info.st_ctime_ns,
    ):
        raise FileSystemError(f"{path} changed while it was being read; read it again")
    return b"".join(chunks)


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
