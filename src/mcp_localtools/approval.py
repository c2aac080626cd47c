"""Approval: which calls wait for a person's yes, what the person is shown, and what they said.

``[approval] require`` names tools (``"shellcommand"``) and classes (``"destructive"``: tools
annotated destructive; ``"writes"``: every tool that is not read-only; ``"exec"``: the command
tools; ``"all"``). A call that needs approval is asked about before it runs; the MCP adapter
(``server/approval.py``) asks through MCP elicitation and this module knows nothing of MCP: it decides,
renders the question (``prompt``), reads the answer (``read_answer``) and remembers "approve for
this session" answers per session (bounded; released when the session ends).
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any, Literal

from pydantic import ValidationError

from mcp_localtools.config import APPROVAL_CLASSES, ApprovalConfig, AuditConfig
from mcp_localtools.errors import ApprovalDenied, ConfigError, ScanError, ToolError
from mcp_localtools.policy.commandrules import REFUSED_ENV
from mcp_localtools.regexes import compile_re2, searchable
from mcp_localtools.scrubber import Scrubber
from mcp_localtools.spec import ToolSpec
from mcp_localtools.units import printable

if TYPE_CHECKING:  # the scanner is imported by the first command read (the exec tools import it)
    from mcp_localtools.policy.scanner import Dialect

__all__ = [
    "APPROVE",
    "APPROVE_SESSION",
    "DECISION_FIELD",
    "DENY",
    "Answer",
    "ApprovalPolicy",
    "ProgramLocator",
    "read_answer",
]

APPROVE = "approve"
APPROVE_SESSION = "approve for this session"
DENY = "deny"
DECISION_FIELD = "decision"
"""The one field of the approval form: ``approve``, ``approve for this session`` or ``deny``."""

MAX_PROMPT_CHARS = 6000
"""Longest question shown to the person (characters); a call whose question would be longer is
refused unasked (``ApprovalDenied``), never asked about in part."""
_MAX_CONTENT_CHARS = 1000
"""Most characters of a content argument (``[audit] content_keys``) the question shows; its size
is shown with it."""
_MAX_SESSION_APPROVALS = 1000
"""Most "approve for this session" answers remembered per session (the oldest is dropped)."""

Answer = Literal["approved", "approved_for_session", "denied", "cancelled", "failed"]
"""What became of a question: approved (this call, or for the session), denied (the person said
no), cancelled (dismissed: nobody answered) or failed (an answer that could not be read)."""

ProgramLocator = Callable[[str], Awaitable[str | None]]
"""``await locate(name)``: where a call's commands would run the bare program ``name`` from, when
that lies outside every root (its ``PATH`` directory and its real path); None otherwise."""


def read_answer(action: str, content: Mapping[str, Any] | None) -> Answer:
    """What the person said, from an elicitation answer: ``action`` (``accept``, ``decline``,
    ``cancel``) and the form ``content``. ``decline``, or an accepted form whose decision is
    ``deny``, is a no (``denied``); ``cancel`` is no answer (``cancelled``); an accepted form
    without a decision this reads, or another action, is ``failed``. Only ``approve`` and
    ``approve for this session`` run the call (fail closed)."""
    if action == "decline":
        return "denied"
    if action == "cancel":
        return "cancelled"
    decision = content.get(DECISION_FIELD) if action == "accept" and content is not None else None
    if decision == APPROVE:
        return "approved"
    if decision == APPROVE_SESSION:
        return "approved_for_session"
    return "denied" if decision == DENY else "failed"


@dataclass(eq=False)
class ApprovalPolicy:
    """The ``[approval]`` section applied to the registered tools.

    Build it with ``ApprovalPolicy.create``.
    """

    config: ApprovalConfig
    scrubber: Scrubber = field(default_factory=lambda: Scrubber.of(AuditConfig()))
    """Names the content arguments (``content_keys``), the only ones the question cuts; it masks
    nothing in the question (the audit log masks)."""
    _approved: dict[str, dict[str, None]] = field(default_factory=dict, init=False, repr=False)

    @classmethod
    def create(
        cls, config: ApprovalConfig, known_tools: Iterable[str], *, scrubber: Scrubber | None = None
    ) -> ApprovalPolicy:
        """The policy of ``config``; ``known_tools`` are every tool name the server knows (enabled
        or not); ``scrubber`` masks secrets in the questions (default: ``[audit]``'s defaults).

        Raises:
            ConfigError: a ``require`` entry is neither a known tool nor a class.
        """
        known = set(known_tools)
        for name in config.require:
            if name not in known and name not in APPROVAL_CLASSES:
                raise ConfigError(
                    f"approval.require: {name!r} is neither a tool nor one of {', '.join(APPROVAL_CLASSES)}"
                )
        return cls(config) if scrubber is None else cls(config, scrubber)

    @property
    def active(self) -> bool:
        """True when some call may need approval."""
        return bool(self.config.require)

    def rule_for(self, spec: ToolSpec[Any]) -> str | None:
        """The ``require`` entry that makes a call of ``spec`` need approval, or None."""
        hints = spec.annotations
        for entry in self.config.require:
            if (
                entry in (spec.name, spec.builtin_name, "all")  # a renamed tool is still itself
                or (entry == "destructive" and hints.destructive)
                or (entry == "writes" and not hints.read_only)
                or (entry == "exec" and spec.group == "exec")
            ):
                return entry
        return None

    async def trusted(
        self, spec: ToolSpec[Any], arguments: Mapping[str, Any], locate: ProgramLocator
    ) -> bool:
        """True when a shellcommand call runs only ``trusted_commands`` (so it is not asked).

        Every command of the call is read with the command scanner of its shell; every program
        it runs must be a trusted name written as a bare word (a wrapper's program counts, not
        the wrapper; a word with a ``/`` is a path, never trusted), and ``locate`` must find it
        in a ``PATH`` directory outside the roots, through its real path (a program written into
        a root by the file tools is asked about whatever its name). No command may redirect
        (``>``) or assign a variable (``PATH=./bin ls``, ``env LD_PRELOAD=... ls``). Anything the
        scanner cannot read is asked about.

        Args:
            spec: the tool.
            arguments: the wire arguments of the call.
            locate: ``await locate(name)`` is where the call's commands would run the program
                ``name`` from when that lies outside every root, else None (``Registry.locate``).
        """
        trusted = {name.lower() for name in self.config.trusted_commands}
        commands = arguments.get("commands")
        if (
            (spec.builtin_name or spec.name) != "shellcommand"
            or not trusted
            or not isinstance(commands, list)
            or not commands
            or arguments.get("env")  # any env may change what a trusted program runs
        ):
            return False
        dialect = _dialect(arguments.get("shell"))
        if dialect is None:
            return False
        words: set[str] = set()
        for command in commands:
            found = _trusted_words(command, dialect, trusted)
            if found is None:
                return False
            words |= found
        for word in sorted(words):
            if await locate(word) is None:
                return False
        return True

    def session_key(self, spec: ToolSpec[Any], arguments: Mapping[str, Any]) -> str:
        """What "approve for this session" approves: this tool with exactly these arguments."""
        return spec.name + " " + json.dumps(arguments, sort_keys=True, ensure_ascii=False, default=str)

    def approved_for_session(self, session_id: str, key: str) -> bool:
        """True when the person approved ``key`` for the rest of ``session_id``."""
        return key in self._approved.get(session_id, {})

    def remember(self, session_id: str, key: str) -> None:
        """Record an "approve for this session" answer (the oldest of a full session is dropped)."""
        approved = self._approved.setdefault(session_id, {})
        approved[key] = None
        while len(approved) > _MAX_SESSION_APPROVALS:
            del approved[next(iter(approved))]

    async def forget(self, session_id: str) -> None:
        """Drop the session's approvals (``Registry.on_session_end`` calls it)."""
        self._approved.pop(session_id, None)

    def prompt(
        self,
        spec: ToolSpec[Any],
        arguments: Mapping[str, Any],
        *,
        rule: str,
        base_dir: str,
        preview: str | None = None,
        details: str | None = None,
    ) -> str:
        """The question shown to the person: the tool, exactly what it will do, and why they are
        asked. Commands (the ``commands`` argument, a declared tool's rendered lines), paths, URLs
        and ``env`` are shown verbatim: never masked (the person is the one whose secrets they are,
        and a masked ``SECRET="$(cmd)"`` hides what runs) and never cut. Only content arguments
        (``[audit] content_keys``: ``content``, ``stdin``, ...) are cut to 1,000 characters, with
        their size. Characters that are not printable (ESC, CR, bidirectional controls, ...) are
        shown escaped (``units.printable``).

        Args:
            spec: the tool.
            arguments: the wire arguments of the call.
            rule: the ``require`` entry that matched.
            base_dir: where relative paths and a missing ``workDir`` resolve.
            preview: what a dry run of the call reported (the diff of an edit), when there is one.
            details: what the tool shows of the content the call runs (``ToolSpec.pinned``: a
                script's first lines, size and sha256), when there is some.

        Raises:
            ApprovalDenied: the question would be longer than ``MAX_PROMPT_CHARS``: the call is
                refused without asking rather than asking about a part of it.
        """
        try:
            text = "\n".join(self._question_lines(spec, arguments, rule, base_dir, preview, details))
        except _TooLong as exc:
            raise _too_long(spec.name, exc.chars) from None
        if len(text) > MAX_PROMPT_CHARS:
            raise _too_long(spec.name, len(text))
        return text

    def _question_lines(
        self,
        spec: ToolSpec[Any],
        arguments: Mapping[str, Any],
        rule: str,
        base_dir: str,
        preview: str | None,
        details: str | None,
    ) -> list[str]:
        shown = dict(arguments)
        lines = [self.config.prompt.strip()] if self.config.prompt.strip() else []
        lines.append(f"Allow {spec.title} ({spec.name})?")
        if spec.group == "exec":
            commands, fixed_dir = self._commands(spec, arguments, shown)
            if commands:
                lines.append("Commands:")
                lines += ["  $ " + _visible(command).replace("\n", "\n  > ") for command in commands]
            if "path" in shown:
                lines.append(f"Script: {_visible(str(shown.pop('path')))}")
            work_dir = shown.pop("workDir", None)
            lines.append(f"In: {_visible(str(fixed_dir or work_dir or base_dir))}")
            if details:
                lines.append(_visible(details))
        elif "path" in shown:
            lines.append(f"Path: {_visible(str(shown.pop('path')))}")
        for key in ("source", "destination"):
            if key in shown:
                lines.append(f"{key.capitalize()}: {_visible(str(shown.pop(key)))}")
        if preview:
            lines += ["Changes:", _visible(preview)]
        lines += self._other_arguments(shown)
        why = f"asked because [approval] require has {rule!r}; relative paths from {_visible(base_dir)}"
        lines.append(f"({why})")
        return lines

    def _other_arguments(self, shown: Mapping[str, Any]) -> list[str]:
        """The question's lines for the arguments not shown above it: ``key: value`` (JSON for
        lists and objects), a text of several lines as ``  | `` lines; content arguments cut."""
        lines: list[str] = []
        for key, given in shown.items():
            if given in (None, [], {}, False) and key not in ("overwrite", "recursive"):
                continue
            value = self._content_cut(str(key), given)
            if isinstance(value, str) and "\n" in value:
                lines += [f"{_visible(str(key))}:", *(f"  | {line}" for line in _visible(value).splitlines())]
                continue
            rendered = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
            lines.append(f"{_visible(str(key))}: {_visible(str(rendered))}")
        return lines

    def _content_cut(self, key: str, value: Any) -> Any:
        """``value`` with every content argument in it (``[audit] content_keys``, at any depth:
        editfile's ``edits[].newText``) cut to ``_MAX_CONTENT_CHARS`` with its size; the rest as is."""
        if key in self.scrubber.content_keys and value is not None:
            text = "\n".join(map(str, value)) if isinstance(value, list) else str(value)
            if len(text) <= _MAX_CONTENT_CHARS:
                return text
            return text[:_MAX_CONTENT_CHARS] + f"[... {len(text)} characters in all]"
        if isinstance(value, Mapping):
            return {str(k): self._content_cut(str(k), v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self._content_cut(key, item) for item in value]
        return value

    def _commands(
        self, spec: ToolSpec[Any], arguments: Mapping[str, Any], shown: dict[str, Any]
    ) -> tuple[list[str], str | None]:
        """The command lines of an exec call, verbatim, and the working directory its tool fixes:
        the ``commands`` argument (taken out of ``shown``), or what ``ToolSpec.commands`` renders
        for a declared tool (its arguments stay in ``shown``)."""
        given = shown.pop("commands", None)
        if spec.commands is None:
            return ([str(command) for command in given] if isinstance(given, list) else []), None
        try:
            rendered, work_dir = spec.commands(arguments)
        except (ToolError, ValidationError):  # the call's own checks refuse it; nothing to show
            return [], None
        return list(rendered), work_dir

    def choices(self, *, sessions: bool) -> list[str]:
        """The answers offered: approve, approve for this session (only where a session exists
        and ``session_approval`` is on), deny."""
        if sessions and self.config.session_approval:
            return [APPROVE, APPROVE_SESSION, DENY]
        return [APPROVE, DENY]

    def form_schema(self, *, sessions: bool) -> dict[str, Any]:
        """The elicitation form (a restricted JSON Schema): one required ``decision`` enum."""
        return {
            "type": "object",
            "properties": {
                DECISION_FIELD: {
                    "type": "string",
                    "title": "Decision",
                    "description": "approve runs the call; deny refuses it",
                    "enum": self.choices(sessions=sessions),
                }
            },
            "required": [DECISION_FIELD],
        }


def _trusted_words(command: Any, dialect: Dialect, trusted: set[str]) -> set[str] | None:
    """The program words of ``command`` when each is a bare trusted name and the command neither
    redirects nor assigns; None when it must be asked about."""
    from mcp_localtools.policy.gittrust import git_may_run_programs
    from mcp_localtools.policy.scanner import scan

    if not isinstance(command, str) or ">" in command or _assigns_program_env(command):
        return None
    try:
        found = scan(command, dialect)
    except ScanError:
        return None
    programs = [i for i in found.invocations if not i.wrapper]
    if found.background or not programs:
        return None
    if any(i.dynamic or i.glob for i in found.invocations):
        return None
    if any(i.name not in trusted or any(sep in i.word for sep in "/\\") for i in programs):
        return None
    if any(i.name in ("git", "git.exe") and git_may_run_programs(i.args) for i in programs):
        return None
    return {i.word for i in programs}


_ASSIGNMENT = r"(?:^|[\s;&|(){}`'\"])([A-Za-z_][A-Za-z0-9_]*)(?:\[[^\]]*\])?\+?="
"""A ``NAME=value`` word (RE2: linear time; the backtracking ``re`` took 0.7 s on ``a[`` repeated)."""


@functools.cache
def _assignment() -> Any:
    return compile_re2(_ASSIGNMENT)


def _assigns_program_env(command: str) -> bool:
    """True when a ``NAME=value`` word anywhere in ``command`` (a command's environment prefix,
    ``env``'s arguments, ``export``) sets ``PATH`` or a ``REFUSED_ENV`` name: it may change which
    program runs (``PATH=./bin ls``) or what it loads (``LD_PRELOAD``)."""
    for match in _assignment().finditer(searchable(command)):
        name = match.group(1).upper()
        if name == "PATH" or any(fnmatchcase(name, pattern) for pattern in REFUSED_ENV):
            return True
    return False


def _dialect(shell: Any) -> Dialect | None:
    """The command dialect of shellcommand's ``shell`` argument; None where it is not known for
    sure (fish, or ``auto`` on Windows, where the detected shell decides)."""
    name = shell if isinstance(shell, str) else "auto"
    name = name.strip().lower()
    if name == "auto":
        return None if sys.platform == "win32" else "sh"
    if name in ("bash", "zsh", "sh", "dash", "ksh"):
        return "sh"
    return "powershell" if name in ("pwsh", "powershell") else None


class _TooLong(Exception):
    """One part of the question is alone longer than the whole question may be."""

    def __init__(self, chars: int) -> None:
        super().__init__(chars)
        self.chars = chars


def _visible(text: str) -> str:
    """``text`` as the question shows it: escaped (``units.printable``), newlines kept.

    Raises:
        _TooLong: ``text`` alone is longer than ``MAX_PROMPT_CHARS`` (checked before escaping,
            so a huge argument costs nothing).
    """
    if len(text) > MAX_PROMPT_CHARS:
        raise _TooLong(len(text))
    return printable(text, newline="\n")


def _too_long(tool: str, chars: int) -> ApprovalDenied:
    return ApprovalDenied(
        f"{tool} was not run: it is too long to show for approval ({chars} characters; a question "
        f"shows at most {MAX_PROMPT_CHARS}), and nobody is asked about a part of a call. Nobody was "
        "asked; split it into smaller calls (fewer or shorter commands, a smaller edit)"
    )
