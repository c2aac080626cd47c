"""Sizes as people write them, for descriptions and messages that state a figure from the config.

``size_text(16 * 1024 * 1024)`` is ``"16 MiB"``, ``size_text(1_000_000)`` is ``"1 MB"``: binary
units when the number is a whole number of them, decimal ones when it is a whole number of those,
bytes otherwise. A description that says "16 MiB" must say what the config says, so it renders
the figure with this rather than writing it.
"""

from __future__ import annotations

__all__ = ["size_text"]

_UNITS = ((1024**3, "GiB"), (1000**3, "GB"), (1024**2, "MiB"), (1000**2, "MB"), (1024, "KiB"), (1000, "kB"))


def size_text(size: int) -> str:
    """``size`` bytes in the largest unit that divides it (``"16 MiB"``, ``"1 MB"``, ``"1500 bytes"``)."""
    for unit, name in _UNITS:
        if size >= unit and size % unit == 0:
            return f"{size // unit} {name}"
    return f"{size} bytes"
