"""A declared tool's command template: a list of words, each argument substituted as words of
its own, never through a shell string.

A template is what ``command`` (or one entry of ``steps``) of ``[tools.custom.NAME]`` says::

    command = ["python3", "-m", "pytest", "-q", ["-k", "{expr}"], ["-x", "{failFast}"], "--", "{paths}"]

* ``"{name}"`` as a whole word is the argument ``name``: a string or number is one word, an array
  one word per item, an absent argument no word at all.
* ``"--out={name}"``: a placeholder inside a word puts a string or number into that word; the word
  is left out when the argument is absent. ``{{`` and ``}}`` are literal braces.
* A nested list is an optional group: it is left out when an argument it names is absent, an
  empty array, or a false boolean. A boolean argument is only a switch of its group (``["-x",
  "{failFast}"]`` gives ``-x`` when true); it is never a word itself.
* The first word is the program, always literal.

Option injection: a word whose first character comes from an argument may not start with ``-``
(``--delete``, ``-rf``) unless a literal ``--`` word (end of options) came before it, or the
argument has an ``enum`` (every value was written by the config's author). Shell injection has no
way in: no shell reads the words (``; rm -rf /`` is one literal argument), and a placeholder may not
be the code that an interpreter runs (the word after ``sh -c``, ``python3 -c``, ``node -e``,
``pwsh -Command``, also behind a wrapper: ``env sh -c``): pass such values as positional words
instead (``["sh", "-c", "echo \\"$1\\"", "sh", "{text}"]``).

Environment injection: after a wrapper (``env``, ``sudo``, ``nice``, ``timeout``, ...: ``WRAPPERS``),
a word whose name part comes from an argument and that reads ``NAME=value`` is an environment
assignment to ``env`` and ``sudo``; it is checked like a call's ``env`` (``check_env``: ``LD_PRELOAD``
and the other ``REFUSED_ENV`` names are refused unless ``[exec] allowed_env`` names them).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import PurePath
from typing import Any

from mcp_localtools.errors import ConfigError
from mcp_localtools.tools.exec._declared.words import Kind, Slot, Template, Word, words_in

__all__ = ["INTERPRETERS", "WRAPPERS", "parse_template"]


INTERPRETERS = frozenset(
    {"sh", "bash", "zsh", "dash", "ksh", "fish", "pwsh", "powershell", "cmd", "python", "python3", "node",
     "perl", "ruby", "php", "lua", "deno", "bun", "osascript"}
)  # fmt: skip
"""Programs that run code given as an argument (``-c``, ``-e``, ``-Command``)."""

_CODE_FLAG = re.compile(
    r"^(?:-[A-Za-z]*[ceEpr]|--(?:command|eval|exec|execute|print)(?:=|$)|-Command|-EncodedCommand|/[cCkK]|-$)"
)
"""A flag (matched at the start of a word) after which, or attached to which, such a program reads
code: a short cluster holding ``c``, ``e``, ``E``, ``p`` or ``r`` (``-c``, ``-ec``, ``-c<code>``,
``perl -E``, ``node -p``, ``php -r``), ``--eval``/``--eval=``, ``--print``, ``--command``,
``-Command``, ``/c``, and ``-`` (the script is read from stdin)."""
_POSITIONAL_CODE = frozenset({"awk", "gawk", "mawk", "nawk", "sed", "gsed", "powershell"})
"""Programs whose first word that is not an option is code (an awk or sed program; powershell's
``-Command``), unless ``-f`` names a file of it."""
_VALUE_OPTIONS = frozenset({"-o", "-O", "+o", "+O", "-F", "-v", "-l"})
"""Options whose value is the next word (``bash -c -o errexit CODE``, ``awk -F : PROGRAM``): that
word is not the code word."""
_ENV_CODE_FLAG = re.compile(r"^(?:-[A-Za-z]*S|--split-string(?:=|$))")
"""``env -S``/``--split-string``: env splits the word into a program and its arguments."""
_CLUSTER = re.compile(r"^-[A-Za-z]*$")
"""A literal start that a placeholder would extend into more short options (``-x{a}``: ``-xc``)."""

WRAPPERS = frozenset(
    {"nice", "nohup", "env", "timeout", "stdbuf", "ionice", "chrt", "taskset", "setsid", "time",
     "xargs", "sudo", "doas", "runuser", "flock", "unshare", "nsenter", "chroot", "firejail",
     "strace", "ltrace", "watch", "caffeinate", "command", "exec", "busybox", "uv", "uvx",
     "poetry", "pipenv", "pdm", "hatch", "rye", "conda", "mamba", "micromamba", "pixi", "npx",
     "bunx", "pnpx", "npm", "pnpm", "yarn", "bun", "deno", "dotenv", "direnv", "mise", "bundle",
     "cargo", "dotnet"}
)  # fmt: skip
"""Programs that run another program given in their arguments (``nice -- sort``, ``uv run --
pytest``, ``npm run x -- args``): the first literal ``--`` after one ends *its* options, not the
wrapped program's."""

