"""replaceinfiles: one replacement across many files (renames), previewed by default, all or nothing.

The search engine finds the files under ``root`` that match ``include`` and contain the pattern
(ignore files respected, hidden files skipped, like searchfiles). Then, in a worker thread, every
one of them is opened for editing under its lock (taken in path order, so two calls cannot
deadlock), the new texts are computed, and only when every file could be changed is anything
written. A write that fails puts the files already written back as they were. ``dryRun``
(the default) writes nothing and returns every change as a diff.
"""

from __future__ import annotations

from contextlib import ExitStack
from functools import partial
from typing import Any

import anyio.to_thread
from pydantic import Field

from mcp_localtools import compat
from mcp_localtools.config import LimitsConfig
from mcp_localtools.errors import InvalidArguments, NotADirectory, TooLarge, ToolError
from mcp_localtools.files.locks import FileLocks
from mcp_localtools.offload import offload_check
from mcp_localtools.policy.paths import PathPolicy, ResolvedPath
from mcp_localtools.results import ToolResult, fit_within
from mcp_localtools.search.engine import ContentQuery, Engine, FileHits, WalkFilters
from mcp_localtools.spec import DESTRUCTIVE, DRY_RUN, CallContext, ToolArgs, ToolOutput, ToolSpec, changes_at
from mcp_localtools.toolnames import served
from mcp_localtools.tools.text._diff import MIN_DIFF_CHARS, diff_within, unified_diff
from mcp_localtools.tools.text._groups import Replacement
from mcp_localtools.tools.text._match import MatchMode, compile_regex, replace_every
from mcp_localtools.tools.text._textfile import EditableText, edit_text
from mcp_localtools.workspace import Workspace

__all__ = ["ReplaceInFilesArgs", "ReplaceInFilesResult", "replace_in_files", "spec"]

MAX_FILES = 500


class ReplaceInFilesArgs(ToolArgs):
    pattern: str = Field(min_length=1, description="Text to replace (or an RE2 regex with match=regex).")
    replacement: str = Field(
        description=r"Inserted literally (may be empty). regex: \1, \g<name> insert groups, \\ a backslash."
    )
    include: list[str] = Field(
        min_length=1,
        max_length=50,
        description="Globs of the files to change, relative to root (gitignore syntax: `**/*.py`).",
    )
    root: str = Field(".", description="Directory searched; default the base directory.")
    match: MatchMode = Field(
        "wholeWord",
        description=(
            "wholeWord: the exact text not inside a longer word (renames); literal: every exact "
            "occurrence; regex: an RE2 regex, ^ and $ at line ends, matched within lines."
        ),
    )
    dry_run: bool = Field(True, description="Only return the changes as diffs (default); false writes them.")
    max_files: int = Field(
        100, ge=1, le=MAX_FILES, description="Refuse (change nothing) when more files would change."
    )


class FileChange(ToolOutput):
    path: str = Field(description="Absolute path of the file.")
    replacements: int = Field(description="Places replaced in this file.")


class ReplaceInFilesResult(ToolOutput):
    root: str = Field(description="Absolute path of the directory searched.")
    dry_run: bool = Field(description="True when nothing was written.")
    files: list[FileChange] = Field(description="Every file changed (or that would change), sorted by path.")
    total_replacements: int = Field(description="Places replaced in all files.")
    diff: str = Field(description="Unified diffs of every file, in path order.")
    diff_truncated: bool = Field(description="True when the diff was cut to the result budget.")


def _new_text(target: EditableText, args: ReplaceInFilesArgs) -> tuple[str, int]:
    return replace_every(
        target.file.text, args.pattern, args.replacement, args.match, "pattern", "replacement"
    )


