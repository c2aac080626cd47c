"""The identifier-aware tokenizer of the lexical index and of queries.

Code is mostly names: ``parseHTTPHeader`` is the words parse, http and header; ``read_file`` is
read and file. ``tokens(text)`` splits words at case changes, underscores, digits and
punctuation, lower-cases them, keeps a compound's whole lower-cased form too (so ``read_file``
finds ``read_file`` first), drops stop words (English function words and the most common
keywords) and stems the rest (Snowball English), so that a query's words meet the code's.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

__all__ = ["STOP_WORDS", "Stems", "split_identifier", "tokens"]

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]*|[0-9]+")
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")

STOP_WORDS = frozenset(
    """a an and are as at be by for from has have how i if in into is it its of on or that the then
    this to was were what when where which while who why will with without does do did can could
    should would not no yes all any each which there their them they these those we you your our
    def self cls return returns fn func function var let const new null none true false nil end
    elif else import from pass lambda public private protected static void int str bool string""".split()
)
"""Words that carry no meaning for search."""


class Stems:
    """English stems by the Snowball (Porter 2) stemmer of PyStemmer, remembered per word
    (``parsing``, ``parsed``, ``parses`` → ``pars``; ``connections`` → ``connect``). One
    instance per index; the stemmer is loaded on first use. Not thread-safe: use one per thread
    or under a lock."""

    def __init__(self, max_words: int = 200_000) -> None:
        self._stemmer: Any = None
        self._known: dict[str, str] = {}
        self._max_words = max_words

    def __call__(self, word: str) -> str:
        found = self._known.get(word)
        if found is not None:
            return found
        if self._stemmer is None:
            import Stemmer  # PyStemmer: imported on first use

            self._stemmer = Stemmer.Stemmer("english")
        found = self._stemmer.stemWord(word) if len(word) > 3 else word
        if len(self._known) >= self._max_words:
            self._known.clear()
        self._known[word] = found
        return found


def split_identifier(identifier: str) -> list[str]:
    """The lower-cased words of one identifier: ``parseHTTPHeader`` → ``[parse, http, header]``,
    ``read_file2`` → ``[read, file, 2]``."""
    return [part.lower() for piece in identifier.split("_") for part in _PART.findall(piece)]


def tokens(text: str, stem: Callable[[str], str]) -> list[str]:
    """The index terms of ``text``, in order, repeats kept (term frequency counts); ``stem``
    maps a word to its stem (a ``Stems``)."""
    out: list[str] = []
    for match in _WORD.finditer(text):
        word = match.group()
        parts = split_identifier(word)
        if len(parts) > 1:
            whole = word.lower().strip("_")
            if whole and whole not in STOP_WORDS:
                out.append(whole)
        out.extend(stem(part) for part in parts if part not in STOP_WORDS and len(part) > 1)
    return out
