"""The one exception hierarchy of mcp-localtools.

Every error has a stable ``code`` (a short snake_case string) that tests, the JSON command
line and clients can rely on; messages may be reworded, codes may not.

::

    LocalToolsError
    ├── ConfigError                 start-up: bad config key or value, missing root, duplicate tool
    │   └── ConfigProblems          the start-up check's every problem (``Problem``) at once
    ├── SpecError                   a tool's spec cannot be registered: a bug, not the config
    ├── RegexError                  RE2 refuses a pattern; each caller words it as its own error
    ├── ScanError                   a command string cannot be read reliably (the policy refuses it)
    ├── SandboxGone                 a connection's sandbox could not start, or has ended
    ├── UnknownToolError            no tool of that name (a protocol error -32602 over MCP)
    └── ToolError                   a tool call failed; becomes an ``isError`` result
        ├── InvalidArguments        the arguments failed the tool's args model
        ├── InvalidPath             empty path, NUL byte, unusable form
        ├── NotFound                the path does not exist
        ├── NotAFile                expected a regular file (got a directory, FIFO, device, ...)
        ├── NotADirectory           expected a directory
        ├── AlreadyExists           the destination exists and the call did not allow replacing it
        ├── TooLarge                a size cap was exceeded
        ├── UnsupportedContent      the content cannot be handled in the requested way
        ├── Conflict                the file changed since it was read (``expectedSha256``)
        ├── NoMatch                 an edit's text or line block was not found in the file
        ├── AmbiguousMatch          it was found a different number of times than expected
        ├── FileSystemError         an operating-system error, translated
        │   └── NoSpace             the disk (or the quota) is full: nothing was written
        ├── ToolTimeout             the call ran out of time
        └── PolicyViolation         refused by policy (the command line exits 2)
            ├── OutsideAllowedRoots the path resolves outside every allowed root
            ├── SymlinkRefused      a symlink where the policy or the operation forbids one
            ├── ProtectedPath       a protected path (.git/config, .git/hooks, ...) may not change
            ├── CommandRefused      the execution policy refused a command
            ├── SandboxUnavailable  no sandbox can contain commands here (fail closed)
            ├── ApprovalDenied      the person asked (``[approval]``) said no
            ├── ApprovalTimeout     no answer came within ``[approval] timeout_seconds``
            ├── ApprovalUnanswered  the question was cancelled or failed: nobody answered
            ├── ApprovalUnavailable the client cannot ask a person (no elicitation support)
            └── AuditUnavailable    ``[audit] required`` and the audit log cannot be written

Foreign exceptions (``OSError``, ``ValidationError``, ...) are translated into these at one
boundary per tool group with ``raise ... from exc``.
"""

from __future__ import annotations

import errno
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

__all__ = [
    "AlreadyExists",
    "AmbiguousMatch",
    "ApprovalDenied",
    "ApprovalTimeout",
    "ApprovalUnanswered",
    "ApprovalUnavailable",
    "AuditUnavailable",
    "CommandRefused",
    "ConfigError",
    "ConfigProblems",
    "Conflict",
    "FileSystemError",
    "InvalidArguments",
    "InvalidPath",
    "LocalToolsError",
    "NetworkError",
    "NoMatch",
    "NoRoots",
    "NoSpace",
    "NotADirectory",
    "NotAFile",
    "NotFound",
    "OutsideAllowedRoots",
    "PolicyViolation",
    "Problem",
    "ProtectedPath",
    "RegexError",
    "SandboxGone",
    "SandboxUnavailable",
    "SandboxesBusy",
    "ScanError",
    "SpecError",
    "SymlinkRefused",
    "TooLarge",
    "ToolError",
    "ToolTimeout",
    "UnknownToolError",
    "UnsupportedContent",
    "from_os_error",
    "printable",
    "raise_problems",
]

PATH_MAX = 4096
"""Longest path, in bytes (UTF-8), a tool accepts: Linux's ``PATH_MAX``; longer ones are refused
before any work is done on them."""

SHOWN_CHARS = 300
"""Most characters of a path or name that a message or text rendering repeats (``printable``)."""


