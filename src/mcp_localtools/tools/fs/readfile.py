"""readfile: a file's text or bytes, with a line window, a result budget and PDF pages.

Text mode returns the file's text verbatim (or numbered like ``cat -n`` with ``lineNumbers``), cut
to a line window (``offset`` lines skipped, at most ``limit`` lines; or the last ``tail`` lines)
and to the result budget; when cut, the result says so and gives ``nextOffset``. Text windows of
files of any size cost O(window): the file is indexed once per version (``files.lineindex``: line
offsets and SHA-256, cached), then only the window's bytes are read. The whole-file cap
(``max_read_bytes``) applies to reads that need the whole file: binary mode and PDFs.
PDFs (by extension or content) give their text layer, page by page.
Binary mode returns image content for images, an embedded resource for PDFs, and for any other
file its size, type and hash with its bytes in base64 as text when they fit the result budget
(an embedded resource of another type breaks anthropic's MCP helper: clients.md). Images go
through readimage's path (``tools/image.py``): upright and fitted to the limits clients accept
(1568 px, 1,000,000 bytes of base64), unless the call asks for the ``original`` bytes. PDFs and
images are parsed in a confined worker process (``mcp_localtools.parsers``), never in the server.
"""

from __future__ import annotations

import base64
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from itertools import accumulate
from typing import Annotated, Any, Literal

import anyio.to_thread
from pydantic import Field

from mcp_localtools.config import HARD_MAX_READ_LINES, LimitsConfig
from mcp_localtools.errors import InvalidArguments, UnsupportedContent, from_os_error
from mcp_localtools.files.lineindex import LineIndex, LineIndexes, pread, utf8_prefix
from mcp_localtools.files.read import FileData, open_regular_file, read_regular_file, sha256_hex
from mcp_localtools.mime import MimeInfo, detect_mime, is_probably_text
from mcp_localtools.parsers import ParserRunner
from mcp_localtools.parsers.images import ReturnedImage, fit_image
from mcp_localtools.parsers.pdf import MAX_PAGES_SPEC, extract_pdf_text
from mcp_localtools.policy.paths import PathPolicy, ResolvedPath
from mcp_localtools.registry import READ_ONLY, CallContext, ToolArgs, ToolOutput, ToolSpec, any_case
from mcp_localtools.results import FileContent, ImageContent, TextContent, ToolResult, fit_within
from mcp_localtools.workspace import Workspace

__all__ = ["ReadFileArgs", "ReadFileResult", "TextWindow", "read_file", "spec", "text_window"]


_Encodings = Literal["text", "binary"]
Encoding = Annotated[_Encodings, any_case(_Encodings)]


class ReadFileArgs(ToolArgs):
    path: str = Field(description="File to read.")
    encoding: Encoding = Field(
        "text",
        description="`text`: UTF-8 or a PDF's text; `binary`: the bytes.",
    )
    offset: int = Field(0, ge=0, description="Text: lines to skip.")
    limit: int | None = Field(
        None,
        ge=1,
        le=HARD_MAX_READ_LINES,
        description="Text: most lines.",
    )
    tail: int | None = Field(
        None,
        ge=1,
        le=HARD_MAX_READ_LINES,
        description="Text: the last N lines; not with offset/limit.",
    )
    line_numbers: bool = Field(False, description="Text: prefix line numbers and a tab, like `cat -n`.")
    pages: str | None = Field(
        None,
        max_length=MAX_PAGES_SPEC,
        description="PDF: 1-based pages like `1-3,7`; default all.",
    )
    original: bool = Field(
        False,
        description=("Binary images: the file's own bytes, not upright and fitted."),
    )


