"""Symbol-sized pieces of a file, the units semantic search ranks and returns.

A function or method is one chunk, from the doc comment just above it (JSDoc ``/** */``, ``///``,
``#``: the reader's view, not a window of its own), spanning it whole, whose text leaves out the
functions nested in it but their first lines (each is a chunk of its own: the outer one does not
rank on their words); a class is one chunk of its header (signature,
docstring and the lines before its first member's doc) and its members are their own; what no
such symbol covers (module-level code, constants) is cut into line windows, and so is a text file
without a grammar. Each chunk carries the text to index: its path, qualified name, signature, doc and
body, cut to ``MAX_CHUNK_CHARS``.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass

from mcp_localtools.codeintel.tags import FileTags, Symbol

__all__ = ["MAX_CHUNK_CHARS", "WINDOW_LINES", "Chunk", "chunks_of"]

WINDOW_LINES = 40
"""Lines of a window of text that no symbol covers."""
MAX_CHUNK_CHARS = 4000
"""Characters of a chunk's text that are indexed (the head of a long function says what it is)."""
MAX_MEANING_CHARS = 1500
"""Characters of a chunk's body (or window) whose words are embedded."""
MAX_HEADER_LINES = 30
"""Lines of a class's header chunk at most."""

_LINE_COMMENTS: dict[str, tuple[str, ...]] = {
    "python": ("#",), "ruby": ("#",), "bash": ("#",), "php": ("//", "#"),
}  # fmt: skip
"""What starts a line comment, by language; the others' is ``//`` (C's ``#`` is the preprocessor's,
JavaScript's a private name, Rust's ``#[...]`` an attribute: the first lines of its symbol,
``tags.Symbol.start_line``)."""
_NO_BLOCK_COMMENTS = frozenset({"python", "ruby", "bash"})
"""Languages without ``/* */`` comments."""

_WHOLE = frozenset({"function", "method", "macro"})
_HEADERS = frozenset({"class", "interface", "enum", "struct", "type", "module", "impl", "namespace"})


@dataclass(frozen=True, slots=True)
class Chunk:
    """One searchable piece of a file.

    Attributes:
        symbol: the qualified name of the symbol it is, or ``""`` for a window.
        kind: the symbol's kind, or ``text`` for a window.
        start_line: 1-based.
        end_line: 1-based, inclusive.
        title: its path, qualified name, signature and doc (weighed more in BM25).
        text: its body, at most ``MAX_CHUNK_CHARS``.
        summary: the signature and doc, or the window's first non-blank line.
        meaning: the words of its name, file name and doc (embedded with its body, weighed
            more); for a window of text, the text.
    """

    symbol: str
    kind: str
    start_line: int
    end_line: int
    title: str
    text: str
    summary: str
    meaning: str


@dataclass(frozen=True, slots=True)
class _Comments:
    """How a language writes comments: what starts a line comment, whether ``/* */`` is one."""

    line: tuple[str, ...]
    block: bool


def _comments_of(language: str) -> _Comments:
    return _Comments(_LINE_COMMENTS.get(language, ("//",)), language not in _NO_BLOCK_COMMENTS)


def _body(lines: list[str], start: int, end: int, left_out: Sequence[tuple[int, int]] = ()) -> str:
    """Lines ``start`` to ``end`` without the ranges ``left_out`` (first, last line; in order)."""
    if not left_out:
        return "\n".join(lines[start - 1 : end])[:MAX_CHUNK_CHARS]
    kept: list[str] = []
    number = start
    for first, last in left_out:
        kept.extend(lines[number - 1 : first - 1])
        number = max(number, last + 1)
    kept.extend(lines[number - 1 : end])
    return "\n".join(kept)[:MAX_CHUNK_CHARS]


def _nested(
    lines: list[str], symbols: tuple[Symbol, ...], index: int, covered: list[bool], comments: _Comments
) -> list[tuple[int, int]]:
    """The lines of the functions nested in ``symbols[index]`` that its chunk leaves out: each one's
    doc comment (below the outer's first line) and body, its decorators and first line (its
    signature) kept; the
    outermost ones, in order. The outer's chunk leaves them uncovered: each nested chunk takes its
    own doc comment."""
    outer = symbols[index]
    out: list[tuple[int, int]] = []
    for inner in symbols[index + 1 :]:
        if inner.start_line > outer.end_line:
            break
        if inner.kind not in _WHOLE or inner.depth <= outer.depth or inner.start_line <= outer.start_line:
            continue
        if out and inner.start_line <= out[-1][1]:
            continue  # inside one already left out
        first = max(_comment_above(lines, inner.start_line, covered, comments), outer.start_line + 1)
        if first < inner.start_line:
            out.append((first, inner.start_line - 1))
        if inner.end_line > inner.declaration_line:
            out.append((inner.declaration_line + 1, min(inner.end_line, outer.end_line)))
    return out


