"""What the subcommands share: their options, the config they build from them, logging, exits."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path
from typing import NoReturn

from mcp_localtools.checks import TOKEN_ENV
from mcp_localtools.cli.startcache import cache_dir, configure_logging
from mcp_localtools.cli.startchecks import make_folder
from mcp_localtools.config import Config, load_config, parse_config
from mcp_localtools.errors import ConfigError
from mcp_localtools.policy.implicit_root import implicit_root_refusal, user_home

__all__ = [
    "EXIT_ERROR",
    "EXIT_OK",
    "EXIT_POLICY",
    "LOG_LEVEL_ENV",
    "ROOTS_ENV",
    "TOKEN_ENV",
    "Parser",
    "add_config_options",
    "add_log_option",
    "add_profile_option",
    "config_from",
    "configure_logging",
    "log_level",
    "no_roots_message",
    "own_files",
    "profile_config",
]

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_POLICY = 2
LOG_LEVEL_ENV = "MCP_LOCALTOOLS_LOG_LEVEL"
ROOTS_ENV = "MCP_LOCALTOOLS_ROOTS"
ALLOWED_COMMANDS_ENV = "MCP_LOCALTOOLS_ALLOWED_COMMANDS"
"""Colon-separated commands (``"git:make:pytest -q"``), the only ones that run: sets ``[exec]
allowed_commands`` and ``deny_by_default`` (LLMC's ``LLMC_ALLOWED_COMMANDS``); unset or blank: the
config decides."""
_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


class Parser(argparse.ArgumentParser):
    """argparse with usage errors exiting 1 (bad input), since 2 means a policy refusal here."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_ERROR, f"{self.prog}: error: {message}\n")


def _default(suppress: bool, value: object = None) -> object:
    """An option's default: ``value`` on the top-level parser; on a subcommand's, nothing, so an
    option given before the subcommand (``mcp-localtools --root . call ...``) is kept."""
    return argparse.SUPPRESS if suppress else value


def add_config_options(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    """``--config``, ``--root`` and ``--read-only``: which config, roots and tools."""
    parser.add_argument(
        "--config",
        metavar="PATH",
        default=_default(suppress),
        help="TOML config file (mcp-localtools config --example prints every key)",
    )
    parser.add_argument(
        "--root",
        metavar="DIR",
        action="append",
        default=_default(suppress),
        help="allowed root directory; repeat for several (replaces [paths] allowed_roots)",
    )
    parser.add_argument(
        "--read-only",
        action="store_true",
        default=_default(suppress, False),
        help="register only the tools that change nothing",
    )


def add_profile_option(parser: argparse.ArgumentParser, *, suppress: bool, help: str) -> None:
    """``--profile NAME``: a ``[profiles]`` entry."""
    parser.add_argument("--profile", metavar="NAME", default=_default(suppress), help=help)


def add_log_option(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    """``--log-level``."""
    parser.add_argument(
        "--log-level", choices=["DEBUG", "INFO", "WARNING", "ERROR"], default=_default(suppress)
    )


def log_level(given: str | None) -> str:
    """The log level from ``--log-level`` or ``MCP_LOCALTOOLS_LOG_LEVEL`` (default WARNING)."""
    level = (given or "WARNING").upper()
    return level if level in _LEVELS else "WARNING"


def config_from(ns: argparse.Namespace) -> Config:
    """The config file (or the embedded default) with the command-line overrides applied and
    validated by the same models, so a bad flag fails like a bad key (``server.port: ...``).

    Raises:
        ConfigError: the file or an override is invalid.
    """
    config = load_config(ns.config) if ns.config else Config()
    data = config.model_dump()
    if ns.root:
        data["paths"].update(allowed_roots=list(ns.root), work_base_dir=None)
    elif not (ns.config and _file_sets_roots(ns.config)):
        env_roots = [root for root in os.environ.get(ROOTS_ENV, "").split(os.pathsep) if root.strip()]
        if env_roots:
            data["paths"].update(allowed_roots=env_roots, work_base_dir=None)
        elif _cwd_refusal() is not None:
            data["paths"].update(allowed_roots=[], work_base_dir=None)
    allowed = [
        entry.strip() for entry in os.environ.get(ALLOWED_COMMANDS_ENV, "").split(":") if entry.strip()
    ]
    if allowed:
        data["exec"].update(allowed_commands=allowed, deny_by_default=True)
    if ns.read_only:
        data["tools"]["read_only"] = True
    for key in ("transport", "host", "port", "auth_token_file"):
        if getattr(ns, key, None) is not None:
            data["server"][key] = getattr(ns, key)
    if getattr(ns, "allowed_host", None):
        data["server"]["allowed_hosts"] += ns.allowed_host
    return parse_config(data, source="command line")


def profile_config(config: Config, name: str | None) -> Config:
    """The config a client of profile ``name`` works under (``config`` itself for None).

    Raises:
        ConfigError: no such profile (the message lists the defined ones).
    """
    if name is None:
        return config
    if name not in config.profiles:
        defined = ", ".join(sorted(config.profiles)) or "none"
        raise ConfigError(f"no profile {name!r}: [profiles] defines {defined}")
    return config.for_profile(name)


def _cwd_refusal() -> str | None:
    """Why the working directory may not be the default root (the filesystem root, the home
    directory or above it, a system directory), or None."""
    return implicit_root_refusal(Path.cwd(), user_home())


def no_roots_message(ns: argparse.Namespace, lead: str = "no root to work in") -> str:
    """Why a server built from ``ns`` has no roots (after ``lead``), and what to do."""
    reason = None if ns.root or os.environ.get(ROOTS_ENV, "").strip() else _cwd_refusal()
    why = (
        f"the working directory is {reason}, which is never served by default"
        if reason is not None and not (ns.config and _file_sets_roots(ns.config))
        else "[paths] allowed_roots is empty"
    )
    return f"{lead}: {why}; pass --root DIR (or set [paths] allowed_roots or {ROOTS_ENV})"


def _file_sets_roots(path: str) -> bool:
    """True when the config file at ``path`` (already loaded once) sets ``[paths] allowed_roots``."""
    import tomllib

    with Path(path).expanduser().open("rb") as handle:
        paths = tomllib.load(handle).get("paths")
    return isinstance(paths, dict) and "allowed_roots" in paths


def own_files(ns: argparse.Namespace) -> list[str]:
    """The server's own files, protected from tools and commands when they lie in a root: the
    config file, the profiles' token files (``[server] auth_token_file`` the workspace adds) and
    the start-up cache's folder, whatever the transport or the cache setting (a tool must not
    write the answers of a later start). The folder is made here if it is missing: the sandbox
    holds a protected path read-only only if it exists, so a command could otherwise make it and
    forge an entry."""
    files = [ns.config] if ns.config else []
    if ns.config:
        files += [p.token_file for p in load_config(ns.config).profiles.values() if p.token_file]
    start_cache = cache_dir(os.environ)
    if start_cache is not None:
        try:
            make_folder(start_cache)
        except OSError as exc:
            logging.getLogger(__name__).debug("the start-up cache %s cannot be made: %s", start_cache, exc)
        files.append(str(start_cache))
    return files
