"""What a command string will run: the command names the execution policy checks.

``scan(command, dialect)`` lexes the string (``sh_lexer``, ``win_lexer``), then finds the
command word of every simple command:

* leading ``NAME=value`` assignments and, in sh, reserved words (``if``, ``then``, ``do``, ``!``,
  ``{``, ...) are skipped; ``for``/``case``/``select`` headers and ``[[ ... ]]`` run nothing;
* wrappers that run their argument as a command are unwrapped with their options: the seed's
  ``env``, ``command``, ``builtin`` and (PowerShell) ``&``, plus ``exec``, ``nohup``, ``time``,
  ``nice``, ``setsid``, ``timeout``, ``stdbuf``, ``xargs``, ``busybox`` (sh);
* a literal script given to ``sh -c``/``bash -c`` (any sh-family shell), ``eval`` or ``env -S``
  is scanned as a command string of its own;
* the name is the lowercased basename (``/`` and ``\\`` both separate); PowerShell also drops
  ``.exe``, ``.com``, ``.bat`` and ``.cmd``.

An ``Invocation`` says whether the name is literal or computed at run time (``$x``, ``$(...)``,
``$env:X``), and whether it is a glob (``/bin/r?``); the policy decides what to do with either.
What no scanner can see (interpreters such as ``python -c``, aliases, scripts written first and
run later) is listed in the README's security section.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Literal

from mcp_localtools.errors import ScanError
from mcp_localtools.policy.sh_lexer import DYNAMIC, UNQUOTED, Word, lex_sh
from mcp_localtools.policy.win_lexer import lex_powershell

__all__ = ["Dialect", "Invocation", "Scan", "first_brace_alternative", "scan"]

Dialect = Literal["sh", "powershell"]

_MAX_NESTING = 8
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")
_RESERVED = frozenset("! { } if then else elif fi do done while until esac coproc".split())
_HEADERS = frozenset("for select case [[ function".split())
_SH_SHELLS = frozenset("sh bash dash zsh ksh mksh ash yash posh".split())
_WINDOWS_SUFFIX = re.compile(r"\.(exe|com|bat|cmd)$")


@dataclass(frozen=True, slots=True)
class _Wrapper:
    """Options of a command that runs its arguments as a command."""

    with_value: frozenset[str] = frozenset()  # options whose value is the next word
    positionals: int = 0  # words between the options and the command (timeout's DURATION)
    assignments: bool = False  # NAME=value words may precede the command (env)


def _wrapper(with_value: str = "", positionals: int = 0, assignments: bool = False) -> _Wrapper:
    return _Wrapper(frozenset(with_value.split()), positionals, assignments)


_SH_WRAPPERS: dict[str, _Wrapper] = {
    "env": _wrapper("-u --unset -C --chdir -S --split-string -P", assignments=True),
    "command": _wrapper(),
    "builtin": _wrapper(),
    "exec": _wrapper("-a"),
    "nohup": _wrapper(),
    "time": _wrapper("-f --format -o --output"),
    "nice": _wrapper("-n --adjustment"),
    "setsid": _wrapper(),
    "timeout": _wrapper("-k --kill-after -s --signal", positionals=1),
    "stdbuf": _wrapper("-i --input -o --output -e --error"),
    "xargs": _wrapper(
        "-a --arg-file -d --delimiter -E --eof -I -L --max-lines -n --max-args -P --max-procs -s --max-chars"
    ),
    "busybox": _wrapper(),
}


@dataclass(frozen=True, slots=True)
class Invocation:
    """One command a command string runs.

    Attributes:
        word: the command word as written, after quote removal (for messages).
        name: lowercased basename, the name the policy checks.
        dynamic: the name is computed at run time, so ``name`` is not what will run.
        glob: the name contains unquoted ``*``, ``?`` or ``[``.
        wrapper: a wrapper (``env``, ``xargs``, ``eval``, ...) whose command follows as its own
            invocation; an allowlist judges that command, not the wrapper.
        args: the first ``MAX_ARGS`` words after the command word, after quote removal; a word
            with a part computed at run time is None (an allowlist prefix never matches it).
    """

    word: str
    name: str
    dynamic: bool = False
    glob: bool = False
    wrapper: bool = False
    args: tuple[str | None, ...] = ()


MAX_ARGS = 16
"""Arguments kept per invocation: enough for any allowlist prefix (``git status``)."""


@dataclass(frozen=True, slots=True)
class Scan:
    """The result of ``scan``.

    Attributes:
        invocations: every command found, substitutions and nested scripts included, in order.
        background: sh only: a lone ``&`` puts a command in the background.
    """

    invocations: tuple[Invocation, ...]
    background: bool


def scan(command: str, dialect: Dialect) -> Scan:
    """Find the commands ``command`` runs in ``dialect``.

    Raises:
        ScanError: the string cannot be read reliably (unterminated quote or substitution,
            nesting too deep); the policy refuses such a command.
    """
    invocations: list[Invocation] = []
    background = _scan_into(command, dialect, invocations, 0)
    return Scan(tuple(invocations), background)


def _scan_into(command: str, dialect: Dialect, out: list[Invocation], nesting: int) -> bool:
    if nesting > _MAX_NESTING:
        raise ScanError("nested shell scripts (sh -c, eval) are nested too deeply")
    lexed = lex_sh(command) if dialect == "sh" else lex_powershell(command)
    background = lexed.background
    for words in lexed.commands:
        for found in _invocations(words, dialect):
            if isinstance(found, Invocation):
                out.append(found)
            else:
                background |= _scan_into(found, "sh", out, nesting + 1)
    return background


def _invocations(words: list[Word], dialect: Dialect) -> Iterator[Invocation | str]:
    """The command of one simple command, after unwrapping; a ``str`` is a nested sh script."""
    wrappers = _SH_WRAPPERS if dialect == "sh" else {}
    index = 0
    for _ in range(len(words) + 1):
        index = _skip_prefix(words, index, dialect)
        if index >= len(words) or (dialect == "sh" and _is_header(words[index])):
            return
        invocation = _invocation(words[index], dialect)
        args = tuple(
            None if DYNAMIC in word.kinds else word.text for word in words[index + 1 : index + 1 + MAX_ARGS]
        )
        invocation = replace(invocation, args=args)
        wrapper = None if invocation.dynamic else wrappers.get(invocation.name)
        is_eval = dialect == "sh" and invocation.name == "eval" and not invocation.dynamic
        if wrapper is not None or is_eval:
            invocation = replace(invocation, wrapper=True)
        yield invocation
        rest = words[index + 1 :]
        if invocation.dynamic:
            return
        if dialect == "sh" and invocation.name in _SH_SHELLS:
            yield from _shell_script(rest)
            return
        if is_eval:
            yield from _joined_script(rest)
            return
        if wrapper is None:
            return
        if invocation.name == "env":
            yield from _env_split_string(rest)
        index = _skip_wrapper_options(words, index + 1, wrapper)


def _skip_prefix(words: list[Word], index: int, dialect: Dialect) -> int:
    while index < len(words):
        word = words[index]
        assignment = bool(_ASSIGNMENT.match(word.text))
        if not (word.plain and (assignment or (dialect == "sh" and word.text in _RESERVED))):
            break
        index += 1
    return index


def _is_header(word: Word) -> bool:
    return word.plain and word.text in _HEADERS


def _invocation(word: Word, dialect: Dialect) -> Invocation:
    text = word.text
    cut = max(text.rfind("/"), text.rfind("\\"))
    base_kinds = word.kinds[cut + 1 :]
    name = text[cut + 1 :].lower()
    if dialect != "sh":
        name = _WINDOWS_SUFFIX.sub("", name)
    glob = any(
        kind == UNQUOTED and char in "*?[" for char, kind in zip(text[cut + 1 :], base_kinds, strict=True)
    )
    if dialect == "sh" and any(kind == UNQUOTED for kind in base_kinds) and "{" in name and "," in name:
        name = first_brace_alternative(name)
    return Invocation(word=text, name=name, dynamic=DYNAMIC in base_kinds, glob=glob)


def first_brace_alternative(text: str) -> str:
    """The first word of a brace expansion: ``{rm,x}`` → ``rm``, ``{r,}m`` → ``rm``,
    ``{{r,x}m,y}`` → ``rm``. Innermost first, a ``{...}`` with a comma and no brace left inside
    becomes what precedes its first comma; one without a comma stays as written, and so does the
    group around it. One pass with a stack of open groups: time linear in ``text``'s length (a
    search from the start after each replacement was quadratic)."""
    stack: list[tuple[list[str], bool]] = [([], False)]  # each open group: its text, a brace kept in it
    for char in text:
        if char == "{":
            stack.append(([], False))
        elif char == "}" and len(stack) > 1:
            parts, kept = stack.pop()
            inner = "".join(parts)
            outer, outer_kept = stack.pop()
            if not kept and "," in inner:
                outer.append(inner[: inner.index(",")])
                stack.append((outer, outer_kept))
            else:
                outer.append("{" + inner + "}")
                stack.append((outer, True))
        else:
            stack[-1][0].append(char)
    while len(stack) > 1:  # a group never closed is text
        parts, _ = stack.pop()
        stack[-1][0].append("{" + "".join(parts))
    return "".join(stack[0][0])


def _skip_wrapper_options(words: list[Word], index: int, wrapper: _Wrapper) -> int:
    positionals = wrapper.positionals
    while index < len(words):
        text = words[index].text
        if text == "--":
            return index + 1
        if wrapper.assignments and _ASSIGNMENT.match(text):
            index += 1
        elif text.startswith("-") and len(text) > 1:
            index += 2 if text in wrapper.with_value else 1
        elif positionals:
            positionals -= 1
            index += 1
        else:
            break
    return index


def _shell_script(args: list[Word]) -> Iterator[Invocation | str]:
    """The script of ``sh [options] -c SCRIPT``, when there is one."""
    command_mode = False
    index = 0
    while index < len(args):
        text = args[index].text
        if text == "--":
            index += 1
            break
        if text in ("-o", "+o", "-O", "+O"):
            index += 2
            continue
        if len(text) > 1 and text[0] in "-+" and not text.startswith("--"):
            command_mode |= text[0] == "-" and "c" in text[1:]
            index += 1
            continue
        if text.startswith("--"):
            index += 1
            continue
        break
    if command_mode and index < len(args):
        yield from _literal_script(args[index], "sh -c")


def _joined_script(args: list[Word]) -> Iterator[Invocation | str]:
    if any(word.dynamic for word in args):
        yield Invocation(word="eval", name="eval", dynamic=True)
    elif args:
        yield " ".join(word.text for word in args)


def _env_split_string(args: list[Word]) -> Iterator[Invocation | str]:
    for index, word in enumerate(args[:-1]):
        if word.text in ("-S", "--split-string"):
            yield from _literal_script(args[index + 1], "env -S")
            return


def _literal_script(word: Word, what: str) -> Iterator[Invocation | str]:
    if word.dynamic:
        yield Invocation(word=f"{what} {word.text}", name=what, dynamic=True)
    else:
        yield word.text
