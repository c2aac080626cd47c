"""makedirectory, movepath and copypath: the file operations peers' users ask for most.

All three are no-clobber by default and race-proof in the way of ``fswrite``: they work on
single entry names relative to verified directory descriptors. A move is a rename (a hard
link or a reserved placeholder guarantees it never replaces an existing destination unless
``overwrite`` is set); across devices it copies, then removes the source. A copy goes to a
temporary name in the destination directory and is renamed into place only when complete, so
a failed copy leaves no partial destination. Symlinks inside copied trees stay symlinks.
"""

from __future__ import annotations

import os
import stat
from contextlib import ExitStack
from functools import partial
from typing import Any

from pydantic import Field

from mcp_localtools.errors import (
    AlreadyExists,
    InvalidArguments,
    NotADirectory,
    NotAFile,
    NotFound,
    from_os_error,
)
from mcp_localtools.fswrite import (
    CopyStats,
    MoveMethod,
    ParentDir,
    copy_into_place,
    lstat_entry,
    move_entry,
    parent_dir,
    refuse_roots,
)
from mcp_localtools.policy.paths import PathPolicy, ResolvedPath
from mcp_localtools.registry import DESTRUCTIVE, ToolAnnotations, ToolArgs, ToolOutput, ToolSpec
from mcp_localtools.results import ToolResult
from mcp_localtools.tools.fs.stat import EntryType, entry_type
from mcp_localtools.tools.offload import offload

__all__ = ["copy_path", "make_directory", "manage_specs", "move_path"]

MAX_NEW_DIRECTORIES = 64


class MakeDirectoryArgs(ToolArgs):
    path: str = Field(description="Directory to create, absolute or relative to the base directory.")
    parents: bool = Field(True, description="Create missing parent directories too (at most 64).")


class MakeDirectoryResult(ToolOutput):
    path: str = Field(description="Absolute path of the directory.")
    created: bool = Field(description="False when the directory already existed (not an error).")
    created_directories: list[str] = Field(description="Every directory this call created, outermost first.")


class MovePathArgs(ToolArgs):
    source: str = Field(description="File, directory or symlink to move (a symlink moves as itself).")
    destination: str = Field(description="The new path, including the name (not a directory to move into).")
    overwrite: bool = Field(
        False, description="Replace an existing destination of the same kind (a directory only if empty)."
    )


class MovePathResult(ToolOutput):
    source: str = Field(description="Absolute source path (no longer exists).")
    destination: str = Field(description="Absolute destination path.")
    type: EntryType = Field(description="What was moved: file, directory, symlink or other.")
    method: MoveMethod = Field(description="rename, or copyAndRemove across devices.")
    replaced: bool = Field(description="True when an existing destination was replaced.")


class CopyPathArgs(ToolArgs):
    source: str = Field(description="File or directory to copy (a symlinked source is copied as its target).")
    destination: str = Field(description="The new path, including the name (not a directory to copy into).")
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


def make_directory(args: MakeDirectoryArgs, *, paths: PathPolicy) -> ToolResult:
    """The makedirectory tool body (runs in a worker thread)."""
    resolved = paths.resolve(args.path)
    if resolved.is_root:
        result = MakeDirectoryResult(path=str(resolved.path), created=False, created_directories=[])
        return ToolResult.of(result, text=f"already exists: {resolved.path}")
    with parent_dir(paths, resolved, create=args.parents, max_new=MAX_NEW_DIRECTORIES) as parent:
        info = lstat_entry(parent)
        if info is not None and stat.S_ISLNK(info.st_mode):
            try:  # the target is inside the roots (resolve checked)
                info = os.stat(parent.name, dir_fd=parent.fd)
            except OSError as exc:
                raise NotADirectory(
                    f"path is a symlink whose target cannot be used as a directory: {parent.path} "
                    f"({exc.strerror})"
                ) from exc
        if info is not None:
            if not stat.S_ISDIR(info.st_mode):
                raise NotADirectory(f"path exists and is not a directory: {parent.path}")
            created = False
        else:
            try:
                os.mkdir(parent.name, 0o777, dir_fd=parent.fd)
            except FileExistsError:
                pass  # made concurrently: the directory exists, which is what was asked
            except OSError as exc:
                raise from_os_error(exc, str(parent.path)) from exc
            created = True
        made = [*map(str, parent.created), *([str(parent.path)] if created else [])]
    result = MakeDirectoryResult(path=str(parent.path), created=created, created_directories=made)
    return ToolResult.of(result, text=f"{'created' if created else 'already exists'}: {parent.path}")


