"""copypath: copy a file, or a directory tree, inside the roots.

The copy goes to a temporary name in the destination directory and is renamed into place only
when complete, so a failed copy leaves no partial destination. Modes and times are kept;
symlinks inside copied trees stay symlinks.
"""

from __future__ import annotations

import stat
from contextlib import ExitStack
from functools import partial
from typing import Any

from pydantic import Field

from mcp_localtools import compat
from mcp_localtools.errors import (
    AlreadyExists,
    NotAFile,
    NotFound,
)
from mcp_localtools.files.copy import CopyStats, copy_into_place
from mcp_localtools.files.entries import EntryType, entry_type
from mcp_localtools.files.parents import lstat_entry, parent_dir
from mcp_localtools.offload import offload, offload_check
from mcp_localtools.policy.paths import PathPolicy, ResolvedPath
from mcp_localtools.results import ToolResult
from mcp_localtools.spec import DESTRUCTIVE, ToolArgs, ToolOutput, ToolSpec, changes_at
from mcp_localtools.toolnames import served
from mcp_localtools.tools.fs._transfer import check_pair, replaceable
from mcp_localtools.workspace import Workspace

__all__ = ["CopyPathArgs", "CopyPathResult", "copy_path", "spec"]


class CopyPathArgs(ToolArgs):
    source: str = Field(description="What to copy (a symlink copies its target).")
    destination: str = Field(description="The new path, name included (not a directory to copy into).")
    overwrite: bool = Field(
        False, description="Replace an existing destination file (directories are never merged)."
    )
    recursive: bool = Field(False, description="Required to copy a directory tree.")


class CopyPathResult(ToolOutput):
    source: str = Field(description="Absolute source path.")
    destination: str = Field(description="Absolute destination path.")
    type: EntryType = Field(description="file or directory.")
    files_copied: int = Field(description="Regular files copied.")
    bytes_copied: int = Field(description="Bytes of file content copied.")
    skipped: list[str] = Field(description="Special files (FIFOs, sockets, devices) not copied.")
    replaced: bool = Field(description="True when an existing destination file was replaced.")


def _targets(args: CopyPathArgs, paths: PathPolicy) -> tuple[ResolvedPath, ResolvedPath, ResolvedPath]:
    """``(source as given, source followed to what it names, destination)``: the path policy's
    checks this tool's body starts with, which are also its ``ToolSpec.check``.

    Raises:
        ToolError: the policy refuses the source or the destination.
    """
    followed = paths.resolve(args.source, field="source")
    source = paths.resolve(str(followed.real), field="source", follow_final=False)
    destination = paths.resolve(args.destination, field="destination", follow_final=False)
    paths.check_writable(destination, "write")
    check_pair(paths, source, destination, "copy")
    return followed, source, destination


def copy_path(args: CopyPathArgs, *, paths: PathPolicy) -> ToolResult:
    """The copypath tool body (runs in a worker thread)."""
    followed, source, destination = _targets(args, paths)
    stats = CopyStats()
    with ExitStack() as stack:
        src = stack.enter_context(parent_dir(paths, source))
        dst = stack.enter_context(parent_dir(paths, destination))
        src_info = lstat_entry(src)
        if src_info is None:
            raise NotFound(f"path does not exist: {followed.path}")
        is_dir = stat.S_ISDIR(src_info.st_mode)
        if is_dir and not args.recursive:
            raise NotAFile(f"source is a directory: {followed.path}; pass recursive=true to copy the tree")
        if not (is_dir or stat.S_ISREG(src_info.st_mode)):
            raise NotAFile(
                f"can only copy files and directories: {followed.path} is {entry_type(src_info.st_mode)}"
            )
        dst_info = lstat_entry(dst)
        replace = replaceable(src_info, dst, dst_info, args.overwrite)
        if replace and is_dir:
            raise AlreadyExists(
                f"destination directory exists: {dst.path}; {served('copypath')} does not merge directories"
            )
        if dst_info is not None and stat.S_ISLNK(dst_info.st_mode):
            raise NotAFile(f"destination is a symlink: {dst.path}; refusing to replace it with a copy")
        copy_into_place(src, dst, is_dir=is_dir, replace=replace, stats=stats)
    result = CopyPathResult(
        source=str(followed.path),
        destination=str(dst.path),
        type=entry_type(src_info.st_mode),
        files_copied=stats.files,
        bytes_copied=stats.bytes,
        skipped=stats.skipped,
        replaced=replace,
    )
    summary = f"copied {followed.path} to {dst.path}: {stats.files} files, {stats.bytes} bytes"
    return ToolResult.of(
        result, text=summary + (f"; skipped {len(stats.skipped)} special files" if stats.skipped else "")
    )


def spec(workspace: Workspace) -> ToolSpec[Any]:
    """The copypath tool, bound to ``workspace``."""
    paths = workspace.paths
    return ToolSpec(
        name="copypath",
        title="Copy a file or tree",
        description=(
            "Copy a file or directory tree, keeping modes and times (symlinks in a tree "
            "stay symlinks). A failed copy leaves no partial destination."
        ),
        args_model=CopyPathArgs,
        result_model=CopyPathResult,
        handler=offload(partial(copy_path, paths=paths)),
        check=offload_check(partial(_targets, paths=paths)),
        changes=changes_at("destination"),
        annotations=DESTRUCTIVE,
        unsupported=compat.why_unsupported(dir_fd=True),
    )