_TOKEN = re.compile(r"\{\{|\}\}|\{([a-z][A-Za-z0-9]*)\}|[{}]")


def parse_template(raw: Any, kinds: Mapping[str, Kind], where: str) -> Template:
    """Read a template (``command``, or one of ``steps``) against the arguments' types.

    Args:
        raw: the configured value: a list of strings and lists of strings.
        kinds: each argument's type (wire name → ``string``, ``integer``, ``number``,
            ``boolean``, ``array``).
        where: the key path for messages (``tools.custom.tests.command``).

    Raises:
        ConfigError: not a list of words, an empty program or a placeholder in it, a malformed
            placeholder or an unknown argument, a boolean outside a group, an array inside a
            word, or a placeholder where an interpreter reads code.
    """
    if not isinstance(raw, list) or not raw:
        raise ConfigError(f"{where}: a command is a non-empty list of words (the program first)")
    literal = isinstance(raw[0], str) and _TOKEN.search(raw[0].replace("{{", "").replace("}}", "")) is None
    program = _word(raw[0], kinds, f"{where}[0]") if literal else None
    if program is None or program.literal is None or not program.literal.strip():
        raise ConfigError(f"{where}[0]: the program must be a literal word, not a placeholder or a group")
    items: list[Word | tuple[Word, ...]] = []
    for index, entry in enumerate(raw[1:], start=1):
        here = f"{where}[{index}]"
        if isinstance(entry, str):
            word = _word(entry, kinds, here)
            if word.whole is not None and kinds[word.whole] == "boolean":
                raise ConfigError(
                    f"{here}: the boolean {word.whole} switches a group: write a list such as "
                    f'["--flag", "{{{word.whole}}}"]'
                )
            items.append(word)
        elif isinstance(entry, list) and entry and all(isinstance(part, str) for part in entry):
            items.append(tuple(_word(part, kinds, f"{here}[{n}]") for n, part in enumerate(entry)))
        else:
            raise ConfigError(f"{here}: a word is a string, a group a non-empty list of strings")
    template = Template(
        program.literal,
        tuple(items),
        _wrapper_dashes(program.literal, items),
        _after_wrapper(program.literal, items),
    )
    _refuse_code_slots(template, where)
    return template


def _word(text: str, kinds: Mapping[str, Kind], where: str) -> Word:
    pieces: list[str | Slot] = []
    at = 0
    for found in _TOKEN.finditer(text):
        if found.start() > at:
            pieces.append(text[at : found.start()])
        token = found.group(0)
        if token in ("{{", "}}"):
            pieces.append(token[0])
        elif found.group(1) is None:
            raise ConfigError(
                f"{where}: {text!r}: a lone {token!r} or a malformed placeholder; write {{name}} for an "
                "argument (camelCase), {{{{ and }}}} for literal braces"
            )
        else:
            name = found.group(1)
            if name not in kinds:
                known = ", ".join(sorted(kinds)) or "none"
                raise ConfigError(
                    f"{where}: {{{name}}} is not an argument of input_schema (arguments: {known})"
                )
            pieces.append(Slot(name))
        at = found.end()
    if at < len(text):
        pieces.append(text[at:])
    word = Word(_joined(pieces))
    if word.whole is None:
        for name in word.slots:
            if kinds[name] in ("array", "boolean"):
                raise ConfigError(
                    f"{where}: {{{name}}} is {'an' if kinds[name] == 'array' else 'a'} {kinds[name]}: "
                    "it must be a word of its own"
                )
    return word


def _joined(pieces: Sequence[str | Slot]) -> tuple[str | Slot, ...]:
    """``pieces`` with neighbouring literal texts merged."""
    out: list[str | Slot] = []
    for piece in pieces:
        if isinstance(piece, str) and out and isinstance(out[-1], str):
            out[-1] = out[-1] + piece
        else:
            out.append(piece)
    return tuple(out)


