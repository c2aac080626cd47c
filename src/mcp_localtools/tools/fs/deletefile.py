"""deletefile: move a file or directory to a trash, never unlink it. Every trash entry gets a
freedesktop ``.trashinfo`` (the seed wrote none).

Where it goes:

* ``trashDir: "auto"`` (default): the freedesktop home trash (where send2trash would put it), so
  a desktop can restore it, when its absolute, canonical location lies inside the allowed roots
  and on the file's device; otherwise ``<root>/.trash`` inside the root that holds the file.
* An explicit ``trashDir`` inside the roots (created if missing).

Our own trash directories use the freedesktop layout (``files/`` + ``info/<name>.trashinfo``
with the original path and deletion date), and the move is race-proof: the source entry is
renamed between two verified directory descriptors, the destination name reserved first.
The home trash gets the same move (send2trash only says where it is: it works by path name, and
an empty or relative ``XDG_DATA_HOME`` would send files under the server's working directory).
"""

from __future__ import annotations

import os
import secrets
import stat
from contextlib import ExitStack
from datetime import UTC, datetime
from functools import partial
from pathlib import Path, PurePath
from typing import Any, Literal
from urllib.parse import quote

from pydantic import Field

from mcp_localtools import compat
from mcp_localtools.errors import (
    AlreadyExists,
    InvalidArguments,
    NotAFile,
    NotFound,
    ToolError,
    from_os_error,
)
from mcp_localtools.files.copy import move_entry
from mcp_localtools.files.entries import kind_of
from mcp_localtools.files.parents import (
    ParentDir,
    ensure_subdir,
    lstat_entry,
    parent_dir,
    refuse_roots,
    remove_made,
)
from mcp_localtools.offload import offload, offload_check
from mcp_localtools.policy.paths import PathPolicy, ResolvedPath
from mcp_localtools.results import ToolResult
from mcp_localtools.spec import DESTRUCTIVE, ToolArgs, ToolOutput, ToolSpec
from mcp_localtools.workspace import Workspace

__all__ = ["DeleteFileArgs", "DeleteFileResult", "delete_file", "spec"]

Method = Literal["systemTrash", "rename", "copyAndRemove"]
_ATTEMPTS = 12
_MAX_TRASH_DIRS = 32


class DeleteFileArgs(ToolArgs):
    path: str = Field(description="What to trash.")
    trash_dir: str = Field(
        "auto",
        description=(
            "`auto`: the desktop trash if in the roots, else `.trash` in the file's root; or a directory "
            "in the roots, created if missing."
        ),
    )
    recursive: bool = Field(False, description="Allow trashing a directory and its contents.")


class DeleteFileResult(ToolOutput):
    original_path: str = Field(description="Where the entry was.")
    trashed_path: str = Field(description="Where it is now; move it back to restore it.")
    method: Method = Field(
        description="systemTrash (desktop trash, via send2trash), rename, or copyAndRemove (across devices)."
    )
    trash_info_path: str = Field(description="The .trashinfo file recording the original path and date.")


def _trash_name(name: str, attempt: int) -> str:
    if attempt == 0:
        return name
    suffix = PurePath(name).suffix
    stem = name[: len(name) - len(suffix)] if suffix else name
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ")
    return f"{stem[:180]}.{stamp}.{secrets.token_hex(6)}{suffix}"


def _trash_info(original: Path) -> bytes:
    date = datetime.now().strftime("%Y-%m-%dT%H:%M:%S")
    return f"[Trash Info]\nPath={quote(str(original))}\nDeletionDate={date}\n".encode()


def _move_into(source: ParentDir, is_dir: bool, trash: ParentDir) -> tuple[Path, Path, Method]:
    """Move ``source`` into the freedesktop-style trash directory ``trash``. When it fails (a
    full disk), the trash directories it made (``trash`` itself, ``files``, ``info``) are removed
    again while empty: no empty ``.trash`` is left behind."""
    made: list[tuple[int, str]] = []
    with ExitStack() as opened:
        try:
            trash_fd = ensure_subdir(trash.fd, trash.name, trash.path, made=made)
            opened.callback(os.close, trash_fd)
            files_fd = ensure_subdir(trash_fd, "files", trash.path / "files", made=made)
            opened.callback(os.close, files_fd)
            info_fd = ensure_subdir(trash_fd, "info", trash.path / "info", made=made)
            opened.callback(os.close, info_fd)
            return _move_named(source, is_dir, trash, files_fd, info_fd)
        except BaseException:
            remove_made(made)
            raise


