"""The audit log: one JSON object per line for every tool call, scrubbed, append-only.

A line (``AuditLog.record``) holds: ``time`` (UTC, ISO 8601), ``session``, ``client``, ``tool``,
``arguments`` (scrubbed, below), ``decision`` (``allowed`` / ``refused``) and ``rule`` (the error
code of a refusal), ``approval`` (``not_required``, ``approved``, ``approved_for_session``,
``session`` (approved earlier in the session), ``denied``, ``timeout``, ``unsupported`` (the
client cannot ask), ``allowed_unsupported`` (ran unasked: ``on_unsupported = "allow"``), ``trusted_commands``
(ran unasked: only trusted programs),
``not_asked`` (its dry run failed, so it could not succeed)) and ``approval_rule``, ``result``
(``ok`` / ``error``) and ``error_code``, ``duration_ms`` (approval wait included), ``bytes_in``
(the arguments as JSON), ``bytes_out`` and ``output_sha256`` (the result's content; the content
itself is never logged), and, when the tool reports them, ``exit_codes`` and ``sandbox``
(commands) and ``paths`` (resolved paths touched). A call the client cancels is logged with
``error_code`` ``cancelled``; a 2026-07-28 round that only asks the approval question is not a
call (the answered round is).

Scrubbing (``Scrubber``): arguments that carry file contents (``[audit] content_keys``:
``content``, ``stdin``, ``newText``, ...) become ``{"bytes": n, "sha256": ...}``; every ``env``
value is masked; a value whose name matches ``[audit] secret_names`` (``*TOKEN*``, ``*KEY*``, ...)
is masked; in every other string, anywhere in it: ``Authorization`` credentials, well-known token
shapes and PEM private keys, a URL's password (``https://user:***@host``), secret-named query
parameters, ``-u user:password``, ``-pPASSWORD``, and ``NAME=value`` / ``name: value`` /
``--name value`` / JSON ``"name": value`` pairs with a secret-looking name; long strings are cut.

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
import re
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from mcp_localtools import compat
from mcp_localtools.config import AuditConfig
from mcp_localtools.errors import ConfigError
from mcp_localtools.results import LinkContent, TextContent, ToolResult

__all__ = [
    "MASK",
    "AuditLog",
    "Scrubber",
    "default_audit_path",
    "output_digest",
    "result_facts",
]

logger = logging.getLogger(__name__)

MASK = "***"
_MAX_STRING = 1000
"""Longest string kept in a logged argument (characters); longer ones are cut and hashed."""

_TOKEN_SHAPES = re.compile(
    r"(?i:bearer|basic|token|digest)\s+[A-Za-z0-9._~+/=-]{8,}"
    r"|\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_-]{16,}"
    r"|sk-[A-Za-z0-9_-]{16,}|sk_(?:live|test)_[A-Za-z0-9]{16,}|[rp]k_(?:live|test)_[A-Za-z0-9]{16,}"
    r"|xox[abprse]-[A-Za-z0-9-]{10,}|(?:AKIA|ASIA)[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{35}"
    r"|npm_[A-Za-z0-9]{36}|hf_[A-Za-z0-9]{30,}|pypi-[A-Za-z0-9_-]{50,}"
    r"|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)",
    re.DOTALL,
)
"""Secrets recognised by their shape alone: an ``Authorization`` scheme and its credentials,
well-known token prefixes (GitHub, GitLab, OpenAI/Anthropic, Stripe, Slack, AWS, Google, npm,
Hugging Face, PyPI), JWTs, and PEM private-key blocks."""
_URL_USERINFO = re.compile(
    r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<user>[^/\s:@'\"]*)(?::(?P<password>[^/\s@'\"]*))?@"
)
"""``scheme://user:password@host``: the password (and a user name that is itself a token, as in
``https://<token>@github.com``) is masked, the host kept."""
_USER_FLAG = re.compile(
    r"(?P<flag>(?<![\w-])(?:-u|--user)(?:[ \t]+|=))(?P<user>[^\s:'\"]+):(?P<password>[^\s'\"]+)"
)
"""curl's ``-u user:password`` / ``--user user:password``."""
_ATTACHED_P = re.compile(r"(?P<flag>(?<![\w-])-p)(?P<value>[^\s'\"-][^\s'\"]*)")
"""The MySQL/MariaDB client's ``-pPASSWORD`` (attached: ``-p 22`` and ``mkdir -p`` are left alone);
see ``_attached_password``."""
_MYSQL = re.compile(r"(?i)\b(?:mysql\w*|mariadb\w*)\b")
_FLAG_LETTERS = re.compile(r"[a-z]{1,12}")
_JSON_PAIR = re.compile(
    r'"(?P<name>[A-Za-z_][\w.-]*)"(?P<sep>\s*:\s*)(?P<value>"(?:[^"\\]|\\.)*"|[^\s,}\]]+)'
)
"""``"password": "..."`` in JSON written into a string."""
_VALUE = r"(?P<value>\"[^\"]*\"|'[^']*'|[^\s\"',;&|]+)"
_ASSIGNMENT = re.compile(r"(?P<name>\b[A-Za-z_][\w.-]*)(?P<sep>=|:(?!//)[ \t]*)" + _VALUE)
"""``NAME=value``, ``name: value`` (YAML, HTTP headers) and ``?name=value`` query parameters; a URL's
``scheme://`` is not a ``name:``, so the query parameters after it are still seen."""
_FLAG = re.compile(r"(?P<name>(?<![\w-])--?[A-Za-z][\w-]*)(?P<sep>[ \t]+)" + _VALUE)
_TOKEN_USER_CHARS = 16
"""A URL user name this long is taken for a token (``https://ghp_...@github.com``) and masked."""


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


