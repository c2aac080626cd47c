"""``mcp-localtools config --example``: print the example config shipped in the package."""

from __future__ import annotations

import argparse
import sys
from importlib.resources import files
from typing import Any

from mcp_localtools.cli.options import EXIT_OK

__all__ = ["EXAMPLE_CONFIG", "add_parser", "run"]

EXAMPLE_CONFIG = "config.example.toml"  # package data: every key with its default and a comment


def add_parser(commands: Any) -> None:
    """Register ``config``."""
    parser = commands.add_parser("config", help="print the example config file")
    parser.add_argument(
        "--example",
        action="store_true",
        required=True,
        help="print the example config: every key with its default and a comment",
    )
    parser.set_defaults(run=run)


def run(ns: argparse.Namespace) -> int:
    """Print the example config (``config.example.toml``) to stdout."""
    sys.stdout.write((files("mcp_localtools") / EXAMPLE_CONFIG).read_text(encoding="utf-8"))
    return EXIT_OK
