"""searchfiles: a regex search of the files under a root, with ripgrep's output modes.

A regex is matched line by line against file contents and, in ``files`` mode, against each
file's display path too. Results are sorted by path and cut to ``maxResults`` (default 100) and
to the result budget, with ``truncated`` set; unreadable entries are listed in ``skipped``
instead of failing the search (the seed aborted it). What is walked: see ``engine.py``.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Literal

import anyio
import anyio.to_thread
from pydantic import Field

from mcp_localtools import compat
from mcp_localtools.config import HARD_MAX_READ_BYTES, LimitsConfig
from mcp_localtools.errors import LocalToolsError, printable
from mcp_localtools.policy.paths import PathPolicy
from mcp_localtools.results import ToolResult, fit_within
from mcp_localtools.search.engine import Engine, FileHits, Skipped
from mcp_localtools.search.line import cap_lines
from mcp_localtools.spec import READ_ONLY, CallContext, ToolArgs, ToolOutput, ToolSpec
from mcp_localtools.tools.fs._budget import LineBudget
from mcp_localtools.tools.fs._excerpt import Containment, FileReader
from mcp_localtools.tools.fs._roots import MAX_RESULTS
from mcp_localtools.tools.fs._searchquery import Prepared, prepare_search
from mcp_localtools.tools.fs._skipped import MAX_SKIPPED, SkippedPath, skipped_note, skipped_paths
from mcp_localtools.tools.fs._top import ClosableTop, TopResults
from mcp_localtools.units import size_text
from mcp_localtools.workspace import Workspace

__all__ = [
    "FileCount",
    "SearchFilesArgs",
    "SearchFilesResult",
    "SearchMatch",
    "search_files",
    "spec",
]

MAX_CONTEXT = 20


class SearchFilesArgs(ToolArgs):
    pattern: str = Field(description="RE2/Rust regex (no backreferences or look-around).")
    root: str = Field(
        ".",
        description="Directory to search; result paths start as it does (`sub`: `sub/a.txt`).",
    )
    output_mode: Literal["files", "matches", "count"] = Field(
        "files",
        description=(
            "`files`: matching files; `matches`: matching lines, numbered; `count`: matching lines per file."
        ),
    )
    context_lines: int = Field(
        0, ge=0, le=MAX_CONTEXT, description="matches mode: lines before and after each match."
    )
    count_occurrences: bool = Field(
        False,
        description="count mode: count every match, not matching lines.",
    )
    include: list[str] = Field(
        default_factory=list,
        description="Only files matching a glob (gitignore syntax): `*.py`, `src/**/*.ts`.",
    )
    exclude: list[str] = Field(
        default_factory=list,
        description="Globs to skip: `node_modules`, `*.min.js`.",
    )
    case_sensitive: bool = Field(True, description="False ignores case.")
    fixed_strings: bool = Field(False, description="pattern is literal text.")
    respect_ignore_files: bool = Field(True, description="Honor .gitignore, .ignore and .rgignore.")
    include_hidden: bool = Field(False, description="Also dot names (.git too).")
    max_results: int = Field(
        100,
        ge=1,
        le=MAX_RESULTS,
        description="Most files (files, count) or lines (matches).",
    )
    max_file_size_bytes: int | None = Field(
        None,
        ge=1,
        le=HARD_MAX_READ_BYTES,
        description="Skip larger files; default: the read cap.",
    )


class SearchMatch(ToolOutput):
    path: str = Field(description="File, in the display form described for root.")
    line_number: int = Field(description="1-based line number.")
    line: str = Field(description="The line; a long line is an excerpt around the match, cut ends marked …")
    context_before: list[str] | None = Field(None, description="With contextLines: the lines before.")
    context_after: list[str] | None = Field(None, description="With contextLines: the lines after.")


class FileCount(ToolOutput):
    path: str = Field(description="File, in the display form described for root.")
    count: int = Field(description="Number of matching lines (with countOccurrences: of matches).")


class SearchFilesResult(ToolOutput):
    root: str = Field(description="Absolute real path of the directory searched.")
    output_mode: Literal["files", "matches", "count"] = Field(description="The output mode used.")
    files: list[str] | None = Field(None, description="files mode: matching files, sorted by path.")
    matches: list[SearchMatch] | None = Field(None, description="matches mode: matching lines, sorted.")
    counts: list[FileCount] | None = Field(None, description="count mode: files with their counts, sorted.")
    total_files: int = Field(description="Files that matched in all, including those not returned.")
    total_matches: int | None = Field(
        None, description="matches/count mode: matching lines in all (with countOccurrences: matches)."
    )
    truncated: bool = Field(description="True when maxResults or the result budget left results out.")
    skipped: list[SkippedPath] = Field(
        description=f"Entries that could not be read (the first {MAX_SKIPPED}); the search went on."
    )
    oversize_files: int | None = Field(
        None,
        description="Files over maxFileSizeBytes left out (ripgrep: those that matched; Python: all).",
    )


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


async def search_files(
    args: SearchFilesArgs, ctx: CallContext, *, paths: PathPolicy, limits: LimitsConfig, engine: Engine
) -> ToolResult:
    """The searchfiles tool body: the file work before and after the search runs in worker
    threads (one hop each), the search in the engine."""
    mode = args.output_mode
    prepared = await anyio.to_thread.run_sync(prepare_search, args, paths, limits, abandon_on_cancel=True)
    root, query = prepared.root, prepared.query
    found = TopResults(args.max_results, dedupe=mode == "files")
    top = ClosableTop(found)

    async def progress(count: int, message: str) -> None:
        await ctx.report_progress(count, None, message)

    skipped: list[Skipped] = []
    oversize: int | None = None
    if mode == "files":

        def listed(rel: str) -> None:
            if prepared.path_regex.search(root.display(rel)):
                top.add(FileHits(rel, 0), 1)

        async def list_all() -> None:
            nonlocal oversize
            report = await engine.list_files(
                root.real, query.filters, listed, progress, max_file_size=query.max_file_size
            )
            skipped.extend(report.skipped)
            oversize = report.oversize

        async def search_all() -> None:
            skipped.extend((await engine.search(query, lambda hits: top.add(hits, 1), progress)).skipped)

        with anyio.move_on_after(limits.search_seconds) as budget:
            try:
                async with anyio.create_task_group() as group:
                    group.start_soon(list_all)
                    group.start_soon(search_all)
            except ExceptionGroup as raised:
                raise _tool_error(raised) from None
    else:
        units = (lambda hits: hits.count) if mode == "matches" else (lambda hits: 1)

        with anyio.move_on_after(limits.search_seconds) as budget:
            report = await engine.search(query, lambda hits: top.add(hits, units(hits)), progress)
            skipped.extend(report.skipped)
            oversize = report.oversize
    top.close()  # an engine thread abandoned at the time budget adds nothing from here on
    stopped = limits.search_seconds if budget.cancelled_caught else None
    return await anyio.to_thread.run_sync(
        _result, args, prepared, found, skipped, oversize, paths, limits, stopped, abandon_on_cancel=True
    )


def _tool_error(raised: ExceptionGroup[Exception]) -> Exception:
    """The first ``LocalToolsError`` in what a task group raised (so its code reaches the
    caller: ``invalid_arguments`` for a glob the engine refuses), else the group itself."""
    for error in raised.exceptions:
        found = _tool_error(error) if isinstance(error, ExceptionGroup) else error
        if isinstance(found, LocalToolsError):
            return found
    return raised


def _result(
    args: SearchFilesArgs,
    prepared: Prepared,
    top: TopResults,
    skipped_entries: list[Skipped],
    oversize: int | None,
    paths: PathPolicy,
    limits: LimitsConfig,
    stopped: float | None = None,
) -> ToolResult:
    """The result of a finished search (blocking: it checks the files it names and reads the
    long lines it shows)."""
    mode = args.output_mode
    root = prepared.root
    skipped = skipped_paths(root, skipped_entries)
    containment = Containment(paths, root.real)
    candidates = []
    for hits in top.results()[: args.max_results]:
        path = f"{root.real}/{hits.path}" if str(root.real) != "/" else f"/{hits.path}"
        if containment.check(path):
            candidates.append((hits, path, root.display(hits.path)))

    read_back: dict[str, dict[int, str]] = {}  # lines read from the files, kept across tries

    def build(payload: int) -> ToolResult:
        render = LineBudget(payload)
        files: list[str] = []
        counts: list[FileCount] = []
        matches: list[SearchMatch] = []
        shown = 0
        for hits, path, display in candidates:
            if shown >= args.max_results or render.cut:
                break
            if mode == "files" and render.fits([printable(display)]):
                files.append(display)
                shown += 1
            elif mode == "count" and render.fits([f"{printable(display)}:{hits.count}"]):
                counts.append(FileCount(path=display, count=hits.count))
                shown += 1
            elif mode == "matches":
                assert prepared.query.regex is not None
                reader = FileReader(paths, path, prepared.query.regex, prepared.query.max_file_size)
                try:
                    texts = read_back.setdefault(path, {})
                    shown += _render_matches(
                        hits, display, reader, args, render, matches, args.max_results - shown, texts
                    )
                finally:
                    reader.close()
        return _finish(
            args, prepared, top, skipped, oversize, limits, render, shown, files, counts, matches, stopped
        )

    # Each result goes twice (a text line, a structured item): less than half the budget for the text.
    budget = limits.max_result_chars
    return fit_within(build, budget, budget * 2 // 5)


def _finish(
    args: SearchFilesArgs,
    prepared: Prepared,
    top: TopResults,
    skipped: list[SkippedPath],
    oversize: int | None,
    limits: LimitsConfig,
    render: LineBudget,
    shown: int,
    files: list[str],
    counts: list[FileCount],
    matches: list[SearchMatch],
    stopped: float | None,
) -> ToolResult:
    """The result of a search whose shown results are ``files``, ``counts`` or ``matches``;
    ``stopped`` is the time budget (seconds) when the search was stopped at it, else None."""
    mode = args.output_mode
    root = prepared.root
    truncated = top.truncated or render.cut or stopped is not None
    unit = "matching lines" if mode == "matches" else "files"
    total = top.total_units if mode == "matches" else top.total_files
    if mode == "files":
        head = f"{_plural(top.total_files, 'file')} match"
    else:
        noun = "match" if mode == "count" and args.count_occurrences else "matching line"
        count = (
            f"{top.total_lines} matches"
            if noun == "match" and top.total_lines != 1
            else _plural(top.total_lines, noun)
        )
        head = f"{count} in {_plural(top.total_files, 'file')}"
    head += f" under {root.real}" + (f" (showing {shown})" if truncated else "")
    notes = []
    if stopped is not None:
        head += f" (stopped after {stopped:g} s: found so far)"
        notes.append(
            f"[stopped after {stopped:g} s ([limits] search_seconds) before the search finished: these are "
            "the results found so far, not all of them; narrow the search (root, include, exclude, a more "
            "specific pattern)]"
        )
    elif truncated:
        notes.append(
            f"[truncated: showing {shown} of {total} {unit} in path order; narrow the search (root, include, "
            "exclude, a more specific pattern) or raise maxResults]"
        )
    if total == 0:
        notes.append(
            "[no matches; hidden files and files excluded by ignore files were not searched "
            "(includeHidden, respectIgnoreFiles)]"
        )
    if oversize:
        notes.append(
            f"[{_plural(oversize, 'file')} over {args.max_file_size_bytes or limits.max_read_bytes} bytes "
            "left out; raise maxFileSizeBytes to include them]"
        )
    if note := skipped_note(skipped):
        notes.append(note)
    result = SearchFilesResult(
        root=str(root.real),
        output_mode=mode,
        files=files if mode == "files" else None,
        matches=matches if mode == "matches" else None,
        counts=counts if mode == "count" else None,
        total_files=top.total_files,
        total_matches=top.total_lines if mode != "files" else None,
        truncated=truncated,
        skipped=skipped[:MAX_SKIPPED],
        oversize_files=oversize,
    )
    return ToolResult.of(result, text="\n".join([head, *render.lines, *notes]))


def _render_matches(
    hits: FileHits,
    display: str,
    reader: FileReader,
    args: SearchFilesArgs,
    render: LineBudget,
    out: list[SearchMatch],
    room: int,
    texts: dict[int, str],
) -> int:
    """Render one file's matches (at most ``room``) rg-style; return how many were shown.

    A line's text is read (for a long line, from the file) only when it is about to be shown.
    """
    context = args.context_lines
    lines = cap_lines(hits.lines, room, context)
    by_number = {line.number: line for line in lines}

    def text(number: int) -> str:
        if number not in texts:
            texts[number] = reader.text(by_number[number])
        return texts[number]

    printed = 0  # the last line number printed
    shown = 0
    for line in lines:
        if not line.is_match:
            continue
        segment = [
            by_number[n]
            for n in range(max(printed + 1, line.number - context), line.number + context + 1)
            if n in by_number
        ]
        if segment:  # empty when an earlier match's context already printed this line
            gap = ["--"] if segment[0].number > printed + 1 else []
            block = [printable(display)] if not printed else gap
            block += [f"{item.number}{':' if item.is_match else '-'}{text(item.number)}" for item in segment]
            if not render.fits(block if printed or not out else ["", *block]):
                break
            printed = segment[-1].number
        before = [text(n) for n in range(line.number - context, line.number) if n in by_number]
        after = [text(n) for n in range(line.number + 1, line.number + context + 1) if n in by_number]
        out.append(
            SearchMatch(
                path=display,
                line_number=line.number,
                line=text(line.number),
                context_before=before if context else None,
                context_after=after if context else None,
            )
        )
        shown += 1
    return shown


def spec(workspace: Workspace) -> ToolSpec[Any]:
    """The searchfiles tool, bound to ``workspace``."""
    paths = workspace.paths
    limits = workspace.limits
    engine = workspace.search
    return ToolSpec(
        name="searchfiles",
        title="Search files",
        description=(
            "Search file contents under root with ripgrep, line by line (files mode also matches "
            f"paths). Skips binary files and files over {size_text(limits.max_read_bytes)}; no symlinks. "
            "Sorted by path; truncated when cut. For names use globfiles."
        ),
        args_model=SearchFilesArgs,
        result_model=SearchFilesResult,
        handler=partial(search_files, paths=paths, limits=limits, engine=engine),
        annotations=READ_ONLY,
        unsupported=compat.why_unsupported(dir_fd=True),
    )