def _check_pair(paths: PathPolicy, source: ResolvedPath, destination: ResolvedPath, verb: str) -> None:
    if destination.real == source.real:
        raise InvalidArguments(f"source and destination are the same path: {source.path}")
    if destination.real.is_relative_to(source.real):
        raise InvalidArguments(f"cannot {verb} {source.path} into itself ({destination.path})")
    refuse_roots(paths, destination, "replace")


def _replaceable(
    src_info: os.stat_result, dst: ParentDir, dst_info: os.stat_result | None, overwrite: bool
) -> bool:
    """Whether the destination exists and may be replaced; raises when it may not."""
    if dst_info is None:
        return False
    if not overwrite:
        raise AlreadyExists(
            f"destination already exists and overwrite=false: {dst.path}; pass overwrite=true"
        )
    if stat.S_ISDIR(src_info.st_mode) != stat.S_ISDIR(dst_info.st_mode):
        raise NotAFile(
            f"cannot replace a {entry_type(dst_info.st_mode)} with a {entry_type(src_info.st_mode)}: "
            f"{dst.path}"
        )
    return True


def move_path(args: MovePathArgs, *, paths: PathPolicy) -> ToolResult:
    """The movepath tool body (runs in a worker thread)."""
    source = paths.resolve(args.source, field="source", follow_final=False)
    destination = paths.resolve(args.destination, field="destination", follow_final=False)
    refuse_roots(paths, source, "move")
    _check_pair(paths, source, destination, "move")
    with ExitStack() as stack:
        src = stack.enter_context(parent_dir(paths, source))
        dst = stack.enter_context(parent_dir(paths, destination))
        src_info = lstat_entry(src)
        if src_info is None:
            raise NotFound(f"path does not exist: {src.path}")
        is_dir = stat.S_ISDIR(src_info.st_mode)
        replace = _replaceable(src_info, dst, lstat_entry(dst), args.overwrite)
        method = move_entry(src, dst, is_dir=is_dir, replace=replace)
    result = MovePathResult(
        source=str(src.path),
        destination=str(dst.path),
        type=entry_type(src_info.st_mode),
        method=method,
        replaced=replace,
    )
    return ToolResult.of(result, text=f"moved {src.path} to {dst.path}" + (" (replaced)" if replace else ""))


def copy_path(args: CopyPathArgs, *, paths: PathPolicy) -> ToolResult:
    """The copypath tool body (runs in a worker thread)."""
    followed = paths.resolve(args.source, field="source")
    source = paths.resolve(str(followed.real), field="source", follow_final=False)
    destination = paths.resolve(args.destination, field="destination", follow_final=False)
    _check_pair(paths, source, destination, "copy")
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
        replace = _replaceable(src_info, dst, dst_info, args.overwrite)
        if replace and is_dir:
            raise AlreadyExists(
                f"destination directory exists: {dst.path}; copypath does not merge directories"
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


def manage_specs(paths: PathPolicy) -> list[ToolSpec[Any]]:
    """The makedirectory, movepath and copypath specs."""
    return [
        ToolSpec(
            name="makedirectory",
            group="fs",
            title="Create a directory",
            description=(
                "Create a directory, with missing parents by default. An existing directory is fine "
                "(created=false); an existing file at the path is an error."
            ),
            args_model=MakeDirectoryArgs,
            result_model=MakeDirectoryResult,
            handler=offload(partial(make_directory, paths=paths)),
            annotations=ToolAnnotations(read_only=False, destructive=False, idempotent=True),
        ),
        ToolSpec(
            name="movepath",
            group="fs",
            title="Move or rename",
            description=(
                "Move or rename a file, directory or symlink to a new path inside the allowed roots. "
                "Refuses an existing destination unless overwrite=true. Works across devices (copies, then "
                "removes)."
            ),
            args_model=MovePathArgs,
            result_model=MovePathResult,
            handler=offload(partial(move_path, paths=paths)),
            annotations=DESTRUCTIVE,
        ),
        ToolSpec(
            name="copypath",
            group="fs",
            title="Copy a file or tree",
            description=(
                "Copy a file, or a directory tree with recursive=true, keeping modes and times; symlinks in "
                "a tree stay symlinks. Refuses an existing destination unless overwrite=true (files only). "
                "A failed copy leaves no partial destination."
            ),
            args_model=CopyPathArgs,
            result_model=CopyPathResult,
            handler=offload(partial(copy_path, paths=paths)),
            annotations=DESTRUCTIVE,
        ),
    ]
