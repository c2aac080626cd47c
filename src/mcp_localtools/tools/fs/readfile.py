"""readfile: a file's text or bytes, with a line window, a result budget and PDF pages.

Text mode returns the file's text verbatim (or numbered like ``cat -n`` with ``lineNumbers``), cut
to a line window (``offset`` lines skipped, at most ``limit`` lines; or the last ``tail`` lines)
and to the result budget; when cut, the result says so and gives ``nextOffset``. Text windows of
files of any size cost O(window): the file is indexed once per version (``files.lineindex``: line
offsets and SHA-256, cached), then only the window's bytes are read (``_textwindow``). A file
over ``HASH_UP_TO`` not counted yet is not counted whole for one window: its head costs the
lines up to the window, its tail is read backwards from the end, and ``totalLines`` is null
until the lines are counted (``countLines``, or a window that reached the end). Binary mode
reads other files the same way, in pieces of bytes (``offset``/``length``, ``nextOffset``). The
whole-file cap (``max_read_bytes``) applies to reads that need the whole file: images and PDFs
(``_binaryforms``: image content, embedded PDFs, a PDF's text layer page by page).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import partial
from typing import Annotated, Any, Literal

import anyio.to_thread
from pydantic import Field

from mcp_localtools.config import HARD_MAX_READ_LINES, LimitsConfig
from mcp_localtools.errors import InvalidArguments, TooLarge, UnsupportedContent, from_os_error
from mcp_localtools.files.lineindex import HEAD_BYTES, LineIndex, pread
from mcp_localtools.files.lineindexes import LineIndexes
from mcp_localtools.files.linetail import last_lines
from mcp_localtools.files.read import FileData, open_regular_file, read_regular_file, sha256_hex
from mcp_localtools.mime import MimeInfo, detect_mime, is_probably_text
from mcp_localtools.parsers import ParserRunner
from mcp_localtools.parsers.images import ReturnedImage
from mcp_localtools.parsers.pdf import MAX_PAGES_SPEC
from mcp_localtools.policy.paths import PathPolicy, ResolvedPath
from mcp_localtools.results import ToolResult
from mcp_localtools.spec import READ_ONLY, CallContext, ToolArgs, ToolOutput, ToolSpec, any_case
from mcp_localtools.tools.fs._binaryforms import binary_piece, is_whole_file_form, read_binary, read_pdf_text
from mcp_localtools.tools.fs._textwindow import (
    TextWindow,
    decode_window,
    lines_wanted,
    read_lines,
    text_result,
    text_window,
)
from mcp_localtools.units import size_text
from mcp_localtools.workspace import Workspace

__all__ = ["HASH_UP_TO", "ReadFileArgs", "ReadFileResult", "TextWindow", "read_file", "spec", "text_window"]


HASH_UP_TO = 1024 * 1024
"""Text files up to this size (bytes) are hashed on every read (once per version, cached with
their line index); larger ones only when the call sets ``sha256``: hashing costs about 7 x
counting lines, and a tail of a growing log should cost what it appended, not its size. Their
lines are counted as far as a window needs (all of them with ``countLines`` or ``sha256``)."""

SCAN_NOTE_FROM = 1024 * 1024
"""A window whose lines had to be counted over more bytes than this (a first window deep in a
large file) says how many."""

_Encodings = Literal["text", "binary"]
Encoding = Annotated[_Encodings, any_case(_Encodings)]


class ReadFileArgs(ToolArgs):
    path: str = Field(description="File to read.")
    encoding: Encoding = Field(
        "text",
        description="`text`: UTF-8 or a PDF's text; `binary`: the bytes.",
    )
    offset: int = Field(0, ge=0, description="Text: lines to skip; binary: bytes to skip.")
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
    length: int | None = Field(
        None,
        ge=1,
        description="Binary: most bytes to return (default and most: what fits the result).",
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
    sha256: bool = Field(False, description=f"Text: hash files over {size_text(HASH_UP_TO)} too.")
    count_lines: bool = Field(
        False,
        description=f"Text: count every line (totalLines) of a file over {size_text(HASH_UP_TO)}; reads it.",
    )


class ReadFileResult(ToolOutput):
    path: str = Field(description="Absolute path of the file.")
    encoding: Literal["text", "binary"] = Field(description="How the content was read.")
    mime_type: str = Field(description="Detected MIME type.")
    size_bytes: int = Field(description="File size in bytes.")
    sha256: str | None = Field(
        None,
        description=(
            "SHA-256 of the whole file (pass it as expectedSha256 to later edits); absent when not "
            f"computed: text over {size_text(HASH_UP_TO)} without sha256."
        ),
    )
    content: str | None = Field(None, description="Text mode: the text of the returned lines, verbatim.")
    total_lines: int | None = Field(
        None,
        description=(
            f"Text mode: lines in the whole text; null when not counted (over {size_text(HASH_UP_TO)}, "
            "not read to its end yet, no countLines)."
        ),
    )
    start_line: int | None = Field(None, description="Text mode: 1-based number of the first returned line.")
    end_line: int | None = Field(None, description="Text mode: 1-based number of the last returned line.")
    next_offset: int | None = Field(
        None, description="Set when lines (text) or bytes (binary) remain: pass it as offset to continue."
    )
    truncated: bool = Field(
        False, description="True when the text or bytes were cut by the window or the budget."
    )
    page_count: int | None = Field(None, description="PDF: pages in the document.")
    pages: list[int] | None = Field(None, description="PDF: the pages extracted.")
    width: int | None = Field(None, description="Binary images: width of the image in the file (pixels).")
    height: int | None = Field(None, description="Binary images: height of the image in the file (pixels).")
    returned: ReturnedImage | None = Field(
        None, description="Binary images: the image content as returned (its size and encoding)."
    )
    content_base64: str | None = Field(
        None,
        description="Binary, other than an image or PDF or with offset/length: the bytes read, in base64.",
    )


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
    _check_arguments(args)
    loaded = await anyio.to_thread.run_sync(
        partial(
            _load_or_read_text,
            args,
            paths=paths,
            limits=limits,
            indexes=indexes if indexes is not None else LineIndexes(),
        ),
        abandon_on_cancel=True,
    )
    if isinstance(loaded, ToolResult):
        return loaded
    base = ReadFileResult(encoding=args.encoding, mime_type=loaded.mime.base, **loaded.common)
    if args.encoding == "binary":
        return await read_binary(
            base,
            loaded.file,
            loaded.mime.base,
            loaded.common["sha256"],
            original=args.original,
            parsers=parsers,
        )
    return await read_pdf_text(
        base.model_copy(update={"mime_type": "application/pdf"}),
        loaded.file,
        pages=args.pages,
        offset=args.offset,
        limit=args.limit,
        tail=args.tail,
        line_numbers=args.line_numbers,
        default_limit=limits.read_max_lines,
        budget=limits.max_result_chars,
        parsers=parsers,
    )


def _check_arguments(args: ReadFileArgs) -> None:
    """Refuse the arguments that would be accepted and mean nothing for the encoding asked for.

    Raises:
        InvalidArguments: ``original`` or ``length`` with text, ``limit``/``tail`` with binary,
            ``tail`` with ``offset``/``limit``.
    """
    if args.encoding == "binary":
        if args.limit is not None or args.tail is not None:
            raise InvalidArguments(
                'limit and tail count lines of text; encoding "binary" takes offset and length in bytes'
            )
    elif args.original:
        raise InvalidArguments('original applies to encoding "binary" only')
    elif args.length is not None:
        raise InvalidArguments('length counts bytes (encoding "binary"); text windows take offset and limit')
    if args.tail is not None and (args.offset or args.limit is not None):
        raise InvalidArguments("tail reads the last lines of the file; pass offset/limit or tail, not both")


def _load_or_read_text(
    args: ReadFileArgs, *, paths: PathPolicy, limits: LimitsConfig, indexes: LineIndexes
) -> _Loaded | ToolResult:
    """In a worker thread: a text read or a binary piece is finished here (one hop), through the
    file's line index (no size limit); images and PDFs load the whole file (within
    ``max_read_bytes``)."""
    resolved = paths.resolve(args.path)
    with open_regular_file(paths, resolved) as (fd, info):
        if args.encoding == "binary":
            piece = _binary_piece(args, resolved, fd, info, limits, indexes)
            if piece is not None:
                return piece
        else:
            small = info.st_size <= HASH_UP_TO
            # Numbered tail lines need the lines before them counted.
            count = args.count_lines or small or (args.tail is not None and args.line_numbers)
            index = indexes.index(fd, info, str(resolved.path), sha256=args.sha256 or small, count=count)
            mime = detect_mime(resolved.path, index.head)
            # detect_mime answers application/pdf for the .pdf extension and for sniffed PDF content.
            if mime.base != "application/pdf":
                return _read_text(args, resolved, fd, index, mime, limits)
    return _load(resolved, paths=paths, limits=limits)


def _binary_piece(
    args: ReadFileArgs,
    resolved: ResolvedPath,
    fd: int,
    info: os.stat_result,
    limits: LimitsConfig,
    indexes: LineIndexes,
) -> ToolResult | None:
    """Binary mode on the file open at ``fd``: a piece of its bytes (``_binaryforms.binary_piece``),
    or None for an image or PDF read whole (at most ``max_read_bytes``).

    Raises:
        TooLarge: an image or PDF asked for whole is larger than ``max_read_bytes``.
    """
    path = resolved.path
    try:
        head = pread(fd, HEAD_BYTES, 0)
    except OSError as exc:
        raise from_os_error(exc, str(path)) from exc
    mime = detect_mime(path, head)
    if is_whole_file_form(mime.base) and not args.offset and args.length is None:
        if info.st_size > limits.max_read_bytes:
            raise TooLarge(
                f"{path} is {info.st_size} bytes, more than the {limits.max_read_bytes} an image or PDF is "
                "read whole ([limits] max_read_bytes); pass offset and length to read its bytes in pieces"
            )
        return None
    index = indexes.index(fd, info, str(path), sha256=True)
    base = ReadFileResult(
        path=str(path), encoding="binary", mime_type=mime.base, size_bytes=index.size, sha256=index.sha256
    )
    return binary_piece(
        base,
        fd,
        info,
        path=path,
        summary=f"{path}: {index.size} bytes, {mime.base}, sha256 {index.sha256}",
        offset=args.offset,
        length=args.length,
        budget=limits.max_result_chars,
    )


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
    # Characters are at least one byte and at most four: the budget never shows more than this.
    cap = 4 * limits.max_result_chars + 8
    base = ReadFileResult(
        path=str(path), encoding="text", mime_type=mime.base, size_bytes=index.size, sha256=index.sha256
    )
    window = partial(
        text_result, base, tail=args.tail, line_numbers=args.line_numbers, budget=limits.max_result_chars
    )
    if not index.complete and args.tail is not None:  # backwards from the end, nothing counted
        tail = last_lines(fd, index.size, args.tail, cap)
        text = decode_window(tail.data, path, tail.start)
        return window(text, first=tail.first, total=tail.total, cut=tail.short)
    notes: list[str] = []
    if not index.complete:  # count as far as the window goes
        scanned = index.ensure(fd, args.offset + (args.limit or limits.read_max_lines))
        if scanned > SCAN_NOTE_FROM:
            notes.append(
                f"[counted the lines of the first {size_text(index.scanned)} of the file to find line "
                f"{args.offset + 1} (this file version's first read this deep; later windows read only "
                "their own bytes)]"
            )
    total = index.total_lines
    if total is None:
        first, count = args.offset, args.limit or limits.read_max_lines
    else:
        first, count = lines_wanted(
            total, offset=args.offset, limit=args.limit, tail=args.tail, default_limit=limits.read_max_lines
        )
    text, first = read_lines(
        fd, index, path, first, count, tail=args.tail is not None, cap=cap, enough=limits.max_result_chars
    )
    return window(text, first=first, total=total, notes=notes, rest=total is None)


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
        title="Read a file",
        description=(
            f"Read a file. Text: UTF-8 verbatim, {limits.read_max_lines} lines unless limit, at most "
            f"{limits.max_result_chars} characters per call, any file size; nextOffset continues. PDF: "
            "text per page. Binary: images as image content (upright, fitted to 1568 px and 1 MB) and PDFs "
            f"as an embedded resource, up to {size_text(limits.max_read_bytes)}; other files, or any with "
            "offset/length, as base64 bytes, any size; nextOffset continues."
        ),
        args_model=ReadFileArgs,
        result_model=ReadFileResult,
        handler=handler,
        annotations=READ_ONLY,
    )
