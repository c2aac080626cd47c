"""MIME detection: what a file holds, from its extension or its first bytes.

Detection: an extension that maps to a specific MIME type with a text, image or document mode
is answered from the table without touching the file (method ``extension``). Otherwise the first
4096 bytes are sniffed (method ``sniff``): magic numbers through ``filetype``, then a "probably
text" heuristic (no NUL byte, at most 10 % control characters), then the extension's own MIME
type if it had one, then ``application/octet-stream``.
"""

from __future__ import annotations

import mimetypes
import os
from dataclasses import dataclass
from functools import cache
from pathlib import PurePath
from typing import Literal

__all__ = [
    "OCTET_STREAM",
    "SNIFF_BYTES",
    "MimeInfo",
    "Mode",
    "base_type",
    "detect_mime",
    "from_extension",
    "is_probably_text",
    "lookup_extension",
    "mode_of",
    "normalise_extension",
    "sniff",
]


Mode = Literal["text", "image", "document", "default"]


SNIFF_BYTES = 4096


OCTET_STREAM = "application/octet-stream"


_UTF8_TEXT = "text/plain; charset=utf-8"


_TABLE: dict[str, str] = {
    **dict.fromkeys(
        ".txt .log .ts .tsx .jsx .py .go .rs .java .c .cpp .h .hpp .cs .rb .php .scss .less .mod .sum "
        ".jsonl .sh .swift .m .kt .pl .scala .hs .lua .dart .cmake .bazel".split(),
        _UTF8_TEXT,
    ),
    ".md": "text/markdown; charset=utf-8",
    ".markdown": "text/markdown; charset=utf-8",
    ".html": "text/html; charset=utf-8",
    ".htm": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json",
    ".xml": "application/xml",
    ".yaml": "application/x-yaml",
    ".yml": "application/x-yaml",
    ".toml": "application/toml",
    ".sql": "application/sql",
    ".js": "application/javascript",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".png": "image/png",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".bmp": "image/bmp",
    ".svg": "image/svg+xml",
    ".pdf": "application/pdf",
    ".doc": "application/msword",
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ".ppt": "application/vnd.ms-powerpoint",
    ".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    ".xls": "application/vnd.ms-excel",
    ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ".odt": "application/vnd.oasis.opendocument.text",
    ".ods": "application/vnd.oasis.opendocument.spreadsheet",
}


_TEXT_TYPES = {
    "application/json",
    "application/xml",
    "application/x-yaml",
    "application/yaml",
    "application/toml",
    "application/sql",
    "application/javascript",
}


_DOCUMENT_TYPES = {
    "application/pdf",
    "application/msword",
    "application/vnd.ms-powerpoint",
    "application/vnd.ms-excel",
    "application/rtf",
    "application/epub+zip",
}


@cache
def _builtin_table() -> mimetypes.MimeTypes:
    """The interpreter's built-in table only (the OS files differ between machines), built on
    first use: it costs about 10 ms."""
    return mimetypes.MimeTypes(filenames=())


def base_type(mime: str) -> str:
    """``text/plain; charset=utf-8`` → ``text/plain``."""
    return mime.split(";", 1)[0].strip()


def mode_of(mime: str) -> Mode:
    """The handling mode of a MIME type (parameters ignored)."""
    base = base_type(mime).lower()
    if base in _TEXT_TYPES or base.startswith("text/"):
        return "text"
    if base.startswith("image/"):
        return "image"
    if base in _DOCUMENT_TYPES or base.startswith(
        ("application/vnd.openxmlformats-officedocument.", "application/vnd.oasis.opendocument.")
    ):
        return "document"
    if base.endswith(("+json", "+xml")):
        return "text"
    return "default"


def normalise_extension(extension: str) -> str:
    """``"PNG"`` / ``".png"`` → ``".png"``."""
    ext = extension.strip().lower()
    return ext if ext.startswith(".") else "." + ext


def lookup_extension(extension: str) -> str | None:
    """The MIME type for an extension (with or without the dot, any case), or None when unknown."""
    ext = normalise_extension(extension)
    if ext in _TABLE:
        return _TABLE[ext]
    guessed, _ = _builtin_table().guess_type("x" + ext, strict=False)
    return guessed


_NOT_CONTROL = bytes(range(32, 256)) + b"\t\n\x0c\r\x1b"


def is_probably_text(sample: bytes) -> bool:
    """No NUL byte and at most 10 % control characters other than tab, LF, CR, FF, ESC."""
    if b"\x00" in sample:
        return False
    if not sample:
        return True
    controls = len(sample.translate(None, _NOT_CONTROL))  # what is left are the control bytes
    return controls * 10 <= len(sample)


@dataclass(frozen=True, slots=True)
class MimeInfo:
    """A detected MIME type and how it was found (``method`` is ``extension`` or ``sniff``)."""

    mime_type: str
    mode: Mode
    method: Literal["extension", "sniff"]

    @property
    def base(self) -> str:
        """The MIME type without parameters (``text/plain``)."""
        return base_type(self.mime_type)


def from_extension(path: str | os.PathLike[str]) -> MimeInfo | None:
    """The table's answer for ``path``'s extension when it needs no sniffing, else None."""
    suffix = PurePath(path).suffix
    mime = lookup_extension(suffix) if suffix else None
    if mime is None or mime == OCTET_STREAM or mode_of(mime) == "default":
        return None
    return MimeInfo(mime, mode_of(mime), "extension")


def sniff(sample: bytes, path: str | os.PathLike[str] = "") -> MimeInfo:
    """Classify the first bytes of a file (at most ``SNIFF_BYTES`` are looked at)."""
    sample = sample[:SNIFF_BYTES]
    if not sample:
        return MimeInfo("text/plain", "text", "sniff")
    import filetype  # imported here: start-up time is measured, and most calls never need it

    kind = filetype.guess(sample)
    if kind is not None:
        return MimeInfo(kind.mime, mode_of(kind.mime), "sniff")
    if is_probably_text(sample):
        return MimeInfo(_UTF8_TEXT, "text", "sniff")
    suffix = PurePath(path).suffix
    known = lookup_extension(suffix) if suffix else None
    if known is not None:
        return MimeInfo(known, mode_of(known), "extension")
    return MimeInfo(OCTET_STREAM, "default", "sniff")


def detect_mime(path: str | os.PathLike[str], sample: bytes) -> MimeInfo:
    """Detect the MIME type of a file from its name and its first bytes."""
    return from_extension(path) or sniff(sample, path)
