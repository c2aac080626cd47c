"""RE2, compiled in one place: the options every caller sets, its error as text.

google-re2 (linear time, no backreferences or look-around) compiles every regex a client or the
config gives: searchfiles' and globfiles' patterns (``search/regex.py``), findtext's and the editing
tools' (``tools/text``), ``[exec] denied_patterns`` (``policy/execution.py``). Each caller turns
:class:`RegexError` into its own error (``InvalidArguments`` for a call, ``ConfigError`` at start-up).
``re2`` is imported on the first compile: start-up time is measured and most calls never need it.
"""

from __future__ import annotations

from typing import Any

from mcp_localtools.errors import RegexError

__all__ = ["compile_re2", "searchable"]


def compile_re2(
    source: str | bytes,
    *,
    case_sensitive: bool = True,
    literal: bool = False,
    never_nl: bool = False,
    max_mem: int | None = None,
) -> Any:
    """``source`` compiled by RE2 (an ``re2._Regexp``, untyped), never logging to stderr.

    ``case_sensitive``, ``literal`` (the pattern is plain text), ``never_nl`` (no match spans a
    newline) and ``max_mem`` (bytes RE2 may use for the compiled program; RE2's default when None)
    are RE2's options of those names.

    Raises:
        RegexError: RE2 refuses the pattern; ``reason`` says why.
    """
    import re2  # imported here: start-up time is measured, and most calls never need it

    options = re2.Options()
    options.log_errors = False  # the caller's error says it; RE2 would also write it to stderr
    options.case_sensitive = case_sensitive
    options.literal = literal
    options.never_nl = never_nl
    if max_mem is not None:
        options.max_mem = max_mem
    try:
        return re2.compile(source, options)
    except re2.error as exc:
        raw = exc.args[0] if exc.args else exc
        reason = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
        raise RegexError(reason) from exc


def searchable(text: str) -> str:
    """``text`` as an RE2 regex can search it: RE2 reads UTF-8, which cannot encode a lone
    surrogate (JSON's ``"\\ud800"``), so each becomes ``?``; other text is returned as it is."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text
