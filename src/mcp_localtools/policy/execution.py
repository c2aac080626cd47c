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
from mcp_localtools.policy.scanner import Dialect, Invocation, scan
from mcp_localtools.regexes import compile_re2, searchable
from mcp_localtools.spec import served_text

__all__ = [
    "ALWAYS_ALLOWED",
    "CONTAINED_BACKENDS",
    "HARD_BLOCKLIST",
    "KILL_GRACE_SECONDS",
    "MAX_ENV_KEY_BYTES",
    "MAX_ENV_TOTAL_BYTES",
    "MAX_ENV_VALUE_BYTES",
    "MAX_ENV_VARS",
    "MAX_SCRIPT_ARGS",
    "MAX_SCRIPT_ARG_BYTES",
    "MAX_STDIN_BYTES",
    "NETWORK_ONLY",
    "REFUSED_ENV",
    "SAFE_ENV",
    "CommandRule",
    "ExecutionPolicy",
    "command_name",
    "has_fork_bomb",
]

HARD_BLOCKLIST = frozenset(
    """sudo su rm mkfs shutdown reboot halt poweroff
    vim vi nano emacs less more top htop
    curl wget nc netcat ncat socat ssh scp sftp ftp tftp telnet
    invoke-webrequest iwr invoke-restmethod irm
    diskpart format.com del erase rmdir rd remove-item ri""".split()
)
"""The seed's 40 command names: always blocked, whatever the config says."""

NETWORK_ONLY = frozenset({"curl", "wget"})
"""Hard-blocked names whose only danger is what they reach: where the sandbox decides that
(``CONTAINED_BACKENDS``), they run; a download piped into a shell stays refused (a pattern)."""

CONTAINED_BACKENDS = frozenset({"bwrap", "seatbelt"})
"""Sandboxes that contain a command's network and files fully (Landlock does not hide ``/proc``
or stop ``chmod``; ``off`` contains nothing)."""

ALWAYS_ALLOWED = frozenset(
    "cd pwd echo printf true false test [ : export unset set shift exit return wait read".split()
)
"""Shell builtins that run no program; with ``deny_by_default`` they need no allowlist entry."""

DESTRUCTIVE_PATTERNS = (
    ("chmod 777", r"\bchmod\s+(?:-\S+\s+)*0?777\b"),
    ("dd onto a device", r"\bdd\b[^|;&]*\bof=/dev/"),
    ("a write to a disk device", r">\s*/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk|dm-|md|loop|sr)"),
    ("--no-preserve-root", r"--no-preserve-root"),
    ("eval of a variable", r"\beval\s+[\"']?\$"),
    ("a download piped into a shell", r"\b(?:curl|wget)\b[^;&]*\|\s*(?:\S*/)?(?:ba|da|z|k)?sh\b"),
)
"""The seeds' default destructive patterns, refused unless ``allow_dangerous`` (``rm``, ``mkfs``,
``curl`` and ``wget`` are blocked by name, fork bombs by their own check)."""

STRICT_BLOCKLIST = frozenset(
    """rm rmdir sudo su chmod chown dd mkfs fdisk mount umount kill killall pkill reboot shutdown
    passwd useradd userdel groupadd""".split()
)
"""``preset = "strict"``: Hector's default denied commands, added to the blocklist."""

STRICT_PATTERNS = (
    ("rm -rf", r"\brm\s+(?:-rf|-fr|--recursive)"),
    ("a redirect into /dev", r">\s*/dev/"),
    ("a redirect into /etc", r">\s*/etc/"),
    ("a substitution redirected to /", r"\$\(.*\)\s*>\s*/"),
    ("eval of a variable", r"\beval\s*\$"),
)
"""``preset = "strict"``: Hector's default denied patterns, on top of ``DESTRUCTIVE_PATTERNS``."""

_FED_SHELL = (
    r"\|\s*(?:\S*/)?(?:sh|bash|dash|zsh|ksh|mksh|fish|pwsh)\b"
    r"|\b(?:sh|bash|dash|zsh|ksh|mksh|fish|pwsh)\b[^|;&]*<<"
)
"""A shell fed its script through a pipe or a here-document (RE2, compiled on first use)."""

