"""``mcp-localtools index DIR``: build the code tools' index of a directory ahead of time."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

from mcp_localtools.cli.options import (
    EXIT_ERROR,
    EXIT_OK,
    EXIT_POLICY,
    add_config_options,
    add_log_option,
    config_from,
    own_files,
)
from mcp_localtools.config import parse_config
from mcp_localtools.errors import ConfigError, PolicyViolation, ToolError

__all__ = ["add_parser", "run"]


def add_parser(commands: Any) -> None:
    """Register ``index``."""
    parser = commands.add_parser("index", help="build the code index of a directory ahead of time")
    add_config_options(parser, suppress=True)
    add_log_option(parser, suppress=True)
    parser.add_argument("directory", help="the project to index (its git work tree, else the directory)")
    parser.set_defaults(run=run)


def run(ns: argparse.Namespace) -> int:
    """The code tools' index of DIR built now, with a progress bar on stderr; DIR is added to the
    roots when the config's roots do not hold it.

    Raises:
        ConfigError: the config is invalid or ``[index] enabled`` is false.
    """
    import anyio

    from mcp_localtools.tools.code import build_index
    from mcp_localtools.workspace import Workspace

    directory = str(Path(ns.directory).expanduser().resolve())
    config = config_from(ns)
    roots = [Path(root).expanduser().resolve() for root in config.paths.allowed_roots]
    if not any(Path(directory).is_relative_to(root) for root in roots):
        data = config.model_dump()
        data["paths"].update(allowed_roots=[directory], work_base_dir=None)
        config = parse_config(data, source="command line")
    if not config.index.enabled:
        raise ConfigError("index.enabled is false: the code index is off")
    workspace = Workspace.from_config(config, environ=os.environ, own_files=own_files(ns))
    began = time.monotonic()

    async def bar(done: float, total: float | None, message: str | None) -> None:
        if total:
            filled = int(30 * done / total)
            sys.stderr.write(f"\r[{'#' * filled}{'.' * (30 - filled)}] {int(done)}/{int(total)} files")
            sys.stderr.flush()

    try:
        summary = anyio.run(build_index, workspace, directory, bar)
    except ToolError as exc:
        sys.stderr.write(f"\nmcp-localtools: {exc.message}\n")
        return EXIT_POLICY if isinstance(exc, PolicyViolation) else EXIT_ERROR
    where = summary.database or "memory (no cache directory)"
    sys.stderr.write("\n")
    sys.stdout.write(
        f"indexed {summary.directory}: {summary.files} files, {summary.symbols} symbols, {summary.chunks} "
        f"chunks in {time.monotonic() - began:.1f} s; kept in {where}\n"
    )
    return EXIT_OK
