"""Entry point of the Claude Desktop bundle (``manifest.json``): its settings, as the host passes
them, turned into the ``mcp-localtools`` command line, which then serves MCP over stdio.

The host runs ``main.py --read-only=true|false --sandbox=true|false FOLDER...`` (booleans arrive
as the strings ``true`` and ``false``; the "Folders" setting, a multiple directory picker, as one
argument per folder). Each folder becomes a ``--root``; read-only adds ``--read-only``; a sandbox
turned off loads ``sandbox-off.toml`` beside this file. Any other argument (``--version``,
``tools``) goes to ``mcp-localtools`` unchanged.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent


def command_line(argv: Sequence[str]) -> list[str]:
    """The ``mcp-localtools`` arguments for the bundle's ``argv`` (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="mcp-localtools bundle", add_help=False)
    parser.add_argument("--read-only", choices=["true", "false"], default="false")
    parser.add_argument("--sandbox", choices=["true", "false"], default="true")
    settings, rest = parser.parse_known_args(list(argv))
    passed_on = [arg for arg in rest if arg.startswith("-") or arg in ("tools", "serve")]
    folders = [arg for arg in rest if arg not in passed_on]
    args = [option for folder in folders for option in ("--root", folder)]
    if settings.read_only == "true":
        args.append("--read-only")
    if settings.sandbox == "false":
        args += ["--config", str(HERE / "sandbox-off.toml")]
    return args + passed_on


def main() -> int:
    # The bundle's own copy of the package (src/ beside server/), also when the host runs this
    # file with a Python where the project is not installed.
    sys.path.insert(0, str(HERE.parent / "src"))
    from mcp_localtools.cli import main as cli_main

    status: int = cli_main(command_line(sys.argv[1:]))
    return status


if __name__ == "__main__":
    raise SystemExit(main())
