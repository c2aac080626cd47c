"""findsymbol: where a name is defined and where it is used (callers), from the code index.

Definitions come from the grammars' ``@definition`` captures, uses from their ``@reference``
captures (calls and types), each with the symbol it sits in (the caller). ``match`` is
``exact`` (the name, or a qualified name such as ``Loader.load``; case-insensitive when the
exact case finds nothing), ``prefix`` or ``fuzzy`` (rapidfuzz, for a half-remembered name).
Definitions come first, then uses, both ranked by the PageRank of their file in the reference
graph (the files many others depend on first), then by path and line.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Literal

import anyio.to_thread
from pydantic import Field

from mcp_localtools import compat
from mcp_localtools.codeintel.imports import resolve_uses
from mcp_localtools.codeintel.indexes import CodeIndexes
from mcp_localtools.codeintel.store import StoredSymbol
from mcp_localtools.errors import InvalidArguments, printable
from mcp_localtools.results import ToolResult, fit_within
from mcp_localtools.spec import READ_ONLY, CallContext, ToolArgs, ToolOutput, ToolSpec
from mcp_localtools.toolnames import served_text
from mcp_localtools.tools.code._group import Scope, code_indexes, open_scope, read_lines
from mcp_localtools.tools.code._symbol import SymbolEntry, symbol_entry
from mcp_localtools.workspace import Workspace

__all__ = ["Definition", "FindSymbolArgs", "FindSymbolResult", "Use", "find_symbol", "spec"]

MAX_RESULTS = 500
MAX_RESOLVED = 2000
"""Files whose uses are resolved through their imports; uses in more are listed as possible."""
_FUZZY_SCORE = 70


class FindSymbolArgs(ToolArgs):
    name: str = Field(description="Name or qualified name (`Loader.load`).", min_length=1, max_length=200)
    match: Literal["exact", "prefix", "fuzzy"] = Field("exact", description="How name is compared.")
    path: str = Field(".", description="Only in this directory.")
    include_references: bool = Field(True, description="Also the uses and their callers.")
    max_results: int = Field(50, ge=1, le=MAX_RESULTS, description="Most definitions, and most uses.")


class Definition(SymbolEntry):
    path: str = Field(description="File.")


class Use(ToolOutput):
    path: str = Field(description="File.")
    line: int = Field(description="Line.")
    kind: str = Field(description="`call` or `type`.")
    name: str = Field(description="The name used.")
    caller: str | None = Field(None, description="Qualified name of the symbol the use is in.")
    text: str = Field(description="The line, trimmed.")
    resolved: bool = Field(
        description="Resolves to a definition shown (its file, or by imports); else possible."
    )


class FindSymbolResult(ToolOutput):
    definitions: list[Definition] = Field(description="Best first.")
    references: list[Use] = Field(description="Best first.")
    total_references: int = Field(description="Uses found, including any not shown.")
    truncated: bool = Field(description="True when maxResults or the budget left results out.")
    suggestions: list[str] | None = Field(None, description="Close names, when none matched.")


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _definitions(scope: Scope, args: FindSymbolArgs) -> tuple[list[StoredSymbol], list[str]]:
    """The matching definitions, and close names when there are none (blocking)."""
    store = scope.index.store
    name = args.name.strip()
    limit = MAX_RESULTS * 4
    if args.match == "prefix":
        found = store.symbols_where("s.folded LIKE ? ESCAPE '\\'", [_escape_like(name.lower()) + "%"], limit)
    elif args.match == "fuzzy":
        from rapidfuzz import fuzz, process

        close = process.extract(
            name, store.all_names(), scorer=fuzz.WRatio, limit=20, score_cutoff=_FUZZY_SCORE
        )
        names = [candidate for candidate, _, _ in close]
        marks = ",".join("?" * len(names)) or "NULL"
        found = store.symbols_where(f"s.name IN ({marks})", names, limit)
    else:
        if "." in name:
            found = store.symbols_where("s.qualified = ?", [name], limit)
        else:  # the folded name is indexed (``symbols_folded``): no scan of every symbol
            found = store.symbols_where("s.folded = ? AND s.name = ?", [name.lower(), name], limit)
        if not found:
            folded = "lower(s.qualified)" if "." in name else "s.folded"
            found = store.symbols_where(f"{folded} = ?", [name.lower()], limit)
    found = [item for item in found if scope.covers(item.path)]
    suggestions: list[str] = []
    if not found and args.match != "fuzzy":
        from rapidfuzz import fuzz, process

        close = process.extract(name.rpartition(".")[2], store.all_names(), scorer=fuzz.WRatio, limit=5)
        suggestions = [candidate for candidate, score, _ in close if score >= _FUZZY_SCORE]
    return found, suggestions


def _search(scope: Scope, indexes: CodeIndexes, args: FindSymbolArgs, workspace: Workspace) -> ToolResult:
    index = scope.index
    found, suggestions = _definitions(scope, args)
    if indexes.check_files(index, sorted({item.path for item in found})):
        found, suggestions = _definitions(scope, args)  # a definition's file changed: its new version
    ranks = index.file_ranks()
    exact = args.name.strip()
    found.sort(
        key=lambda item: (
            item.symbol.name != exact,
            -ranks.get(item.path, 0.0),
            item.path,
            item.symbol.start_line,
        )
    )
    uses: list[Use] = []
    total_uses = 0
    if args.include_references and found:
        names = sorted({item.symbol.name for item in found})[:50]
        raw = [(path, ref) for path, ref in index.store.references_to(names, 20_000) if scope.covers(path)]
        shown = {item.path for item in found}
        where = resolve_uses(
            index.store.resolver(), [(path, ref.name, ref.qualifier) for path, ref in raw], MAX_RESOLVED
        )
        raw = [(path, ref) for path, ref in raw if where[path, ref.name, ref.qualifier] in (*shown, None)]
        total_uses = len(raw)
        raw.sort(
            key=lambda pair: (
                where[pair[0], pair[1].name, pair[1].qualifier] is None,
                -ranks.get(pair[0], 0.0),
                pair[0],
                pair[1].line,
            )
        )
        texts: dict[str, list[str]] = {}
        for path, ref in raw[: args.max_results]:
            if path not in texts:
                texts[path] = read_lines(
                    workspace.paths, index.directory / path, 1, 10**9, index.settings.max_file_bytes
                )
            lines = texts[path]
            text = lines[ref.line - 1].strip()[:200] if ref.line <= len(lines) else ""
            uses.append(
                Use(
                    path=scope.show(path),
                    line=ref.line,
                    kind=ref.kind,
                    name=ref.name,
                    caller=ref.scope or None,
                    text=text,
                    resolved=where[path, ref.name, ref.qualifier] is not None,
                )
            )
    definitions = [
        Definition(path=scope.show(item.path), **symbol_entry(item.symbol).model_dump())
        for item in found[: args.max_results]
    ]
    cut = len(found) > args.max_results or total_uses > len(uses)
    busy = indexes.indexing(index)
    return _render(
        args, definitions, uses, total_uses, cut, suggestions, workspace.limits.max_result_chars, busy
    )


def _render(
    args: FindSymbolArgs,
    definitions: list[Definition],
    uses: list[Use],
    total_uses: int,
    cut: bool,
    suggestions: list[str],
    budget: int,
    busy: str | None = None,
) -> ToolResult:
    def build(payload: int) -> ToolResult:
        lines: list[str] = []
        used = 0
        shown_defs: list[Definition] = []
        shown_uses: list[Use] = []
        truncated = cut
        head = f"{len(definitions)} definition(s) of {printable(args.name)}:"
        lines.append(head)
        for item in definitions:
            doc = f"  # {item.doc}" if item.doc else ""
            where = f"{printable(item.path)}:{item.start_line}-{item.end_line}"
            text = f"  {where} {item.kind} {item.signature}{doc}"
            if used + len(text) > payload:
                truncated = True
                break
            used += len(text) + 1
            lines.append(text)
            shown_defs.append(item)
        if args.include_references and definitions:
            resolved = sum(use.resolved for use in uses)
            lines.append(f"{total_uses} use(s), by importance of the file:")
            for number, use in enumerate(uses):
                if number == resolved:
                    lines.append(
                        "possible uses (the same name, not resolved to it through scope and imports):"
                    )
                where = f" in {use.caller}" if use.caller else ""
                text = f"  {printable(use.path)}:{use.line}{where}: {use.text}"
                if used + len(text) > payload:
                    truncated = True
                    break
                used += len(text) + 1
                lines.append(text)
                shown_uses.append(use)
        if not definitions and busy:
            lines.append(f"[{busy}: no definition found yet; ask again when indexing ends]")
        elif not definitions:
            hint = f"; close names: {', '.join(suggestions)}" if suggestions else ""
            lines.append(
                f"[no definition found{hint}; "
                + served_text("try match=prefix or fuzzy, or searchfiles")
                + "]"
            )
        if truncated:
            lines.append("[truncated: raise maxResults, or narrow with path]")
        result = FindSymbolResult(
            definitions=shown_defs, references=shown_uses, total_references=total_uses, truncated=truncated,
            suggestions=suggestions or None,
        )  # fmt: skip
        return ToolResult.of(result, text="\n".join(lines))

    return fit_within(build, budget, budget * 2 // 5)


async def find_symbol(args: FindSymbolArgs, ctx: CallContext, *, workspace: Workspace) -> ToolResult:
    """The findsymbol tool body: the index brought up to date, then looked up in a worker thread."""
    if not args.name.strip():
        raise InvalidArguments("name is empty; give a symbol name such as parse or Loader.load")
    indexes = code_indexes(workspace)
    scope = await open_scope(indexes, args.path, ctx)
    return await anyio.to_thread.run_sync(_search, scope, indexes, args, workspace, abandon_on_cancel=True)


def spec(workspace: Workspace) -> ToolSpec[Any]:
    """The findsymbol tool, bound to ``workspace``."""
    return ToolSpec(
        name="findsymbol",
        title="Find a symbol and its callers",
        description=(
            "Where a function, class or other symbol is defined and where it is used (calls, types), "
            "each use with its caller; files others depend on first. Indexes the project on first use."
        ),
        args_model=FindSymbolArgs,
        result_model=FindSymbolResult,
        handler=partial(find_symbol, workspace=workspace),
        annotations=READ_ONLY,
        unsupported=compat.why_unsupported(dir_fd=True),
    )
