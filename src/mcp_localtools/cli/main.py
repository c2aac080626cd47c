"""The ``mcp-localtools`` parser and dispatch: one subcommand per module of this package.

Without a subcommand the command serves (``serve``), so the top-level parser takes serve's
options; each subcommand's parser takes only its own (``mcp-localtools tools --help``). Options
given before the subcommand still apply to it (``mcp-localtools --root . call readfile ...``).
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from mcp_localtools._version import __version__
from mcp_localtools.cli.collector import paused_collection
from mcp_localtools.cli.startcache import cached_start

if TYPE_CHECKING:
    from mcp_localtools.cli.startcache import CachedStart
    from mcp_localtools.server.adapter import RegistryServer

__all__ = ["main", "parser"]

_DESCRIPTION = """\
An MCP server that gives LLM clients safe, fast local tools: read, write, search and edit files,
inspect images and PDFs, run commands. Every path must resolve inside the allowed roots.

Without a command it serves MCP over stdio (what Claude Desktop, Cursor and other clients start);
--transport sse or streamable-http serves it over HTTP, which needs a bearer token.
With no --config and no --root, the current directory is the only root (but never /, the home
directory or above it, or a system directory: there no root is served); MCP_LOCALTOOLS_ROOTS
(directories separated by the path separator) gives the roots when neither the config file nor
--root does.
"""

_EPILOG = """\
commands:
  serve                 run the MCP server (the default)
  tools [--json]        list the tools; --json prints their manifests (schemas, annotations);
                        --format mcp|openai|anthropic prints definitions in that provider's format;
                        --profile NAME only the tools of [profiles.NAME]
  call TOOL [ARGS]      call one tool with ARGS, a JSON object (omitted or '-': read from stdin), and
                        print the result as JSON: {"success": ..., "structuredContent": ...,
                        "content": [...]} or {"success": false, "error": {"code", "message"}}.
                        Exit status: 0 success, 1 bad input, usage or tool error, 2 refused by policy.
                        --profile NAME calls it as a client of [profiles.NAME] would
  token --file PATH     write a new random bearer token (256 bits) to PATH with mode 0600
  config --example      print the example config file (every key, its default and a comment)
  audit [filters]       read the [audit] log: --since/--until (ISO time or 15m, 2h, 1d), --tool,
                        --session, --decision allowed|refused; --follow; --json for one JSON
                        object per line (default: a compact table)

network transports:
  Every request needs "Authorization: Bearer <token>"; the token comes from [server]
  auth_token_file (a file only its owner can read) or MCP_LOCALTOOLS_TOKEN. Host and Origin are
  checked (loopback names plus [server] allowed_hosts / allowed_origins); binding a non-loopback
  address requires allowed_hosts. GET /healthz answers without a token.

examples:
  mcp-localtools --root ~/projects
  mcp-localtools --config config.toml --read-only
  mcp-localtools tools --json
  mcp-localtools --root . call readfile '{"path": "README.md", "limit": 20}'
  echo '{"path": "."}' | mcp-localtools call listdirectory
  mcp-localtools token --file ~/.config/mcp-localtools/token
  mcp-localtools --config config.toml audit --since 1h --decision refused
  mcp-localtools --transport streamable-http --auth-token-file ~/.config/mcp-localtools/token

Each command has its own options: mcp-localtools COMMAND --help.

environment:
  MCP_LOCALTOOLS_LOG_LEVEL   DEBUG, INFO, WARNING (default) or ERROR; logs go to stderr only
  MCP_LOCALTOOLS_TOKEN       bearer token for the network transports (when no auth_token_file)
  MCP_LOCALTOOLS_ALLOWED_COMMANDS  colon-separated commands, the only ones that run ("git:make:pytest -q");
                             sets [exec] allowed_commands and deny_by_default
  MCP_LOCALTOOLS_START_CACHE 0: stdio starts never answer from the start-up cache
                             (~/.cache/mcp-localtools/start) nor write it
"""


def parser(*, serving: bool = False) -> argparse.ArgumentParser:
    """The whole command line: serve's options at the top, and one parser per subcommand (in
    the order ``--help`` lists them; each module has ``add_parser`` and ``run``). With
    ``serving``, only ``serve``'s (the top's and its subcommand's): it parses any command line
    that serves as the whole one does, at a third of its cost."""
    from mcp_localtools.cli import serve
    from mcp_localtools.cli.options import Parser

    top = Parser(
        prog="mcp-localtools",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    top.add_argument("--version", action="version", version=f"mcp-localtools {__version__}")
    serve.add_options(top, suppress=False)
    commands = top.add_subparsers(dest="command", metavar="{serve,tools,call,token,audit,config,index}")
    if serving:
        serve.add_parser(commands)
    else:
        from mcp_localtools.cli import audit, call, example, index, token, tools

        for command in (serve, tools, call, token, audit, index, example):
            command.add_parser(commands)
    top.set_defaults(run=serve.run)
    return top


def _real_server(args: list[str], start: CachedStart, started: Callable[[], None]) -> RegistryServer:
    """The stdio server a start with ``args`` builds, served from the cache's ``start`` (its
    tools built at their first call). Only a start that serves writes an entry, so ``args``
    serve: serve's parser alone reads them."""
    from mcp_localtools.cli.serve import build_stdio

    try:
        ns = parser(serving=True).parse_args(args)
        ns.argv, ns.started = args, started
        return build_stdio(ns, start)
    finally:
        started()  # also when the build failed: the server goes on answering


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status. A start the start-up cache knows serves
    from it before anything else is imported (``startcache.py``).

    The cyclic garbage collector is paused from here until the server is built or, for the
    other commands, until the command line is read (``collector.py``)."""
    with paused_collection() as pause:
        return _main(list(sys.argv[1:] if argv is None else argv), pause.resume)


def _main(args: list[str], started: Callable[[], None]) -> int:
    """``main`` for ``args``; ``started`` ends the start-up's pause of the garbage collector."""
    start = cached_start(args)
    if start is not None:
        return start.serve(functools.partial(_real_server, args, start, started))
    from mcp_localtools.cli import serve
    from mcp_localtools.cli.options import EXIT_ERROR, LOG_LEVEL_ENV, configure_logging, log_level
    from mcp_localtools.errors import ConfigError, SpecError

    ns = parser().parse_args(args)
    ns.argv, ns.started = args, started
    if ns.run is not serve.run:
        started()
    configure_logging(log_level(ns.log_level or os.environ.get(LOG_LEVEL_ENV)))
    try:
        status: int = ns.run(ns)
    except ConfigError as exc:
        sys.stderr.write(f"mcp-localtools: {exc.message}\n")
        return EXIT_ERROR
    except SpecError as exc:  # a bug in a tool, not in the config: say so, without a traceback
        sys.stderr.write(
            f"mcp-localtools: a tool cannot be registered (a bug, not the config): {exc.message}\n"
        )
        return EXIT_ERROR
    return status