def printable(text: str, limit: int = SHOWN_CHARS) -> str:
    """``text`` (a path or file name) as a message or text rendering may repeat it: control
    characters (C0, DEL, C1) and the Unicode line and paragraph separators escaped (``\\n``,
    ``\\x1b``, ``\\u2028``), so a name can neither add a line nor drive a terminal; and, when
    longer than ``limit`` characters, cut in the middle with ``…`` and the count left out.

    Structured content needs none of this: it is JSON, which escapes on its own."""
    if len(text) > limit:
        keep = max(limit // 2 - 20, 8)
        text = f"{text[:keep]}…[{len(text) - 2 * keep} characters]…{text[-keep:]}"
    if not _NEEDS_ESCAPE.search(text):
        return text
    return _NEEDS_ESCAPE.sub(lambda match: repr(match.group())[1:-1], text)


_NEEDS_ESCAPE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


class LocalToolsError(Exception):
    """Base class of every error this package raises on purpose."""

    code: ClassVar[str] = "error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ConfigError(LocalToolsError):
    """The configuration cannot be used; raised at start-up, before any connection is accepted.

    The message names the offending key path (``paths.allowed_roots[0]``) or file and the reason.
    """

    code = "config_error"


_KEY = re.compile(r"^[A-Za-z_][\w-]*(?:\.[\w-]+|\[\d+\])*$")
"""A config key path (``tools.enabled``, ``paths.allowed_roots[0]``)."""


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with the config: ``key`` is its key path (``tools.enabled``,
    ``profiles.dev.token_file``; ``""`` when no key holds it) and ``message`` what is wrong and
    what to do."""

    key: str
    message: str

    def __str__(self) -> str:
        return f"{self.key}: {self.message}" if self.key else self.message

    @classmethod
    def of(cls, error: ConfigError, *, under: str = "") -> Problem:
        """The problem ``error`` reports (its message's leading key path becomes ``key``), its key
        put under ``under`` (``profiles.dev``) when given."""
        head, sep, rest = error.message.partition(": ")
        key, message = (head, rest) if sep and _KEY.match(head) else ("", error.message)
        return cls(key, message).under(under) if under else cls(key, message)

    def under(self, prefix: str) -> Problem:
        """This problem with its key put under ``prefix`` (``profiles.dev``)."""
        return Problem(f"{prefix}.{self.key}" if self.key else prefix, self.message)


class ConfigProblems(ConfigError):
    """The start-up check (``checks.check``) found problems; ``problems`` holds every one, the
    message lists them."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = tuple(problems)
        lines = [str(problem) for problem in self.problems]
        message = lines[0] if len(lines) == 1 else f"{len(lines)} problems:\n  " + "\n  ".join(lines)
        super().__init__(message)


def raise_problems(problems: Sequence[Problem]) -> None:
    """Raise ``ConfigProblems`` when there is any problem.

    Raises:
        ConfigProblems: ``problems`` is not empty.
    """
    if problems:
        raise ConfigProblems(problems)


class RegexError(LocalToolsError, ValueError):
    """A pattern RE2 does not accept (``regexes.compile_re2``); ``reason`` is RE2's own
    explanation, as text, which each caller words as its own error."""

    code = "regex_error"

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ScanError(LocalToolsError):
    """A command string cannot be read reliably (``policy/sh_lexer.py``, ``win_lexer.py``,
    ``scanner.py``); the policy refuses it."""

    code = "scan_error"


class SandboxGone(LocalToolsError):
    """A client connection's sandbox could not start, or has ended (its supervisor exited)
    (``processes/supervision.py``)."""

    code = "sandbox_gone"


class SpecError(LocalToolsError):
    """A tool's ``ToolSpec`` cannot be registered (a malformed or taken name, no title or
    description, an undocumented field, a self-referring output model): a bug in the tool or in
    the code that composes the registry, not in the config (that is ``ConfigError``)."""

    code = "spec_error"


class UnknownToolError(LocalToolsError):
    """No tool is registered under the requested name."""

    code = "unknown_tool"


class ToolError(LocalToolsError):
    """A tool call failed in a way the caller can act on; the message says what and what to do."""

    code = "tool_error"


class InvalidArguments(ToolError):
    code = "invalid_arguments"


class InvalidPath(ToolError):
    code = "invalid_path"


class NotFound(ToolError):
    code = "not_found"


class NotAFile(ToolError):
    code = "not_a_file"


class NotADirectory(ToolError):
    code = "not_a_directory"


class AlreadyExists(ToolError):
    code = "already_exists"


class TooLarge(ToolError):
    code = "too_large"


class UnsupportedContent(ToolError):
    code = "unsupported_content"


class Conflict(ToolError):
    code = "conflict"


class NoMatch(ToolError):
    """The text or line block an edit names is not in the file; the message shows the closest region."""

    code = "no_match"


class AmbiguousMatch(ToolError):
    """The text or block matches more (or fewer) places than expected; the message lists them."""

    code = "ambiguous_match"


class FileSystemError(ToolError):
    code = "os_error"


class NoSpace(FileSystemError):
    """The file system holding the target is full (``ENOSPC``) or the user's quota is used up
    (``EDQUOT``); the write was abandoned whole (atomic writes leave nothing half-written)."""

    code = "no_space"


class ToolTimeout(ToolError):
    code = "timeout"


class NetworkError(ToolError):
    """A fetch failed on the network: connection refused, DNS failure, TLS error, bad response."""

    code = "network_error"


class PolicyViolation(ToolError):
    """A refusal by the path or execution policy (the JSON command line exits with 2)."""

    code = "policy_violation"


class OutsideAllowedRoots(PolicyViolation):
    code = "outside_roots"


class NoRoots(PolicyViolation):
    """The server has no allowed roots: none was configured and the client sent none (MCP roots)."""

    code = "no_roots"


class SymlinkRefused(PolicyViolation):
    code = "symlink_refused"


class ProtectedPath(PolicyViolation):
    code = "protected_path"


class CommandRefused(PolicyViolation):
    code = "command_refused"


class SandboxUnavailable(PolicyViolation):
    """No sandbox backend works here and the sandbox is not turned off: commands are refused."""

    code = "sandbox_unavailable"


class SandboxesBusy(ToolError):
    """Every command sandbox the server may keep (``[exec.sandbox] max_sandboxes``) is in use by a
    connection that is running something or used it within the last minute: a new connection's
    command is refused rather than another's sandbox closed."""

    code = "sandboxes_busy"


class ApprovalDenied(PolicyViolation):
    """The call needed a person's approval (``[approval] require``) and they declined it."""

    code = "approval_denied"


class ApprovalTimeout(PolicyViolation):
    """The call needed approval and no answer came within ``[approval] timeout_seconds``."""

    code = "approval_timeout"


class ApprovalUnanswered(PolicyViolation):
    """The call needed approval and nobody answered: the question was cancelled (dismissed,
    closed) or failed (an error, an answer that could not be read). Unlike a decline, it may be
    asked again."""

    code = "approval_unanswered"


class ApprovalUnavailable(PolicyViolation):
    """The call needed approval and the client cannot ask a person (it declared no elicitation
    support, or the connection has no way back to it); ``[approval] on_unsupported = "refuse"``."""

    code = "approval_unavailable"


class AuditUnavailable(PolicyViolation):
    """``[audit] required = true`` and the audit log cannot be written: every call is refused."""

    code = "audit_unavailable"


def from_os_error(exc: OSError, path: str) -> ToolError:
    """Translate an ``OSError`` raised while working on ``path`` into a ``ToolError``.

    Returns (does not raise) the translated error so callers write ``raise from_os_error(e, p) from e``.
    """
    reason = exc.strerror or str(exc)
    path = printable(path)
    if exc.errno == errno.ENOENT:
        return NotFound(f"path does not exist: {path}")
    if exc.errno == errno.EISDIR:
        return NotAFile(f"expected a file but got a directory: {path}")
    if exc.errno == errno.ENOTDIR:
        return NotADirectory(f"not a directory: {path}")
    if exc.errno == errno.EEXIST:
        return AlreadyExists(f"path already exists: {path}")
    if exc.errno == errno.ELOOP:
        return SymlinkRefused(f"refusing to follow a symlink at {path}")
    if exc.errno in (errno.EACCES, errno.EPERM):
        return FileSystemError(f"permission denied: {path}")
    if exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):
        what = "disk quota exceeded" if exc.errno != errno.ENOSPC else "no space left on the device"
        return NoSpace(f"{what} while writing {path}; free some space (or ask the user to) and try again")
    return FileSystemError(f"{reason}: {path}")
