"""The names tools are served under, in the text we write: ``[tools] rename`` applied to tool
names in descriptions, refusals and hints (``served``, ``served_text``, ``render_names``), set per
call by the registry that runs it (``serving``)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from types import MappingProxyType

__all__ = ["PLAIN_WORDS", "render_names", "served", "served_text", "serving"]

_SERVED_NAMES: ContextVar[Mapping[str, str]] = ContextVar("served_names", default=MappingProxyType({}))
"""``[tools] rename`` of the registry running the current call (own name -> served name)."""


def served(name: str) -> str:
    """The name the tool ``name`` (its own name: ``readfile``) is served under in the call being
    run: ``[tools] rename``, which ``Registry`` puts in place for each call it runs (``serving``).
    A refusal or hint that tells the model to call a tool names it through this ("call
    {served('readfile')} with offset=..."); outside a call it is ``name`` itself."""
    return _SERVED_NAMES.get().get(name, name)


def served_text(text: str) -> str:
    """A sentence we wrote (never user content: no path, command or file text in it) with the
    tools it names as served in the call being run (``render_names`` with the call's renames)."""
    return render_names(text, _SERVED_NAMES.get())


@contextmanager
def serving(renamed: Mapping[str, str]) -> Iterator[None]:
    """Within the block (and the worker threads and tasks it starts), ``served`` answers from
    ``renamed`` (own name -> served name)."""
    token = _SERVED_NAMES.set(renamed)
    try:
        yield
    finally:
        _SERVED_NAMES.reset(token)


PLAIN_WORDS = frozenset({"symbols"})
"""Tool names that are also ordinary words in descriptions ("functions and symbols"):
``render_names`` leaves them, so renaming such a tool does not rewrite the word."""


def render_names(text: str, renamed: Mapping[str, str]) -> str:
    """``text`` (a description we wrote: never user content) with every renamed tool's own name,
    as a word of its own (not part of a longer name like ``readfile.py``), replaced by the
    name it is served under; all at once, so two tools may swap names."""
    words = sorted((name for name in renamed if name not in PLAIN_WORDS), key=len, reverse=True)
    if not words or not text:
        return text
    pattern = _word_pattern(tuple(words))
    return pattern.sub(lambda found: renamed[found.group(0)], text)


@cache
def _word_pattern(words: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(r"(?<![\w.-])(?:" + "|".join(map(re.escape, words)) + r")(?![\w-]|\.\w)")