REFUSED_ENV = (
    "LD_*",
    "DYLD_*",
    "BASH_ENV",
    "ENV",
    "PROMPT_COMMAND",
    "SHELLOPTS",
    "BASHOPTS",
    "PS4",
    "IFS",
    "BASH_FUNC_*",
    "ZDOTDIR",
    "HOME",
    "XDG_*",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_TEMPLATE_DIR",
    "GIT_CEILING_DIRECTORIES",
    "GIT_CONFIG*",
    "GIT_SSH*",
    "GIT_EXEC_PATH",
    "GIT_EXTERNAL_DIFF",
    "GIT_ASKPASS",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "GIT_PROXY_COMMAND",
    "GIT_SHELL_PATH",
    "GIT_ALLOW_PROTOCOL",
    "GIT_PROTOCOL_FROM_USER",
    "GIT_ATTR_*",
    "GIT_TRACE*",
    "GIT_REDIRECT_*",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_INDEX_FILE",
    "SSH_ASKPASS",
    "*PAGER",
    "EDITOR",
    "VISUAL",
    "PYTHON*",
    "NODE_OPTIONS",
    "NODE_PATH",
    "PERL5OPT",
    "PERL5LIB",
    "PERLLIB",
    "RUBYOPT",
    "RUBYLIB",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "LESSOPEN",
    "LESSCLOSE",
    "GCONV_PATH",
    "OPENSSL_CONF",
    "RUSTC_WRAPPER",
)
"""``env`` names (globs, upper case) a call may not set unless ``[exec] allowed_env`` lists them:
each makes an allowed program load or run code of the caller's choosing (git's editors, proxy,
ssh and shell: git(1), git-var(1); ``GIT_ALLOW_PROTOCOL`` would allow the ``ext::`` transport,
which runs a command), write files (``GIT_TRACE*``, ``GIT_REDIRECT_*``), or read its
configuration or objects from elsewhere (``HOME``, ``XDG_*``, ``GIT_DIR``, ``GIT_ATTR_*``).
Under ``deny_by_default`` only ``SAFE_ENV`` and ``allowed_env`` may be set at all: no denylist can
foresee every program."""

HARMLESS_PYTHON_ENV = frozenset(
    {"PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE", "PYTHONIOENCODING", "PYTHONUTF8", "PYTHONHASHSEED"}
)
"""``PYTHON*`` names that change no code path a caller could use (output buffering, encodings)."""

SAFE_ENV = ("LANG", "LC_*", "LANGUAGE", "TZ", "TERM", "COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "CI")
"""``env`` names a call may set under ``deny_by_default`` without ``allowed_env``."""

MAX_ENV_VARS = 256
MAX_ENV_KEY_BYTES = 256
MAX_ENV_VALUE_BYTES = 32 * 1024
MAX_ENV_TOTAL_BYTES = 256 * 1024
MAX_STDIN_BYTES = 1024 * 1024
"""Largest ``stdin`` text a call may pass (bytes, UTF-8)."""
MAX_SCRIPT_ARGS = 256
MAX_SCRIPT_ARG_BYTES = 16 * 1024
KILL_GRACE_SECONDS = 0.5
"""Between SIGTERM and SIGKILL of a command's processes."""

_DELETE = "use the deletefile tool instead (it moves files to the trash, where they can be restored)"
_EDIT = "use the readfile and writefile tools instead of an interactive editor"
_PAGER = "use the readfile tool, or pipe into head/tail instead of a pager"
_NETWORK = "commands get no network tools; fetch nothing, or ask the user to"
_PRIVILEGE = "commands run as the server's user and cannot gain privileges; ask the user to run it"
_SYSTEM = "changing the machine's state (power, disks) is not allowed; ask the user to do it"
_ALTERNATIVES: dict[str, str] = {
    **dict.fromkeys("rm rmdir rd del erase remove-item ri".split(), _DELETE),
    **dict.fromkeys("vim vi nano emacs".split(), _EDIT),
    **dict.fromkeys("less more".split(), _PAGER),
    **dict.fromkeys("top htop".split(), "use `ps aux` for a one-shot process list"),
    **dict.fromkeys(
        "curl wget nc netcat ncat socat ssh scp sftp ftp tftp telnet "
        "invoke-webrequest iwr invoke-restmethod irm".split(),
        _NETWORK,
    ),
    **dict.fromkeys("sudo su".split(), _PRIVILEGE),
    **dict.fromkeys("mkfs shutdown reboot halt poweroff diskpart format format.com".split(), _SYSTEM),
}
_NAME_RUN = re.compile(r"[\w:.-]*")
"""The characters of a function name the fork-bomb check reads (a run: no backtracking)."""


def has_fork_bomb(command: str) -> bool:
    """True when ``command``, whitespace left out, holds ``NAME(){NAME|NAME&};NAME`` (the ``;``
    optional; NAME of word characters, ``:``, ``.`` and ``-``): the fork bomb ``:(){ :|:& };:``
    under any name. What a backtracking pattern with backreferences found (quadratic on a long
    word: 65,536 bytes took 21 s), in time linear in ``command``'s length: at each ``(){``, NAME
    is the run of name characters after it (it must end at ``|``), and the text before ``(){``
    must end with it."""
    text = "".join(command.split())
    start = text.find("(){")
    while start != -1:
        body = start + 3
        run = _NAME_RUN.match(text, body)
        name = run.group() if run is not None else ""
        end = body + len(name)
        if name and text.endswith(name, 0, start) and text.startswith(f"|{name}&}}", end):
            after = end + len(name) + 3
            if text.startswith(name, after + 1 if text.startswith(";", after) else after):
                return True
        start = text.find("(){", start + 1)
    return False


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
        if self.deny_by_default and _re2(_FED_SHELL).search(matchable):
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
            hint = _ALTERNATIVES.get(blocked, "this command is blocked by the server's policy")
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
