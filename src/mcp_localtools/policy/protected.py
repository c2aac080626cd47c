"""Protected paths: what inside the roots neither commands nor the file tools may change.

A protected path is one a later, innocent command would take instructions from: git's config,
hooks and pointers to other git directories (``core.fsmonitor``, ``core.pager``, aliases, hooks
all run code), the server's own config and token files, and ``[paths] protected_paths``, less
``[paths] unprotected_paths``. ``PathPolicy.check_writable`` refuses them to the file tools; the
sandbox (``sandbox/``) holds them read-only for commands.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from mcp_localtools.config import PathsConfig

__all__ = ["DEFAULT_PROTECTED", "GIT_PROTECTED", "below_any", "protected_paths", "unprotected_paths"]

DEFAULT_PROTECTED = (".git/config", ".git/hooks")
"""Paths inside every root that commands and the file tools may not change (with the rest of
``GIT_PROTECTED`` in every ``.git``, which the sandbox and ``PathPolicy`` add): what makes a
later, innocent ``git`` command run code (``core.fsmonitor``, ``core.pager``, aliases, hooks)."""

GIT_PROTECTED = ("config", "config.worktree", "commondir", "hooks", "worktrees", "modules")
"""What a command may not change in any ``.git`` directory: where git reads config, hooks, or the
directory it takes them from (``commondir``; worktrees' and submodules' own config and hooks)."""


def _resolved(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _entry(entry: str, root: Path) -> Path:
    """A ``protected_paths``/``unprotected_paths`` entry, canonical: ``~`` expanded, a relative
    entry taken inside ``root``."""
    return _resolved(Path(entry).expanduser() if entry.startswith("~") else root / entry)


def protected_paths(
    config: PathsConfig, roots: Sequence[Path], *, own_files: Iterable[Path] = ()
) -> tuple[Path, ...]:
    """The protected paths: ``.git/config``, ``.git/hooks`` and ``protected_paths`` of every root
    (relative entries) or as given (absolute ones), and the server's own files (``own_files``:
    its config and token files) that lie inside a root; less ``unprotected_paths``. Canonical;
    they need not exist.
    """
    found = [_entry(entry, root) for root in roots for entry in (*DEFAULT_PROTECTED, *config.protected_paths)]
    found += [_resolved(Path(path)) for path in own_files]
    lifted = set(unprotected_paths(config, roots))
    root_set = set(roots)
    inside = [path for path in dict.fromkeys(found) if below_any(path, root_set)]
    return tuple(path for path in inside if path not in lifted)


def below_any(path: Path, roots: set[Path]) -> bool:
    """True when ``path`` is one of ``roots`` or lies below one (its depth in set lookups, not
    one comparison per root: a client may share hundreds of roots)."""
    return path in roots or any(parent in roots for parent in path.parents)


def unprotected_paths(config: PathsConfig, roots: Sequence[Path]) -> tuple[Path, ...]:
    """``unprotected_paths`` made canonical: relative entries against every root."""
    return tuple(dict.fromkeys(_entry(entry, root) for root in roots for entry in config.unprotected_paths))
