"""globfiles: find files (and optionally directories) by a glob on their path relative to root.

The walk is the engine's (ripgrep's ``--files`` or the Python walk): ignore files, hidden names
and ``exclude`` apply as in searchfiles. ``pattern`` is a path glob (``**``, ``*``, ``?``,
``[...]``, ``{a,b}``), matched against the whole relative path: ``*.py`` matches only in root,
``**/*.py`` at any depth. Directories are those holding at least one visited file.

Sorted by path, only the first ``maxResults`` paths are kept while the walk streams them in
(``collect.TopResults``); sorted by mtime, every match is kept and stat'ed, then sorted.
"""

from __future__ import annotations

import os
import posixpath
from functools import partial
from typing import Any, Literal

import anyio.to_thread
from pydantic import Field

from mcp_localtools import compat
from mcp_localtools.config import LimitsConfig
from mcp_localtools.errors import InvalidArguments, printable
from mcp_localtools.policy.paths import PathPolicy
from mcp_localtools.results import ToolResult, fit_within
from mcp_localtools.search.engine import Engine, FileHits, ListingReport, WalkFilters
from mcp_localtools.spec import READ_ONLY, CallContext, ToolArgs, ToolOutput, ToolSpec
from mcp_localtools.tools.fs._budget import LineBudget
from mcp_localtools.tools.fs._roots import MAX_RESULTS, SearchRoot, check_globs, open_root
from mcp_localtools.tools.fs._skipped import MAX_SKIPPED, SkippedPath, skipped_note, skipped_paths
from mcp_localtools.tools.fs._top import TopResults, path_key
from mcp_localtools.workspace import Workspace

__all__ = ["GlobFilesArgs", "GlobFilesResult", "glob_files", "spec"]


class GlobFilesArgs(ToolArgs):
    pattern: str = Field(
        description=(
            "Glob on the path relative to root: `**` any directories; `*` `?` `[abc]` `{a,b}` in a name "
            "(`*.py`: only directly in root)."
        )
    )
    root: str = Field(".", description="Directory to search; result paths start as it does.")
    exclude: list[str] = Field(
        default_factory=list,
        description="Globs to skip (gitignore syntax): `node_modules`.",
    )
    respect_ignore_files: bool = Field(True, description="Honor .gitignore, .ignore and .rgignore.")
    include_hidden: bool = Field(False, description="Also dot names (.git too).")
    include_directories: bool = Field(
        False, description="Also return matching directories that hold a visible file."
    )
    sort_by: Literal["path", "mtime"] = Field("path", description="`mtime`: newest first.")
    max_results: int = Field(100, ge=1, le=MAX_RESULTS, description="Most paths to return.")


class GlobFilesResult(ToolOutput):
    root: str = Field(description="Absolute real path of the directory searched.")
    paths: list[str] = Field(description="Matching paths, sorted; directories end with `/`.")
    total: int = Field(description="Paths that matched in all, including those not returned.")
    truncated: bool = Field(description="True when maxResults or the result budget left paths out.")
    skipped: list[SkippedPath] = Field(
        description=f"Entries that could not be read (the first {MAX_SKIPPED}); the walk went on."
    )


_MAX_EXPANSIONS = 1000  # wcmatch's own default limit on the patterns one glob's braces expand to


def _matcher(pattern: str) -> Any:
    text = pattern.strip()
    while text.startswith("./"):
        text = text[2:]
    if not text:
        raise InvalidArguments("pattern is required: a glob such as **/*.py")
    if text.startswith("/") or ".." in text.split("/"):
        raise InvalidArguments(
            f"pattern {pattern!r} must be relative to root and stay inside it; put the directory in root"
        )
    from wcmatch import glob  # imported here: start-up time is measured, and most calls never need it
    from wcmatch._wcparse import PatternLimitException  # raised by glob.compile; exported nowhere else

    try:
        return glob.compile(
            text, flags=glob.GLOBSTAR | glob.BRACE | glob.DOTGLOB | glob.FORCEUNIX, limit=_MAX_EXPANSIONS
        )
    except PatternLimitException as exc:
        raise InvalidArguments(
            f"the pattern expands to more than {_MAX_EXPANSIONS} patterns (braces multiply); "
            "use fewer {...} alternatives, or a wider glob and exclude"
        ) from exc
    except ValueError as exc:
        raise InvalidArguments(f"invalid glob {printable(pattern)}: {exc}") from exc


def _newest_first(root: SearchRoot, rels: list[str]) -> list[str]:
    def mtime(rel: str) -> float:
        try:
            return os.lstat(root.real / rel.rstrip("/")).st_mtime
        except OSError:
            return 0.0

    stamped = [(-mtime(rel), path_key(rel), rel) for rel in rels]
    return [rel for _, _, rel in sorted(stamped)]


