"""movepath: move or rename a file, directory or symlink inside the roots.

A move is a rename of one entry between verified directory descriptors (a hard link or a
reserved placeholder guarantees it never replaces an existing destination unless ``overwrite``
is set); across devices it copies into place, then removes the source.
"""

from __future__ import annotations

import stat
from contextlib import ExitStack
from functools import partial
from typing import Any

from pydantic import Field

from mcp_localtools import compat
from mcp_localtools.errors import (
    NotFound,
)
from mcp_localtools.files.copy import MoveMethod, move_entry
from mcp_localtools.files.entries import EntryType, entry_type
from mcp_localtools.files.parents import lstat_entry, parent_dir, refuse_roots
from mcp_localtools.offload import offload, offload_check
from mcp_localtools.policy.paths import PathPolicy, ResolvedPath
from mcp_localtools.results import ToolResult
from mcp_localtools.spec import DESTRUCTIVE, ToolArgs, ToolOutput, ToolSpec, changes_at
from mcp_localtools.tools.fs._transfer import check_pair, replaceable
from mcp_localtools.workspace import Workspace

__all__ = ["MovePathArgs", "MovePathResult", "move_path", "spec"]


class MovePathArgs(ToolArgs):
    source: str = Field(description="What to move (a symlink moves as itself).")
    destination: str = Field(description="The new path, name included (not a directory to move into).")
    overwrite: bool = Field(
        False, description="Replace an existing destination of the same kind (a directory only if empty)."
    )


class MovePathResult(ToolOutput):
    source: str = Field(description="Absolute source path (no longer exists).")
    destination: str = Field(description="Absolute destination path.")
    type: EntryType = Field(description="What was moved: file, directory, symlink or other.")
    method: MoveMethod = Field(description="rename, or copyAndRemove across devices.")
    replaced: bool = Field(description="True when an existing destination was replaced.")


def _targets(args: MovePathArgs, paths: PathPolicy) -> tuple[ResolvedPath, ResolvedPath]:
    """The path policy's checks this tool's body starts with, which are also its ``ToolSpec.check``
    (the approval step runs them before it asks).

    Raises:
        ToolError: the policy refuses a path (outside the roots, protected, a root itself, ...).
    """
    source = paths.resolve(args.source, field="source", follow_final=False)
    destination = paths.resolve(args.destination, field="destination", follow_final=False)
    paths.check_writable(source, "move")
    paths.check_writable(destination, "replace")
    refuse_roots(paths, source, "move")
    check_pair(paths, source, destination, "move")
    return source, destination


def move_path(args: MovePathArgs, *, paths: PathPolicy) -> ToolResult:
    """The movepath tool body (runs in a worker thread)."""
    source, destination = _targets(args, paths)
    with ExitStack() as stack:
        src = stack.enter_context(parent_dir(paths, source))
        dst = stack.enter_context(parent_dir(paths, destination))
        src_info = lstat_entry(src)
        if src_info is None:
            raise NotFound(f"path does not exist: {src.path}")
        is_dir = stat.S_ISDIR(src_info.st_mode)
        replace = replaceable(src_info, dst, lstat_entry(dst), args.overwrite)
        method = move_entry(src, dst, is_dir=is_dir, replace=replace)
    result = MovePathResult(
        source=str(src.path),
        destination=str(dst.path),
        type=entry_type(src_info.st_mode),
        method=method,
        replaced=replace,
    )
    return ToolResult.of(result, text=f"moved {src.path} to {dst.path}" + (" (replaced)" if replace else ""))


def spec(workspace: Workspace) -> ToolSpec[Any]:
    """The movepath tool, bound to ``workspace``."""
    paths = workspace.paths
    return ToolSpec(
        name="movepath",
        title="Move or rename",
        description="Move or rename a file, directory or symlink, across devices too.",
        args_model=MovePathArgs,
        result_model=MovePathResult,
        handler=offload(partial(move_path, paths=paths)),
        check=offload_check(partial(_targets, paths=paths)),
        changes=changes_at("source", "destination"),
        annotations=DESTRUCTIVE,
        unsupported=compat.why_unsupported(dir_fd=True),
    )
