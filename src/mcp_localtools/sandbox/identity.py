"""The git identity commands get: the host user's ``user.name`` and ``user.email``, nothing else.

The sandbox hides ``~/.gitconfig`` (it may hold credentials helpers, aliases that run programs,
``core.pager``...), so ``git commit`` inside it failed with "Author identity unknown". The server
asks git once, outside the sandbox and outside any repository, for the two keys, and writes them
to a read-only config in each session's temp dir that commands get as ``GIT_CONFIG_GLOBAL``: a
repository's own ``user.email`` still wins over it, as it would over ``~/.gitconfig``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

__all__ = ["IDENTITY_FILE", "IDENTITY_KEYS", "host_identity", "identity_config", "write_read_only"]

IDENTITY_FILE = ".gitconfig"
"""The generated config's name in a session's temp dir."""

IDENTITY_KEYS = ("user.name", "user.email")
"""The only keys copied from the host's git config."""

_GIT_ENV = (
    "HOME",
    "XDG_CONFIG_HOME",
    "PATH",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM",
    "GIT_CONFIG_NOSYSTEM",
)


def host_identity(environ: Mapping[str, str]) -> dict[str, str]:
    """``user.name`` and ``user.email`` as the host's git sees them with ``environ`` (its global
    and system config; run in ``/``, where no repository's config is read); the keys it has.
    Blocking (runs git, at most 10 s each); empty when git is missing or fails."""
    git = shutil.which("git", path=environ.get("PATH") or os.defpath)
    if git is None:
        return {}
    env = {name: environ[name] for name in _GIT_ENV if name in environ}
    env["GIT_CEILING_DIRECTORIES"] = "/"
    found: dict[str, str] = {}
    for key in IDENTITY_KEYS:
        try:
            done = subprocess.run(
                [git, "config", "--includes", "--get", key],
                capture_output=True,
                text=True,
                timeout=10,
                check=False,
                cwd="/",
                env=env,
                stdin=subprocess.DEVNULL,
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        value = done.stdout.strip()
        if done.returncode == 0 and value and "\n" not in value:
            found[key] = value
    return found


def _quoted(value: str) -> str:
    """``value`` as a git config string (quoted; backslash, quote and control characters escaped)."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    escaped = "".join(ch if ch.isprintable() else " " for ch in escaped)
    return f'"{escaped}"'


def identity_config(identity: Mapping[str, str]) -> str:
    """The text of a git config carrying ``identity`` (``IDENTITY_KEYS`` only); empty for none."""
    lines = [
        f"\t{key.split('.', 1)[1]} = {_quoted(identity[key])}" for key in IDENTITY_KEYS if key in identity
    ]
    return "[user]\n" + "\n".join(lines) + "\n" if lines else ""


def write_read_only(path: Path, text: str) -> None:
    """Write ``text`` to the new file ``path`` and make it read-only (mode 0444)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o444)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
