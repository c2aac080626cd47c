"""The git repositories in the roots, kept current for a sandbox's lifetime, and the ones commands
made, made safe before the user's own git reads them.

``RepositoryTracker`` finds every ``.git`` directory, ``.git`` file (a gitlink: a worktree's or a
submodule's pointer) and ``.gitmodules`` below the roots once, then follows changes with inotify
(``inotify_simple``: one watch per directory; hidden directories and ``node_modules`` are not
entered), so a command costs a drain of the event queue, not a walk of the root. Where inotify
is missing (macOS), out of watches, or its queue overflowed, it walks again (bounded: three
levels, 2,000 directories a root, as ``git.nested_git_paths``) on every check.

A ``.git`` directory, gitlink or ``.gitmodules`` that appears or moves while the tracker runs is
untrusted (``sanitize``): the keys that make git run a program (``UNTRUSTED_KEYS``) are removed
from its config, its hooks made non-executable, and a gitlink pointing outside the roots is set
aside; an untrusted repository's config is cleaned again whenever it is written. The user's own
``git status`` in the root then runs nothing a command planted.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import threading
import weakref
from collections.abc import Iterator, Sequence
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from mcp_localtools.policy.protected import GIT_PROTECTED
from mcp_localtools.sandbox.git import nested_git_paths

__all__ = ["UNTRUSTED_KEYS", "RepositoryTracker", "sanitize"]

logger = logging.getLogger(__name__)

UNTRUSTED_KEYS = (
    "core.fsmonitor",
    "core.hookspath",
    "core.pager",
    "core.editor",
    "core.sshcommand",
    "core.askpass",
    "core.gitproxy",
    "credential.helper",
    "diff.external",
    "gpg.program",
    "gpg.*.program",
    "sequence.editor",
    "uploadpack.packobjectshook",
    "alias.*",
    "filter.*",
    "diff.*.textconv",
    "diff.*.command",
    "merge.*.driver",
    "pager.*",
    "submodule.*.update",
    "include.*",
    "includeif.*",
)
"""Config keys (globs, lower case) removed from an untrusted repository's config: each makes a
later, innocent git command run a program (or read more config from elsewhere)."""

_NAMES = frozenset({".git", ".gitmodules"})
_SKIPPED = frozenset({"node_modules"})


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino


def _entered(name: str) -> bool:
    """Whether a directory of this name is walked and watched (not hidden, not ``node_modules``)."""
    return not name.startswith(".") and name not in _SKIPPED


def _walk(root: Path) -> Iterator[tuple[Path, list[os.DirEntry[str]]]]:
    """Every directory below ``root`` that is entered (not hidden, not ``node_modules``, no
    symlinks), with its entries."""
    stack = [root]
    while stack:
        directory = stack.pop()
        try:
            with os.scandir(directory) as listing:
                items = list(listing)
        except OSError:
            continue
        yield directory, items
        stack += [
            Path(item.path)
            for item in items
            if item.is_dir(follow_symlinks=False)
            and not item.name.startswith(".")
            and item.name not in _SKIPPED
        ]


class RepositoryTracker:
    """The ``.git`` entries and ``.gitmodules`` of ``roots`` (canonical), kept current.

    Thread-safe. ``start`` once (blocking), then ``protected`` before a command and ``check``
    after it (both blocking, cheap under inotify); ``close`` at the end.

    Args:
        roots: the writable roots.
        outside_ok: directories besides the roots a gitlink may point into (the sessions' temp
            base): the git directory there is cleaned rather than the gitlink set aside.
        search_path: the ``PATH`` where the host's ``git`` is found (the server's environment's;
            this module does not read the environment itself).
    """

    def __init__(
        self, roots: Sequence[Path], *, outside_ok: Sequence[Path] = (), search_path: str = os.defpath
    ) -> None:
        self.roots = tuple(roots)
        self.outside_ok = tuple(outside_ok)
        self.search_path = search_path
        self.mode = "scan"
        self._lock = threading.Lock()
        self._known: dict[Path, tuple[int, int] | None] = {}
        self._pending: list[Path] = []  # appeared or moved since the last check: untrusted
        self._untrusted: set[Path] = set()  # .git directories to clean again when written
        self._inotify: Any = None
        self._watches: dict[int, Path] = {}
        self._started = False

    # -- finding ------------------------------------------------------------------------------
    def start(self) -> None:
        """The first look at the roots: with inotify, a full walk that watches every directory
        entered; without, the bounded walk. Later calls do nothing."""
        with self._lock:
            if self._started:
                return
            self._started = True
            self._inotify = self._open_inotify()
            for root in self.roots:
                self._known.update(dict.fromkeys(self._find(root, watch=True)))
            self._known = {path: _identity(path) for path in self._known}

    def _open_inotify(self) -> Any:
        try:
            import inotify_simple
        except ImportError:
            return None
        try:
            watcher = inotify_simple.INotify()
        except OSError as exc:
            logger.info("no inotify (%s): repositories are looked for again after each command", exc)
            return None
        self.mode = "inotify"
        weakref.finalize(self, watcher.close)  # the descriptor goes with the tracker that owns it
        return watcher

    def _mask(self) -> int:
        from inotify_simple import flags

        return int(
            flags.CREATE
            | flags.MOVED_TO
            | flags.MOVED_FROM
            | flags.DELETE
            | flags.CLOSE_WRITE
            | flags.DELETE_SELF
        )

    def _watch(self, directory: Path) -> bool:
        try:
            wd = self._inotify.add_watch(str(directory), self._mask())
        except OSError as exc:  # out of watches (ENOSPC), or gone
            if exc.errno == 28:
                self._fall_back(f"out of inotify watches at {directory}")
            return False
        self._watches[wd] = directory
        return True

    def _fall_back(self, reason: str) -> None:
        logger.warning("repository tracking falls back to a walk after each command: %s", reason)
        if self._inotify is not None:
            self._inotify.close()
        self._inotify, self._watches, self.mode = None, {}, "scan"

    def _find(self, top: Path, *, watch: bool) -> list[Path]:
        """The ``.git`` entries and ``.gitmodules`` below ``top`` (watching what is entered)."""
        if self._inotify is None:
            found = {path.parent if path.parent.name == ".git" else path for path in nested_git_paths([top])}
            if (top / ".gitmodules").is_file():
                found.add(top / ".gitmodules")
            return sorted(found)
        found_paths: list[Path] = []
        for directory, items in _walk(top):
            if watch and self._inotify is not None and not self._watch(directory):
                continue
            found_paths += [Path(item.path) for item in items if item.name in _NAMES]
        return found_paths

    def _drain(self) -> None:
        """Read the pending events; what appeared or moved goes to ``_pending``."""
        from inotify_simple import flags

        for event in self._inotify.read(timeout=0):
            if event.mask & flags.Q_OVERFLOW:
                self._fall_back("the inotify queue overflowed")
                return
            directory = self._watches.get(event.wd)
            if directory is None or not event.name:
                continue
            path = directory / event.name
            written = event.mask & (flags.CREATE | flags.MOVED_TO | flags.CLOSE_WRITE)
            if written and self._untrusted_write(directory, event.name):
                continue
            if event.mask & (flags.CREATE | flags.MOVED_TO):
                self._appeared(path)
            elif event.mask & (flags.DELETE | flags.MOVED_FROM):
                self._gone(path)
            if self._inotify is None:
                return

    def _untrusted_write(self, directory: Path, name: str) -> bool:
        """A config or hook written in an untrusted repository: clean it again at the check."""
        if directory in self._untrusted and name.startswith("config"):
            self._pending.append(directory)
            return True
        if directory.name == "hooks" and directory.parent in self._untrusted:
            self._pending.append(directory.parent)
            return True
        return False

    def _appeared(self, path: Path) -> None:
        if path.name in _NAMES:
            self._pending.append(path)
            if path.name == ".git" and path.is_dir() and not path.is_symlink():
                self._watch(path)  # its config: cleaned again when written
        elif (
            path.is_dir()
            and not path.is_symlink()
            and not path.name.startswith(".")
            and path.name not in _SKIPPED
        ):
            self._pending += self._find(path, watch=True)

    def _gone(self, path: Path) -> None:
        for known in [known for known in self._known if known == path or known.is_relative_to(path)]:
            del self._known[known]
        for wd, directory in list(self._watches.items()):
            if directory == path or directory.is_relative_to(path):
                del self._watches[wd]  # the kernel drops a deleted directory's watch; a moved one's stays

    def _refresh(self) -> None:
        """Bring ``_known`` up to date; new or moved entries go to ``_pending``."""
        if self._inotify is not None:
            self._drain()
        if self._inotify is None:  # no inotify, or it just fell back: compare a fresh walk
            now = {path: _identity(path) for root in self.roots for path in self._find(root, watch=False)}
            self._pending += [path for path, ident in now.items() if self._known.get(path, (-1, -1)) != ident]
            self._known = now
            return
        for path in dict.fromkeys(self._pending):
            self._known[path] = _identity(path)

    # -- the interface ------------------------------------------------------------------------------
    def protected(self) -> list[Path]:
        """What the sandbox holds read-only now: the ``GIT_PROTECTED`` entries of every ``.git``
        directory known and every gitlink (as ``git.nested_git_paths`` gives them)."""
        with self._lock:
            self._refresh()
            known = sorted(path for path in self._known if path.name == ".git")
        found: list[Path] = []
        for path in known:
            if path.is_dir() and not path.is_symlink():
                found += [path / name for name in GIT_PROTECTED]
            elif path.is_file():
                found.append(path)
        return found

    def check(self) -> tuple[str, ...]:
        """Make safe every ``.git`` entry and ``.gitmodules`` that appeared or moved (or whose
        untrusted config was written) since the last check; one line per thing done."""
        with self._lock:
            self._refresh()
            pending, self._pending = list(dict.fromkeys(self._pending)), []
        done: list[str] = []
        for path in pending:
            if not os.path.lexists(path):
                continue
            if path.name == ".git" and path.is_dir() and not path.is_symlink():
                with self._lock:
                    self._untrusted.add(path)
                    for watched in (path, path / "hooks"):
                        if (
                            self._inotify is not None
                            and watched.is_dir()
                            and watched not in self._watches.values()
                        ):
                            self._watch(watched)
            done += sanitize(path, allowed=(*self.roots, *self.outside_ok), search_path=self.search_path)
        return tuple(done)

    def close(self) -> None:
        """Stop watching."""
        with self._lock:
            if self._inotify is not None:
                self._inotify.close()
            self._inotify, self._watches = None, {}


def _git_config(config: Path, *args: str, search_path: str) -> subprocess.CompletedProcess[str] | None:
    """``git config --file config ARGS``, the ``git`` found on ``search_path``, with no system or
    global config; None when there is no git or it could not run."""
    git = shutil.which("git", path=search_path)
    if git is None:
        return None
    env = {"PATH": search_path, "GIT_CONFIG_NOSYSTEM": "1", "HOME": "/nonexistent"}
    try:
        return subprocess.run(
            [git, "config", "--file", str(config), *args],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
            env=env,
            cwd="/",
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None


def _strip(config: Path, search_path: str) -> list[str]:
    """Remove ``UNTRUSTED_KEYS`` from the config file ``config`` (with the ``git`` on
    ``search_path``); the keys removed."""
    if not config.is_file() or config.is_symlink():
        return []
    listed = _git_config(config, "--null", "--name-only", "--list", search_path=search_path)
    if listed is None or listed.returncode != 0:
        return []
    names = [name for name in dict.fromkeys(listed.stdout.split("\0")) if name]
    removed = [name for name in names if any(fnmatchcase(name.lower(), key) for key in UNTRUSTED_KEYS)]
    for name in removed:
        _git_config(config, "--unset-all", name, search_path=search_path)
    return removed


def _disable_hooks(hooks: Path) -> list[str]:
    disabled: list[str] = []
    try:
        entries = list(hooks.iterdir())
    except OSError:
        return disabled
    for hook in entries:
        if hook.name.endswith(".sample") or hook.is_symlink() or not hook.is_file():
            continue
        mode = hook.stat().st_mode
        if mode & 0o111:
            hook.chmod(mode & ~0o111)
            disabled.append(hook.name)
    return disabled


def _gitlink_target(link: Path) -> Path | None:
    try:
        text = link.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    target = Path(text[len("gitdir:") :].strip())
    return Path(os.path.realpath(link.parent / target))


def sanitize(path: Path, *, allowed: Sequence[Path], search_path: str = os.defpath) -> list[str]:
    """Make the untrusted ``path`` (a ``.git`` directory, gitlink or ``.gitmodules``) safe for the
    user's git; what was done, one line each. A gitlink into a git directory inside ``allowed``
    has that directory cleaned; one pointing elsewhere is renamed ``.git.untrusted``. Config
    files are edited with the ``git`` found on ``search_path``."""
    if path.name == ".gitmodules":
        removed = _strip(path, search_path)
        return [f"removed {', '.join(removed)} from {path}"] if removed else []
    if path.is_file():
        target = _gitlink_target(path)
        if target is not None and any(target.is_relative_to(root) for root in allowed):
            return sanitize(target, allowed=allowed, search_path=search_path) if target.is_dir() else []
        aside = path.with_name(".git.untrusted")
        path.replace(aside)
        return [f"set aside {path} as {aside.name}: a git pointer to {target or 'an unknown place'}"]
    done: list[str] = []
    for name in ("config", "config.worktree"):
        removed = _strip(path / name, search_path)
        if removed:
            done.append(f"removed {', '.join(removed)} from {path / name}")
    hooks = _disable_hooks(path / "hooks")
    if hooks:
        done.append(f"made the hooks {', '.join(hooks)} of {path} non-executable")
    commondir = path / "commondir"
    if commondir.is_file():
        common = Path(
            os.path.realpath(path / commondir.read_text(encoding="utf-8", errors="replace").strip())
        )
        if common != path and any(common.is_relative_to(root) for root in allowed):
            done += sanitize(common, allowed=(), search_path=search_path)
    return done
