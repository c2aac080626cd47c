"""ExecutionPolicy: the limits and the command checks of shellcommand and runscript.

Built once from the ``[exec]`` config table and frozen; a call can narrow what it gets (a
shorter timeout) but never loosen the policy. Three tiers of limits (``docs/ARCHITECTURE.md``):
hard maxima in ``config/base.py``, the config's defaults under them, per-call values clamped.

``check_command`` applies, in order: NUL and length limits, the scanner (``scanner.scan``; a
command it cannot read is refused), the hard blocklist of the seed's 40 names plus
``blocked_commands`` (never shrinks), ``allowed_commands`` when ``deny_by_default`` is on,
``denied_patterns`` (RE2 syntax, linear time), and unless ``allow_dangerous`` the fork-bomb and
background-``&`` heuristics. Every step takes time linear in the command's length: the built-in
patterns are RE2's too, and the fork-bomb shape is found without a regex (a backreference makes a
backtracking regex quadratic: 65,536 bytes of one word took 21 s).

This is a guardrail against accidents, not a sandbox: a denylist cannot see what a script, an
interpreter (``python -c``) or a name computed at run time will do. See the README's security
section.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from mcp_localtools.config import ExecConfig
from mcp_localtools.errors import (
    CommandRefused,
    ConfigError,
    InvalidArguments,
    RegexError,
    ScanError,
    TooLarge,
)
from mcp_localtools.policy.commandrules import (
    ALTERNATIVES,
    ALWAYS_ALLOWED,
    CONTAINED_BACKENDS,
    DESTRUCTIVE_PATTERNS,
    FED_SHELL,
    HARD_BLOCKLIST,
    HARMLESS_PYTHON_ENV,
    MAX_ENV_KEY_BYTES,
    MAX_ENV_TOTAL_BYTES,
    MAX_ENV_VALUE_BYTES,
    MAX_ENV_VARS,
    NETWORK_ONLY,
    REFUSED_ENV,
    SAFE_ENV,
    STRICT_BLOCKLIST,
    STRICT_PATTERNS,
    has_fork_bomb,
)
from mcp_localtools.policy.scanner import Dialect, Invocation, scan
from mcp_localtools.regexes import compile_re2, searchable
from mcp_localtools.toolnames import served_text

__all__ = [
    "CommandRule",
    "ExecutionPolicy",
    "command_name",
]


@functools.cache
def _re2(source: str) -> Any:
    """A built-in pattern compiled by RE2 (linear time; compiled on first use, so ``re2`` is not
    imported at start-up)."""
    return compile_re2(source)


def _blocked(config: ExecConfig, *, contained: bool) -> frozenset[str]:
    """The blocked names: the hard list (less ``NETWORK_ONLY`` when ``contained``), the strict
    preset's, and ``blocked_commands``."""
    hard = HARD_BLOCKLIST - NETWORK_ONLY if contained else HARD_BLOCKLIST
    strict = STRICT_BLOCKLIST if config.preset == "strict" else frozenset()
    return hard | strict | {command_name(name) for name in config.blocked_commands}


def command_name(entry: str) -> str:
    """A ``blocked_commands``/``allowed_commands`` entry as the scanner names commands:
    lowercased basename (``/bin/rm`` → ``rm``)."""
    return re.split(r"[/\\]", entry.strip())[-1].lower()


CommandRule = Callable[[str], "bool | None"]
"""A host's rule for commands (``ExecutionPolicy.host_rule``): the command's text (trimmed) ->
True (run it), False (refuse it) or None (the configured policy decides)."""


@dataclass(frozen=True, slots=True)
class _Pattern:
    key: str
    source: str
    regex: Any = None  # re2._Regexp (untyped); None: a built-in pattern, compiled on first use

    def search(self, text: str) -> bool:
        """Whether the pattern matches anywhere in ``text`` (RE2: linear time)."""
        return (self.regex or _re2(self.source)).search(text) is not None


