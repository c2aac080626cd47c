"""symbols: the outline of a file or a directory: functions, classes, methods, constants, types.

A file is parsed on the spot with its tree-sitter grammar (always current, no index needed); a
directory's outline comes from the code index (brought up to date first). Each symbol has its
kind, name, qualified name, line range, signature and the first line of its docstring or leading
comment. Cut to the result budget (``truncated``), outer symbols before inner ones.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import anyio.to_thread
from pydantic import Field

from mcp_localtools import compat
from mcp_localtools.codeintel.indexes import CodeIndexes
from mcp_localtools.codeintel.languages import LANGUAGES, language_of
from mcp_localtools.codeintel.store import FileIdentity, FileRecord
from mcp_localtools.codeintel.tags import Symbol, extract
from mcp_localtools.config import LimitsConfig
from mcp_localtools.errors import UnsupportedContent, printable
from mcp_localtools.files.read import read_regular_file
from mcp_localtools.results import ToolResult, fit_within
from mcp_localtools.spec import READ_ONLY, CallContext, ToolArgs, ToolOutput, ToolSpec
from mcp_localtools.toolnames import served, served_text
from mcp_localtools.tools.code._group import cache_notice, code_indexes, index_settings, open_scope
from mcp_localtools.tools.code._symbol import SymbolEntry, symbol_entry
from mcp_localtools.workspace import Workspace

__all__ = ["FileOutline", "SymbolEntry", "SymbolsArgs", "SymbolsResult", "spec", "symbols"]

MAX_SYMBOLS = 5000
"""Symbols of a directory read from the index at most (the budget cuts further)."""


class SymbolsArgs(ToolArgs):
    path: str = Field(".", description="A source file, or a directory (its indexed files).")
    max_depth: int = Field(
        2, ge=0, le=20, description="Nesting shown: 0 top level only, 1 also methods of classes, ..."
    )


class FileOutline(ToolOutput):
    path: str = Field(description="The file.")
    language: str = Field(description="Its grammar.")
    lines: int = Field(description="Its line count.")
    symbols: list[SymbolEntry] = Field(description="Its symbols in source order.")


class SymbolsResult(ToolOutput):
    files: list[FileOutline] = Field(description="Files with symbols, by path.")
    total_symbols: int = Field(description="Symbols found, including any not shown.")
    truncated: bool = Field(description="True when the budget left symbols out.")


def _line(symbol: Symbol) -> str:
    doc = f"  # {symbol.doc}" if symbol.doc else ""
    kind = "" if symbol.signature.startswith(symbol.kind) else f"{symbol.kind} "
    return f"{'  ' * (symbol.depth + 1)}{symbol.start_line}-{symbol.end_line} {kind}{symbol.signature}{doc}"


def _render(
    outlines: list[tuple[str, FileRecord, list[Symbol]]],
    total: int,
    budget: int,
    cut_before: bool,
    busy: str | None = None,
) -> ToolResult:
    def build(payload: int) -> ToolResult:
        files: list[FileOutline] = []
        lines: list[str] = []
        used = shown = 0
        cut = cut_before
        for display, record, found in outlines:
            head = f"{printable(display)} ({record.language}, {record.lines} lines)"
            entries: list[SymbolEntry] = []
            rendered = [head]
            for symbol in found:
                text = _line(symbol)
                if used + len(head) + len(text) + 2 > payload:
                    cut = True
                    break
                rendered.append(text)
                entries.append(symbol_entry(symbol))
                used += len(text) + 1
            if entries:
                files.append(
                    FileOutline(path=display, language=record.language, lines=record.lines, symbols=entries)
                )
                lines.extend(rendered)
                used += len(head) + 1
                shown += len(entries)
            if cut:
                break
        if cut:
            lines.append(
                f"[truncated: {shown} of {total} symbols shown; give a file or a smaller directory, "
                "or lower maxDepth]"
            )
        if busy:
            lines.append(f"[{busy}: files not indexed yet are missing; ask again when indexing ends]")
        elif not total:
            lines.append("[no symbols: no file here in a known language, or none defines anything]")
        result = SymbolsResult(files=files, total_symbols=total, truncated=cut)
        return ToolResult.of(result, text="\n".join(lines))

    return fit_within(build, budget, budget * 2 // 5)


def _file_outline(workspace: Workspace, indexes: CodeIndexes, args: SymbolsArgs) -> ToolResult | None:
    """The outline of a file, or None when ``path`` is a directory (blocking)."""
    paths = workspace.paths
    resolved = paths.resolve(args.path)
    if resolved.real.is_dir():
        return None
    info = language_of(resolved.real.name)
    if info is None:
        known = ", ".join(info.name for info in LANGUAGES)
        raise UnsupportedContent(
            f"no grammar for {printable(args.path)}: {served('symbols')} reads {known}; "
            + served_text("use readfile or searchfiles")
        )
    data = read_regular_file(paths, resolved, max_bytes=workspace.limits.max_read_bytes)
    grammar = indexes.grammars.get(info)
    if grammar is None:
        raise UnsupportedContent(f"the {info.name} grammar ({info.distribution}) is not installed")
    tags = extract(grammar, data.data, references=False)
    found = [symbol for symbol in tags.symbols if symbol.depth <= args.max_depth]
    record = FileRecord(str(data.path), FileIdentity(len(data.data), 0, ""), info.name, tags.lines)
    return _render([(args.path.strip(), record, found)], len(found), workspace.limits.max_result_chars, False)


async def symbols(args: SymbolsArgs, ctx: CallContext, *, workspace: Workspace) -> ToolResult:
    """The symbols tool body: a file parsed in a worker thread, or a directory from its index."""
    indexes = code_indexes(workspace)
    single = await anyio.to_thread.run_sync(_file_outline, workspace, indexes, args, abandon_on_cancel=True)
    if single is not None:
        return single
    scope = await open_scope(indexes, args.path, ctx)
    rows = await anyio.to_thread.run_sync(
        scope.index.store.outline, scope.prefix, args.max_depth, MAX_SYMBOLS + 1
    )
    outlines: list[tuple[str, FileRecord, list[Symbol]]] = []
    for record, symbol in rows[:MAX_SYMBOLS]:
        if not outlines or outlines[-1][1].path != record.path:
            outlines.append((scope.show(record.path), record, []))
        outlines[-1][2].append(symbol)
    limits: LimitsConfig = workspace.limits
    busy = indexes.indexing(scope.index)
    return _render(outlines, len(rows[:MAX_SYMBOLS]), limits.max_result_chars, len(rows) > MAX_SYMBOLS, busy)


def spec(workspace: Workspace) -> ToolSpec[Any]:
    """The symbols tool, bound to ``workspace``.

    Raises:
        ConfigError: a bad ``[index]`` (checked here, at start-up, for the whole group).
    """
    index_settings(workspace)
    workspace.shared(cache_notice)  # a default cache inside a root: said at start-up
    return ToolSpec(
        name="symbols",
        title="Outline of code",
        description=(
            "Outline of a source file or directory: functions, classes, methods, constants, types with "
            "line ranges, signatures, first doc line. Python, JS, TS/TSX, Go, Rust, Java, C, C++, C#, Ruby, "
            "PHP, Bash. Read a symbol's lines with readfile."
        ),
        args_model=SymbolsArgs,
        result_model=SymbolsResult,
        handler=partial(symbols, workspace=workspace),
        annotations=READ_ONLY,
        unsupported=compat.why_unsupported(dir_fd=True),
    )
