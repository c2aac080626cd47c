"""Which shell runs a command, and the argv that runs it.

Explicit names are looked up on the command environment's ``PATH``. ``auto`` takes the
configured ``default_shell``, else the shell found by the bootstrap, else (Unix) ``$SHELL`` when
its basename is a known shell, the account's login shell, then bash, zsh, sh, dash, ksh, fish;
(Windows) pwsh, powershell, cmd.

Looking a program up reads the file system and the account database: call these functions from
a worker thread, not the event loop.

Invocation forms: sh-family ``<shell> -c <cmd>`` (not a login shell, not interactive);
PowerShell ``-NoLogo -NonInteractive -NoProfile -Command <cmd>``; cmd ``/d /s /c <cmd>``.
"""

from __future__ import annotations

import os
import shutil
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import get_args

from mcp_localtools import compat
from mcp_localtools.config import ShellName
from mcp_localtools.errors import NotFound
from mcp_localtools.policy.scanner import Dialect

__all__ = [
    "SHELL_NAMES",
    "FoundShells",
    "Shell",
    "account_shell",
    "auto_candidates",
    "command_argv",
    "dialect_of",
    "find_shell",
    "first_found",
    "lookup_shell",
    "resolve_shell",
]

SHELL_NAMES: tuple[str, ...] = tuple(name for name in get_args(ShellName) if name != "auto")
_UNIX_ORDER = ("bash", "zsh", "sh", "dash", "ksh", "fish")
_WINDOWS_ORDER = ("pwsh", "powershell")
_POWERSHELL_FLAGS = ("-NoLogo", "-NonInteractive", "-NoProfile", "-Command")


@dataclass(frozen=True, slots=True)
class Shell:
    """A shell or interpreter binary: its name (``bash``, ``python3``), absolute path, and
    command dialect."""

    name: str
    path: str

    @property
    def dialect(self) -> Dialect:
        return dialect_of(self.name)


def dialect_of(name: str) -> Dialect:
    """``powershell`` for pwsh/powershell, ``sh`` for the rest."""
    return "powershell" if name in ("pwsh", "powershell") else "sh"


def command_argv(shell: Shell, command: str) -> list[str]:
    """The argv that makes ``shell`` run ``command``, non-interactive and without profiles."""
    if shell.dialect == "powershell":
        return [shell.path, *_POWERSHELL_FLAGS, command]
    return [shell.path, "-c", command]


def _shell_name(path: str) -> str:
    name = Path(path).name.lower()
    return name[:-4] if name.endswith(".exe") else name


def find_shell(name: str, search_path: str | None) -> Shell | None:
    """``name`` on ``search_path`` (``os.defpath`` when None), or None."""
    found = shutil.which(name, path=search_path or os.defpath)
    return Shell(name, found) if found else None


_Stamp = tuple[int, int, int, int, int, int] | None