class ReadFileResult(ToolOutput):
    path: str = Field(description="Absolute path of the file.")
    encoding: Literal["text", "binary"] = Field(description="How the content was read.")
    mime_type: str = Field(description="Detected MIME type.")
    size_bytes: int = Field(description="File size in bytes.")
    sha256: str = Field(description="SHA-256 of the whole file (pass it as expectedSha256 to later edits).")
    content: str | None = Field(None, description="Text mode: the text of the returned lines, verbatim.")
    total_lines: int | None = Field(None, description="Text mode: lines in the whole text.")
    start_line: int | None = Field(None, description="Text mode: 1-based number of the first returned line.")
    end_line: int | None = Field(None, description="Text mode: 1-based number of the last returned line.")
    next_offset: int | None = Field(None, description="Set when lines remain: pass it as offset to continue.")
    truncated: bool = Field(False, description="True when the text was cut by the line window or the budget.")
    page_count: int | None = Field(None, description="PDF: pages in the document.")
    pages: list[int] | None = Field(None, description="PDF: the pages extracted.")
    width: int | None = Field(None, description="Binary images: width of the image in the file (pixels).")
    height: int | None = Field(None, description="Binary images: height of the image in the file (pixels).")
    returned: ReturnedImage | None = Field(
        None, description="Binary images: the image content as returned (its size and encoding)."
    )
    content_base64: str | None = Field(
        None,
        description="Binary, neither image nor PDF: the file's bytes in base64, when they fit the result "
        "budget (else truncated is true).",
    )


@dataclass(frozen=True, slots=True)
class TextWindow:
    """A window of lines cut from a text.

    Attributes:
        text: the window's text, verbatim (line endings kept).
        total_lines: lines in the whole text (a final line without newline counts).
        start_line: 1-based first line, or None when the window is empty.
        end_line: 1-based last line (inclusive), or None when the window is empty.
        next_offset: offset of the first line not returned, or None when the text ended.
        cut_line: the 1-based line that was cut mid-line to fit the budget, if any.
    """

    text: str
    total_lines: int
    start_line: int | None
    end_line: int | None
    next_offset: int | None
    cut_line: int | None = None


def text_window(text: str, *, offset: int, limit: int, budget: int) -> TextWindow:
    """Cut ``text`` to ``limit`` lines after skipping ``offset``, within ``budget`` characters.

    Lines are split on ``\\n`` only, so CRLF and stray CR bytes come back as they are. A single
    line longer than the budget is cut mid-line (``cut_line`` says which).

    Raises:
        InvalidArguments: ``offset`` is past the last line of a non-empty text.
    """
    total = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    if offset and offset >= total:
        raise InvalidArguments(
            f"offset {offset} is past the end of the text ({total} lines); use a smaller offset"
        )
    if not offset and total <= limit and len(text) <= budget:  # the common case: all of it fits
        return TextWindow(text, total, 1 if total else None, total or None, None)
    parts = text.split("\n", offset + limit)
    count = min(limit, total - offset)
    selected = parts[offset : offset + count]
    # Line k of the window ends lengths[k] + k characters in, plus 1 for its own newline, which
    # every line has but the text's last one when the text does not end with "\n" (the window's
    # lines from with_newline on: none, or that last line). The first line always goes in (cut
    # below when it alone is over the budget). Cumulated in C, searched in log time.
    lengths = list(accumulate(map(len, selected)))
    with_newline = len(parts) - offset - 1
    used = (
        max(1, bisect_right(range(count), budget, key=lambda k: lengths[k] + k + (k < with_newline)))
        if count
        else 0
    )
    chunk = "\n".join(selected[:used])
    if used and offset + used < len(parts):  # the last returned line had its newline
        chunk += "\n"
    cut_line = None
    if len(chunk) > budget:  # one line alone is over the budget
        chunk = chunk[:budget]
        cut_line = offset + 1
    next_offset = offset + used if offset + used < total else None
    first = offset + 1 if used else None
    return TextWindow(chunk, total, first, offset + used if used else None, next_offset, cut_line)


@dataclass(frozen=True, slots=True)
class _Loaded:
    file: FileData
    mime: MimeInfo
    common: dict[str, Any]


def _load(resolved: ResolvedPath, *, paths: PathPolicy, limits: LimitsConfig) -> _Loaded:
    file = read_regular_file(paths, resolved, max_bytes=limits.max_read_bytes)
    common = {"path": str(file.path), "size_bytes": len(file.data), "sha256": sha256_hex(file.data)}
    return _Loaded(file=file, mime=detect_mime(file.path, file.data[:4096]), common=common)


