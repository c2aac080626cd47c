"""The audit log: one JSON object per line for every tool call, scrubbed, append-only.

A line (``AuditLog.record``) holds: ``time`` (UTC, ISO 8601), ``session``, ``client``, ``tool``,
``arguments`` (scrubbed, below), ``decision`` (``allowed`` / ``refused``) and ``rule`` (the error
code of a refusal), ``approval`` (``not_required``, ``approved``, ``approved_for_session``,
``session`` (approved earlier in the session), ``denied`` (the person said no), ``timeout``,
``cancelled`` (the question was dismissed), ``failed`` (it failed, or its answer could not be
read), ``unsupported`` (the client cannot ask), ``allowed_unsupported`` (ran unasked:
``on_unsupported = "allow"``), ``trusted_commands`` (ran unasked: only trusted programs),
``not_asked`` (its dry run failed, so it could not succeed)) and ``approval_rule``, ``result``
(``ok`` / ``error``) and ``error_code``, ``duration_ms`` (approval wait included), ``bytes_in``
(the arguments as JSON), ``bytes_out`` and ``output_sha256`` (the result's content; the content
itself is never logged), and, when the tool reports them, ``exit_codes`` and ``sandbox``
(commands), ``commands`` (the command lines a declared tool ran, which its arguments do not show;
scrubbed like them) and ``paths`` (resolved paths touched). A call the client cancels is logged with
``error_code`` ``cancelled``; a 2026-07-28 round that only asks the approval question is not a
call (the answered round is).

The arguments are scrubbed by ``scrubber.Scrubber`` (contents become size and sha256, secrets
are masked wherever they appear); ``Scrubber`` and ``MASK`` are re-exported here.

The file is opened append-only (``O_APPEND``), created with mode 0600, written one whole line per
``write`` under a lock (lines never interleave), and rotated by size (``audit.jsonl.1`` is the
newest rotated file). ``audit_reader.py`` reads it back for ``mcp-localtools audit``. A write that
fails is logged at ERROR, and one that fails part way (a short write on a full disk) is cut back
to the newline before it, as is a torn last line found when the file is opened: every line in
the file is a whole record. With ``[audit] required`` the server refuses every call while the
log cannot be written now (not open, or its disk has less than ``MIN_FREE_BYTES`` free) or the
last write failed (``ready``); a refused call's own line, once written, lets the next call run.
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mcp_localtools import compat
from mcp_localtools.config import AuditConfig
from mcp_localtools.errors import ConfigError
from mcp_localtools.results import LinkContent, TextContent, ToolResult
from mcp_localtools.scrubber import MASK, Scrubber

__all__ = [
    "MASK",
    "AuditLog",
    "Scrubber",
    "default_audit_path",
    "output_digest",
    "result_facts",
]

logger = logging.getLogger(__name__)


def default_audit_path(environ: Mapping[str, str]) -> Path:
    """``$XDG_STATE_HOME/mcp-localtools/audit.jsonl``, else ``~/.local/state/...`` (``%LOCALAPPDATA%``
    on Windows), from the server's environment.

    Raises:
        ConfigError: the environment names no home directory; set ``[audit] path``.
    """
    if state := environ.get("XDG_STATE_HOME"):
        return Path(state) / "mcp-localtools" / "audit.jsonl"
    if local := environ.get("LOCALAPPDATA"):
        return Path(local) / "mcp-localtools" / "audit.jsonl"
    if home := environ.get("HOME") or environ.get("USERPROFILE"):
        return Path(home) / ".local" / "state" / "mcp-localtools" / "audit.jsonl"
    raise ConfigError("audit.path: no home directory in the environment to put the log in; set [audit] path")


def output_digest(result: ToolResult) -> dict[str, Any]:
    """``{"bytes": n, "sha256": ...}`` of a result's content (text as UTF-8, images and files raw)."""
    hasher = hashlib.sha256()
    size = 0
    for item in result.content:
        if isinstance(item, TextContent):
            data = item.text.encode("utf-8", "surrogatepass")
        elif isinstance(item, LinkContent):
            data = item.uri.encode("utf-8", "surrogatepass")
        else:
            data = item.data
        hasher.update(data)
        size += len(data)
    return {"bytes": size, "sha256": hasher.hexdigest()}


_PATH_KEYS = ("path", "source", "destination", "workDir", "root", "trashPath")


def result_facts(result: ToolResult) -> dict[str, Any]:
    """What a successful result says about the call: ``paths`` (resolved paths it names at its
    top level), ``exit_codes``, ``commands`` (unscrubbed) and ``sandbox`` of commands. Empty for
    an error."""
    data = result.structured or {}
    facts: dict[str, Any] = {}
    paths = [data[key] for key in _PATH_KEYS if isinstance(data.get(key), str)]
    if paths:
        facts["paths"] = list(dict.fromkeys(paths))
    codes = [data["exitCode"]] if "exitCode" in data else []
    commands: list[str] = []
    for item in data.get("results", ()) if isinstance(data.get("results"), list) else ():
        if isinstance(item, Mapping) and "exitCode" in item:
            codes.append(item["exitCode"])
        if isinstance(item, Mapping) and isinstance(item.get("command"), str):
            commands.append(item["command"])
    if codes:
        facts["exit_codes"] = codes
    if commands:
        facts["commands"] = commands
    if isinstance(data.get("sandbox"), str):
        facts["sandbox"] = data["sandbox"]
    return facts


