"""The directory a search tool walks: its root argument resolved and opened, display paths, globs."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from mcp_localtools import compat
from mcp_localtools.errors import InvalidArguments
from mcp_localtools.policy.paths import PathPolicy

__all__ = ["MAX_RESULTS", "SearchRoot", "check_globs", "open_root", "opened_root"]


MAX_RESULTS = 10_000


@dataclass(frozen=True, slots=True)
class SearchRoot:
    """A directory a tool walks.

    Attributes:
        real: its real path (what the engine walks).
        prefix: what display paths start with: ``""`` for the base directory, ``"sub/"`` for a
            relative root, the absolute path plus ``/`` for an absolute one (also when the root is a symlink).
    """

    real: Path
    prefix: str

    def display(self, rel: str) -> str:
        """The display form of a path relative to the root."""
        text = self.prefix + rel
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


@contextmanager
def opened_root(paths: PathPolicy, given: str, *, field: str) -> Iterator[tuple[SearchRoot, int]]:
    """Resolve a root argument and open it as a directory, for a caller that reads it.

    Yields:
        The root and a descriptor of the opened directory, closed when the block ends.

    Raises:
        NotFound, NotADirectory, OutsideAllowedRoots, SymlinkRefused, FileSystemError.
    """
    resolved = paths.resolve(given, field=field)
    with paths.opened(resolved, os.O_RDONLY | compat.O_DIRECTORY) as fd:
        text = given.strip()
        base = str(resolved.path) if Path(text).is_absolute() else os.path.normpath(text)
        prefix = "" if base == "." else base.rstrip("/") + "/"
        yield SearchRoot(real=resolved.real, prefix=prefix), fd


def open_root(paths: PathPolicy, given: str, *, field: str) -> SearchRoot:
    """Resolve a root argument and check it is a readable directory. Blocking: call it
    from a worker thread.

    Raises:
        NotFound, NotADirectory, OutsideAllowedRoots, SymlinkRefused, FileSystemError.
    """
    with opened_root(paths, given, field=field) as (root, _):
        return root


MAX_GLOBS = 256
"""At most this many globs in one ``include`` or ``exclude``."""
MAX_GLOB_CHARS = 16 * 1024
"""At most this many characters in one field's globs in all (they reach ripgrep as arguments,
which a command line limits: 32 K characters in all on Windows, 2 MiB on Linux)."""


def check_globs(globs: list[str], field: str) -> tuple[str, ...]:
    """Refuse empty globs, ones with a newline or NUL, and more than ``MAX_GLOBS`` globs or
    ``MAX_GLOB_CHARS`` characters in all.

    Raises:
        InvalidArguments: a glob is unusable, or there are too many.
    """
    if len(globs) > MAX_GLOBS or sum(map(len, globs)) > MAX_GLOB_CHARS:
        raise InvalidArguments(
            f"{field}: at most {MAX_GLOBS} globs of {MAX_GLOB_CHARS} characters in all "
            f"(got {len(globs)}); use fewer, wider globs (`*.py`, `src/**`) or a narrower root"
        )
    for glob in globs:
        if not glob.strip() or any(char in glob for char in "\n\r\x00"):
            raise InvalidArguments(f"{field}: {glob!r} is not a usable glob")
    return tuple(globs)
