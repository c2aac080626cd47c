"""PDF text extraction for readfile: page ranges, page count, per-page markers.

pypdf is imported lazily: most sessions never read a PDF, and importing it costs start-up time.
"""

from __future__ import annotations

import io
import logging
import re
from dataclasses import dataclass

from mcp_localtools.errors import InvalidArguments, UnsupportedContent

__all__ = ["PdfText", "extract_pdf_text", "parse_page_ranges"]

_RANGE = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$")


@dataclass(frozen=True, slots=True)
class PdfText:
    """Extracted text.

    Attributes:
        text: the selected pages' text, each page introduced by ``--- page N ---``.
        page_count: pages in the document.
        pages: the 1-based page numbers extracted, ascending.
        empty_pages: the selected pages that had no text layer.
    """

    text: str
    page_count: int
    pages: tuple[int, ...]
    empty_pages: tuple[int, ...]


def parse_page_ranges(spec: str, page_count: int) -> tuple[int, ...]:
    """``"1-3,7"`` → ``(1, 2, 3, 7)``: 1-based, inclusive, de-duplicated, ascending.

    Raises:
        InvalidArguments: a malformed range or a page outside ``1..page_count``.
    """
    selected: set[int] = set()
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
        if last > page_count:
            raise InvalidArguments(f"invalid pages {spec!r}: the document has {page_count} pages")
        selected.update(range(first, last + 1))
    return tuple(sorted(selected))


def extract_pdf_text(data: bytes, *, pages: str | None, name: str) -> PdfText:
    """Extract the text layer of the selected pages (all pages when ``pages`` is None).

    Raises:
        UnsupportedContent: the PDF is malformed or encrypted with a password.
        InvalidArguments: ``pages`` is malformed or out of range.
    """
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # malformed files warn per object
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise UnsupportedContent(f"cannot read PDF {name}: it is encrypted with a password")
        page_count = len(reader.pages)
        selected = parse_page_ranges(pages, page_count) if pages else tuple(range(1, page_count + 1))
        parts: list[str] = []
        empty: list[int] = []
        for number in selected:
            text = (reader.pages[number - 1].extract_text() or "").strip()
            if not text:
                empty.append(number)
                text = "[no text layer on this page]"
            parts.append(f"--- page {number} ---\n{text}\n")
    except (UnsupportedContent, InvalidArguments):
        raise
    except (PdfReadError, ValueError, KeyError, TypeError, AttributeError, IndexError, RecursionError) as exc:
        raise UnsupportedContent(f"cannot read PDF {name}: it is malformed ({exc})") from exc
    return PdfText(text="".join(parts), page_count=page_count, pages=selected, empty_pages=tuple(empty))