def _prepare(args: GlobFilesArgs, paths: PathPolicy) -> tuple[Any, WalkFilters, SearchRoot]:
    """The compiled pattern, the walk's filters and the opened root (blocking).

    Raises:
        InvalidArguments: the pattern or an exclude glob is unusable.
        ToolError: the root is not a readable directory inside the roots (see ``open_root``).
    """
    matcher = _matcher(args.pattern)
    filters = WalkFilters(
        exclude=check_globs(args.exclude, "exclude"),
        respect_ignore_files=args.respect_ignore_files,
        include_hidden=args.include_hidden,
    )
    return matcher, filters, open_root(paths, args.root, field="root")


class _Matches:
    """The matching paths of a walk: with ``top``, only the first ``maxResults`` in path order
    (and the total), else all of them. Directories end with ``/``: ``("src", "")`` sorts where
    ``src`` would, before its entries."""

    def __init__(self, args: GlobFilesArgs, matcher: Any) -> None:
        self._matcher = matcher
        self._with_directories = args.include_directories
        self.top = TopResults(args.max_results) if args.sort_by == "path" else None
        self.every: list[str] = []
        self.directories: set[str] = set()

    def _add(self, rel: str) -> None:
        if self.top is not None:
            self.top.add(FileHits(rel, 0), 1)
        else:
            self.every.append(rel)

    def listed(self, rel: str) -> None:
        """Take one file from the walk (any thread, one at a time)."""
        if self._matcher.match(rel):
            self._add(rel)
        if self._with_directories:
            parent = posixpath.dirname(rel)
            while parent and parent not in self.directories:
                self.directories.add(parent)
                parent = posixpath.dirname(parent)

    def finish(self, root: SearchRoot, max_results: int) -> tuple[list[str], int]:
        """Add the matching directories; return the first ``max_results`` paths in order and
        the total (blocking: the mtime order stat's every path)."""
        for directory in self.directories:
            if self._matcher.match(directory):
                self._add(f"{directory}/")
        if self.top is not None:
            return [hits.path for hits in self.top.results()], self.top.total_files
        return _newest_first(root, self.every)[:max_results], len(self.every)


def _result(
    args: GlobFilesArgs, root: SearchRoot, matches: _Matches, report: ListingReport, limits: LimitsConfig
) -> ToolResult:
    ordered, total = matches.finish(root, args.max_results)
    skipped = skipped_paths(root, report.skipped)

    def build(payload: int) -> ToolResult:
        text = LineBudget(payload)
        shown: list[str] = []  # as they are; the text escapes control characters in names
        for rel in ordered:
            display = root.display(rel)
            if not text.fits([printable(display)]):
                break
            shown.append(display)
        truncated = len(shown) < total
        head = f"{total} paths match {args.pattern!r} under {root.real}"
        head += " (newest first" if args.sort_by == "mtime" else " (sorted by path"
        head += f", showing {len(shown)})" if truncated else ")"
        notes = []
        if truncated:
            notes.append(
                f"[truncated: showing {len(shown)} of {total}; narrow the pattern or raise maxResults]"
            )
        if not total:
            notes.append(
                "[no matches; remember *.py matches only directly in root (use **/*.py), and hidden or "
                "ignored files are left out (includeHidden, respectIgnoreFiles)]"
            )
        if note := skipped_note(skipped):
            notes.append(note)
        result = GlobFilesResult(
            root=str(root.real),
            paths=shown,
            total=total,
            truncated=truncated,
            skipped=skipped[:MAX_SKIPPED],
        )
        return ToolResult.of(result, text="\n".join([head, *text.lines, *notes]))

    # Each path goes twice (a text line, a structured item): less than half the budget for the text.
    return fit_within(build, limits.max_result_chars, limits.max_result_chars * 2 // 5)


async def glob_files(
    args: GlobFilesArgs, ctx: CallContext, *, paths: PathPolicy, limits: LimitsConfig, engine: Engine
) -> ToolResult:
    """The globfiles tool body: the file work runs in worker threads, the walk in the engine."""
    matcher, filters, root = await anyio.to_thread.run_sync(_prepare, args, paths, abandon_on_cancel=True)
    matches = _Matches(args, matcher)

    async def progress(count: int, message: str) -> None:
        await ctx.report_progress(count, None, message)

    report = await engine.list_files(root.real, filters, matches.listed, progress)
    return await anyio.to_thread.run_sync(
        _result, args, root, matches, report, limits, abandon_on_cancel=True
    )


def spec(workspace: Workspace) -> ToolSpec[Any]:
    """The globfiles tool, bound to ``workspace``."""
    paths = workspace.paths
    limits = workspace.limits
    engine = workspace.search
    return ToolSpec(
        name="globfiles",
        title="Find files by glob",
        description="Find files by a glob on their path; no symlinks. For contents use searchfiles.",
        args_model=GlobFilesArgs,
        result_model=GlobFilesResult,
        handler=partial(glob_files, paths=paths, limits=limits, engine=engine),
        annotations=READ_ONLY,
        unsupported=compat.why_unsupported(dir_fd=True),
    )
