"""Sizes as people write them, for descriptions and messages that state a figure from the config;
and text made safe to show a person (``printable``).

``size_text(16 * 1024 * 1024)`` is ``"16 MiB"``, ``size_text(1_000_000)`` is ``"1 MB"``: binary
units when the number is a whole number of them, decimal ones when it is a whole number of those,
bytes otherwise. A description that says "16 MiB" must say what the config says, so it renders
the figure with this rather than writing it.
"""

from __future__ import annotations

__all__ = ["printable", "size_text"]

_UNITS = ((1024**3, "GiB"), (1000**3, "GB"), (1024**2, "MiB"), (1000**2, "MB"), (1024, "KiB"), (1000, "kB"))


def size_text(size: int) -> str:
    """``size`` bytes in the largest unit that divides it (``"16 MiB"``, ``"1 MB"``, ``"1500 bytes"``)."""
    for unit, name in _UNITS:
        if size >= unit and size % unit == 0:
            return f"{size // unit} {name}"
    return f"{size} bytes"


def printable(text: str, *, newline: str = " ") -> str:
    """``text`` safe to show a person on a terminal or in a client's form: every character that is
    not printable (C0 and C1 controls such as ESC and CR, which move the cursor or erase what was
    shown, the line and paragraph separators U+2028/2029, the bidirectional controls
    U+202A-202E/U+2066-2069, zero-width characters) is written as its escape (``\\x1b``,
    ``\\u202e``); a newline becomes ``newline`` (a space by default: one row of a table)."""
    return "".join(
        ch if ch.isprintable() else newline if ch == "\n" else ch.encode("unicode_escape").decode("ascii")
        for ch in text
    )