def _wrapper_dashes(program: str, items: Sequence[Word | tuple[Word, ...]]) -> frozenset[int]:
    """The positions of the ``--`` words that end a wrapper's options: the first literal ``--``
    after each literal word naming a ``WRAPPERS`` program (``nice -- sort {file}``: ``--`` is
    nice's, so ``{file}`` may still not be ``--output=...``)."""
    inert: set[int] = set()
    waiting = _base_name(program) in WRAPPERS
    for position, word in enumerate(word for item in items for word in words_in(item)):
        literal = word.literal
        if literal == "--" and waiting:
            inert.add(position)
            waiting = False
        elif literal is not None and _base_name(literal) in WRAPPERS:
            waiting = True
    return frozenset(inert)


def _after_wrapper(program: str, items: Sequence[Word | tuple[Word, ...]]) -> frozenset[int]:
    """The positions of the words after the first literal word (the program included) naming a
    ``WRAPPERS`` program."""
    words = [word for item in items for word in words_in(item)]
    if _base_name(program) in WRAPPERS:
        return frozenset(range(len(words)))
    first = next(
        (
            at
            for at, word in enumerate(words)
            if word.literal is not None and _base_name(word.literal) in WRAPPERS
        ),
        None,
    )
    return frozenset() if first is None else frozenset(range(first + 1, len(words)))


def _refuse_code_slots(template: Template, where: str) -> None:
    """Refuse a placeholder where a program runs it as code: once an interpreter is seen (also
    behind a wrapper: ``env sh -c``, ``timeout 5 bash -ec``, ``uv run python -c``), in a word
    holding a code flag (``-c{x}``, ``--eval={x}``) or extending a short option cluster
    (``-x{x}``: ``-xc``), and in every word after a code flag up to and including the first that
    is not an option or an option's value (``sh -c -- {x}``, ``bash -c -o errexit {x}``); for awk,
    sed and powershell, in their first word that is not an option (their program text), unless
    ``-f`` names a file of it; ``deno eval {x}``; after ``env``, the same for ``-S``.

    Raises:
        ConfigError: such a word names an argument.
    """
    runner: str | None = None  # the interpreter (or env) seen
    flag: str | None = None  # a code flag whose code word has not come yet
    interpreter = env = value = False
    for word in [Word((template.program,)), *(w for item in template.items for w in words_in(item))]:
        literal = word.literal
        if flag is not None:
            if word.slots:
                raise _code_refusal(where, f"{runner} {flag}", word)
            if value:  # an option's value before the code word
                value = False
            elif literal is not None and literal.startswith(("-", "+")):  # an option before it
                value = literal in _VALUE_OPTIONS
                flag = None if literal in ("-f", "--file") and runner in _POSITIONAL_CODE else flag
            else:
                flag = None
            continue
        lead = word.pieces[0] if word.pieces and isinstance(word.pieces[0], str) else ""
        code = (interpreter and _CODE_FLAG.match(lead)) or (env and _ENV_CODE_FLAG.match(lead))
        if word.slots and (code or (interpreter and _CLUSTER.match(lead))):
            raise _code_refusal(where, str(runner), word)
        if code:
            flag = lead
        elif literal is not None and not interpreter and _base_name(literal) in _POSITIONAL_CODE:
            runner, interpreter, flag = _base_name(literal), True, "(its program text)"
        elif interpreter and runner is not None and _base_name(runner) == "deno" and literal == "eval":
            flag = literal
        elif literal is not None and not interpreter and _is_interpreter(literal):
            runner, interpreter = literal, True
        elif literal is not None and _base_name(literal) == "env" and not interpreter:
            runner, env = literal, True


def _code_refusal(where: str, what: str, word: Word) -> ConfigError:
    return ConfigError(
        f"{where}: {what} would run {word.shown()!r} as code; pass the argument as a word of its "
        'own after the code instead (["sh", "-c", "echo \\"$1\\"", "sh", "{name}"])'
    )


def _base_name(word: str) -> str:
    """``word``'s program name: its base name, lowercased, without ``.exe``."""
    return PurePath(word.replace("\\", "/")).name.lower().removesuffix(".exe")


def _is_interpreter(word: str) -> bool:
    """Whether ``word`` names a program that runs code given as an argument (``INTERPRETERS``,
    ``python3.12``), by its base name."""
    name = _base_name(word)
    return name in INTERPRETERS or re.fullmatch(r"python3?(\.\d+)?", name) is not None
