"""``mcp-localtools audit``: read the ``[audit]`` log, filtered, as a table or JSON lines."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from mcp_localtools.cli.options import EXIT_OK, add_log_option, config_from
from mcp_localtools.errors import ConfigError

__all__ = ["add_parser", "run"]


def add_parser(commands: Any) -> None:
    """Register ``audit``."""
    parser = commands.add_parser("audit", help="read the audit log")
    parser.add_argument(
        "--config", metavar="PATH", default=argparse.SUPPRESS, help="TOML config file (for [audit] path)"
    )
    parser.add_argument("--file", metavar="PATH", help="the log (default: [audit] path or its default)")
    parser.add_argument(
        "--since", metavar="TIME", help="from this time: ISO 8601 (UTC) or a span back (15m, 2h, 1d)"
    )
    parser.add_argument("--until", metavar="TIME", help="up to this time; same forms")
    parser.add_argument("--tool", action="append", default=[], help="only this tool (repeatable)")
    parser.add_argument("--session", action="append", default=[], help="only this session (repeatable)")
    parser.add_argument("--decision", choices=["allowed", "refused"], help="only allowed or refused calls")
    parser.add_argument("--follow", "-f", action="store_true", help="keep printing new records")
    parser.add_argument("--json", action="store_true", help="print each record as one JSON line")
    add_log_option(parser, suppress=True)
    parser.set_defaults(run=run)


def run(ns: argparse.Namespace) -> int:
    """Print the audit log's records that pass the filters (and, with ``--follow``, new ones).

    Raises:
        ConfigError: a bad ``--since``/``--until``, no log, or the log cannot be read.
    """
    from mcp_localtools import audit_reader as audit
    from mcp_localtools.audit import default_audit_path

    config = config_from(ns)
    path = Path(ns.file or config.audit.path or default_audit_path(os.environ)).expanduser()
    try:
        keep = audit.RecordFilter(
            since=audit.parse_time(ns.since) if ns.since else None,
            until=audit.parse_time(ns.until) if ns.until else None,
            tools=tuple(ns.tool),
            sessions=tuple(ns.session),
            decision=ns.decision,
        )
    except ValueError as exc:
        raise ConfigError(
            f"--since/--until: {exc}; give an ISO time (2026-11-23T22:00) or a span (15m, 2h, 1d)"
        ) from exc
    if not path.exists() and not ns.follow:
        raise ConfigError(f"no audit log at {path}: turn it on with [audit] enabled = true, or pass --file")

    def show(record: dict[str, Any]) -> None:
        if keep(record):
            line = json.dumps(record, ensure_ascii=False) if ns.json else audit.table_row(record)
            sys.stdout.write(line + "\n")
            sys.stdout.flush()

    if not ns.json:
        sys.stdout.write(audit.TABLE_HEADER + "\n")
    try:
        for record in audit.read_records(path, include_current=not ns.follow, keep=config.audit.keep):
            show(record)
        if ns.follow:
            for record in audit.follow_records(path):
                show(record)
    except OSError as exc:
        raise ConfigError(f"cannot read the audit log {path}: {exc.strerror or exc}") from exc
    except KeyboardInterrupt:
        pass
    return EXIT_OK
