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
from itertools import chain
from typing import Any

__all__ = ["STOP_WORDS", "Tokenizer", "split_identifier"]

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]*|[0-9]+")
_JOINS = re.compile(r"[A-Za-z0-9_]{2}")
"""Two characters a word may hold together (a cut between them may split one)."""
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
        self._known: dict[str, str] = {}
        self._parts: dict[str, tuple[str, ...]] = {}
        self._max_words = max_words
        self._lock = threading.Lock()

    def forget(self) -> None:
        """Forget the remembered words (memory given back when the index is idle)."""
        self._known, self._parts = {}, {}

    def _stem(self, word: str) -> str:
        if len(word) <= 3:
            return word
        with self._lock:  # a PyStemmer stemmer is not thread-safe
            if self._stemmer is None:
                import Stemmer  # PyStemmer: imported on first use

                self._stemmer = Stemmer.Stemmer("english")
            stemmed: str = self._stemmer.stemWord(word)
        return stemmed

    def _word(self, word: str) -> str:
        """A word's terms, space-joined (``""`` for none)."""
        parts = split_identifier(word)
        out: list[str] = []
        if len(parts) > 1:
            whole = word.lower().strip("_")
            if whole and whole not in STOP_WORDS:
                out.append(whole)
        out.extend(self._stem(part) for part in parts if part not in STOP_WORDS and len(part) > 1)
        return " ".join(out)

    def _parts_of(self, word: str) -> tuple[str, ...]:
        parts = tuple(
            p for p in split_identifier(word) if len(p) > 1 and p not in STOP_WORDS and not p.isdigit()
        )
        if len(self._parts) >= self._max_words:
            self._parts.clear()
        self._parts[word] = parts
        return parts

    def words(self, text: str, limit: int = 96) -> list[str]:
        """The distinct words of ``text`` (identifiers split, lower case, no stop words or
        numbers), in order of first appearance, at most ``limit``: what an embedding is made of
        (``parseHTTPHeader(raw_text)`` → ``parse http header raw text``)."""
        return self._words(_WORD.findall(text), limit)

    def _words(self, words: list[str], limit: int) -> list[str]:
        found: list[tuple[str, ...] | None] = list(map(self._parts.get, words))
        if None in found:
            found = [
                self._parts_of(word) if parts is None else parts
                for word, parts in zip(words, found, strict=True)
            ]
        return list(dict.fromkeys(chain.from_iterable(found)))[:limit]  # type: ignore[arg-type]

    def terms(self, text: str) -> str:
        """The index terms of ``text``, space-joined, in order, repeats kept (term frequency counts)."""
        return self._terms(_WORD.findall(text))

    def _terms(self, words: list[str]) -> str:
        found: list[str | None] = list(map(self._known.get, words))
        if None in found:
            found = [
                self._terms_of(word) if terms is None else terms
                for word, terms in zip(words, found, strict=True)
            ]
        return " ".join(filter(None, found))

    def terms_and_words(self, text: str, head: int, limit: int = 96) -> tuple[str, list[str]]:
        """``(terms(text), words(text[:head], limit))``, the text scanned once."""
        if len(text) <= head:
            first = rest = _WORD.findall(text)
            return self._terms(rest), self._words(first, limit)
        if _JOINS.match(text, head - 1):  # a word across the cut: the head is a word of its own
            return self.terms(text), self.words(text[:head], limit)
        first = _WORD.findall(text, 0, head)
        return self._terms(first + _WORD.findall(text, head)), self._words(first, limit)

    def _terms_of(self, word: str) -> str:
        if len(self._known) >= self._max_words:
            self._known.clear()
        terms = self._known[word] = self._word(word)
        return terms


def split_identifier(identifier: str) -> list[str]:
    """The lower-cased words of one identifier: ``parseHTTPHeader`` → ``[parse, http, header]``,
    ``read_file2`` → ``[read, file, 2]``."""
    return [part.lower() for piece in identifier.split("_") for part in _PART.findall(piece)]
