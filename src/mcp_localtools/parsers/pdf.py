"""PDF text for readfile: page ranges, page count, per-page markers, hostile files contained.

The text is extracted by pypdf in a confined worker process (``mcp_localtools.parsers``): an
encrypted, malformed or enormous PDF gives a clear error within the parser timeout, and the
server goes on answering other calls meanwhile. The server itself never imports pypdf.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mcp_localtools.errors import InvalidArguments
from mcp_localtools.parsers.runner import ParserRunner

__all__ = ["MAX_PAGES_SPEC", "MAX_PDF_TEXT_CHARS", "PdfText", "extract_pdf_text", "parse_page_spec"]

MAX_PDF_TEXT_CHARS = 16 * 1024 * 1024
"""Extraction stops after the page that passes this many characters (the seed's 16 MiB cap)."""
MAX_PAGES_SPEC = 1000
"""Longest ``pages`` argument, in characters: hundreds of ranges, far more than a call needs."""

_RANGE = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$")


@dataclass(frozen=True, slots=True)
class PdfText:
    """Extracted text.

    Attributes:
        data: the extracted pages' text in UTF-8, each page introduced by ``--- page N ---``
            (bytes as the worker sent them; ``decode()`` gives the text).
        page_count: pages in the document.
        pages: the 1-based page numbers extracted, ascending.
        empty_pages: the extracted pages that had no text layer.
        cut: True when extraction stopped at ``MAX_PDF_TEXT_CHARS`` before the last selected page.
    """

    data: bytes
    page_count: int
    pages: tuple[int, ...]
    empty_pages: tuple[int, ...]
    cut: bool = False

    def decode(self) -> str:
        """The extracted text: up to ``MAX_PDF_TEXT_CHARS`` plus a page, so call it off the event loop."""
        return self.data.decode("utf-8", errors="replace")


def parse_page_spec(spec: str) -> list[tuple[int, int]]:
    """``"7,1-3,2-4"`` → ``[(1, 4), (7, 7)]``: 1-based inclusive ranges, sorted, with overlapping
    and adjacent ranges merged; checked for form only (the page count is checked against the
    document).

    Raises:
        InvalidArguments: a malformed or descending range, or page 0.
    """
    ranges: list[tuple[int, int]] = []
    for part in spec.split(","):
        match = _RANGE.match(part)
        if match is None:
            raise InvalidArguments(f'invalid pages {spec!r}: use page numbers and ranges such as "1-3,7"')
        first = int(match.group(1))
        last = int(match.group(2) or first)
        if first < 1 or last < first:
            raise InvalidArguments(
                f"invalid pages {spec!r}: {part.strip()} is not an ascending 1-based range"
            )
        ranges.append((first, last))
    merged: list[tuple[int, int]] = []
    for first, last in sorted(ranges):
        if merged and first <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], last))
        else:
            merged.append((first, last))
    return merged


async def extract_pdf_text(parsers: ParserRunner, data: bytes, *, pages: str | None, name: str) -> PdfText:
    """Extract the text layer of the selected pages (all pages when ``pages`` is None or blank).

    Raises:
        InvalidArguments: ``pages`` is malformed or goes past the last page.
        UnsupportedContent: the PDF is malformed or encrypted with a password.
        TooLarge: the PDF trips a parser safety limit (stream sizes, memory).
        ToolTimeout: extraction took longer than the parser timeout.
    """
    ranges = parse_page_spec(pages) if pages and pages.strip() else None
    request = {"ranges": ranges, "maxChars": MAX_PDF_TEXT_CHARS}
    parsed = await parsers.run("pdf", data, request, failure=f"cannot read PDF {name}")
    result = parsed.result
    return PdfText(
        data=parsed.payload,
        page_count=result["pageCount"],
        pages=tuple(result["pages"]),
        empty_pages=tuple(result["emptyPages"]),
        cut=bool(result["cut"]),
    )
