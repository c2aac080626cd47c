"""Bearer tokens in files: what the network transports accept as a token, and from where."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from mcp_localtools.errors import ConfigError

__all__ = ["MIN_TOKEN_CHARS", "check_token", "read_token_file"]

MIN_TOKEN_CHARS = 32
"""Shortest token accepted; ``mcp-localtools token`` makes 43 characters (256 bits)."""


def read_token_file(path: str | Path) -> str:
    """Read a bearer token from a file that only its owner can read.

    Raises:
        ConfigError: the file is missing or unreadable (permission denied names the fix: run as
            the file's owner, in a container ``--user``), not a regular file, readable or writable
            by group or others, empty, or shorter than ``MIN_TOKEN_CHARS``.
    """
    file = Path(path).expanduser()
    try:
        info = file.stat()
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError(f"the auth token file {file} is not a regular file")
        if info.st_mode & 0o077:
            raise ConfigError(
                f"refusing the auth token file {file}: others can access it "
                f"(mode {stat.S_IMODE(info.st_mode):04o}); run: chmod 600 {file}"
            )
        text = file.read_text(encoding="utf-8")
    except PermissionError:
        getuid = getattr(os, "getuid", None)
        who = f" as uid {getuid()}" if getuid is not None else ""
        raise ConfigError(
            f"cannot read the auth token file {file}: permission denied to the server running{who}; "
            'run the server as the file\'s owner (in a container: --user "$(id -u):$(id -g)")'
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ConfigError(f"cannot read the auth token file {file}: {reason}") from None
    return check_token(text.strip(), f"the auth token file {file}")


def check_token(token: str, source: str) -> str:
    """Refuse an empty or short token.

    Raises:
        ConfigError: fewer than ``MIN_TOKEN_CHARS`` characters, or whitespace inside.
    """
    if len(token) < MIN_TOKEN_CHARS or any(ch.isspace() for ch in token):
        raise ConfigError(
            f"{source} holds no usable token: it needs at least {MIN_TOKEN_CHARS} characters and no spaces; "
            "make one with: mcp-localtools token --file PATH"
        )
    return token
