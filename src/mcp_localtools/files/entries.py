"""What kind of entry a path is, and how times are written in results."""

from __future__ import annotations

import functools
import math
import stat
from datetime import UTC, datetime
from typing import Literal

__all__ = ["EntryType", "entry_type", "kind_of", "rfc3339"]


EntryType = Literal["file", "directory", "symlink", "other"]


_ENTRY_TYPES: dict[str, EntryType] = {"file": "file", "directory": "directory", "symlink": "symlink"}


def kind_of(mode: int) -> str:
    """A human word for a file type: ``file``, ``directory``, ``symlink``, ``FIFO``, ..."""
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "directory"
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode):
        return "character device"
    if stat.S_ISBLK(mode):
        return "block device"
    return "special file"


def entry_type(mode: int) -> EntryType:
    """``file``, ``directory``, ``symlink`` or ``other`` (FIFO, socket, device)."""
    return _ENTRY_TYPES.get(kind_of(mode), "other")


def rfc3339(timestamp: float) -> str:
    """A POSIX timestamp as RFC 3339 UTC with second precision: ``2026-11-21T17:26:00Z``
    (the fraction dropped toward the past). A file's time is asked again on every call about
    it, so the text of each second is remembered (the last 4,096)."""
    return _second_text(math.floor(timestamp))


@functools.lru_cache(maxsize=4096)
def _second_text(second: int) -> str:
    return datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
