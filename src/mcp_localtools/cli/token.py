"""``mcp-localtools token --file PATH``: write a new random bearer token (256 bits), mode 0600."""

from __future__ import annotations

import argparse
import os
import secrets
import sys
from pathlib import Path
from typing import Any

from mcp_localtools import compat
from mcp_localtools.cli.options import EXIT_OK, TOKEN_ENV, add_log_option, config_from
from mcp_localtools.errors import ConfigError

__all__ = ["add_parser", "run"]


def add_parser(commands: Any) -> None:
    """Register ``token``."""
    parser = commands.add_parser("token", help="write a new bearer token file (mode 0600)")
    parser.add_argument(
        "--config",
        metavar="PATH",
        default=argparse.SUPPRESS,
        help="TOML config file (for [server] auth_token_file)",
    )
    parser.add_argument(
        "--file", metavar="PATH", help="where to write it (default: [server] auth_token_file)"
    )
    parser.add_argument("--force", action="store_true", help="replace an existing file")
    add_log_option(parser, suppress=True)
    parser.set_defaults(run=run)


def run(ns: argparse.Namespace) -> int:
    """Write a new token file (mode 0600, never over an existing one without ``--force``).

    Raises:
        ConfigError: no target is given, it exists, or it cannot be written.
    """
    config = config_from(ns)
    target = ns.file or config.server.auth_token_file
    if not target:
        raise ConfigError("say where to write the token: mcp-localtools token --file PATH")
    path = Path(target).expanduser().absolute()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    flags = os.O_WRONLY | os.O_CREAT | compat.O_NOFOLLOW | (os.O_TRUNC if ns.force else os.O_EXCL)
    try:
        fd = os.open(path, flags, 0o600)
    except FileExistsError:
        raise ConfigError(f"{path} exists; pass --force to replace it") from None
    except OSError as exc:
        raise ConfigError(f"cannot write {path}: {exc.strerror}") from exc
    compat.fchmod(fd, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(secrets.token_urlsafe(32) + "\n")  # 32 random bytes: 256 bits
    sys.stderr.write(
        f'wrote a new token to {path} (mode 0600). Serve with [server] auth_token_file = "{path}" or '
        f"{TOKEN_ENV}; clients send it as the header 'Authorization: Bearer <token>'.\n"
    )
    return EXIT_OK