async def read_file(
    args: ReadFileArgs,
    ctx: CallContext,
    *,
    paths: PathPolicy,
    limits: LimitsConfig,
    parsers: ParserRunner,
    indexes: LineIndexes | None = None,
) -> ToolResult:
    """The readfile tool body: file work in a worker thread, parsing in a worker process;
    ``indexes`` keeps the line indexes of the files read (the workspace's; None: none kept)."""
    if args.original and args.encoding != "binary":
        raise InvalidArguments('original applies to encoding "binary" only')
    if args.tail is not None and (args.offset or args.limit is not None):
        raise InvalidArguments("tail reads the last lines of the file; pass offset/limit or tail, not both")
    loaded = await anyio.to_thread.run_sync(
        partial(_load_or_read_text, args, paths=paths, limits=limits, indexes=indexes or LineIndexes()),
        abandon_on_cancel=True,
    )
    if isinstance(loaded, ToolResult):
        return loaded
    if args.encoding == "binary":
        return await _read_binary(args, loaded, parsers, limits)
    return await _read_pdf(args, loaded, limits, parsers)


def _binary_as_text(result: ReadFileResult, data: bytes, summary: str, limits: LimitsConfig) -> ToolResult:
    """Any other binary file as text: its size, MIME type and SHA-256, and its bytes in base64 when
    they fit the result budget (twice: text and structured content). An embedded resource of such
    a type makes anthropic's MCP helper raise and lose the whole result (``clients.md``)."""
    room = (limits.max_result_chars - 2 * len(summary) - 1000) // 2
    if len(base64_chars := base64.b64encode(data).decode("ascii")) <= room:
        fitted = result.model_copy(update={"content_base64": base64_chars})
        return ToolResult.of(fitted, text=f"{summary}\nbase64:\n{base64_chars}")
    fits = room * 3 // 4
    note = (
        f"[{len(data)} bytes is more than the {fits} bytes a result can carry in base64; the file is "
        "described, not returned: copy or unpack it with shellcommand (unzip -l, tar -tvf, xxd -l 512)]"
    )
    return ToolResult.of(result.model_copy(update={"truncated": True}), text=f"{summary}\n{note}")


def _load_or_read_text(
    args: ReadFileArgs, *, paths: PathPolicy, limits: LimitsConfig, indexes: LineIndexes
) -> _Loaded | ToolResult:
    """In a worker thread: a text read is finished here (one hop), through the file's line index
    (no size limit); binary reads and PDFs load the whole file (within ``max_read_bytes``)."""
    resolved = paths.resolve(args.path)
    if args.encoding == "binary":
        return _load(resolved, paths=paths, limits=limits)
    with open_regular_file(paths, resolved) as (fd, info):
        index = indexes.index(fd, info, str(resolved.path))
        mime = detect_mime(resolved.path, index.head)
        # detect_mime answers application/pdf for the .pdf extension and for sniffed PDF content.
        if mime.base != "application/pdf":
            return _read_text(args, resolved, fd, index, mime, limits)
    return _load(resolved, paths=paths, limits=limits)


async def _read_binary(
    args: ReadFileArgs, loaded: _Loaded, parsers: ParserRunner, limits: LimitsConfig
) -> ToolResult:
    file, mime_type = loaded.file, loaded.mime.base
    summary = f"{file.path}: {len(file.data)} bytes, {mime_type}, sha256 {loaded.common['sha256']}"
    is_image = mime_type.startswith("image/") and mime_type != "image/svg+xml"
    if not is_image or args.original:  # the file's bytes as they are
        result = ReadFileResult(encoding="binary", mime_type=mime_type, **loaded.common)
        if mime_type == "application/pdf":  # a document block in every client of clients.md
            return ToolResult.of(result, FileContent(file.data, mime_type, file.path.as_uri()), text=summary)
        if not is_image:
            return _binary_as_text(result, file.data, summary, limits)
        return ToolResult.of(
            result, ImageContent(file.data, mime_type), text=summary + "; the file's own bytes"
        )
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
    result = ReadFileResult(
        encoding="binary", mime_type=mime_type, width=width, height=height, returned=returned, **loaded.common
    )
    return ToolResult.of(result, ImageContent(fitted.data, returned.mime_type), text=summary)


async def _read_pdf(
    args: ReadFileArgs, loaded: _Loaded, limits: LimitsConfig, parsers: ParserRunner
) -> ToolResult:
    file = loaded.file
    pdf = await extract_pdf_text(parsers, file.data, pages=args.pages, name=str(file.path))
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

    def finish() -> ToolResult:  # decoding and cutting up to 16 Mi characters: off the event loop
        text = pdf.decode()
        total = _count_lines(text)
        first, count = _lines_wanted(args, total, limits)
        if first or count < total:  # the wanted lines, verbatim (no budget yet)
            text = text_window(text, offset=first, limit=count, budget=len(text)).text
        return _text_result(
            args,
            loaded.common,
            limits,
            text,
            first=first,
            total=total,
            mime_type="application/pdf",
            cut=pdf.cut,
            notes=notes,
            page_count=pdf.page_count,
            pages=list(pdf.pages),
        )

    return await anyio.to_thread.run_sync(finish, abandon_on_cancel=True)


