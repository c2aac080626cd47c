"""repomap: the most important symbols of a repository within a character budget.

Ranked as Aider's repository map ranks them (``codeintel/ranking.py``): PageRank over the graph
from files that use a name to files that define it, optionally personalised toward ``focus``
(files: their neighbourhood first; names: their definitions first, their defining files
personalised, and uses of them weigh 10 times more). The best-ranked
definitions are taken until ``maxChars`` is spent, then shown grouped by file (the file of the
best definition first), each file's symbols in line order: line, signature.
"""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path
from typing import Any

import anyio.to_thread
from pydantic import Field

from mcp_localtools import compat
from mcp_localtools.codeintel.indexes import CodeIndexes
from mcp_localtools.codeintel.tags import Symbol
from mcp_localtools.errors import printable
from mcp_localtools.results import ToolResult
from mcp_localtools.spec import READ_ONLY, CallContext, ToolArgs, ToolOutput, ToolSpec
from mcp_localtools.tools.code._group import Scope, code_indexes, open_scope
from mcp_localtools.workspace import Workspace

__all__ = ["MapFile", "MapSymbol", "RepoMapArgs", "RepoMapResult", "repo_map", "spec"]


_STEP = 200


class RepoMapArgs(ToolArgs):
    path: str = Field(".", description="Directory to map.")
    focus: list[str] = Field(
        default_factory=list,
        description="Files or symbol names to center on (ranked higher, with their neighbours).",
    )
    max_chars: int = Field(6000, ge=200, le=40_000, description="Size of the map.")


class MapSymbol(ToolOutput):
    line: int = Field(description="First line.")
    kind: str = Field(description="function, class, ...")
    qualified_name: str = Field(description="With enclosing symbols.")
    signature: str = Field(description="Up to its body.")


class MapFile(ToolOutput):
    path: str = Field(description="File.")
    symbols: list[MapSymbol] = Field(description="In line order.")


class RepoMapResult(ToolOutput):
    files: list[MapFile] = Field(description="Most important first.")
    ranked_symbols: int = Field(description="Definitions ranked in all.")
    truncated: bool = Field(description="True when maxChars left ranked symbols out.")


def _focus(scope: Scope, focus: list[str], base: str) -> tuple[list[str], list[str]]:
    """``focus`` split into index-relative files and names."""
    files, names = [], []
    for item in focus:
        text = item.strip()
        full = Path(os.path.normpath(Path(base) / text))
        if full.is_file() and full.is_relative_to(scope.index.directory):
            files.append(full.relative_to(scope.index.directory).as_posix())
        elif text:
            names.append(text.rpartition(".")[2])
    return files, names


def _map(scope: Scope, args: RepoMapArgs, indexes: CodeIndexes) -> ToolResult:
    index = scope.index
    files, names = _focus(scope, args.focus, str(scope.base))
    ranked = [item for item in index.ranked_definitions(files, names) if scope.covers(item[0])]
    if names:  # the definitions the caller named come first, then the rest by rank
        wanted = set(names)
        ranked = [item for item in ranked if item[1] in wanted] + [i for i in ranked if i[1] not in wanted]
    chosen: dict[str, list[Symbol]] = {}
    used = 0
    truncated = False
    budget = min(args.max_chars, 40_000)
    for start in range(0, len(ranked), _STEP):  # symbols are looked up a page of ranks at a time
        page = ranked[start : start + _STEP]
        table = index.store.symbols_named([(path, name) for path, name, _ in page])
        for path, name, _ in page:
            for symbol in table.get((path, name), []):
                cost = len(symbol.signature) + 10 + (0 if path in chosen else len(scope.show(path)) + 2)
                if used + cost > budget:
                    truncated = True
                    break
                chosen.setdefault(path, []).append(symbol)
                used += cost
            if truncated:
                break
        if truncated:
            break
    out_files: list[MapFile] = []
    lines: list[str] = []
    for path, found in chosen.items():
        found.sort(key=lambda symbol: symbol.start_line)
        shown = scope.show(path)
        lines.append(f"{printable(shown)}:")
        lines.extend(f"{'  ' * (s.depth + 1)}{s.start_line}: {s.signature}" for s in found)
        entries = [
            MapSymbol(line=s.start_line, kind=s.kind, qualified_name=s.qualified_name, signature=s.signature)
            for s in found
        ]
        out_files.append(MapFile(path=shown, symbols=entries))
    if busy := indexes.indexing(index):
        lines.append(f"[{busy}: files not indexed yet are missing; ask again when indexing ends]")
    elif not ranked:
        lines.append("[no symbols indexed here: no file in a known language]")
    elif truncated:
        shown_count = sum(map(len, chosen.values()))
        lines.append(
            f"[map cut at maxChars={args.max_chars}: {shown_count} of {len(ranked)} ranked definitions]"
        )
    result = RepoMapResult(files=out_files, ranked_symbols=len(ranked), truncated=truncated)
    return ToolResult.of(result, text="\n".join(lines))


async def repo_map(args: RepoMapArgs, ctx: CallContext, *, workspace: Workspace) -> ToolResult:
    """The repomap tool body: the index brought up to date, then ranked in a worker thread."""
    indexes = code_indexes(workspace)
    scope = await open_scope(indexes, args.path, ctx)
    return await anyio.to_thread.run_sync(_map, scope, args, indexes, abandon_on_cancel=True)


def spec(workspace: Workspace) -> ToolSpec[Any]:
    """The repomap tool, bound to ``workspace``."""
    return ToolSpec(
        name="repomap",
        title="Map of a repository",
        description=(
            "The most important definitions of a codebase (PageRank over who uses what), grouped by file "
            "with line and signature, within maxChars: the first call to learn a new codebase."
        ),
        args_model=RepoMapArgs,
        result_model=RepoMapResult,
        handler=partial(repo_map, workspace=workspace),
        annotations=READ_ONLY,
        unsupported=compat.why_unsupported(dir_fd=True),
    )
