"""statpath: whether a path exists, and its type, size, times, mode and symlink details.

A missing path is not an error: the result says ``exists: false``. ``sizeBytes`` is always
present (the seed omitted zero sizes). Symlinks are followed when the policy allows them (their
target must be inside the roots); ``isSymlink`` and ``symlinkTarget`` describe the link itself.
"""

from __future__ import annotations

import os
import stat
from functools import partial
from typing import Any

from pydantic import Field

from mcp_localtools.errors import from_os_error
from mcp_localtools.files.entries import EntryType, entry_type, rfc3339
from mcp_localtools.files.read import stat_path
from mcp_localtools.offload import offload
from mcp_localtools.policy.paths import PathPolicy
from mcp_localtools.results import ToolResult
from mcp_localtools.spec import READ_ONLY, ToolArgs, ToolOutput, ToolSpec
from mcp_localtools.workspace import Workspace

__all__ = ["StatPathArgs", "StatPathResult", "spec", "stat_file"]


class StatPathArgs(ToolArgs):
    path: str = Field(description="Path to inspect.")


class StatPathResult(ToolOutput):
    path: str = Field(description="Absolute path.")
    name: str = Field(description="Base name; empty when the path does not exist.")
    exists: bool = Field(description="False when nothing is at the path (not an error).")
    is_dir: bool | None = Field(None, description="True for a directory (or a symlink to one).")
    type: EntryType | None = Field(
        None, description="file, directory, other (FIFO, socket, device), or symlink for a dangling link."
    )
    size_bytes: int | None = Field(None, description="Size in bytes (of the target, for a symlink).")
    mod_time: str | None = Field(None, description="Last modification, RFC 3339 UTC.")
    mode: str | None = Field(None, description="Permission bits in octal, e.g. `0644`.")
    is_symlink: bool | None = Field(None, description="True when the path itself is a symlink.")
    symlink_target: str | None = Field(None, description="The link's target as stored in the link.")


def stat_file(args: StatPathArgs, *, paths: PathPolicy) -> ToolResult:
    """The statpath tool body (runs in a worker thread)."""
    resolved = paths.resolve(args.path)
    link = stat_path(paths, resolved, follow=False)
    if link is None:
        return ToolResult.of(StatPathResult(path=str(resolved.path), name="", exists=False))
    target: str | None = None
    info = link
    if stat.S_ISLNK(link.st_mode):
        try:
            target = os.readlink(resolved.path)
        except OSError as exc:
            raise from_os_error(exc, str(resolved.path)) from exc
        info = stat_path(paths, resolved, follow=True) or link
    result = StatPathResult(
        path=str(resolved.path),
        name=resolved.path.name,
        exists=True,
        is_dir=stat.S_ISDIR(info.st_mode),
        type=entry_type(info.st_mode),
        size_bytes=info.st_size,
        mod_time=rfc3339(info.st_mtime),
        mode=f"{stat.S_IMODE(info.st_mode):04o}",
        is_symlink=target is not None,
        symlink_target=target,
    )
    return ToolResult.of(result)


def spec(workspace: Workspace) -> ToolSpec[Any]:
    """The statpath tool, bound to ``workspace``."""
    paths = workspace.paths
    return ToolSpec(
        name="statpath",
        title="Inspect a path",
        description=(
            "A path's type, size, modification time, permission bits and symlink target; exists=false "
            "when missing."
        ),
        args_model=StatPathArgs,
        result_model=StatPathResult,
        handler=offload(partial(stat_file, paths=paths)),
        annotations=READ_ONLY,
    )
