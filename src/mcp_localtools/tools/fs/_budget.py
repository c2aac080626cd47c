"""The lines of a result's text kept within its character budget."""

from __future__ import annotations

__all__ = ["LineBudget"]


class LineBudget:
    """The lines of a result's text, kept within a character budget.

    Args:
        budget: characters the lines may take, one newline each included.
    """

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.lines: list[str] = []
        self.cut = False

    def fits(self, texts: list[str]) -> bool:
        """Append ``texts`` if all of them fit in what is left; else append none, set ``cut``
        and return False."""
        cost = sum(len(text) + 1 for text in texts)
        if cost > self.budget:
            self.cut = True
            return False
        self.budget -= cost
        self.lines.extend(texts)
        return True
