"""``sandboxNote`` read from a command's output: found where it was, in time linear in the output."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from mcp_localtools.sandbox.notes import explain
from tests.helpers import best_seconds, filled


def test_a_refused_write_of_a_protected_git_file_is_named_wherever_it_is_in_the_output() -> None:
    refused = "error: could not lock config file repo/.git/config: Read-only file system"
    for stderr, stdout in ((refused, ""), ("", "x" * 100_000 + "\n" + refused)):
        note = explain("bwrap", stderr, 1, network=True, stdout=stdout) or ""
        assert "the sandbox holds repo/.git/config read-only" in note
    assert explain("bwrap", "fatal: .git/hooks is fine", 0, network=True) is None


@pytest.mark.slow  # a wall-clock ratio (best of two runs): -m 'not slow' leaves it out
@pytest.mark.parametrize("unit", ["a", "a/", ".git/", "x/.git/hooks "])
def test_reading_a_long_line_of_output_takes_time_linear_in_its_length(unit: str) -> None:
    """Four times the output must not cost sixteen times the time: the protected-path pattern
    backtracked over a line without spaces (a command printing 65,536 ``a`` held the event loop
    for 24 s, 262,144 for 219 s)."""

    def read(size: int) -> Callable[[], object]:
        line = filled("", unit, size=size)
        return lambda: explain("bwrap", line, 1, network=False, stdout=line)

    small, big = best_seconds(read(65_536 // 4)), best_seconds(read(65_536))
    assert big < 8 * small + 0.2 and big < 5, f"16,384: {small:.3f} s, 65,536: {big:.3f} s"
