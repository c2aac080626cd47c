"""Unified diffs of an edit, for results and dry runs (``difflib``, stdlib).

Lines are compared without their endings (edits keep every line's ending, so a diff of endings
would only add ``\\r`` noise). The diff is computed from the two texts: the unchanged head and
tail are found by comparing blocks of characters (C-level slice comparisons, not a loop per
line), and only the changed region plus its context lines is split into lines for ``difflib``,
so a one-line edit of a 10 MiB file costs a few milliseconds. Hunk headers keep the file's line
numbers.
"""

from __future__ import annotations

import re

__all__ = ["MIN_DIFF_CHARS", "diff_within", "unified_diff"]

MIN_DIFF_CHARS = 1000
"""Fewest characters of a diff a result keeps, however little room the rest of it leaves: an edit
never comes back with no diff at all."""

_HUNK = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@$")
_BLOCKS = (65536, 1024, 32, 1)


def _common_prefix(old: str, new: str, limit: int) -> int:
    done = 0
    for size in _BLOCKS:
        while done + size <= limit and old[done : done + size] == new[done : done + size]:
            done += size
    return done


def _common_suffix(old: str, new: str, limit: int) -> int:
    done = 0
    for size in _BLOCKS:
        while (
            done + size <= limit
            and old[len(old) - done - size : len(old) - done] == new[len(new) - done - size : len(new) - done]
        ):
            done += size
    return done


def _start_of_context(text: str, pos: int, context: int) -> int:
    """The start of the line holding ``pos``, moved up ``context`` more lines."""
    start = text.rfind("\n", 0, pos) + 1
    for _ in range(context):
        if start == 0:
            break
        start = text.rfind("\n", 0, start - 1) + 1
    return start


def _end_of_context(text: str, pos: int, context: int) -> int:
    """The end (after the newline) of the line holding ``pos``, moved down ``context`` lines."""
    end = pos
    for _ in range(context + 1):
        found = text.find("\n", end)
        if found == -1:
            return len(text)
        end = found + 1
    return end


def _lines(region: str) -> list[str]:
    lines = region.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def unified_diff(old: str, new: str, *, name: str, context: int = 3) -> str:
    """The unified diff from text ``old`` to text ``new`` (``--- a/name``, ``+++ b/name``, as git
    prints them: ``name`` is the path relative to the root, ``src/x.py``), or ``""`` when they have
    the same lines."""
    if old == new:
        return ""
    import difflib  # imported here: start-up time is measured, and read-only calls never diff

    head = _common_prefix(old, new, min(len(old), len(new)))
    tail = _common_suffix(old, new, min(len(old), len(new)) - head)
    # The changed region, widened to whole lines and then by the context lines.
    old_start = _start_of_context(old, head, context)
    first_line = old.count("\n", 0, old_start)  # 0-based line number of the region's first line
    old_end = _end_of_context(old, max(head, len(old) - tail - 1), context)
    new_start = old_start  # the head is common, so the region starts at the same offset
    new_end = _end_of_context(new, max(head, len(new) - tail - 1), context)
    # Both ends must cover the same unchanged tail, so the regions line up.
    old_after = len(old) - old_end
    new_after = len(new) - new_end
    if old_after != new_after:
        common = min(old_after, new_after)
        old_end, new_end = len(old) - common, len(new) - common
    rows = []
    for row in difflib.unified_diff(
        _lines(old[old_start:old_end]),
        _lines(new[new_start:new_end]),
        fromfile=f"a/{name}",
        tofile=f"b/{name}",
        n=context,
        lineterm="",
    ):
        hunk = _HUNK.match(row)
        if hunk and first_line:
            a, a_len, b, b_len = hunk.groups()
            row = f"@@ -{int(a) + first_line}{a_len or ''} +{int(b) + first_line}{b_len or ''} @@"
        rows.append(row)
    return "\n".join(rows) + "\n" if rows else ""


def diff_within(diff: str, limit: int) -> tuple[str, bool]:
    """``diff`` cut to at most about ``limit`` characters (never below ``MIN_DIFF_CHARS``): its
    head (two fifths) and its tail (the rest), whole lines where they fit and the start (head) or
    the end (tail) of a line too long to keep whole, and between them a line saying how many
    lines, and characters of cut lines, were left out.

    Returns:
        ``(diff, was_cut)``.
    """
    limit = max(limit, MIN_DIFF_CHARS)
    if len(diff) <= limit:
        return diff, False
    lines = diff.splitlines(keepends=True)
    room = limit - 60  # the marker line
    head, head_cut = _take(lines, room * 2 // 5, from_end=False)
    tail, tail_cut = _take(lines[len(head) :], room - sum(map(len, head)), from_end=True)
    left_out = len(lines) - len(head) - len(tail)  # a partly kept line is in head or tail
    left = room - sum(map(len, head))
    if head_cut and not tail and left >= 80:  # the one long line left: keep its end too
        line = lines[len(head) - 1]
        tail, head_cut = [line[len(line) - left :]], head_cut - left
    cut = head_cut + tail_cut
    what = f"{left_out} diff lines" + (f" and {cut} characters" if cut else "")
    return "".join([*head, f"[{what} left out]\n", *tail]), True


def _take(lines: list[str], room: int, *, from_end: bool) -> tuple[list[str], int]:
    """Whole lines from the start (or the end) of ``lines`` within ``room`` characters, then the
    start (or the end) of the next line when at least 80 characters are left: ``(taken, characters
    cut off that last, partial line)``."""
    taken: list[str] = []
    used = 0
    for line in reversed(lines) if from_end else lines:
        if used + len(line) <= room:
            taken.append(line)
            used += len(line)
            continue
        left = room - used
        if left >= 80:
            part = line[len(line) - left :] if from_end else line[: left - 1].rstrip("\n") + "\n"
            taken.append(part)
            if from_end:
                taken.reverse()
            return taken, len(line) - len(part) + (0 if from_end else 1)
        break
    if from_end:
        taken.reverse()
    return taken, 0
