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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import get_args

from mcp_localtools import compat
from mcp_localtools.config import ShellName
from mcp_localtools.errors import NotFound
from mcp_localtools.policy.scanner import Dialect

__all__ = [
    "SHELL_NAMES",
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
    requested: ShellName, *, default: ShellName, detected: Shell | None, env: Mapping[str, str]
) -> Shell:
    """The shell a call asked for.

    Args:
        requested: the call's ``shell`` (``auto`` or a name; the arguments model validated it).
        default: the config's ``default_shell`` (``auto`` or a name).
        detected: the bootstrap's shell, used for ``auto`` when the config names none.
        env: the command environment; its ``PATH`` is searched.

    Raises:
        NotFound: the shell is not installed (or, for ``auto``, no shell at all).
    """
    search_path = env.get("PATH")
    name = default if requested == "auto" else requested
    if name != "auto":
        shell = find_shell(name, search_path)
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