def _block_start(lines: list[str], end: int, covered: list[bool]) -> int | None:
    """The line where the block comment closing at the end of line ``end`` opens (the nearest
    line above starting with ``/*``), or None when it opens after code on its line (``x = f(); /*
    note */``: that line is code, not a comment). A continuation line (starting with ``*``) is the
    comment's text, whatever it holds (``text/*``, ``src/**/*.js``), when every line from it up to
    the opening is one too (``x = a`` above ``  * b; /* note */`` is code)."""
    head = lines[end - 1].rstrip()[:-2]  # before its closing */
    number = end
    starred = False  # a continuation line passed: the lines above it up to the opening are too
    while True:
        text = head.strip()
        if text.startswith("/*"):
            return number
        if text.startswith("*"):
            starred = True
        elif text:
            if starred or "/*" in text:
                return None  # code (``* b; /* note */`` continued it), or it opens after code
            if number < end and text.endswith("*/"):
                return None  # another comment's close: the one ending on ``end`` opened after code
        number -= 1
        if number < 1 or covered[number - 1]:
            return None
        head = lines[number - 1]


def _comment_above(lines: list[str], start: int, covered: list[bool], comments: _Comments) -> int:
    """The first line of the comment block just above line ``start`` (JSDoc ``/** */``, ``///``,
    ``//``, ``#`` as ``comments`` has them; one blank line between them allowed), or ``start`` when
    there is none. A block is known by its start: a line of code ending with ``*/`` or a
    continuation line starting with ``*`` is none."""
    first = start
    number = start - 1
    if number >= 1 and not lines[number - 1].strip() and not covered[number - 1]:
        number -= 1  # one blank line between a doc comment and its symbol
    while number >= 1 and not covered[number - 1]:
        line = lines[number - 1].strip()
        if line.startswith(comments.line):
            first = number
        elif comments.block and line.endswith("*/") and (opening := _block_start(lines, number, covered)):
            first = number = opening
        else:
            break
        number -= 1
    return first


def _symbol_chunk(
    path: str,
    symbol: Symbol,
    lines: list[str],
    end: int,
    covered: list[bool],
    left_out: list[tuple[int, int]],
    comments: _Comments,
) -> Chunk:
    summary = symbol.signature + (f" — {symbol.doc}" if symbol.doc else "")
    first = _comment_above(lines, symbol.start_line, covered, comments)
    while end > symbol.start_line and end <= len(lines) and not lines[end - 1].strip():
        end -= 1  # a class's header ends with its last line, not the blank lines before a member
    body = _body(lines, first, end, left_out)
    stem = posixpath.splitext(posixpath.basename(path))[0]
    return Chunk(
        symbol=symbol.qualified_name,
        kind=symbol.kind,
        start_line=first,
        end_line=end,
        title=f"{path} {symbol.qualified_name} {symbol.signature} {symbol.doc}",
        text=body,
        summary=summary,
        meaning=f"{symbol.qualified_name} {stem} {symbol.doc}",
    )


def _windows(path: str, lines: list[str], covered: list[bool]) -> list[Chunk]:
    out: list[Chunk] = []
    number = 1
    total = len(lines)
    while number <= total:
        if covered[number - 1]:
            number += 1
            continue
        start = number
        while number <= total and not covered[number - 1] and number - start < WINDOW_LINES:
            number += 1
        piece = lines[start - 1 : number - 1]
        filled = [line for line in piece if line.strip()]
        if len(filled) >= 2 or (filled and len(filled[0]) > 40):
            text = "\n".join(piece)
            out.append(
                Chunk(
                    "", "text", start, number - 1, path, text[:MAX_CHUNK_CHARS], filled[0].strip()[:160],
                    "\n".join(piece)[:MAX_MEANING_CHARS],
                )
            )  # fmt: skip
    return out


def chunks_of(path: str, text: str, tags: FileTags | None) -> list[Chunk]:
    """The chunks of the file at ``path`` (relative, for the indexed text) whose content is
    ``text`` and whose definitions are ``tags`` (None: a text file, windows only)."""
    lines = text.splitlines()
    covered = [False] * len(lines)
    chunks: list[Chunk] = []
    symbols = tags.symbols if tags is not None else ()
    comments = _comments_of(tags.language if tags is not None else "")
    for index, symbol in enumerate(symbols):
        if symbol.kind in _WHOLE:
            end = symbol.end_line
        elif symbol.kind in _HEADERS:
            inner = next(
                (s.start_line for s in symbols[index + 1 :] if s.depth > symbol.depth and s.kind in _WHOLE),
                None,
            )
            if inner:  # the first member's doc comment is the member's
                inner = _comment_above(lines, inner, covered, comments)
            limit = symbol.declaration_line + MAX_HEADER_LINES - 1  # its decorators on top
            end = min(symbol.end_line, limit, inner - 1 if inner and inner > symbol.start_line else limit)
        else:
            continue
        if any(covered[symbol.start_line - 1 : end]) and symbol.kind not in _WHOLE:
            continue
        left_out = _nested(lines, symbols, index, covered, comments) if symbol.kind in _WHOLE else []
        chunk = _symbol_chunk(path, symbol, lines, end, covered, left_out, comments)
        chunks.append(chunk)
        for number in range(chunk.start_line, min(end, len(lines)) + 1):
            covered[number - 1] = True
        for first, last in left_out:  # the nested functions' lines and doc comments are theirs
            for number in range(first, min(last, len(lines)) + 1):
                covered[number - 1] = False
    chunks.extend(_windows(path, lines, covered))
    chunks.sort(key=lambda chunk: (chunk.start_line, chunk.end_line))
    return chunks
