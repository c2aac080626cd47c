"""The region of a file closest to a block that was not found, so a failed edit can show the
model what is really there (``seed-tools.md`` 11.9-11.11; DC's "closest match" in ``peers.md``).

Pure functions on lines, built on ``difflib`` (stdlib). Scoring every window of a large file
with ``SequenceMatcher`` would be quadratic, so candidate windows are found first: windows
where some of the wanted lines occur exactly (after trimming), or, when none does, around the
file lines most similar to the wanted block's longest line. Only those candidates are scored.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher, ndiff

from .lines import format_numbered

__all__ = ["Region", "closest_region", "describe_region"]

_CANDIDATES = 24
_FUZZY_LINES = 6
_FUZZY_CUTOFF = 0.5
_SHOWN_LINES = 30
_SHOWN_CHARS = 300


@dataclass(frozen=True, slots=True)
class Region:
    """A window of file lines: ``start`` and ``stop`` are 0-based (``stop`` exclusive);
    ``similarity`` is difflib's ratio (0..1) against the wanted block."""

    start: int
    stop: int
    similarity: float


def _score(file_trimmed: Sequence[str], start: int, size: int, wanted: str) -> float:
    return SequenceMatcher(
        None, "\n".join(file_trimmed[start : start + size]), wanted, autojunk=False
    ).ratio()


def closest_region(file_lines: Sequence[str], wanted: Sequence[str]) -> Region | None:
    """The window of ``len(wanted)`` lines of ``file_lines`` most similar to ``wanted``
    (both compared trimmed), or None when the file is empty, ``wanted`` is blank, or nothing
    in the file resembles it."""
    file_trimmed = [line.strip() for line in file_lines]
    want = [line.strip() for line in wanted]
    if not file_trimmed or not any(want):
        return None
    size = min(len(want), len(file_trimmed))
    last_start = len(file_trimmed) - size

    def clamp(start: int) -> int:
        return max(0, min(start, last_start))

    wanted_at: dict[str, list[int]] = {}
    for j, line in enumerate(want):
        if line:
            wanted_at.setdefault(line, []).append(j)
    votes: Counter[int] = Counter()
    for i, line in enumerate(file_trimmed):
        for j in wanted_at.get(line, ()):
            votes[clamp(i - j)] += 1
    starts = [start for start, _ in votes.most_common(_CANDIDATES)]
    if not starts:
        key_index = max(range(len(want)), key=lambda j: len(want[j]))
        matcher = SequenceMatcher(None, autojunk=False)
        matcher.set_seq2(want[key_index])
        best: list[tuple[float, int]] = []  # a min-heap of the best (ratio, line) pairs
        for i, line in enumerate(file_trimmed):
            if not line:
                continue
            floor = best[0][0] if len(best) == _FUZZY_LINES else _FUZZY_CUTOFF
            matcher.set_seq1(line)
            if matcher.real_quick_ratio() < floor or matcher.quick_ratio() < floor:
                continue
            ratio = matcher.ratio()
            if ratio >= floor:
                heapq.heappush(best, (ratio, -i))
                if len(best) > _FUZZY_LINES:
                    heapq.heappop(best)
        starts = sorted({clamp(-neg - key_index) for _, neg in best})
    if not starts:
        return None
    joined = "\n".join(want)
    scored = [(_score(file_trimmed, start, size, joined), -start) for start in starts]
    similarity, neg_start = max(scored)
    return Region(start=-neg_start, stop=-neg_start + size, similarity=similarity)


def _clip(text: str) -> str:
    return text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS] + " [...]"


def describe_region(file_lines: Sequence[str], wanted: Sequence[str], region: Region) -> str:
    """The region as numbered lines, then the line differences (``-`` wanted, ``+`` file)."""
    shown = range(region.start, min(region.stop, region.start + _SHOWN_LINES))
    numbered = format_numbered([(i + 1, _clip(file_lines[i])) for i in shown])
    more = "" if region.stop - region.start <= _SHOWN_LINES else "\n[...]"
    diff = [
        _clip(row)
        for row in ndiff(list(wanted)[:_SHOWN_LINES], [file_lines[i] for i in shown])
        if row[:1] in "-+"
    ]
    where = (
        f"line {region.start + 1}"
        if region.stop - region.start == 1
        else f"lines {region.start + 1}-{region.stop}"
    )
    text = f"The closest region is {where} ({round(region.similarity * 100)}% similar):\n{numbered}{more}"
    if diff:
        text += "\nDifferences (- what you gave, + the file):\n" + "\n".join(diff)
    return text
