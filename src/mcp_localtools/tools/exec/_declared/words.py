"""The words of a declared tool's command template (``template.parse_template`` reads them):
``Slot`` (a placeholder), ``Word`` (literal pieces and slots), ``Template`` (the program, its items
and optional groups) and how a call's arguments fill them into argv words, checked as they go."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from mcp_localtools.errors import InvalidArguments
from mcp_localtools.policy.commandrules import MAX_SCRIPT_ARG_BYTES, MAX_SCRIPT_ARGS
from mcp_localtools.tools.exec._declared.assignment import check_assignment

__all__ = ["Kind", "Slot", "Template", "Word", "words_in"]

Kind = str
"""An argument's JSON Schema type: ``string``, ``integer``, ``number``, ``boolean`` or ``array``."""


@dataclass(frozen=True, slots=True)
class Slot:
    """A placeholder: the argument's wire name."""

    name: str


@dataclass(frozen=True, slots=True)
class Word:
    """One word of a template: literal text and placeholders, in order."""

    pieces: tuple[str | Slot, ...]

    @property
    def whole(self) -> str | None:
        """The argument this word is exactly (``"{paths}"``), or None."""
        if len(self.pieces) == 1 and isinstance(self.pieces[0], Slot):
            return self.pieces[0].name
        return None

    @property
    def slots(self) -> list[str]:
        """The arguments the word names."""
        return [piece.name for piece in self.pieces if isinstance(piece, Slot)]

    @property
    def literal(self) -> str | None:
        """The word's text when it names no argument, else None."""
        if self.slots:
            return None
        return "".join(piece for piece in self.pieces if isinstance(piece, str))

    def shown(self) -> str:
        """The word as a description shows it (``<name>`` for a placeholder; a literal word
        POSIX-quoted when it needs quotes)."""
        literal = self.literal
        if literal is not None:
            return shlex.quote(literal)
        return "".join(f"<{piece.name}>" if isinstance(piece, Slot) else piece for piece in self.pieces)


@dataclass(frozen=True, slots=True)
class Template:
    """A parsed command template: the program and the items after it (a word, or an optional
    group of words)."""

    program: str
    items: tuple[Word | tuple[Word, ...], ...]
    inert: frozenset[int] = frozenset()
    """Positions (among the words after the program, groups counted whole) of ``--`` words that
    end a wrapper's options: they do not let later arguments start with ``-``."""
    wrapped: frozenset[int] = frozenset()
    """Positions (as ``inert``) of the words after a wrapper: an argument there that reads
    ``NAME=value`` may be an environment assignment (``env {x} prog``)."""

    def slots(self) -> set[str]:
        """Every argument the template names."""
        return {name for item in self.items for word in words_in(item) for name in word.slots}

    def shown(self) -> str:
        """The template as a description shows it: ``pytest -q [-k <expr>] -- <paths>``."""
        parts = [shlex.quote(self.program)]
        for item in self.items:
            if isinstance(item, Word):
                parts.append(item.shown())
            else:
                parts.append("[" + " ".join(word.shown() for word in item) + "]")
        return " ".join(parts)

    def render(
        self,
        values: Mapping[str, Any],
        fixed: frozenset[str],
        check_env: Callable[[Mapping[str, str]], object] | None = None,
    ) -> list[str]:
        """The argv for the call's ``values`` (wire name → value, None when absent).

        Args:
            values: the validated arguments.
            fixed: arguments whose values the config's author wrote (``enum``): they may start
                with ``-``, and may be ``NAME=value`` after a wrapper.
            check_env: the execution policy's ``check_env``, given each ``NAME=value`` word an
                argument makes after a wrapper (as ``{NAME: value}``); None: not checked (the
                words are only shown).

        Raises:
            InvalidArguments: a word would start with ``-`` from an argument before any ``--``,
                holds a NUL byte, is too long, or there are too many words.
            CommandRefused: ``check_env`` refuses such an assignment (the message names the
                argument).
        """
        argv = [self.program]
        ended = False  # the program's literal "--" came before: later words are operands
        position = 0
        for item in self.items:
            words = words_in(item)
            start, position = position, position + len(words)
            if not isinstance(item, Word) and not all(
                _present(values.get(n)) for w in words for n in w.slots
            ):
                continue
            for offset, word in enumerate(words):
                produced = _fill(word, values)
                if produced is None:
                    continue
                lead = word.pieces[0] if word.pieces else ""
                for text in produced:
                    _check_word(word, text, ended=ended, fixed=fixed)
                    if check_env and start + offset in self.wrapped and isinstance(lead, Slot):
                        check_assignment(lead.name, text, fixed, check_env)
                argv.extend(produced)
                ended = ended or (word.literal == "--" and start + offset not in self.inert)
        if len(argv) - 1 > MAX_SCRIPT_ARGS:
            raise InvalidArguments(
                f"the command would have {len(argv) - 1} arguments (max {MAX_SCRIPT_ARGS})"
            )
        return argv


def words_in(item: Word | tuple[Word, ...]) -> tuple[Word, ...]:
    return (item,) if isinstance(item, Word) else item


def _present(value: Any) -> bool:
    return value is not None and value is not False and value != []


def _text(value: Any) -> str:
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _fill(word: Word, values: Mapping[str, Any]) -> list[str] | None:
    """The words ``word`` gives for ``values``; None when it gives none (an absent argument, or
    a boolean switch)."""
    whole = word.whole
    if whole is not None:
        value = values.get(whole)
        if value is None or isinstance(value, bool):
            return None
        return [_text(item) for item in value] if isinstance(value, list) else [_text(value)]
    if any(values.get(name) is None for name in word.slots):
        return None
    return ["".join(_text(values[p.name]) if isinstance(p, Slot) else p for p in word.pieces)]


def _check_word(word: Word, text: str, *, ended: bool, fixed: frozenset[str]) -> None:
    first = word.pieces[0] if word.pieces else ""
    if isinstance(first, Slot) and text.startswith("-") and not ended and first.name not in fixed:
        raise InvalidArguments(
            f"{first.name}: {_cut(text)!r} starts with '-' and would be read as an option; "
            "pass a value that does not start with '-' (for a file, write ./-name)"
        )
    if "\x00" in text:
        raise InvalidArguments(f"{word.slots[0]}: contains a NUL byte, which no command argument can hold")
    if len(text.encode("utf-8", "surrogateescape")) > MAX_SCRIPT_ARG_BYTES:
        raise InvalidArguments(f"{word.slots[0]}: one word is over {MAX_SCRIPT_ARG_BYTES} bytes")


def _cut(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."