def _digest(data: bytes) -> dict[str, Any]:
    return {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


@dataclass(frozen=True)
class Scrubber:
    """Masks secrets and replaces contents in arguments before they are logged.

    Args:
        secret_names: globs (any case) of names whose values are masked.
        content_keys: argument names whose values are file contents (logged as size + sha256).
    """

    secret_names: tuple[str, ...]
    content_keys: frozenset[str]

    @classmethod
    def of(cls, config: AuditConfig) -> Scrubber:
        return cls(tuple(name.upper() for name in config.secret_names), frozenset(config.content_keys))

    def secret_name(self, name: str) -> bool:
        """True when ``name`` looks like it holds a secret."""
        upper = name.upper().lstrip("-")
        return any(fnmatchcase(upper, pattern) for pattern in self.secret_names)

    def arguments(self, arguments: Mapping[str, Any], *, contents: bool = False) -> dict[str, Any]:
        """``arguments`` as they may be logged; with ``contents``, as they may be shown to the
        person approving the call (contents kept, cut to 1000 characters; secrets still masked)."""
        return {str(key): self._value(str(key), value, contents) for key, value in arguments.items()}

    def _value(self, key: str, value: Any, contents: bool) -> Any:
        if key in self.content_keys and value is not None:
            text = "\n".join(map(str, value)) if isinstance(value, list) else str(value)
            if contents:
                return (
                    text if len(text) <= _MAX_STRING else text[:_MAX_STRING] + f"[... {len(text)} characters]"
                )
            return _digest(text.encode("utf-8", "surrogatepass"))
        if key == "env" and isinstance(value, Mapping):
            return {str(name): MASK for name in value}
        if self.secret_name(key) and value not in (None, "", [], {}):
            return MASK
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {str(k): self._value(str(k), v, contents) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self._value(key, item, contents) for item in value]
        return value

    def text(self, text: str) -> str:
        """``text`` with secrets masked wherever they appear (``_TOKEN_SHAPES``; a URL's user
        password; ``-u user:password``; ``-pPASSWORD``; ``NAME=value``, ``name: value``, query
        parameters, ``--name value`` and JSON pairs whose name matches ``secret_names``), cut to
        1000 characters (then the original's size and sha256 follow)."""
        masked = _TOKEN_SHAPES.sub(MASK, text)
        masked = _URL_USERINFO.sub(_masked_userinfo, masked)
        masked = _USER_FLAG.sub(lambda m: f"{m['flag']}{m['user']}:{MASK}", masked)
        mysql = _MYSQL.search(masked) is not None
        masked = _ATTACHED_P.sub(lambda m: _attached_password(m, mysql=mysql), masked)
        for pattern in (_JSON_PAIR, _ASSIGNMENT, _FLAG):
            masked = pattern.sub(self._masked_pair, masked)
        if len(masked) > _MAX_STRING:
            info = _digest(text.encode("utf-8", "surrogatepass"))
            masked = masked[:_MAX_STRING] + f"[... cut: {info['bytes']} bytes, sha256 {info['sha256']}]"
        return masked

    def _masked_pair(self, match: re.Match[str]) -> str:
        if not self.secret_name(match["name"]) or match["value"].strip("\"'").startswith(MASK):
            return match[0]
        quote = '"' if match["value"].startswith('"') and match[0].startswith('"') else ""
        name = f'"{match["name"]}"' if match[0].startswith('"') else match["name"]
        return f"{name}{match['sep']}{quote}{MASK}{quote}"


def _attached_password(match: re.Match[str], *, mysql: bool) -> str:
    """``-pVALUE`` masked when the command runs a MySQL-family client, or when VALUE does not
    read as more short flags (``-pr``, ``-pv``) or a long option (``-password``)."""
    value = match["value"]
    if mysql or not _FLAG_LETTERS.fullmatch(value):
        return match["flag"] + MASK
    return match[0]


def _masked_userinfo(match: re.Match[str]) -> str:
    user = match["user"]
    if match["password"] is None:
        shown = MASK if len(user) >= _TOKEN_USER_CHARS or user == MASK else user
        return f"{match['scheme']}{shown}@"
    return f"{match['scheme']}{user}:{MASK}@"


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
    top level), ``exit_codes`` and ``sandbox`` of commands. Empty for an error."""
    data = result.structured or {}
    facts: dict[str, Any] = {}
    paths = [data[key] for key in _PATH_KEYS if isinstance(data.get(key), str)]
    if paths:
        facts["paths"] = list(dict.fromkeys(paths))
    codes = [data["exitCode"]] if "exitCode" in data else []
    for item in data.get("results", ()) if isinstance(data.get("results"), list) else ():
        if isinstance(item, Mapping) and "exitCode" in item:
            codes.append(item["exitCode"])
    if codes:
        facts["exit_codes"] = codes
    if isinstance(data.get("sandbox"), str):
        facts["sandbox"] = data["sandbox"]
    return facts


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
    ) -> dict[str, Any]:
        """The line of one finished call.

        Args:
            refused_by: the error code when a policy (path, command, approval, audit) refused
                the call; None when it ran.
            began: ``time.monotonic()`` when the call arrived.
            profile: the ``[profiles]`` name the call was served under (its token's, or the one
                chosen at start); None: none (the line then has no ``profile`` key).
        """
        raw_args = json.dumps(arguments, ensure_ascii=False, default=str).encode("utf-8", "surrogatepass")
        output = output_digest(result)
        line: dict[str, Any] = {
            "time": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "session": session,
            "client": client,
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
        line.update(result_facts(result))
        return line