MAX_CLIENT_CHARS = 200
"""Longest client name (``clientInfo.name``, repeated in every line of its session) logged."""

MIN_FREE_BYTES = 16 * 1024
"""Free space the audit log's file system must have for a call to run under ``[audit] required``
(bytes): room for a line or two of the largest kind."""


def _free_bytes(fd: int) -> int | None:
    """Bytes free to an unprivileged writer on the file system of ``fd``; None where unknown."""
    fstatvfs = getattr(os, "fstatvfs", None)
    if fstatvfs is None:  # pragma: no cover - Windows
        return None
    try:
        info = fstatvfs(fd)
    except OSError:
        return None
    return int(info.f_bavail * info.f_frsize)


def _cut_torn_tail(fd: int) -> None:
    """Cut a file that does not end with a newline back to its last newline (a line torn by a
    crash or a full disk), so every line that remains is a whole record."""
    size = os.fstat(fd).st_size
    end = size
    while end > 0:
        start = max(0, end - 65536)
        os.lseek(fd, start, os.SEEK_SET)  # reads only: every write appends (O_APPEND)
        block = os.read(fd, end - start)
        if end == size and block.endswith(b"\n"):
            return
        cut = block.rfind(b"\n")
        if cut >= 0:
            os.ftruncate(fd, start + cut + 1)
            logger.warning("cut a torn last line (%d bytes) off the audit log", size - start - cut - 1)
            return
        end = start
    if size:
        os.ftruncate(fd, 0)


