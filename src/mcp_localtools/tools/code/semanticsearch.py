"""semanticsearch: code by meaning, as LLMC's ``file_search``: symbols, not lines.

Hybrid ranking over the index's chunks (a function, a method, a class header, or a window of
other text): BM25 on the identifier-split, stemmed words (SQLite FTS5; the query's words widened
with the names the code base defines that they spell: ``_spelled_names``), and cosine similarity of
WordLlama embeddings, fused by reciprocal rank (``ranking.RRF_K``), the best ``RERANKED``
re-scored by what their file is (``rerank``: code above docs, history and tests), an overloaded
symbol one result. Each result is a symbol with its file, kind, line range, fused score, summary
(signature and first doc line), its callers (calls of its name, with the symbol each is in) and
callees (the names it calls), and with ``includeContent`` its lines. Files of the results that
changed since they were indexed are read again and the query run again before the answer.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

import anyio.to_thread
from pydantic import AliasChoices, Field

from mcp_localtools import compat
from mcp_localtools.codeintel.imports import resolve_uses
from mcp_localtools.codeintel.index import CodeIndex
from mcp_localtools.codeintel.indexes import CodeIndexes
from mcp_localtools.codeintel.ranking import fuse
from mcp_localtools.codeintel.rerank import longest, name_forms, reranked
from mcp_localtools.codeintel.store import Store, StoredChunk
from mcp_localtools.codeintel.tags import Reference
from mcp_localtools.errors import InvalidArguments, printable
from mcp_localtools.results import ToolResult, fit_within
from mcp_localtools.spec import READ_ONLY, CallContext, ToolArgs, ToolOutput, ToolSpec
from mcp_localtools.toolnames import served_text
from mcp_localtools.tools.code._group import Scope, code_indexes, open_scope, read_lines
from mcp_localtools.workspace import Workspace

__all__ = ["SearchHit", "SemanticSearchArgs", "SemanticSearchResult", "search", "semantic_search", "spec"]

CANDIDATES = 100
"""Chunks each ranking contributes to the fusion."""
MAX_RELATIONS = 5
RERANKED = 60
"""Fused candidates re-ranked (``rerank``) for the results."""
EMBEDDING_WEIGHT = 0.5
"""The embeddings' ranking in the fusion, against 1 for BM25 (tuned on benchmarks/codesearch)."""


class SemanticSearchArgs(ToolArgs):
    query: str = Field(description="What the code does, in words or names.", min_length=1, max_length=1000)
    max_results: int = Field(
        10,
        ge=1,
        le=50,
        validation_alias=AliasChoices("maxResults", "limit"),  # limit: its first name, still taken
        description="Most results.",
    )
    include_content: bool = Field(False, description="Also each result's lines.")
    path: str = Field(".", description="Only in this directory.")


class SearchHit(ToolOutput):
    path: str = Field(description="File.")
    symbol: str | None = Field(None, description="Qualified name; none for a window of text.")
    kind: str = Field(description="function, method, class, ..., or text.")
    start_line: int = Field(description="First line.")
    end_line: int = Field(description="Last line.")
    score: float = Field(description="Fused rank score, higher is better.")
    summary: str = Field(description="Signature and first doc line.")
    callers: list[str] = Field(description="`path:line caller` of uses of its name.")
    callees: list[str] = Field(description="Names it calls.")
    content: str | None = Field(None, description="With includeContent: its lines.")


class SemanticSearchResult(ToolOutput):
    query: str = Field(description="The query.")
    results: list[SearchHit] = Field(description="Best first.")
    count: int = Field(description="Results returned.")
    truncated: bool = Field(description="True when the budget cut contents or results.")
    lexical_only: bool | None = Field(None, description="True when no embedding model could be loaded.")


