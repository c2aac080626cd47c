"""makedirectory: create a directory, missing parents included by default; an existing one is fine."""

from __future__ import annotations

import os
import stat
from functools import partial
from typing import Any

from pydantic import Field

from mcp_localtools import compat
from mcp_localtools.errors import (
    NotADirectory,
    from_os_error,
)
from mcp_localtools.files.owner import adopt_entry_owner
from mcp_localtools.files.parents import lstat_entry, parent_dir
from mcp_localtools.offload import offload, offload_check
from mcp_localtools.policy.paths import PathPolicy, ResolvedPath
from mcp_localtools.results import ToolResult
from mcp_localtools.spec import ToolAnnotations, ToolArgs, ToolOutput, ToolSpec, changes_at
from mcp_localtools.workspace import Workspace

__all__ = ["MAX_NEW_DIRECTORIES", "MakeDirectoryArgs", "MakeDirectoryResult", "make_directory", "spec"]


MAX_NEW_DIRECTORIES = 64


class MakeDirectoryArgs(ToolArgs):
    path: str = Field(description="Directory to create.")
    parents: bool = Field(True, description="Create missing parents too (at most 64).")


class MakeDirectoryResult(ToolOutput):
    path: str = Field(description="Absolute path of the directory.")
    created: bool = Field(description="False when the directory already existed (not an error).")
    created_directories: list[str] = Field(description="Every directory this call created, outermost first.")


def _target(args: MakeDirectoryArgs, paths: PathPolicy) -> ResolvedPath:
    """The path policy's checks this tool's body starts with, which are also its ``ToolSpec.check``
    (the approval step runs them before it asks).

    Raises:
        ToolError: the policy refuses a path (outside the roots, protected, a root itself, ...).
    """
    resolved = paths.resolve(args.path)
    paths.check_writable(resolved, "create")
    return resolved


def make_directory(args: MakeDirectoryArgs, *, paths: PathPolicy) -> ToolResult:
    """The makedirectory tool body (runs in a worker thread)."""
    resolved = _target(args, paths)
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
            else:
                adopt_entry_owner(parent.fd, parent.name)
            created = True
        made = [*map(str, parent.created), *([str(parent.path)] if created else [])]
    result = MakeDirectoryResult(path=str(parent.path), created=created, created_directories=made)
    return ToolResult.of(result, text=f"{'created' if created else 'already exists'}: {parent.path}")


def spec(workspace: Workspace) -> ToolSpec[Any]:
    """The makedirectory tool, bound to ``workspace``."""
    paths = workspace.paths
    return ToolSpec(
        name="makedirectory",
        title="Create a directory",
        description=(
            "Create a directory. An existing directory is fine (created=false); an existing file is an error."
        ),
        args_model=MakeDirectoryArgs,
        result_model=MakeDirectoryResult,
        handler=offload(partial(make_directory, paths=paths)),
        check=offload_check(partial(_target, paths=paths)),
        changes=changes_at("path"),
        annotations=ToolAnnotations(read_only=False, destructive=False, idempotent=True),
        unsupported=compat.why_unsupported(dir_fd=True),
    )
