"""The ``mcp-localtools`` command: serve over MCP, list the tools, call one as JSON, make a token,
read the audit log, print the example config, build the code index.

This package is the only code that reads argv, the environment and (through ``load_config``)
files. One module per subcommand (``serve``, ``tools``, ``call``, ``token``, ``audit``,
``index``, ``example`` for ``config --example``); ``options`` holds what they share; ``main`` the parser.

Exit codes: 0 success, 1 a usage error, bad input or a tool error, 2 (``call`` only) a path-policy or
command-policy refusal.
"""

from __future__ import annotations

from mcp_localtools.cli.main import main

__all__ = ["main"]
