"""Git protection inside the sandbox: the git files of nested repositories, held read-only.

``policy/protected.py`` names what is protected in every root; a root may also hold repositories
below it (a directory of projects, submodules, worktrees). ``nested_git_paths`` finds their
``GIT_PROTECTED`` entries and ``.git`` pointer files, the backends hold them read-only and pin
every directory between a root and them (``pinned``), and ``missing_git_files`` / ``revert`` take
away the git config files a command created where none were.
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from mcp_localtools.policy.protected import GIT_PROTECTED
from mcp_localtools.sandbox.policy import real_dir

__all__ = [
    "CREATED_WHEN_MISSING",
    "GIT_SENTINELS",
    "missing_git_files",
    "nested_git_paths",
    "pinned",
    "revert",
]

logger = logging.getLogger(__name__)

CREATED_WHEN_MISSING = frozenset({"hooks"})
"""Protected directories made (empty) when missing, so that they can be held read-only: a
command could otherwise create ``.git/hooks`` and put a hook in it (``git init`` makes it too)."""

GIT_SENTINELS = ("config", "config.worktree", "commondir")
"""Files of a ``.git`` directory that a command may not create where they are missing (git would
read its config from them, or from where ``commondir`` points): ``missing_git_files`` lists them
before a run and the exec tools remove any that appeared."""

_NESTED_DEPTH = 3
_NESTED_VISITS = 2000


def nested_git_paths(roots: Sequence[Path]) -> list[Path]:
    """The ``GIT_PROTECTED`` entries of every git repository in ``roots`` up to three levels
    down (a root that is a directory of projects), and ``.git`` files (a worktree's or a
    submodule's pointer to its git directory). Bounded: at most 2,000 directories a root, hidden
    ones and ``node_modules`` not entered. Blocking: call it from a worker thread."""
    found: list[Path] = []
    for root in roots:
        visits = 0
        level = [root]
        for depth in range(_NESTED_DEPTH + 1):
            below: list[Path] = []
            for directory in level:
                visits += 1
                if visits > _NESTED_VISITS:
                    break
                try:
                    with os.scandir(directory) as entries:
                        items = list(entries)
                except OSError:
                    continue
                for entry in items:
                    path = Path(entry.path)
                    if entry.name == ".git":
                        if entry.is_dir(follow_symlinks=False):
                            found += [path / name for name in GIT_PROTECTED]
                        elif entry.is_file(follow_symlinks=False):
                            found.append(path)
                    elif (
                        depth < _NESTED_DEPTH
                        and entry.is_dir(follow_symlinks=False)
                        and not entry.name.startswith(".")
                        and entry.name != "node_modules"
                    ):
                        below.append(path)
            level = below
    return found


def missing_git_files(git: Sequence[Path]) -> list[Path]:
    """The ``GIT_SENTINELS`` missing from the ``.git`` directories of ``git`` (what
    ``nested_git_paths`` found). Blocking: call it from a worker thread."""
    git_dirs = dict.fromkeys(path.parent for path in git if path.parent.name == ".git")
    return [git / name for git in git_dirs for name in GIT_SENTINELS if not os.path.lexists(git / name)]


def pinned(protected: Sequence[Path], writable: Sequence[Path]) -> list[Path]:
    """Every directory between a writable root and a protected path (the ``.git`` holding
    ``.git/config``, the folder holding the server's config or audit log, the parents of a nested
    repository), each to be bound onto itself: a mount point cannot be renamed or removed
    (EBUSY), so a command cannot move the directory aside and put an unprotected one in its
    place. Parents first."""
    found: list[Path] = []
    for path in protected:
        chain = []
        for directory in path.parents:
            if not any(directory.is_relative_to(root) and directory != root for root in writable):
                break
            chain.append(directory)
        found += [
            directory for directory in reversed(chain) if real_dir(directory) and directory not in found
        ]
    return found


def revert(missing: Sequence[Path]) -> tuple[str, ...]:
    """Remove the git files in ``missing`` (``missing_git_files`` before a run) that a command
    created; returns them. Blocking: call it from a worker thread."""
    removed: list[str] = []
    for path in missing:
        if path.is_symlink() or path.exists():
            try:
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path)
                else:
                    path.unlink()
            except OSError:
                logger.warning("could not remove %s, which a command created", path)
                continue
            removed.append(str(path))
    return tuple(removed)