def _read_text(
    args: ReadFileArgs,
    resolved: ResolvedPath,
    fd: int,
    index: LineIndex,
    mime: MimeInfo,
    limits: LimitsConfig,
) -> ToolResult:
    """The text read of the file open at ``fd``: only the wanted lines' bytes are read (at most
    what the result budget can show), located through ``index``."""
    path = resolved.path
    if args.pages is not None:
        raise InvalidArguments(f"pages applies to PDF files only; {path} is {mime.base}")
    if mime.base != "image/svg+xml" and mime.mode in ("image", "document"):
        raise UnsupportedContent(f'cannot read {path} as text: it is {mime.base}; use encoding "binary"')
    if not is_probably_text(index.head):
        raise UnsupportedContent(f'cannot read {path} as text: it looks binary; use encoding "binary"')
    total = index.total_lines
    first, count = _lines_wanted(args, total, limits)
    # Characters are at least one byte and at most four: the budget never shows more than this.
    cap = 4 * limits.max_result_chars + 8
    start, end = index.line_start(fd, first), index.line_start(fd, first + count)
    if args.tail is not None and end - start > cap:  # the last whole lines the cap holds
        fits = bisect_left(
            range(first, first + count), True, key=lambda line: end - index.line_start(fd, line) <= cap
        )
        first, count = (first + fits, count - fits) if fits < count else (first + count - 1, 1)
        start = index.line_start(fd, first)
    try:
        data = pread(fd, min(end - start, cap), start)
    except OSError as exc:
        raise from_os_error(exc, str(path)) from exc
    if len(data) < end - start:  # cut at the cap: whole lines only, or a long first line's prefix
        newline = data.rfind(b"\n")
        data = data[: newline + 1] if newline >= 0 else utf8_prefix(data)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UnsupportedContent(
            f"not valid UTF-8 text: {path} (invalid byte at offset {start + exc.start}); "
            'use encoding "binary"'
        ) from exc
    common = {"path": str(path), "size_bytes": index.size, "sha256": index.sha256}
    return _text_result(args, common, limits, text, first=first, total=total, mime_type=mime.base)


def _count_lines(text: str) -> int:
    """Lines in ``text``, split on ``\\n`` (a final line without newline counts)."""
    return text.count("\n") + (0 if text.endswith("\n") or not text else 1)


def _lines_wanted(args: ReadFileArgs, total: int, limits: LimitsConfig) -> tuple[int, int]:
    """``(first, count)``: the 0-based first line and the number of lines the call asks for.

    Raises:
        InvalidArguments: ``offset`` is past the last line of a non-empty text.
    """
    if args.tail is not None:
        first = max(0, total - args.tail)
        return first, total - first
    if args.offset and args.offset >= total:
        raise InvalidArguments(
            f"offset {args.offset} is past the end of the text ({total} lines); use a smaller offset"
        )
    return args.offset, min(args.limit or limits.read_max_lines, total - args.offset)


def number_lines(text: str, first: int) -> str:
    """``text`` with each line prefixed like ``cat -n``: its number right-aligned in 6 columns
    (wider when needed), then a tab; ``first`` is the 1-based number of the first line."""
    if not text:
        return text
    ends = text.endswith("\n")
    lines = (text[:-1] if ends else text).split("\n")
    numbered = "\n".join([f"{number:>6}\t{line}" for number, line in enumerate(lines, first)])
    return numbered + "\n" if ends else numbered


def _lines_over(text: str, budget: int) -> int:
    """How many leading lines of ``text`` to drop so that the rest fits ``budget`` characters
    (never the last line)."""
    if len(text) <= budget:
        return 0
    sizes = [len(line) + 1 for line in text.split("\n")]
    if text.endswith("\n"):
        sizes.pop()
    ends = list(accumulate(sizes))
    return min(bisect_left(ends, len(text) - budget) + 1, len(sizes) - 1)


