"""The code index's settings (``[index]``), as the index and the code tools read them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["IndexSettings"]


@dataclass(frozen=True, slots=True)
class IndexSettings:
    """How the code index works (``[index]``).

    Attributes:
        enabled: build and use the index (off: symbols reads single files only; the other code
            tools are refused).
        cache_dir: where each directory's database goes (one subdirectory per directory), or
            None to keep indexes in memory only.
        max_file_bytes: larger files are not indexed.
        languages: the grammars used (our names); empty: all of them.
        max_files: at most this many files of a directory are indexed (the first by path).
        hidden: canonical paths whose files are never read (``[exec.sandbox] hide_paths``).
        idle_seconds: after this long without an answer or a build, what the indexes keep in
            memory is released (``idle.IdleRelease``).
    """

    enabled: bool = True
    cache_dir: Path | None = None
    max_file_bytes: int = 1024 * 1024
    languages: frozenset[str] = frozenset()
    max_files: int = 100_000
    hidden: tuple[Path, ...] = ()
    idle_seconds: float = 600.0