def search(scope: Scope, query: str, limit: int) -> list[tuple[StoredChunk, float]]:
    """The best ``limit`` chunks in ``scope`` for ``query``, with their fused scores (blocking).

    The BM25 query runs in a second thread while the query is embedded and scored against the
    vectors (SQLite and numpy both release the GIL): the two rankings cost about the longer of
    them, not their sum.
    """
    index = scope.index
    every = index.query_terms(query)  # the embedded words' terms are among them
    terms = list(dict.fromkeys(every))[:64]
    terms += _spelled_names(index, query, terms)
    counts = index.store.frequencies(list(dict.fromkeys([*terms, *every])))  # once, for both
    want = CANDIDATES if not scope.prefix else CANDIDATES * 4
    table = index.vectors()  # before the BM25 query holds the database
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="bm25") as pool:
        lexical = pool.submit(_lexical, index, terms, want, counts) if terms else None
        vector = index.embed_query(query, counts)
        semantic = index.nearest(vector, want, table) if vector is not None else None
        rankings = [[chunk for chunk, _ in lexical.result()]] if lexical is not None else []
    weights = [1.0] * len(rankings)
    if semantic is not None:
        rankings.append([chunk for chunk, _ in semantic])
        weights.append(EMBEDDING_WEIGHT)
    fused = fuse(rankings, weights)
    ordered, rows = _reranked(scope, query, fused, limit, want)
    return [(rows[chunk], score) for chunk, score in ordered[:limit]]


def _reranked(
    scope: Scope, query: str, fused: list[tuple[int, float]], limit: int, want: int
) -> tuple[list[tuple[int, float]], dict[int, StoredChunk]]:
    """The best fused chunks in the scope re-ranked (``rerank``), and their rows."""
    rows = scope.index.store.chunks(
        [chunk for chunk, _ in fused[: max(limit * 3, RERANKED) if not scope.prefix else want * 2]]
    )
    candidates = [
        (chunk, score, rows[chunk].path, rows[chunk].kind, rows[chunk].symbol)
        for chunk, score in fused
        if chunk in rows and scope.covers(rows[chunk].path)
    ]
    seen: set[tuple[str, str]] = set()
    ordered = []
    for chunk, score in reranked(candidates, query):
        row = rows[chunk]
        if row.symbol and (row.path, row.symbol) in seen:
            continue  # an overload's signature, a second declaration: the first stands for all
        seen.add((row.path, row.symbol))
        ordered.append((chunk, score))
    return ordered, rows


def _spelled_names(index: CodeIndex, query: str, terms: list[str]) -> list[str]:
    """The index terms of the names the code base defines that ``query`` spells in words
    (``observe on scheduler``: ``observeon`` for ``observeOn``; ``raise for status``:
    ``raise_for_status``), not already among ``terms``: the query widened with the code base's own
    names, so that a long definition named by the question is not outranked by short chunks that
    only share its words. A name inside a longer one found is left out (``rerank.longest``)."""
    forms = name_forms(query)
    if not forms:
        return []
    marks = ",".join("?" for _ in forms)
    rows = index.store.select(f"SELECT DISTINCT folded FROM symbols WHERE folded IN ({marks})", forms)  # noqa: S608
    return [
        term for name in longest(str(folded) for (folded,) in rows) if (term := name.strip("_")) not in terms
    ]


