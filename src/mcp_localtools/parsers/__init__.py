"""Parsing untrusted files (images, SVG, PDF) in confined, short-lived worker processes.

``runner.py`` is the server's side; ``worker.py`` is the script that runs in the worker and is
never imported by the server.
"""

from __future__ import annotations

from mcp_localtools.parsers.runner import Operation, Parsed, ParserRunner

__all__ = ["Operation", "Parsed", "ParserRunner"]