@dataclass(frozen=True, slots=True)
class ExecutionPolicy:
    """The frozen execution policy. Build it with ``from_config``.

    Attributes:
        timeout_seconds: default per command.
        max_timeout_seconds: most a call may ask for; larger requests are clamped.
        max_output_bytes: per stream per command; head and tail are kept.
        max_commands: most commands in one shellcommand call.
        max_command_length: longest command (UTF-8 bytes).
        blocked: command names refused (the hard list plus ``blocked_commands``).
        allowed: ``allowed_commands`` that are single names; with ``deny_by_default`` the only
            names that run (with ``allowed_prefixes``).
        allowed_prefixes: ``allowed_commands`` with arguments (``"git status"``): the name and the
            first arguments a command must start with, word for word.
        deny_by_default: refuse every command not in ``allowed`` (or ``ALWAYS_ALLOWED``).
        allow_dangerous: skip the fork-bomb and ``&`` heuristics (never the blocklist).
        denied_patterns: regexes a command may not match (``denied_patterns`` and the preset's).
        allowed_env: ``env`` names allowed although they are in ``REFUSED_ENV``.
        host_rule: a host's own rule (the Python API: ``build_registry(..., command_rule=)``),
            asked first with each command's text: True runs it whatever the blocklist, allowlist,
            patterns and heuristics say (jeevesagent's ``allow_pattern`` replaces its deny list
            the same way; the sandbox still contains it), False refuses it, None leaves it to
            this policy. Never set from the config: the model cannot reach it.
    """

    timeout_seconds: float = 60
    max_timeout_seconds: float = 600
    max_output_bytes: int = 256 * 1024
    max_commands: int = 64
    max_command_length: int = 64 * 1024
    blocked: frozenset[str] = HARD_BLOCKLIST
    allowed: frozenset[str] = frozenset()
    allowed_prefixes: frozenset[tuple[str, ...]] = frozenset()
    deny_by_default: bool = False
    allow_dangerous: bool = False
    denied_patterns: tuple[_Pattern, ...] = ()
    allowed_env: frozenset[str] = frozenset()
    host_rule: CommandRule | None = None

    @classmethod
    def from_config(
        cls, config: ExecConfig, *, backend: str = "off", host_rule: CommandRule | None = None
    ) -> ExecutionPolicy:
        """The policy of an ``[exec]`` section for commands contained by ``backend`` (the
        sandbox's name): under ``bwrap`` and ``seatbelt``, which decide what a command reaches,
        the names blocked only for their network reach (``NETWORK_ONLY``) run unless
        ``blocked_commands`` names them; under ``landlock``, which cannot stop metadata changes
        or hide ``/proc``, the strict preset applies whatever ``preset`` says.

        Raises:
            ConfigError: a ``denied_patterns`` entry is not a valid RE2 regex (the message names
                ``exec.denied_patterns[i]``).
        """
        if backend == "landlock":
            config = config.model_copy(update={"preset": "strict"})
        patterns = [
            _Pattern(f"built-in: {name}", source)
            for name, source in (() if config.allow_dangerous else DESTRUCTIVE_PATTERNS)
            + (STRICT_PATTERNS if config.preset == "strict" else ())
        ]
        for index, source in enumerate(config.denied_patterns):
            key = f"exec.denied_patterns[{index}]"
            try:
                patterns.append(_Pattern(key, source, compile_re2(source)))
            except RegexError as exc:
                raise ConfigError(f"{key}: not a valid RE2 regex: {source!r} ({exc.reason})") from exc
        return cls(
            timeout_seconds=config.timeout_seconds,
            max_timeout_seconds=config.max_timeout_seconds,
            max_output_bytes=config.max_output_bytes,
            max_commands=config.max_commands,
            max_command_length=config.max_command_length,
            blocked=_blocked(config, contained=backend in CONTAINED_BACKENDS),
            allowed=frozenset(
                command_name(name) for name in config.allowed_commands if len(name.split()) == 1
            ),
            allowed_prefixes=frozenset(
                (command_name(words[0]), *words[1:])
                for words in (entry.split() for entry in config.allowed_commands)
                if len(words) > 1
            ),
            deny_by_default=config.deny_by_default,
            allow_dangerous=config.allow_dangerous,
            denied_patterns=tuple(patterns),
            allowed_env=frozenset(config.allowed_env),
            host_rule=host_rule,
        )

    def timeout_for(self, requested: float | None) -> float:
        """The timeout of one command: ``requested`` clamped to ``max_timeout_seconds``, or the default."""
        if requested is None or requested <= 0:
            return self.timeout_seconds
        return min(float(requested), self.max_timeout_seconds)

    def check_command(self, command: str, dialect: Dialect, *, what: str = "command") -> str:
        """Check one command string before it runs; returns it trimmed.

        Raises:
            InvalidArguments: it is blank or contains a NUL byte.
            TooLarge: it is longer than ``max_command_length`` bytes.
            CommandRefused: the scanner cannot read it, or the blocklist, allowlist, a denied
                pattern or a heuristic refuses it.
        """
        text = command.strip()
        if not text:
            raise InvalidArguments(f"{what} is empty")
        if "\x00" in text:
            raise InvalidArguments(f"{what} contains NUL byte")
        size = len(text.encode("utf-8", "surrogatepass"))
        if size > self.max_command_length:
            raise TooLarge(f"{what} too long ({size} bytes; max {self.max_command_length})")
        verdict = self.host_rule(text) if self.host_rule is not None else None
        if verdict is True:
            return text
        if verdict is False:
            raise CommandRefused(f"{what} is refused by the host's command rule")
        try:
            found = scan(text, dialect)
        except ScanError as exc:
            raise CommandRefused(
                f"cannot parse {what}: {exc}; commands the policy cannot read are refused, fix the quoting"
            ) from exc
        for invocation in found.invocations:
            self._check_invocation(invocation, dialect)
        matchable = searchable(text)
        for pattern in self.denied_patterns:
            if pattern.search(matchable):
                raise CommandRefused(f"{what} matches a denied pattern ({pattern.key}: {pattern.source!r})")
        if self.deny_by_default and _re2(FED_SHELL).search(matchable):
            raise CommandRefused(
                f"{what} feeds a shell its script through a pipe or a here-document, which the policy "
                "cannot read; deny_by_default runs only commands it can check: write the commands out"
            )
        if not self.allow_dangerous:
            if has_fork_bomb(text):
                raise CommandRefused("blocked dangerous command pattern (fork bomb)")
            if dialect == "sh" and found.background:
                raise CommandRefused(
                    served_text(
                        "blocked backgrounding with '&': every process of a command is stopped when it "
                        "ends; start a server or watcher with startprocess (it keeps running, in the same "
                        "exec session: pass its sessionID to later commands), or run commands one after "
                        "another (cmd1 && cmd2)"
                    )
                )
        return text

    def _check_invocation(self, invocation: Invocation, dialect: Dialect) -> None:
        name = invocation.name
        if invocation.dynamic:
            if self.deny_by_default:
                raise CommandRefused(
                    f"command name computed at run time: {invocation.word}; deny_by_default allows only "
                    f"literal command names from allowed_commands ({self._allowed_list()})"
                )
            return
        if self.deny_by_default and (name == "alias" or ("{" in invocation.word and "," in invocation.word)):
            raise CommandRefused(
                f"command word {invocation.word!r} is an alias definition or a brace expansion, whose "
                "command the policy cannot check; deny_by_default runs only literal command names"
            )
        blocked = self._blocked_name(name, invocation.glob, dialect)
        if blocked is not None:
            hint = ALTERNATIVES.get(blocked, "this command is blocked by the server's policy")
            spelled = "" if blocked == name else f" ({invocation.word} may run {blocked})"
            raise CommandRefused(f"blocked command: {blocked}{spelled}; {served_text(hint)}")
        if (
            self.deny_by_default
            and not invocation.wrapper
            and name not in self.allowed | ALWAYS_ALLOWED
            and not self._prefix_allowed(invocation)
        ):
            raise CommandRefused(
                f"command not allowed: {name}; deny_by_default is on and only these run: "
                + self._allowed_list()
            )

    def _blocked_name(self, name: str, glob: bool, dialect: Dialect) -> str | None:
        if glob:
            return next((b for b in sorted(self.blocked) if fnmatchcase(b, name)), None)
        if name in self.blocked:
            return name
        if name.startswith("mkfs.") and "mkfs" in self.blocked:
            return "mkfs"
        return None

    def _prefix_allowed(self, invocation: Invocation) -> bool:
        return any(
            prefix[0] == invocation.name and invocation.args[: len(prefix) - 1] == prefix[1:]
            for prefix in self.allowed_prefixes
        )

    def _allowed_list(self) -> str:
        listed = sorted(self.allowed) + sorted(" ".join(prefix) for prefix in self.allowed_prefixes)
        return ", ".join(listed) or "none"

    def check_env(  # noqa: C901 - one rule per kind of variable; splitting it hides the order
        self, env: Mapping[str, str | None] | None, *, writable: Sequence[Path] = ()
    ) -> dict[str, str | None]:
        """Validate per-call environment overrides; returns them as a plain dict (a None value
        unsets the variable: it is checked like a name being set).

        Args:
            env: the call's ``env``.
            writable: directories commands may write (the roots): a ``PATH`` entry inside one
                would run a program a command wrote there.

        Raises:
            InvalidArguments: an empty key, ``=`` or NUL in a key, NUL in a value, a key or value
                over its limit, too many variables, or too many bytes in all.
            CommandRefused: a name that turns an allowed command into another program
                (``REFUSED_ENV``), or a ``PATH`` entry inside a writable root, unless the name is
                in ``allowed_env``.
        """
        if not env:
            return {}
        if len(env) > MAX_ENV_VARS:
            raise InvalidArguments(f"too many env vars: {len(env)} (max {MAX_ENV_VARS})")
        total = 0
        for key, value in env.items():
            if not key:
                raise InvalidArguments('env "": the name is empty')
            if "=" in key or "\x00" in key:
                raise InvalidArguments(f"env {key!r}: the name contains '=' or a NUL byte")
            if value is not None and "\x00" in value:
                raise InvalidArguments(f"env {key!r}: the value contains a NUL byte")
            key_bytes, value_bytes = len(key.encode()), len((value or "").encode())
            if key_bytes > MAX_ENV_KEY_BYTES:
                raise InvalidArguments(
                    f"env {key[:40]!r}...: the name is longer than {MAX_ENV_KEY_BYTES} bytes"
                )
            if value_bytes > MAX_ENV_VALUE_BYTES:
                raise InvalidArguments(f"env {key!r}: the value is longer than {MAX_ENV_VALUE_BYTES} bytes")
            total += key_bytes + value_bytes
        if total > MAX_ENV_TOTAL_BYTES:
            raise InvalidArguments(f"env overrides too large: {total} bytes (max {MAX_ENV_TOTAL_BYTES})")
        for key, value in env.items():
            if key in self.allowed_env:
                continue
            if self.deny_by_default and not any(fnmatchcase(key.upper(), name) for name in SAFE_ENV):
                raise CommandRefused(
                    f"env {key!r} is refused: with deny_by_default a call may set only "
                    f"{', '.join(SAFE_ENV)} and the names in [exec] allowed_env"
                )
            refused = any(fnmatchcase(key.upper(), pattern) for pattern in REFUSED_ENV)
            if refused and key.upper() not in HARMLESS_PYTHON_ENV:
                raise CommandRefused(
                    f"env {key!r} is refused: it can make an allowed command run another program "
                    "(a preloaded library, a startup script, a pager, a git hook); to allow it on purpose "
                    "add it to [exec] allowed_env"
                )
            if key.upper() == "PATH" and value is not None:
                inside = [entry for entry in value.split(os.pathsep) if _inside_any(entry, writable)]
                if inside:
                    raise CommandRefused(_path_refusal(inside[0]))
        return dict(env)


def _path_refusal(entry: str) -> str:
    """Why the ``PATH`` entry ``entry`` of a call's ``env`` is refused, and what to do instead."""
    literally = (
        f"env PATH entry {entry!r} is taken literally ($VARIABLES and ~ are not expanded), as a "
        "directory relative to the working directory, which lies in a writable root; give the whole "
        "value (PATH=/opt/x/bin:/usr/bin:/bin)"
        if "$" in entry or entry.startswith("~")
        else f"env PATH entry {entry!r} is inside a writable root (the value is taken literally)"
    )
    return (
        f"{literally}: a command could put a program of an allowed name there; run the program by "
        'its path instead, or add "PATH" to [exec] allowed_env'
    )


def _inside_any(entry: str, directories: Sequence[Path]) -> bool:
    """True when the ``PATH`` entry ``entry`` (absolute, or relative: then it follows the
    working directory, which lies in a root) lies inside one of ``directories``."""
    if not entry or not Path(entry).is_absolute():
        return bool(directories)
    real = Path(os.path.realpath(entry))
    return any(real == d or real.is_relative_to(d) for d in directories)
