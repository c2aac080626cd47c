"""Unified diffs of an edit, for results and dry runs (``difflib``, stdlib).

Lines are compared without their endings (edits keep every line's ending, so a diff of endings
would only add ``\\r`` noise). The unchanged head and tail are cut off before ``difflib`` runs,
so a small edit in a large file costs little; the hunk headers keep the file's line numbers.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

__all__ = ["unified_diff"]

_HUNK = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@$")


def unified_diff(old: Sequence[str], new: Sequence[str], *, name: str, context: int = 3) -> str:
    """The unified diff from ``old`` to ``new`` lines (``--- a/name``, ``+++ b/name``), or ``""``
    when they are equal."""
    limit = min(len(old), len(new))
    head = 0
    while head < limit and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < limit - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    if head == len(old) == len(new):
        return ""
    lo = max(0, head - context)
    old_part = old[lo : len(old) - max(0, tail - context)]
    new_part = new[lo : len(new) - max(0, tail - context)]
    rows = []
    for row in difflib.unified_diff(
        old_part, new_part, fromfile=f"a/{name}", tofile=f"b/{name}", n=context, lineterm=""
    ):
        hunk = _HUNK.match(row)
        if hunk and lo:
            a, a_len, b, b_len = hunk.groups()
            row = f"@@ -{int(a) + lo}{a_len or ''} +{int(b) + lo}{b_len or ''} @@"
        rows.append(row)
    return "\n".join(rows) + "\n"
