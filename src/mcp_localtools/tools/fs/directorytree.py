"""directorytree: a depth-limited, size-annotated tree of a directory, capped in entries.

Directories are read level by level (breadth first), so when ``maxEntries`` runs out the upper
levels are complete and each directory that was cut says how many entries it left out. The same
filters as searchfiles apply (ignore files, hidden names, ``exclude``); symlinks are shown, never
followed. The tree is read by the Python walk whatever the search engine: it is bounded by
depth and entries, and needs empty directories and sizes, which ``rg --files`` does not give.
"""

from __future__ import annotations

import os
from collections import deque
from functools import partial
from typing import Any

from pydantic import Field

from mcp_localtools import compat
from mcp_localtools.config import LimitsConfig
from mcp_localtools.errors import printable
from mcp_localtools.files.entries import EntryType
from mcp_localtools.offload import offload
from mcp_localtools.policy.paths import PathPolicy
from mcp_localtools.results import ToolResult, fit_within
from mcp_localtools.search.engine import Skipped, WalkFilters
from mcp_localtools.search.ignore import RuleChain
from mcp_localtools.search.walk import WalkEntry, Walker, error_reason, open_below
from mcp_localtools.spec import READ_ONLY, ToolArgs, ToolOutput, ToolSpec
from mcp_localtools.tools.fs._budget import LineBudget
from mcp_localtools.tools.fs._roots import MAX_RESULTS, check_globs, opened_root
from mcp_localtools.tools.fs._skipped import MAX_SKIPPED, SkippedPath, skipped_note, skipped_paths
from mcp_localtools.workspace import Workspace

__all__ = ["DirectoryTreeArgs", "DirectoryTreeResult", "TreeEntry", "directory_tree", "spec"]

MAX_DEPTH = 20


class DirectoryTreeArgs(ToolArgs):
    path: str = Field(".", description="Directory to show.")
    max_depth: int = Field(3, ge=1, le=MAX_DEPTH, description="Levels below path (1 = its entries).")
    max_entries: int = Field(
        500,
        ge=1,
        le=MAX_RESULTS,
        description="Most entries in the whole tree; upper levels first.",
    )
    exclude: list[str] = Field(
        default_factory=list,
        description="Globs to leave out (gitignore syntax).",
    )
    respect_ignore_files: bool = Field(True, description="Honor .gitignore, .ignore and .rgignore.")
    include_hidden: bool = Field(False, description="Also dot names (.git too).")


class TreeEntry(ToolOutput):
    path: str = Field(
        description="Path relative to the directory, / separated; a directory's entries follow it."
    )
    type: EntryType = Field(description="file, directory, symlink (not followed) or other.")
    size_bytes: int | None = Field(None, description="Files: size in bytes.")
    not_read: bool | None = Field(
        None, description="Directories at maxDepth: true (their entries were not read)."
    )
    omitted_entries: int | None = Field(
        None, description="Directories cut by maxEntries: how many of their entries are not shown."
    )


class DirectoryTreeResult(ToolOutput):
    path: str = Field(description="Absolute real path of the directory.")
    entries: list[TreeEntry] = Field(
        description="The entries shown, flat, in tree order: each directory followed by its entries, by name."
    )
    shown_entries: int = Field(description="Entries in the tree.")
    truncated: bool = Field(description="True when maxEntries or the result budget cut the tree.")
    skipped: list[SkippedPath] = Field(
        description=f"Directories that could not be read (the first {MAX_SKIPPED})."
    )


class _Node:
    __slots__ = ("children", "entry", "omitted")

    def __init__(self, entry: WalkEntry | None) -> None:
        self.entry = entry
        self.children: list[_Node] | None = None
        self.omitted = 0


def _human(size: int) -> str:
    value = float(size)
    for unit in ("B", "K", "M", "G", "T"):
        if value < 1024 or unit == "T":
            return f"{size}B" if unit == "B" else f"{value:.1f}{unit}"
        value /= 1024
    raise AssertionError("unreachable")


