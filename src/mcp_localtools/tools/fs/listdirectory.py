"""listdirectory: a directory's entries, with ``details``, ``maxEntries`` and truncation.

Immediate children only, dotfiles included, sorted by name. ``pattern`` is a glob on the bare
name with the seed's semantics: ``*``, ``?``, ``[...]`` (``[!...]`` or ``[^...]`` negate), ``\\``
escapes, no ``**`` and no braces, case-sensitive; a malformed pattern is an error. Details come
from ``lstat``, so a symlink is reported as a symlink and nothing outside the roots is examined;
an entry deleted between the scan and its ``lstat`` is left out.
"""

from __future__ import annotations

import heapq
import os
from collections.abc import Iterator
from functools import partial
from typing import Any

from pydantic import Field

from mcp_localtools import compat
from mcp_localtools.config import LimitsConfig
from mcp_localtools.errors import InvalidArguments, from_os_error, printable
from mcp_localtools.files.entries import EntryType, entry_type, rfc3339
from mcp_localtools.offload import offload
from mcp_localtools.policy.paths import PathPolicy
from mcp_localtools.results import ToolResult
from mcp_localtools.spec import READ_ONLY, ToolArgs, ToolOutput, ToolSpec
from mcp_localtools.workspace import Workspace

__all__ = ["DirectoryEntry", "ListDirectoryArgs", "ListDirectoryResult", "list_directory", "spec"]

MAX_ENTRIES = 10_000


def check_name_pattern(pattern: str) -> None:
    """Refuse a glob whose ``[`` class is never closed or that ends in a lone ``\\``.

    Raises:
        InvalidArguments: the pattern is malformed.
    """
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            if index + 1 == len(pattern):
                raise InvalidArguments(f"syntax error in pattern {pattern!r}: it ends with a lone backslash")
            index += 2
            continue
        if char == "[":
            close = pattern.find(
                "]", index + 2 if pattern[index + 1 : index + 2] in ("!", "^") else index + 1
            )
            if close == -1 or (close == index + 1):
                raise InvalidArguments(f"syntax error in pattern {pattern!r}: '[' at {index} is never closed")
            index = close
        index += 1


class ListDirectoryArgs(ToolArgs):
    path: str = Field(".", description="Directory to list.")
    pattern: str | None = Field(
        None,
        description="Name glob: * ? [abc] [!abc], \\ escapes; case-sensitive.",
    )
    details: bool = Field(False, description="Also return each entry's type, size and mtime.")
    max_entries: int = Field(1000, ge=1, le=MAX_ENTRIES, description="Most entries to return.")


class DirectoryEntry(ToolOutput):
    name: str = Field(description="Entry name.")
    type: EntryType | None = Field(None, description="With details: file, directory, symlink or other.")
    size_bytes: int | None = Field(
        None, description="With details: size in bytes (of the link, for symlinks)."
    )
    mod_time: str | None = Field(None, description="With details: last modification, RFC 3339 UTC.")


class ListDirectoryResult(ToolOutput):
    path: str = Field(description="Absolute path of the directory.")
    entries: list[DirectoryEntry] = Field(description="Entries sorted by name.")
    total_entries: int = Field(description="Entries that matched, before the cut.")
    truncated: bool = Field(description="True when maxEntries or the result budget cut the list.")


def list_directory(args: ListDirectoryArgs, *, paths: PathPolicy, limits: LimitsConfig) -> ToolResult:
    """The listdirectory tool body (runs in a worker thread)."""
    from wcmatch import fnmatch  # imported here: start-up time is measured, and most calls never need it

    if args.pattern is not None:
        check_name_pattern(args.pattern)
    resolved = paths.resolve(args.path)
    with paths.opened(resolved, os.O_RDONLY | compat.O_DIRECTORY) as fd:
        try:
            matched = 0

            def matching(scan: Iterator[os.DirEntry[str]]) -> Iterator[os.DirEntry[str]]:
                nonlocal matched
                for entry in scan:
                    if args.pattern is None or fnmatch.fnmatch(
                        entry.name, args.pattern, flags=fnmatch.CASE | fnmatch.DOTMATCH
                    ):
                        matched += 1
                        yield entry

            with os.scandir(fd) as scan:  # memory O(maxEntries), whatever the directory's size
                every = matching(scan)
                found = heapq.nsmallest(args.max_entries, every, key=lambda e: e.name)
                for _ in every:  # count the rest
                    pass
            entries: list[DirectoryEntry] = []
            lines: list[str] = []
            vanished = 0
            budget = limits.max_result_chars - 200
            for entry in found:
                if args.details:
                    try:
                        info = entry.stat(follow_symlinks=False)
                    except FileNotFoundError:  # deleted since the scan: it is no longer an entry
                        vanished += 1
                        continue
                    kind = entry_type(info.st_mode)
                    item = DirectoryEntry(
                        name=entry.name, type=kind, size_bytes=info.st_size, mod_time=rfc3339(info.st_mtime)
                    )
                    line = f"{kind:<9} {info.st_size:>12} {item.mod_time} {printable(entry.name)}"
                else:
                    item = DirectoryEntry(name=entry.name)
                    line = printable(entry.name) + ("/" if entry.is_dir(follow_symlinks=False) else "")
                budget -= len(line) + 1
                if budget < 0:
                    break
                entries.append(item)
                lines.append(line)
        except OSError as exc:
            raise from_os_error(exc, str(resolved.path)) from exc
    total = matched - vanished
    truncated = len(entries) < total
    result = ListDirectoryResult(
        path=str(resolved.path), entries=entries, total_entries=total, truncated=truncated
    )
    header = f"{printable(str(resolved.path))}: {total} entries"
    header += f", showing {len(entries)}" if truncated else ""
    if truncated:
        lines.append(f"[truncated: {total - len(entries)} more; narrow with pattern or raise maxEntries]")
    return ToolResult.of(result, text="\n".join([header, *lines]))


def spec(workspace: Workspace) -> ToolSpec[Any]:
    """The listdirectory tool, bound to ``workspace``."""
    paths = workspace.paths
    limits = workspace.limits
    return ToolSpec(
        name="listdirectory",
        title="List a directory",
        description=(
            "List one directory's entries, sorted by name, dotfiles included. "
            "Recursive: directorytree or globfiles."
        ),
        args_model=ListDirectoryArgs,
        result_model=ListDirectoryResult,
        handler=offload(partial(list_directory, paths=paths, limits=limits)),
        annotations=READ_ONLY,
        unsupported=compat.why_unsupported(dir_fd=True),
    )