def _move_named(
    source: ParentDir, is_dir: bool, trash: ParentDir, files_fd: int, info_fd: int
) -> tuple[Path, Path, Method]:
    """Move ``source`` into the trash's ``files`` (``files_fd``) under a free name, reserved by its
    ``.trashinfo`` in ``info`` (``info_fd``)."""
    for attempt in range(_ATTEMPTS):
        name = _trash_name(source.name, attempt)
        info_name = f"{name}.trashinfo"
        try:  # the info file reserves the name, as the freedesktop spec does
            info = os.open(
                info_name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | compat.O_NOFOLLOW, 0o600, dir_fd=info_fd
            )
        except FileExistsError:
            continue
        try:
            with os.fdopen(info, "wb") as handle:
                handle.write(_trash_info(source.path))
        except OSError as exc:  # a full disk: no half-written info file is left behind
            os.unlink(info_name, dir_fd=info_fd)
            raise from_os_error(exc, str(trash.path / "info" / info_name)) from exc
        target = ParentDir(fd=files_fd, name=name, path=trash.path / "files" / name)
        try:
            method = move_entry(source, target, is_dir=is_dir, replace=False)
        except AlreadyExists:  # taken meanwhile: try the next name
            os.unlink(info_name, dir_fd=info_fd)
            continue
        except BaseException:
            os.unlink(info_name, dir_fd=info_fd)
            raise
        return target.path, trash.path / "info" / info_name, method
    raise AlreadyExists(f"could not find a free name in the trash {trash.path} after {_ATTEMPTS} tries")


def _system_trash(paths: PathPolicy, info: os.stat_result) -> ResolvedPath | None:
    """The freedesktop home trash, when its absolute, canonical location is inside the roots and
    on the file's device; else None.

    Its location is send2trash's (``$XDG_DATA_HOME/Trash``, default ``~/.local/share/Trash``); an
    empty or relative ``XDG_DATA_HOME`` makes send2trash compute a relative path, which it would
    resolve against the server's working directory, so such a location is never used."""
    try:
        from send2trash import plat_other
    except ImportError:  # pragma: no cover - not a freedesktop platform
        return None
    home_trash = str(plat_other.HOMETRASH)
    if not Path(home_trash).is_absolute():
        return None
    try:
        trash = paths.resolve(os.path.realpath(home_trash), field="the system trash")
        existing = trash.real
        while not existing.exists() and existing != existing.parent:  # it may not exist yet
            existing = existing.parent
        device = existing.stat().st_dev
    except (ToolError, OSError):
        return None
    return trash if device == info.st_dev else None


def _target(args: DeleteFileArgs, paths: PathPolicy) -> ResolvedPath:
    """The path policy's checks this tool's body starts with, which are also its ``ToolSpec.check``
    (the approval step runs them before it asks).

    Raises:
        ToolError: the policy refuses a path (outside the roots, protected, a root itself, ...).
    """
    resolved = paths.resolve(args.path, follow_final=False)
    paths.check_writable(resolved, "delete")
    refuse_roots(paths, resolved, "delete")
    return resolved


def delete_file(args: DeleteFileArgs, *, paths: PathPolicy) -> ToolResult:
    """The deletefile tool body (runs in a worker thread)."""
    resolved = _target(args, paths)
    with parent_dir(paths, resolved) as source:
        info = lstat_entry(source)
        if info is None:
            raise NotFound(f"path does not exist: {source.path}")
        is_dir = stat.S_ISDIR(info.st_mode)
        if is_dir and not args.recursive:
            raise NotAFile(f"path is a directory, not a file: {source.path}; pass recursive=true to trash it")
        if not (is_dir or stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode)):
            raise NotAFile(f"refusing to delete non-regular file: {source.path} is a {kind_of(info.st_mode)}")
        auto = args.trash_dir.strip().lower() in ("", "auto")
        home_trash = _system_trash(paths, info) if auto else None
        method: Method
        if home_trash is not None:  # the same verified-descriptor move as every other trash
            with parent_dir(paths, home_trash, create=True, max_new=_MAX_TRASH_DIRS) as trash_parent:
                trashed, info_path, _ = _move_into(source, is_dir, trash_parent)
            method = "systemTrash"
        else:
            trash = (
                paths.resolve(str(resolved.root / ".trash"))
                if auto
                else paths.resolve(args.trash_dir, field="trashDir")
            )
            if trash.real.is_relative_to(resolved.real):
                raise InvalidArguments(
                    f"the trash {trash.path} is inside {source.path}; choose another trashDir"
                )
            with parent_dir(paths, trash, create=True, max_new=_MAX_TRASH_DIRS) as trash_parent:
                trashed, info_path, method = _move_into(source, is_dir, trash_parent)
    result = DeleteFileResult(
        original_path=str(source.path),
        trashed_path=str(trashed),
        method=method,
        trash_info_path=str(info_path),
    )
    return ToolResult.of(result, text=f"moved {source.path} to the trash: {trashed} ({method})")


def _changed(args: DeleteFileArgs) -> tuple[str, ...]:
    """What a deletefile call changes: the path it trashed, and a ``trashDir`` it named (the
    ``auto`` trash lies outside the roots, or in a hidden ``.trash`` no index reads)."""
    named = args.trash_dir.strip()
    return (args.path,) if named.lower() in ("", "auto") else (args.path, named)


def spec(workspace: Workspace) -> ToolSpec[Any]:
    """The deletefile tool, bound to ``workspace``."""
    paths = workspace.paths
    return ToolSpec(
        name="deletefile",
        title="Move to the trash",
        description="Move a file or directory to a trash, never unlinking. A root cannot be deleted.",
        args_model=DeleteFileArgs,
        result_model=DeleteFileResult,
        handler=offload(partial(delete_file, paths=paths)),
        check=offload_check(partial(_target, paths=paths)),
        changes=_changed,
        annotations=DESTRUCTIVE,
        unsupported=compat.why_unsupported(dir_fd=True),
    )