@dataclass(eq=False)
class AuditLog:
    """The append-only audit file.

    Args:
        path: the log file (its directory is created, mode 0700).
        required: refuse calls while the log cannot be written.
        max_bytes: rotate before the file would grow past this size.
        keep: rotated files kept.
        scrubber: how arguments are scrubbed.
    """

    path: Path
    required: bool
    max_bytes: int
    keep: int
    scrubber: Scrubber
    _fd: int | None = field(default=None, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _failure: str | None = field(default=None, init=False, repr=False)
    _write_failed: bool = field(default=False, init=False, repr=False)

    @classmethod
    def from_config(cls, config: AuditConfig, environ: Mapping[str, str]) -> AuditLog:
        """The log of ``[audit]`` (its path: ``[audit] path`` or ``default_audit_path(environ)``),
        opened now. A log that cannot be opened is reported at ERROR (and, when required, every
        call is refused until it can be); it does not stop the server.

        Raises:
            ConfigError: no path is set and the environment names no home directory.
        """
        path = Path(config.path).expanduser() if config.path else default_audit_path(environ)
        log = cls(
            path=path.absolute(),
            required=config.required,
            max_bytes=config.max_bytes,
            keep=config.keep,
            scrubber=Scrubber.of(config),
        )
        log.ready()
        return log

    @property
    def files(self) -> list[Path]:
        """The log file and its rotated names (protected paths when they lie in a root)."""
        return [self.path, *(self._rotated(n) for n in range(1, self.keep + 1))]

    @property
    def failure(self) -> str | None:
        """Why the log cannot be written now, or None."""
        return self._failure

    def _rotated(self, number: int) -> Path:
        return self.path.with_name(f"{self.path.name}.{number}")

    def _open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        # Read too: a torn last line is found and cut at open (_cut_torn_tail).
        flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | compat.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(self.path, flags, 0o600)
        try:
            compat.fchmod(fd, 0o600)
            _cut_torn_tail(fd)
        except OSError:
            os.close(fd)
            raise
        self._fd = fd

    def _close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def _current(self) -> bool:
        """True when the open descriptor is still the file at ``path`` (not moved away by a
        rotation outside the server, not removed)."""
        if self._fd is None:
            return False
        try:
            on_disk = os.stat(self.path, follow_symlinks=False)
        except OSError:
            return False
        opened = os.fstat(self._fd)
        return (on_disk.st_dev, on_disk.st_ino) == (opened.st_dev, opened.st_ino)

    def ready(self) -> bool:
        """Whether a call may run under ``[audit] required``: the log is open (reopened when it was
        moved or removed), the last write succeeded, and its file system has at least
        ``MIN_FREE_BYTES`` free now. Returns False, logs the reason at ERROR and keeps it as
        ``failure`` otherwise. A refused call's own line is still written when it can be, and
        its success clears a failed write: the next call may run."""
        with self._lock:
            if not self._current():
                self._close()
                try:
                    self._open()
                except OSError as exc:
                    self._fail(f"cannot open the audit log {self.path}: {exc.strerror or exc}")
                    return False
                if not self._write_failed:
                    self._failure = None
            if self._write_failed:
                return False
            assert self._fd is not None
            free = _free_bytes(self._fd)
            if free is not None and free < MIN_FREE_BYTES:
                self._fail(
                    f"the disk holding the audit log {self.path} is full ({free} bytes free, "
                    f"{MIN_FREE_BYTES} needed)"
                )
                return False
            self._failure = None
            return True

    def _fail(self, reason: str) -> None:
        if reason != self._failure:
            logger.error("%s%s", reason, " - calls are refused ([audit] required)" if self.required else "")
        self._failure = reason

    def write(self, record: Mapping[str, Any]) -> bool:
        """Append ``record`` as one JSON line, rotating first when the file would pass
        ``max_bytes``. Blocking; thread-safe. Returns False (logged at ERROR) when it failed; a
        line written in part (a short write on a full disk) is cut off again, so the file never
        holds a torn line, and until a later write succeeds ``ready`` is False."""
        line = (json.dumps(record, ensure_ascii=False, separators=(",", ":"), default=str) + "\n").encode(
            "utf-8", "backslashreplace"
        )
        with self._lock:
            try:
                if not self._current():
                    self._close()
                    self._open()
                assert self._fd is not None
                if os.fstat(self._fd).st_size + len(line) > self.max_bytes:
                    self._rotate()
                    assert self._fd is not None
                self._append(self._fd, line)
            except OSError as exc:
                self._close()
                self._write_failed = True
                self._fail(f"cannot write the audit log {self.path}: {getattr(exc, 'strerror', None) or exc}")
                return False
            self._write_failed = False
            self._failure = None
            return True

    @staticmethod
    def _append(fd: int, line: bytes) -> None:
        """Write ``line`` whole at the end of ``fd`` (``O_APPEND``), or cut the file back to where
        it ended before and raise.

        Raises:
            OSError: the write failed or was short (the file is as it was).
        """
        start = os.fstat(fd).st_size
        written = 0
        try:
            written = os.write(fd, line)
            if written != len(line):
                raise OSError(errno.ENOSPC, f"short write ({written} of {len(line)} bytes)")
        except OSError:
            if written:  # no torn line: cut back to the newline the file ended with
                os.ftruncate(fd, start)
            raise

    def _rotate(self) -> None:
        self._close()
        for number in range(self.keep - 1, 0, -1):
            if os.path.lexists(self._rotated(number)):
                self._rotated(number).replace(self._rotated(number + 1))
        self.path.replace(self._rotated(1))
        self._open()

    def close(self) -> None:
        """Close the file (a later ``write`` reopens it)."""
        with self._lock:
            self._close()

    def record(
        self,
        *,
        session: str,
        client: str | None,
        tool: str,
        arguments: Mapping[str, Any],
        result: ToolResult,
        approval: str,
        approval_rule: str | None,
        refused_by: str | None,
        began: float,
        profile: str | None = None,
        ran_commands: bool = False,
    ) -> dict[str, Any]:
        """The line of one finished call.

        Args:
            refused_by: the error code when a policy (path, command, approval, audit) refused
                the call; None when it ran.
            began: ``time.monotonic()`` when the call arrived.
            profile: the ``[profiles]`` name the call was served under (its token's, or the one
                chosen at start); None: none (the line then has no ``profile`` key).
            ran_commands: the tool's arguments are not its command lines (a declared tool,
                ``ToolSpec.commands``): the command lines its result reports are logged under
                ``commands``, scrubbed. False: they are dropped (shellcommand's are its
                ``commands`` argument, already logged). Decided by the tool, never by an
                argument's name.
        """
        raw_args = json.dumps(arguments, ensure_ascii=False, default=str).encode("utf-8", "surrogatepass")
        output = output_digest(result)
        line: dict[str, Any] = {
            "time": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "session": session,
            "client": None if client is None else client[:MAX_CLIENT_CHARS],
            "tool": tool,
            "arguments": self.scrubber.arguments(arguments),
            "decision": "refused" if refused_by else "allowed",
            "rule": refused_by,
            "approval": approval,
            "approval_rule": approval_rule,
            "result": "error" if result.is_error else "ok",
            "error_code": result.error.code if result.error else None,
            "duration_ms": round((time.monotonic() - began) * 1000, 1),
            "bytes_in": len(raw_args),
            "bytes_out": output["bytes"],
            "output_sha256": output["sha256"],
        }
        if profile is not None:
            line["profile"] = profile
        facts = result_facts(result)
        if "commands" in facts and ran_commands:
            facts["commands"] = [self.scrubber.text(command) for command in facts["commands"]]
        else:
            facts.pop("commands", None)
        line.update(facts)
        return line