def _text_result(
    args: ReadFileArgs,
    common: dict[str, Any],
    limits: LimitsConfig,
    text: str,
    *,
    first: int,
    total: int,
    mime_type: str,
    cut: bool = False,
    notes: Sequence[str] = (),
    **fields: Any,
) -> ToolResult:
    """The text-mode result: the window ``text`` numbered when asked, and cut to the result
    budget (from the end for a forward read, from the start for ``tail``).

    Args:
        text: whole lines ``first``, ``first + 1``, ... of a text of ``total`` lines (the
            lines the call asked for, or fewer when the read was capped; a long first line may
            be a prefix only).
        first: the 0-based number of the window's first line.
        mime_type: the result's ``mimeType``.
        cut: the text was already cut before it got here (PDF extraction stopped at its cap).
        notes: further notes for the caller, after the window's.
        fields: further ``ReadFileResult`` fields (a PDF's pages).
    """
    budget = limits.max_result_chars
    # The text goes twice (the text content and structuredContent.content): half the budget each,
    # less while the whole result (metadata, notes, JSON escapes) is over it.
    return fit_within(
        partial(_text_window_result, args, common, text, first, total, mime_type, cut, notes, fields),
        budget,
        budget // 2 - 500,
    )


def _text_window_result(
    args: ReadFileArgs,
    common: dict[str, Any],
    text: str,
    first: int,
    total: int,
    mime_type: str,
    cut: bool,
    notes: Sequence[str],
    fields: dict[str, Any],
    payload: int,
) -> ToolResult:
    """``_text_result`` with the window cut to ``payload`` characters."""
    budget = max(payload, 1)
    lines = _count_lines(text)
    shown = number_lines(text, first + 1) if args.line_numbers else text
    skip = _lines_over(shown, budget) if args.tail is not None else 0
    if skip:
        shown = shown.split("\n", skip)[-1]
    window = text_window(shown, offset=0, limit=lines - skip, budget=budget)
    begin = first + skip
    used = window.end_line or 0
    remains = begin + used < total
    next_offset = begin + used if remains and (args.tail is None or window.cut_line is not None) else None
    missing = max(0, total - args.tail) if args.tail is not None else None  # the tail's first line
    result = ReadFileResult(
        encoding="text",
        mime_type=mime_type,
        content=window.text,
        total_lines=total,
        start_line=begin + 1 if used else None,
        end_line=begin + used if used else None,
        next_offset=next_offset,
        truncated=next_offset is not None
        or window.cut_line is not None
        or cut
        or (begin != missing and missing is not None),
        **fields,
        **common,
    )
    told: list[str] = []
    if window.cut_line is not None:
        told.append(
            f"line {begin + 1} is longer than the result budget and was cut after {len(window.text)} "
            "characters"
        )
    if missing is not None and begin > missing:
        told.append(
            f"showing the last {used} lines ({begin + 1}-{begin + used} of {total}), what fits the result "
            f"budget; call readfile with offset={missing}, limit={begin - missing} for the lines before"
        )
    elif next_offset is not None:
        told.append(
            f"showing lines {begin + 1}-{begin + used} of {total}; call readfile with offset={next_offset} "
            "to continue"
        )
    if told:
        notes = [f"[{'; '.join(told)}]", *notes]
    return ToolResult.of(result, *map(TextContent, notes), text=window.text)


def spec(workspace: Workspace) -> ToolSpec[Any]:
    """The readfile tool, bound to ``workspace``."""
    paths = workspace.paths
    limits = workspace.limits
    parsers = workspace.parsers

    async def handler(args: ReadFileArgs, ctx: CallContext) -> ToolResult:
        return await read_file(
            args, ctx, paths=paths, limits=limits, parsers=parsers, indexes=workspace.line_indexes
        )

    return ToolSpec(
        name="readfile",
        group="fs",
        title="Read a file",
        description=(
            f"Read a file. Text: UTF-8 verbatim, {limits.read_max_lines} lines unless limit, at most "
            f"{limits.max_result_chars} characters per call, any file size; nextOffset continues. PDF: "
            "text per page. Binary: images as image content (upright, fitted to 1568 px and 1 MB), PDFs as "
            "an embedded resource, others as size, type, hash and base64 if it fits. Binary and PDF: up to "
            f"{limits.max_read_bytes} bytes."
        ),
        args_model=ReadFileArgs,
        result_model=ReadFileResult,
        handler=handler,
        annotations=READ_ONLY,
    )