def _stamp(path: str) -> _Stamp:
    """What a lookup depends on of ``path``: whether it is there and, if it is, its identity,
    mode, owner and change time (any change of the file or of its mode moves the change time)."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_dev, info.st_ino, info.st_mode, info.st_uid, info.st_gid, info.st_ctime_ns)


def _candidates(name: str, search_path: str | None, found: str) -> list[str] | None:
    """The paths ``shutil.which`` tries for ``name`` on ``search_path``, in order, up to ``found``
    (None when it does not come up: not cached)."""
    tried: list[str] = []
    seen: set[str] = set()
    for directory in (search_path or os.defpath).split(os.pathsep):
        if os.path.normcase(directory) in seen:
            continue
        seen.add(os.path.normcase(directory))
        tried.append(os.path.join(directory, name))  # noqa: PTH118 - the very string shutil.which tries
        if tried[-1] == found:
            return tried
    return None


class FoundShells:
    """``find_shell`` with its answers kept: a later lookup of the same name on the same ``PATH``
    re-checks only the paths the first one tried (one ``stat`` each: ``_stamp``) instead of
    ``shutil.which``'s work, and looks again when any of them changed (created, removed,
    replaced, its mode or owner changed). Blocking (stats): call it from a worker thread.

    Args:
        size: most answers kept (the least recently used goes first).
    """

    def __init__(self, size: int = 16) -> None:
        self._size = size
        self._kept: OrderedDict[tuple[str, str | None], tuple[Shell, tuple[tuple[str, _Stamp], ...]]]
        self._kept = OrderedDict()
        self._lock = threading.Lock()  # worker threads share it

    def find(self, name: str, search_path: str | None) -> Shell | None:
        """``find_shell(name, search_path)``."""
        key = (name, search_path)
        with self._lock:
            kept = self._kept.get(key)
            if kept is not None:
                self._kept.move_to_end(key)  # the least recently used goes first
        if kept is not None and all(_stamp(path) == stamp for path, stamp in kept[1]):
            return kept[0]
        shell = find_shell(name, search_path)
        tried = _candidates(name, search_path, shell.path) if shell is not None else None
        if shell is None or tried is None:
            return shell
        stamps = tuple((path, _stamp(path)) for path in tried)
        if find_shell(name, search_path) != shell:  # changed while it was stamped: not kept
            return shell
        with self._lock:
            self._kept[key] = (shell, stamps)
            self._kept.move_to_end(key)
            while len(self._kept) > self._size:
                self._kept.popitem(last=False)
        return shell


def account_shell() -> str | None:
    """The login shell of the account running the server (``getent passwd`` / Directory
    Services through NSS), or None."""
    return compat.login_shell()


def auto_candidates(env: Mapping[str, str], *, windows: bool | None = None) -> list[str]:
    """Shell names or paths to try for ``auto``, in order, before any is looked up."""
    if compat.IS_WINDOWS if windows is None else windows:  # pragma: no cover - Windows
        return list(_WINDOWS_ORDER)
    candidates: list[str] = []
    for path in (env.get("SHELL"), account_shell()):
        if path and _shell_name(path) in SHELL_NAMES and path not in candidates:
            candidates.append(path)
    return candidates + [name for name in _UNIX_ORDER if name not in candidates]


def lookup_shell(candidate: str, search_path: str | None) -> Shell | None:
    """A program given by absolute path (used when it exists) or by name (looked up), or None."""
    if Path(candidate).is_absolute():
        if Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return Shell(_shell_name(candidate), candidate)
        return find_shell(_shell_name(candidate), search_path)
    return find_shell(candidate, search_path)


def first_found(candidates: Iterable[str], search_path: str | None) -> Shell | None:
    """The first of ``candidates`` (names or absolute paths, as ``lookup_shell`` takes them)
    that is installed, or None."""
    for candidate in candidates:
        found = lookup_shell(candidate, search_path)
        if found is not None:
            return found
    return None


def resolve_shell(
    requested: ShellName,
    *,
    default: ShellName,
    detected: Shell | None,
    env: Mapping[str, str],
    find: Callable[[str, str | None], Shell | None] = find_shell,
) -> Shell:
    """The shell a call asked for.

    Args:
        requested: the call's ``shell`` (``auto`` or a name; the arguments model validated it).
        default: the config's ``default_shell`` (``auto`` or a name).
        detected: the bootstrap's shell, used for ``auto`` when the config names none.
        env: the command environment; its ``PATH`` is searched.
        find: looks a shell named by the call or the config up (``find_shell``, or a
            ``FoundShells``'s ``find``).

    Raises:
        NotFound: the shell is not installed (or, for ``auto``, no shell at all).
    """
    search_path = env.get("PATH")
    name = default if requested == "auto" else requested
    if name != "auto":
        shell = find(name, search_path)
        if shell is None:
            problem = (
                f"shell not found: {name}" if dialect_of(name) == "sh" else f"{name} requested but not found"
            )
            raise NotFound(f"{problem} on PATH; use shell=auto to take an installed shell")
        return shell
    if detected is not None:
        return detected
    shell = first_found(auto_candidates(env), search_path)
    if shell is None:
        raise NotFound("no shell found: none of bash, zsh, sh, dash, ksh, fish is on PATH")
    return shell
