"""The region of a file closest to a block that was not found, so a failed edit can show the
model what is really there instead of a bare count.

Pure functions on lines. Candidate windows come from two sources: windows where some wanted
lines occur exactly (after trimming), and windows around the file lines most similar to the
wanted block's longest line. Only the candidates are scored as whole windows. Similarity is
``rapidfuzz``'s normalised Indel ratio (difflib's ratio, in C++: a 16 MiB file is scanned in
well under a second), and for editfile's text, which may be a fragment of a line, a text
shorter than a line is aligned with the best part of it (``partial_ratio``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Region", "closest_hint", "closest_region", "describe_region", "similarity"]

_CANDIDATES = 24
_SIMILAR_LINES = 8
_CUTOFF = 50.0
_SHOWN_LINES = 30
_SHOWN_CHARS = 300


@dataclass(frozen=True, slots=True)
class Region:
    """A window of file lines: ``start`` and ``stop`` are 0-based (``stop`` exclusive);
    ``similarity`` is 0..1 against the wanted block."""

    start: int
    stop: int
    similarity: float


def similarity(wanted: str, found: str) -> float:
    """0..100: how alike ``found`` is to ``wanted``; when ``found`` is longer, its best-aligned
    part counts (a fragment of a line can match the line fully)."""
    from rapidfuzz import fuzz  # imported here: start-up time is measured, and most calls never need it

    if len(found) > len(wanted):
        return float(fuzz.partial_ratio(wanted, found))
    return float(fuzz.ratio(wanted, found))


def _similar_lines(query: str, lines: Sequence[str]) -> list[int]:
    """Indexes of the lines most similar to ``query`` (by ``similarity``), best first."""
    from rapidfuzz import fuzz, process

    longer = {i: line for i, line in enumerate(lines) if len(line) > len(query)}
    other = {i: line for i, line in enumerate(lines) if line and len(line) <= len(query)}
    found = [
        *process.extract(
            query, longer, scorer=fuzz.partial_ratio, limit=_SIMILAR_LINES, score_cutoff=_CUTOFF
        ),
        *process.extract(query, other, scorer=fuzz.ratio, limit=_SIMILAR_LINES, score_cutoff=_CUTOFF),
    ]
    found.sort(key=lambda hit: (-hit[1], hit[2]))
    return [int(index) for _, _, index in found[:_SIMILAR_LINES]]


def closest_region(
    file_lines: Sequence[str], wanted: Sequence[str], *, fragments: bool = False
) -> Region | None:
    """The window of ``len(wanted)`` lines of ``file_lines`` most similar to ``wanted``
    (both compared trimmed), or None when the file is empty, ``wanted`` is blank, or nothing
    in the file resembles it.

    Args:
        fragments: ``wanted`` may be part of a line (editfile's oldText), so a window that
            contains it counts as fully similar; otherwise (line blocks) whole lines are compared.
    """
    from rapidfuzz import fuzz

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
    starts = {start for start, _ in votes.most_common(_CANDIDATES)}
    key = max(range(len(want)), key=lambda j: len(want[j]))
    starts.update(clamp(i - key) for i in _similar_lines(want[key], file_trimmed))
    if not starts:
        return None
    joined = "\n".join(want)
    score_of = similarity if fragments else fuzz.ratio
    score, neg_start = max((score_of(joined, "\n".join(file_trimmed[s : s + size])), -s) for s in starts)
    if score < _CUTOFF:
        return None
    return Region(start=-neg_start, stop=-neg_start + size, similarity=score / 100)


def _format_numbered(lines: Sequence[tuple[int, str]]) -> str:
    """Lines as ``"  12\ttext"`` (``cat -n`` style), one per row."""
    width = max((len(str(n)) for n, _ in lines), default=1)
    return "\n".join(f"{n:>{width}}\t{text}" for n, text in lines)


def _clip(text: str) -> str:
    return text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS] + " [...]"


def describe_region(file_lines: Sequence[str], wanted: Sequence[str], region: Region) -> str:
    """The region as numbered lines, then the line differences (``-`` wanted, ``+`` file)."""
    from difflib import ndiff  # imported here: start-up time is measured

    shown = range(region.start, min(region.stop, region.start + _SHOWN_LINES))
    numbered = _format_numbered([(i + 1, _clip(file_lines[i])) for i in shown])
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


def closest_hint(file_lines: Sequence[str], wanted: Sequence[str], *, fragments: bool = False) -> str:
    """What to tell the model when ``wanted`` was not found in ``file_lines``: the closest region
    (``describe_region``), or one sentence saying the file is empty or nothing in it resembles
    ``wanted``. ``fragments`` is as for ``closest_region``."""
    if not file_lines:
        return "The file is empty."
    region = closest_region(file_lines, wanted, fragments=fragments)
    return describe_region(file_lines, wanted, region) if region else "Nothing in the file resembles it."
