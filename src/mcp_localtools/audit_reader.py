"""Reading the audit log back (``mcp-localtools audit``): the records of the log and its rotated
files, filters by time, tool, session and decision, a compact table for people, and following
the log as it grows (across rotations). ``audit.py`` writes it.
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from mcp_localtools.units import printable

__all__ = [
    "TABLE_HEADER",
    "RecordFilter",
    "follow_records",
    "parse_time",
    "read_records",
    "summary",
    "table_row",
]

logger = logging.getLogger(__name__)


def read_records(
    path: Path, *, include_rotated: bool = True, include_current: bool = True, keep: int = 5
) -> Iterator[dict[str, Any]]:
    """The records of the log at ``path``, oldest first: the rotated files ``path.keep`` ..
    ``path.1`` (when ``include_rotated``; ``keep`` is ``[audit] keep``, the files the server
    writes and protects: a higher number is not the server's), then the file itself (when
    ``include_current``). A line that is not a JSON object is skipped with a warning.

    Raises:
        OSError: the log cannot be read.
    """
    files: list[Path] = []
    if include_rotated:
        files += [path.with_name(f"{path.name}.{number}") for number in range(keep, 0, -1)]
    if include_current:
        files.append(path)
    for file in files:
        if not file.exists() and file is not path:
            continue
        with file.open("r", encoding="utf-8", errors="replace") as handle:
            yield from _parse_lines(handle, file)


def _parse_lines(lines: Iterable[str], file: Path) -> Iterator[dict[str, Any]]:
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            logger.warning("%s:%d: not a JSON line, skipped", file, number)
            continue
        if isinstance(record, dict):
            yield record


@dataclass(frozen=True)
class RecordFilter:
    """Which records ``mcp-localtools audit`` shows; every set criterion must hold.

    Attributes:
        since / until: bounds on ``time`` (aware datetimes, inclusive).
        tools / sessions: exact names (any of them).
        decision: ``allowed`` or ``refused``.
    """

    since: datetime | None = None
    until: datetime | None = None
    tools: tuple[str, ...] = ()
    sessions: tuple[str, ...] = ()
    decision: str | None = None

    def __call__(self, record: Mapping[str, Any]) -> bool:
        if self.tools and record.get("tool") not in self.tools:
            return False
        if self.sessions and record.get("session") not in self.sessions:
            return False
        if self.decision and record.get("decision") != self.decision:
            return False
        if self.since is not None or self.until is not None:
            try:
                when = parse_time(str(record.get("time", "")))
            except ValueError:
                return False
            if (self.since is not None and when < self.since) or (
                self.until is not None and when > self.until
            ):
                return False
        return True


_RELATIVE = re.compile(r"^(\d+(?:\.\d+)?)\s*([smhdw])$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_time(text: str, *, now: datetime | None = None) -> datetime:
    """An aware UTC datetime from ISO 8601 (``2026-11-23T22:00``, ``2026-11-23``; no zone means
    UTC) or a span back from ``now`` (``90s``, ``15m``, ``2h``, ``1d``, ``1w``).

    Raises:
        ValueError: neither form.
    """
    text = text.strip()
    if match := _RELATIVE.match(text):
        span = float(match[1]) * _UNITS[match[2]]
        return (now or datetime.now(UTC)) - timedelta(seconds=span)
    when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)


def summary(record: Mapping[str, Any]) -> str:
    """One short human line of what a call was about: its commands, paths or pattern."""
    arguments = record.get("arguments") or {}
    if not isinstance(arguments, Mapping):
        return ""
    commands = record.get("commands") or arguments.get("commands")  # what ran, else what was asked
    if isinstance(commands, list) and commands:
        return " ; ".join(str(c) for c in commands)
    parts = [
        str(arguments[key])
        for key in ("path", "source", "destination", "pattern", "root")
        if isinstance(arguments.get(key), str)
    ]
    return " -> ".join(parts[:2]) if parts else ""


def table_row(record: Mapping[str, Any], *, width: int = 60) -> str:
    """``time session tool decision approval result ms summary`` as one fixed-width line; every
    field is made ``printable`` (a call's arguments are the model's text)."""
    when = printable(str(record.get("time", ""))[:19].replace("T", " "))
    outcome = "ok" if record.get("result") == "ok" else printable(str(record.get("error_code") or "error"))
    approval = printable(str(record.get("approval") or ""))
    approval = "-" if approval == "not_required" else approval
    about = printable(summary(record))
    if len(about) > width:
        about = about[: width - 3] + "..."
    duration = record.get("duration_ms")
    ms = f"{duration:.0f}" if isinstance(duration, int | float) else "?"
    session = printable(str(record.get("session", "")))[:14]
    tool, decision = printable(str(record.get("tool", ""))), printable(str(record.get("decision", "")))
    return (
        f"{when:<19}  {session:<14}  {tool:<16}  {decision:<7}  {approval:<20}  {outcome:<20}  "
        f"{ms:>6}  {about}"
    )


TABLE_HEADER = (
    f"{'time (UTC)':<19}  {'session':<14}  {'tool':<16}  {'decision':<7}  {'approval':<20}  "
    f"{'result':<20}  {'ms':>6}  what"
)


def follow_records(path: Path, *, poll_seconds: float = 0.5) -> Iterator[dict[str, Any]]:
    """The records of ``path`` from its start, then every record appended, forever (a generator
    that blocks between polls); follows the log across rotations (a new file at ``path`` is read
    from its start)."""
    handle = None
    identity: tuple[int, int] | None = None
    buffer = ""
    try:
        while True:
            try:
                stat = os.stat(path)
                current = (stat.st_dev, stat.st_ino)
            except OSError:
                current = None
            if current is not None and current != identity:
                if handle is not None:
                    buffer += handle.read()
                    handle.close()
                handle = path.open("r", encoding="utf-8", errors="replace")
                identity = current
            if handle is not None:
                buffer += handle.read()
            *complete, buffer = buffer.split("\n")
            yield from _parse_lines(complete, path)
            time.sleep(poll_seconds)
    finally:
        if handle is not None:
            handle.close()