def _read_tree(
    walker: Walker, root_fd: int, args: DirectoryTreeArgs, skipped: list[Skipped]
) -> tuple[_Node, int, bool]:
    """Read the tree below the open directory ``root_fd`` breadth first, within ``maxDepth``
    and ``maxEntries``; unreadable directories go to ``skipped``.

    Returns:
        ``(root node, entries shown, whether maxEntries left entries out)``.
    """
    root = _Node(None)
    queue: deque[tuple[_Node, str, RuleChain | None, int]] = deque([(root, "", None, 1)])
    shown = 0
    cut = False
    while queue:
        node, rel, chain, depth = queue.popleft()
        try:
            fd = open_below(root_fd, rel)
        except OSError as exc:
            skipped.append(Skipped(rel, error_reason(exc)))
            node.children = []
            continue
        room = max(0, args.max_entries - shown)
        try:
            entries, child_chain, total = walker.read_directory_top(fd, rel, chain, room)
        finally:
            os.close(fd)
        node.children = [_Node(entry) for entry in entries]
        node.omitted = total - len(node.children)
        cut = cut or node.omitted > 0
        shown += len(node.children)
        if depth < args.max_depth:
            for child in node.children:
                if child.entry is not None and child.entry.kind == "directory":
                    queue.append((child, child.entry.rel, child_chain, depth + 1))
    return root, shown, cut


def _render(node: _Node, indent: str, text: LineBudget, out: list[TreeEntry]) -> bool:
    """Add the lines of ``node``'s children to ``text`` and their entries to ``out``; False once
    the budget ran out."""
    for child in node.children or []:
        entry = child.entry
        assert entry is not None
        name = printable(entry.name)
        if entry.kind == "directory":
            line = f"{indent}{name}/" + (" …" if child.children is None else "")
        elif entry.kind == "file":
            line = f"{indent}{name} {_human(entry.size)}"
        else:
            line = f"{indent}{name}{'@' if entry.kind == 'symlink' else ' (other)'}"
        if not text.fits([line]):
            return False
        out.append(
            TreeEntry(
                path=entry.rel,
                type=entry.kind,
                size_bytes=entry.size if entry.kind == "file" else None,
                not_read=True if entry.kind == "directory" and child.children is None else None,
                omitted_entries=child.omitted or None,
            )
        )
        if child.children is not None and not _render(child, indent + "  ", text, out):
            return False
    if node.omitted:
        return text.fits([f"{indent}[… {node.omitted} more entries not shown: maxEntries]"])
    return True


def directory_tree(args: DirectoryTreeArgs, *, paths: PathPolicy, limits: LimitsConfig) -> ToolResult:
    """The directorytree tool body (runs in a worker thread)."""
    filters = WalkFilters(
        exclude=check_globs(args.exclude, "exclude"),
        respect_ignore_files=args.respect_ignore_files,
        include_hidden=args.include_hidden,
    )
    skipped: list[Skipped] = []
    walker = Walker(filters, on_error=lambda rel, reason: skipped.append(Skipped(rel, reason)))
    with opened_root(paths, args.path, field="path") as (root, root_fd):
        tree, shown, cut = _read_tree(walker, root_fd, args, skipped)
    items = skipped_paths(root, skipped)
    head = f"{root.real}/ (depth {args.max_depth}, {shown} entries; … marks directories not listed)"

    def build(payload: int) -> ToolResult:
        text = LineBudget(payload)
        entries: list[TreeEntry] = []
        _render(tree, "", text, entries)
        notes = []
        if text.cut:
            notes.append("[the tree was cut to the result budget; lower maxDepth or pick a subdirectory]")
        if note := skipped_note(items):
            notes.append(note)
        result = DirectoryTreeResult(
            path=str(root.real),
            entries=entries,
            shown_entries=len(entries),
            truncated=cut or text.cut,
            skipped=items[:MAX_SKIPPED],
        )
        return ToolResult.of(result, text="\n".join([head, *text.lines, *notes]))

    # Each entry goes twice (a text line, a structured entry): less than half the budget for the text.
    budget = limits.max_result_chars
    return fit_within(build, budget, budget * 2 // 5)


def spec(workspace: Workspace) -> ToolSpec[Any]:
    """The directorytree tool, bound to ``workspace``."""
    paths = workspace.paths
    limits = workspace.limits
    return ToolSpec(
        name="directorytree",
        title="Show a directory tree",
        description=(
            "Show a directory as an indented tree with file sizes; cut directories say how many entries "
            "they left out. No symlinks. For names use globfiles; for one directory's details, "
            "listdirectory."
        ),
        args_model=DirectoryTreeArgs,
        result_model=DirectoryTreeResult,
        handler=offload(partial(directory_tree, paths=paths, limits=limits)),
        annotations=READ_ONLY,
        unsupported=compat.why_unsupported(dir_fd=True),
    )
