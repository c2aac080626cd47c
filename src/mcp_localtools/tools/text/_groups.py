"""Group references in the replacement text of a regex edit (editfile's and replaceinfiles'
``match: "regex"``). Pure.

The syntax is Python's ``re.sub`` template, narrowed to what a model editing code needs:
``\\1`` ... ``\\99`` and ``\\g<1>`` insert a numbered group, ``\\g<name>`` a named one (``(?P<name>...)``),
``\\g<0>`` the whole match, and ``\\\\`` is one backslash. Every other backslash stays as written,
so ``"\\n"`` in replacement text is a backslash and an ``n`` (code keeps its escapes), not a
newline as in ``re.sub``: real line breaks are sent as line breaks. A group that did not take
part in the match inserts nothing. Outside regex mode nothing here applies: the text is literal.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mcp_localtools.errors import InvalidArguments

__all__ = ["Replacement"]

_REFERENCE = re.compile(r"\\(?:(\\)|g<([^<>]*)>|([1-9][0-9]?))")
"""``\\\\``, ``\\g<...>`` or ``\\N``: the escapes a replacement reads (any other backslash is literal)."""


@dataclass(frozen=True, slots=True)
class Replacement:
    """A regex edit's replacement text, parsed: literal pieces (``str``) and group numbers (``int``)."""

    pieces: tuple[str | int, ...]

    @classmethod
    def parse(cls, text: str, regex: Any, what: str) -> Replacement:
        """Parse ``text`` against the compiled ``regex`` (its ``groups`` and ``groupindex``).

        Args:
            text: the replacement as the call gave it.
            regex: the compiled RE2 regex it replaces matches of.
            what: how to name the replacement in messages (``edits[0].newText``).

        Raises:
            InvalidArguments: a reference names a group the regex does not have.
        """
        pieces: list[str | int] = []
        done = 0
        for found in _REFERENCE.finditer(text):
            pieces.append(text[done : found.start()])
            done = found.end()
            backslash, inside, number = found.groups()
            if backslash:
                pieces.append("\\")
                continue
            pieces.append(
                _group_number(inside if inside is not None else number, found.group(0), regex, what)
            )
        pieces.append(text[done:])
        return cls(tuple(piece for piece in pieces if piece != ""))

    def expand(self, match: Any, literal: Callable[[str], str]) -> str:
        """The replacement of ``match`` (an RE2 match object); ``literal`` converts the literal
        pieces (their line breaks to the file's style), never the groups' text, which is the file's."""
        return "".join(
            literal(piece) if isinstance(piece, str) else (match.group(piece) or "") for piece in self.pieces
        )


def _group_number(reference: str, written: str, regex: Any, what: str) -> int:
    names: dict[str, int] = dict(regex.groupindex)
    count: int = regex.groups
    number = int(reference) if reference.isdecimal() else names.get(reference)
    if number is None or number > count:
        named = f"; named: {', '.join(sorted(names))}" if names else ""
        raise InvalidArguments(
            f"{what}: {written} refers to no group of the regex, which has {count} group(s){named}. "
            r"Write \g<0> for the whole match, \g<1>0 for group 1 then a 0, \\ for a backslash."
        )
    return number