def _lexical(
    index: CodeIndex, terms: list[str], want: int, counts: tuple[dict[str, int], int]
) -> list[tuple[int, float]]:
    """BM25's best ``want`` chunks for ``terms``, whose ``counts`` are ``Store.frequencies``'. A
    term in more than a fifth of all chunks adds little to BM25 and costs a scan of all of them
    (FTS5 scores every matching row): left out while rarer terms remain."""
    frequency, total = counts
    rare = [term for term in terms if frequency.get(term, 0) <= max(total // 5, 50)]
    return index.store.lexical(" OR ".join(f'"{term}"' for term in (rare or terms)), want)


def _relations(scope: Scope, chunks: list[StoredChunk]) -> list[tuple[list[str], list[str]]]:
    """Each chunk's callers (``path:line caller`` of calls of its name from elsewhere: those that
    resolve to its file through scope and imports first, then possible ones, marked, whose name
    cannot be followed; none that resolve to another file) and callees (the names it calls, not
    those the functions nested in it call)."""
    store = scope.index.store
    names = {chunk.symbol: chunk.symbol.rpartition(".")[2] for chunk in chunks if chunk.symbol}
    calls = store.calls_to(sorted(set(names.values())), MAX_RELATIONS * 4)
    uses = [(path, ref.name, ref.qualifier) for found in calls.values() for path, ref in found]
    where = resolve_uses(store.resolver(), uses, len(uses))
    spans = [(chunk.path, chunk.start_line, chunk.end_line) for chunk in chunks]
    inside = [
        _own(refs, chunk.symbol, nested)
        for chunk, refs, nested in zip(
            chunks, store.references_within(spans), _nested(store, spans), strict=True
        )
    ]
    out: list[tuple[list[str], list[str]]] = []
    for chunk, refs in zip(chunks, inside, strict=True):
        others = [
            (path, ref, where[path, ref.name, ref.qualifier])
            for path, ref in calls.get(names.get(chunk.symbol, ""), [])
            if (path, ref.scope) != (chunk.path, chunk.symbol)
            and where[path, ref.name, ref.qualifier] in (chunk.path, None)
        ]
        others.sort(key=lambda item: item[2] is None)  # resolved to it first, then possible ones
        callers = [
            f"{scope.show(path)}:{ref.line} {ref.scope or '(top level)'}"
            + (" (possible)" if to is None else "")
            for path, ref, to in others[:MAX_RELATIONS]
        ]
        callees = list(dict.fromkeys(ref.name for ref in refs if ref.kind == "call"))[: MAX_RELATIONS * 2]
        out.append((callers, callees))
    return out


def _nested(store: Store, spans: list[tuple[str, int, int]]) -> list[set[str]]:
    """The symbols of the chunks nested in each span (path, first, last line): the functions
    nested in a function, whose uses are theirs; one query along each file's chunks."""
    out: list[set[str]] = [set() for _ in spans]
    if not spans:
        return out
    values = ",".join("(?, ?, ?, ?)" for _ in spans)
    rows = store.select(
        f"WITH spans (i, path, a, b) AS (VALUES {values}) SELECT s.i, n.symbol "  # noqa: S608
        "FROM spans s JOIN files f ON f.path = s.path JOIN chunks n ON n.file_id = f.id "
        "WHERE n.start_line >= s.a AND n.end_line <= s.b AND n.end_line - n.start_line < s.b - s.a "
        "AND n.symbol != ''",
        [value for i, span in enumerate(spans) for value in (i, *span)],
    )
    for i, symbol in rows:
        out[i].add(symbol)
    return out


def _own(refs: list[Reference], symbol: str, nested: set[str]) -> list[Reference]:
    """``refs`` (those on the lines of the chunk of ``symbol``) that are its own, by their scope
    (the innermost symbol around each): the scope is ``symbol`` or lies under it, not under one of
    the ``nested`` chunks' symbols. A call on the line a named callback starts on is the outer
    function's, not the callback's; a window's (no ``symbol``) are all its own."""
    if not symbol:
        return refs
    nested = nested - {symbol}
    own: dict[str, bool] = {}  # by scope: a minified line holds thousands of uses of a few scopes
    kept = []
    for ref in refs:
        if ref.scope not in own:
            scope = ref.scope
            while scope and scope != symbol and scope not in nested:
                scope = scope.rpartition(".")[0]  # the symbol around it, by its qualified name
            own[ref.scope] = scope == symbol
        if own[ref.scope]:
            kept.append(ref)
    return kept


def _answer(scope: Scope, indexes: CodeIndexes, args: SemanticSearchArgs, workspace: Workspace) -> ToolResult:
    hits = search(scope, args.query, args.max_results)
    if indexes.check_files(scope.index, sorted({chunk.path for chunk, _ in hits})):
        hits = search(
            scope, args.query, args.max_results
        )  # a result's file changed: answer from its new version
    results: list[SearchHit] = []
    relations = _relations(scope, [chunk for chunk, _ in hits])
    for (chunk, score), (callers, callees) in zip(hits, relations, strict=True):
        content = None
        if args.include_content:
            full = scope.index.directory / chunk.path
            lines = read_lines(
                workspace.paths, full, chunk.start_line, chunk.end_line, scope.index.settings.max_file_bytes
            )
            content = "\n".join(lines)
        results.append(
            SearchHit(
                path=scope.show(chunk.path), symbol=chunk.symbol or None, kind=chunk.kind,
                start_line=chunk.start_line, end_line=chunk.end_line, score=round(score, 5),
                summary=chunk.summary, callers=callers, callees=callees, content=content,
            )
        )  # fmt: skip
    lexical_only = None if scope.index.can_embed() else True
    busy = indexes.indexing(scope.index)
    return _render(args, results, lexical_only, workspace.limits.max_result_chars, busy)


def _render(
    args: SemanticSearchArgs, hits: list[SearchHit], lexical_only: bool | None, budget: int, busy: str | None
) -> ToolResult:
    def build(payload: int) -> ToolResult:
        share = max(payload // max(len(hits), 1), 200)
        shown: list[SearchHit] = []
        lines: list[str] = []
        truncated = False
        for rank, hit in enumerate(hits, start=1):
            name = hit.symbol or "(text)"
            where = f"{printable(hit.path)}:{hit.start_line}-{hit.end_line}"
            text = [f"{rank}. {where} {hit.kind} {name}  {hit.summary}"]
            if hit.callers:
                text.append(f"   callers: {'; '.join(hit.callers)}")
            if hit.callees:
                text.append(f"   calls: {', '.join(hit.callees)}")
            content = hit.content
            if content is not None and len(content) > share:
                content = content[:share] + "\n…"
                truncated = True
            if content is not None:
                text.append(content)
            if sum(map(len, lines)) + sum(map(len, text)) > payload and shown:
                truncated = True
                break
            lines.extend(text)
            shown.append(hit.model_copy(update={"content": content}))
        if busy:
            lines.append(f"[{busy}: files not indexed yet are missing; ask again when indexing ends]")
        elif not hits:
            lines.append(
                served_text(
                    "[no results: the index holds code and text files; try other words, or searchfiles]"
                )
            )
        if truncated:
            lines.append(served_text("[truncated: lower maxResults, or read a result's lines with readfile]"))
        if lexical_only:
            lines.append("[WordLlama could not be loaded: ranked by words only]")
        result = SemanticSearchResult(
            query=args.query, results=shown, count=len(shown), truncated=truncated, lexical_only=lexical_only
        )
        return ToolResult.of(result, text="\n".join(lines))

    return fit_within(build, budget, budget * 2 // 5)


async def semantic_search(args: SemanticSearchArgs, ctx: CallContext, *, workspace: Workspace) -> ToolResult:
    """The semanticsearch tool body: the index brought up to date, then searched in a worker thread."""
    if not args.query.strip():
        raise InvalidArguments("query is empty; describe what the code does, such as 'parse the config file'")
    indexes = code_indexes(workspace)
    scope = await open_scope(indexes, args.path, ctx)
    return await anyio.to_thread.run_sync(_answer, scope, indexes, args, workspace, abandon_on_cancel=True)


def spec(workspace: Workspace) -> ToolSpec[Any]:
    """The semanticsearch tool, bound to ``workspace``."""
    return ToolSpec(
        name="semanticsearch",
        title="Search code by meaning",
        description=(
            "Find functions, classes and text by what they do, offline: BM25 on split identifiers plus "
            "WordLlama embeddings, fused. Results are symbols with lines, score, callers and callees. "
            "For exact text use searchfiles."
        ),
        args_model=SemanticSearchArgs,
        result_model=SemanticSearchResult,
        handler=partial(semantic_search, workspace=workspace),
        annotations=READ_ONLY,
        unsupported=compat.why_unsupported(dir_fd=True),
    )
