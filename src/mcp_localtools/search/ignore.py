"""Which entries a walk visits: ripgrep's override globs, ignore files and hidden rule, in Python.

This mirrors the decision of ripgrep's ``ignore`` crate (``Ignore::matched_dir_entry``) for the
flags the ripgrep engine passes (``--no-require-git --no-ignore-parent --no-ignore-global
--no-ignore-exclude``), so the Python walk and ``rg`` visit the same entries:

1. Overrides (``--glob``): gitignore-syntax globs relative to the walk root whose sense is
   inverted (a plain glob keeps, a ``!glob`` drops); the last match decides. When at least one
   plain glob exists, a *file* that matches none is dropped.
2. Ignore files, by kind in precedence order ``.rgignore`` > ``.ignore`` > ``.gitignore``: within
   a kind the deepest directory whose file has a matching line decides (ignore, or whitelist for
   a ``!`` line); ``.gitignore`` files above the nearest directory holding ``.git`` do not count.
3. A name starting with a dot is dropped unless hidden entries are wanted or step 2 whitelisted it.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass

from mcp_localtools import compat
from mcp_localtools.errors import InvalidArguments
from mcp_localtools.search.engine import WalkFilters

__all__ = ["IGNORE_FILES", "GlobRules", "Overrides", "RuleChain", "decide", "read_rules"]

IGNORE_FILES = (".rgignore", ".ignore", ".gitignore")
"""The ignore files of a directory, highest precedence first."""

_MAX_IGNORE_FILE_BYTES = 1024 * 1024


class GlobRules:
    """One list of gitignore-syntax lines; the last matching line decides."""

    __slots__ = ("_below", "_spec")

    def __init__(self, lines: list[str]) -> None:
        from pathspec import (
            GitIgnoreSpec,
        )  # imported here: start-up time is measured, and most calls never need it

        try:
            self._spec = GitIgnoreSpec.from_lines(lines)
        except ValueError as exc:  # pathspec's GitWildMatchPatternError is a ValueError
            raise InvalidArguments(f"invalid glob: {exc}") from exc
        # ``dir/**`` matches what is below dir, not dir itself (as in git and rg); pathspec, told
        # a directory by its trailing slash, would match dir too.
        self._below = {
            index
            for index, pattern in enumerate(self._spec.patterns)
            if pattern.include is not None and str(getattr(pattern, "pattern", "")).rstrip().endswith("/**")
        }

    def match(self, rel: str, is_dir: bool) -> bool | None:
        """True: a plain line matched last; False: a ``!`` line did; None: nothing matched."""
        if not is_dir:
            return self._spec.check_file(rel).include
        candidate = rel + "/"
        result = self._spec.check_file(candidate)
        if result.index not in self._below:
            return result.include
        for index in range(len(self._spec.patterns) - 1, -1, -1):
            pattern = self._spec.patterns[index]
            if index not in self._below and pattern.include is not None and pattern.match_file(candidate):
                return pattern.include
        return None


class Overrides:
    """The ``--glob`` overrides of one walk."""

    __slots__ = ("_has_whitelist", "_rules")

    def __init__(self, globs: tuple[str, ...]) -> None:
        self._rules = GlobRules(list(globs))
        self._has_whitelist = any(glob and not glob.startswith(("!", "#")) for glob in globs)

    def decide(self, rel: str, is_dir: bool) -> bool | None:
        """True: keep; False: drop; None: the overrides say nothing."""
        matched = self._rules.match(rel, is_dir)
        if matched is None and self._has_whitelist and not is_dir:
            return False
        return matched


@dataclass(frozen=True, slots=True)
class RuleChain:
    """The ignore files of one directory, linked to those of its parent.

    Attributes:
        rel: the directory relative to the walk root (``""`` for the root).
        rules: one entry per ``IGNORE_FILES`` kind, None where the directory has no such file.
        has_git: the directory holds a ``.git`` entry.
        parent: the chain of the parent directory; None at the walk root.
    """

    rel: str
    rules: tuple[GlobRules | None, ...]
    has_git: bool
    parent: RuleChain | None

    def matched(self, rel: str, is_dir: bool) -> bool | None:
        """True: ignored; False: whitelisted; None: no ignore file has an opinion."""
        for kind in range(len(IGNORE_FILES)):
            is_git = IGNORE_FILES[kind] == ".gitignore"
            saw_git = False
            level: RuleChain | None = self
            while level is not None:
                rules = level.rules[kind]
                if rules is not None and not (is_git and saw_git):
                    local = rel[len(level.rel) + 1 :] if level.rel else rel
                    verdict = rules.match(local, is_dir)
                    if verdict is not None:
                        return verdict
                saw_git = saw_git or level.has_git
                level = level.parent
        return None


def _read_lines(dir_fd: int, name: str) -> list[str] | None:
    try:
        fd = os.open(
            name, os.O_RDONLY | compat.O_NOFOLLOW | compat.O_NONBLOCK | compat.O_CLOEXEC, dir_fd=dir_fd
        )
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = os.read(fd, _MAX_IGNORE_FILE_BYTES)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data.decode("utf-8", "replace").splitlines()


def read_rules(dir_fd: int, rel: str, names: set[str], parent: RuleChain | None) -> RuleChain | None:
    """The chain for a directory whose entry names are ``names`` (``parent`` itself when the
    directory adds nothing to consult; None when nothing up to the walk root does)."""
    rules: list[GlobRules | None] = []
    for name in IGNORE_FILES:
        lines = _read_lines(dir_fd, name) if name in names else None
        try:
            rules.append(GlobRules(lines) if lines else None)
        except InvalidArguments:  # a broken ignore file is passed over, as rg does
            rules.append(None)
    has_git = ".git" in names
    if not has_git and not any(rules):
        return parent
    return RuleChain(rel=rel, rules=tuple(rules), has_git=has_git, parent=parent)


def decide(
    rel: str,
    name: str,
    is_dir: bool,
    filters: WalkFilters,
    overrides: Overrides | None,
    chain: RuleChain | None,
) -> bool:
    """Whether the walk visits the entry ``rel`` (see the module docstring)."""
    if overrides is not None:
        verdict = overrides.decide(rel, is_dir)
        if verdict is not None:
            return verdict
    whitelisted = False
    if chain is not None:
        matched = chain.matched(rel, is_dir)
        if matched is True:
            return False
        whitelisted = matched is False
    return whitelisted or filters.include_hidden or not name.startswith(".")
