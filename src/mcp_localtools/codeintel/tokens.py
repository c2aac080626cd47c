"""The identifier-aware tokenizer of the lexical index and of queries.

Code is mostly names: ``parseHTTPHeader`` is the words parse, http and header; ``read_file`` is
read and file. ``Tokenizer.terms(text)`` splits words at case changes, underscores, digits and
punctuation, lower-cases them, keeps a compound's whole lower-cased form too (so ``read_file``
finds ``read_file`` first), drops stop words (English function words and the most common
keywords) and stems the rest (Snowball English), so that a query's words meet the code's.
"""

from __future__ import annotations

import re
import threading
from typing import Any

__all__ = ["STOP_WORDS", "Tokenizer", "split_identifier"]

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


class Tokenizer:
    """The tokenizer of one index: ``terms(text)`` as the module docstring says, with English
    stems by the Snowball (Porter 2) stemmer of PyStemmer (``parsing``, ``parsed``, ``parses`` →
    ``pars``; ``connections`` → ``connect``), loaded on first use. Each distinct word's terms are
    remembered (identifiers repeat: a code base has far fewer distinct words than words), up to
    ``max_words`` of them. Thread-safe."""

    def __init__(self, max_words: int = 200_000) -> None:
        self._stemmer: Any = None
        self._known: dict[str, tuple[str, ...]] = {}
        self._parts: dict[str, tuple[str, ...]] = {}
        self._max_words = max_words
        self._lock = threading.Lock()

    def _stem(self, word: str) -> str:
        if len(word) <= 3:
            return word
        with self._lock:  # a PyStemmer stemmer is not thread-safe
            if self._stemmer is None:
                import Stemmer  # PyStemmer: imported on first use

                self._stemmer = Stemmer.Stemmer("english")
            stemmed: str = self._stemmer.stemWord(word)
        return stemmed

    def _word(self, word: str) -> tuple[str, ...]:
        parts = split_identifier(word)
        out: list[str] = []
        if len(parts) > 1:
            whole = word.lower().strip("_")
            if whole and whole not in STOP_WORDS:
                out.append(whole)
        out.extend(self._stem(part) for part in parts if part not in STOP_WORDS and len(part) > 1)
        return tuple(out)

    def words(self, text: str, limit: int = 96) -> list[str]:
        """The distinct words of ``text`` (identifiers split, lower case, no stop words or
        numbers), in order of first appearance, at most ``limit``: what an embedding is made of
        (``parseHTTPHeader(raw_text)`` → ``parse http header raw text``)."""
        seen: dict[str, None] = {}
        parts_of = self._parts
        for word in _WORD.findall(text):
            parts = parts_of.get(word)
            if parts is None:
                if len(parts_of) >= self._max_words:
                    parts_of.clear()
                parts = parts_of[word] = tuple(
                    p
                    for p in split_identifier(word)
                    if len(p) > 1 and p not in STOP_WORDS and not p.isdigit()
                )
            for part in parts:
                seen.setdefault(part, None)
            if len(seen) >= limit:
                break
        return list(seen)[:limit]

    def terms(self, text: str) -> list[str]:
        """The index terms of ``text``, in order, repeats kept (term frequency counts)."""
        out: list[str] = []
        known = self._known
        for word in _WORD.findall(text):
            found = known.get(word)
            if found is None:
                if len(known) >= self._max_words:
                    known.clear()
                found = known[word] = self._word(word)
            out.extend(found)
        return out


def split_identifier(identifier: str) -> list[str]:
    """The lower-cased words of one identifier: ``parseHTTPHeader`` → ``[parse, http, header]``,
    ``read_file2`` → ``[read, file, 2]``."""
    return [part.lower() for piece in identifier.split("_") for part in _PART.findall(piece)]