def _apply(
    args: ReplaceInFilesArgs,
    root: str,
    found: list[str],
    *,
    paths: PathPolicy,
    limits: LimitsConfig,
    locks: FileLocks,
) -> ToolResult:
    """In a worker thread: open every found file for editing, compute, then write all or none.

    Raises:
        TooLarge: more than maxFiles files would change.
        ToolError: a file cannot be edited (not UTF-8, a symlink, protected, ...); nothing is written.
    """
    changes: list[tuple[EditableText, str, int]] = []
    with ExitStack() as stack:
        for rel in sorted(found):
            try:
                target = stack.enter_context(
                    edit_text(paths, f"{root}/{rel}", limits, locks, expected_sha256=None)
                )
            except ToolError as exc:
                raise type(exc)(
                    f"{exc.message}\nNo file was changed ({served('replaceinfiles')} is all or nothing)."
                ) from exc
            new, count = _new_text(target, args)
            if count and new != target.file.text:
                changes.append((target, new, count))
            if len(changes) > args.max_files:
                raise TooLarge(
                    f"more than {args.max_files} files would change; narrow include or raise maxFiles "
                    f"(at most {MAX_FILES}). No file was changed."
                )
        diffs = [unified_diff(t.file.text, new, name=t.diff_name) for t, new, _ in changes]
        if not args.dry_run:
            written: list[EditableText] = []
            try:
                for target, new, _ in changes:
                    target.save(new)
                    written.append(target)
            except ToolError as exc:
                for target in written:  # put back what was already written
                    target.save(target.file.text)
                raise type(exc)(
                    f"{exc.message}\nThe files already written were restored: no file was changed."
                ) from exc
    total = sum(count for _, _, count in changes)
    full_diff = "".join(diffs)
    verb = "would replace" if args.dry_run else "replaced"
    summary = f"{verb} {total} place(s) in {len(changes)} file(s) under {root}"
    if args.dry_run and changes:
        summary += "; call again with dryRun=false to write these changes"
    files = [FileChange(path=str(t.path), replacements=count) for t, _, count in changes]

    def build(payload: int) -> ToolResult:
        diff, cut = diff_within(full_diff, payload)
        result = ReplaceInFilesResult(
            root=root,
            dry_run=args.dry_run,
            files=files,
            total_replacements=total,
            diff=diff,
            diff_truncated=cut,
        )
        note = "\n[diff cut to fit the result budget (head and tail kept)]" if cut else ""
        return ToolResult.of(result, text=f"{summary}\n{diff}{note}")

    # The diff goes twice (text and structuredContent): about half the budget each.
    budget = limits.max_result_chars
    return fit_within(build, budget, max(budget // 2 - 2000, MIN_DIFF_CHARS))


def search_root(args: ReplaceInFilesArgs, *, paths: PathPolicy) -> ResolvedPath:
    """replaceinfiles' checks before any search (also its ``ToolSpec.check``; blocking): the
    include globs, the regex and its group references, and ``root`` (inside the roots, a
    directory). Returns ``root`` resolved.

    Raises:
        InvalidArguments: a bad glob or regex, or a group reference the regex has no group for.
        OutsideAllowedRoots, NotADirectory: root is outside the roots, or not a directory.
    """
    for glob in args.include:
        if not glob.strip() or any(char in glob for char in "\n\r\x00"):
            raise InvalidArguments(f"include: {glob!r} is not a usable glob")
    if args.match == "regex":
        Replacement.parse(args.replacement, compile_regex(args.pattern, "pattern"), "replacement")
    resolved = paths.resolve(args.root)
    if not resolved.real.is_dir():
        raise NotADirectory(f"root is not a directory: {resolved.path}")
    return resolved


async def replace_in_files(
    args: ReplaceInFilesArgs,
    ctx: CallContext,
    *,
    paths: PathPolicy,
    limits: LimitsConfig,
    locks: FileLocks,
    engine: Engine,
) -> ToolResult:
    """The replaceinfiles tool body: find the files with the engine, edit them in a worker thread.

    Raises:
        InvalidArguments: a bad glob or regex, or a group reference the regex has no group for.
        OutsideAllowedRoots, NotADirectory: root is outside the roots, or not a directory.
        TooLarge, ToolError: as ``_apply``; nothing is written then.
    """
    resolved = await anyio.to_thread.run_sync(partial(search_root, args, paths=paths))
    query = ContentQuery(
        directory=resolved.real,
        pattern=args.pattern,
        case_sensitive=True,
        fixed_strings=args.match != "regex",
        filters=WalkFilters(include=tuple(args.include)),
        max_file_size=limits.max_read_bytes,
        output="files",
    )
    found: list[str] = []

    def sink(hits: FileHits) -> None:
        found.append(hits.path)

    async def progress(count: int, message: str) -> None:
        await ctx.report_progress(count, None, message)

    await engine.search(query, sink, progress)
    return await anyio.to_thread.run_sync(
        partial(_apply, args, str(resolved.real), found, paths=paths, limits=limits, locks=locks),
        abandon_on_cancel=False,  # a write phase must not be abandoned half way
    )


def spec(workspace: Workspace) -> ToolSpec[Any]:
    """The replaceinfiles tool, bound to ``workspace``."""
    paths, limits, locks, engine = workspace.paths, workspace.limits, workspace.locks, workspace.search

    async def handler(args: ReplaceInFilesArgs, ctx: CallContext) -> ToolResult:
        return await replace_in_files(args, ctx, paths=paths, limits=limits, locks=locks, engine=engine)

    return ToolSpec(
        name="replaceinfiles",
        title="Replace in many files",
        description=(
            "Replace a word, text or RE2 regex in every file under root matching the include globs "
            "(renames). dryRun (default true) returns every change as a diff and writes nothing; with "
            "dryRun=false all files are written or none (a failure restores them). Ignore files are "
            "respected, hidden files skipped."
        ),
        args_model=ReplaceInFilesArgs,
        result_model=ReplaceInFilesResult,
        handler=handler,
        check=offload_check(partial(search_root, paths=paths)),
        changes=changes_at("root"),
        annotations=DESTRUCTIVE,
        preview=DRY_RUN,
        unsupported=compat.why_unsupported(dir_fd=True),
    )
