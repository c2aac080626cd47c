"""What movepath and copypath check before they touch anything: the pair of paths, and whether an
existing destination may be replaced."""

from __future__ import annotations

import os
import stat

from mcp_localtools.errors import (
    AlreadyExists,
    InvalidArguments,
    NotAFile,
)
from mcp_localtools.files.entries import entry_type
from mcp_localtools.files.parents import ParentDir, refuse_roots
from mcp_localtools.policy.paths import PathPolicy, ResolvedPath

__all__ = ["check_pair", "replaceable"]


def check_pair(paths: PathPolicy, source: ResolvedPath, destination: ResolvedPath, verb: str) -> None:
    """Refuse a move or copy (``verb``) onto the source itself, into the source, or over a root.

    Raises:
        InvalidArguments: the destination is the source or lies inside it.
        PolicyViolation: the destination is (or contains) an allowed root.
    """
    if destination.real == source.real:
        raise InvalidArguments(f"source and destination are the same path: {source.path}")
    if destination.real.is_relative_to(source.real):
        raise InvalidArguments(f"cannot {verb} {source.path} into itself ({destination.path})")
    refuse_roots(paths, destination, "replace")


def replaceable(
    src_info: os.stat_result, dst: ParentDir, dst_info: os.stat_result | None, overwrite: bool
) -> bool:
    """Whether the destination exists and may be replaced (``overwrite``, same kind of entry).

    Raises:
        AlreadyExists: it exists and ``overwrite`` is false.
        NotAFile: a file would replace a directory or the other way round.
    """
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
