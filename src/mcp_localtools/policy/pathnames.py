"""Paths as text, before any policy: lexical normalisation (``.``, ``..``, repeated separators),
the parent and name of an absolute path, and the real path of an existing one as the kernel
resolves it in one walk (Linux's ``O_PATH``). ``paths.PathPolicy`` decides with them."""

from __future__ import annotations

import os
from pathlib import Path

from mcp_localtools import compat

__all__ = ["kernel_realpath", "normal_text", "normalise", "split_path"]


def normalise(path: Path) -> Path:
    """``path`` normalised lexically (``normal_text``)."""
    return Path(normal_text(os.fspath(path)))


def normal_text(path: str) -> str:
    """``path`` with ``.``, ``..`` and repeated separators collapsed lexically."""
    text = os.path.normpath(path)
    if text.startswith("//"):  # POSIX keeps a leading "//"; we do not treat it specially
        text = "/" + text.lstrip("/")
    return text


def split_path(path: str) -> tuple[str, str]:
    """``(parent, name)`` of a normalised absolute path (``/`` is its own parent)."""
    if compat.IS_WINDOWS:  # pragma: no cover - Windows
        return str(Path(path).parent), Path(path).name
    parent, _, name = path.rpartition("/")
    return parent or "/", name


def kernel_realpath(lexical: str, follow_final: bool) -> str | None:
    """The real path of an existing path, resolved by the kernel in one walk: opened with
    ``O_PATH`` (``O_NOFOLLOW`` for the final component unless ``follow_final``) and read back
    from ``/proc/self/fd`` (Linux). None when the path does not exist (or is unreachable), or
    where there is no ``O_PATH``: the caller resolves it with ``realpath``."""
    if not compat.O_PATH:  # pragma: no cover - not Linux
        return None
    flags = compat.O_PATH | compat.O_CLOEXEC | (0 if follow_final else compat.O_NOFOLLOW)
    try:
        fd = os.open(lexical, flags)
    except OSError:
        return None
    try:
        return compat.fd_path(fd)
    finally:
        os.close(fd)
